package orchestrator

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The appended ids are their fmt forms, for empty, long and escaped parts.
func TestIDs_MatchTheirFmtForms(t *testing.T) {
	long := string(make([]byte, 300))
	for _, p := range [][2]string{{"", ""}, {"ns", "k"}, {"n%3As", "k:x"}, {long, long}} {
		for _, i := range []int{0, 7, -3, 1 << 40} {
			assert.Equal(t, fmt.Sprintf("thread:mcp:%s:%s:%d", p[0], p[1], i), idOf("thread:mcp:", p[0], p[1], i))
			assert.Equal(t, fmt.Sprintf("wait #%d of %s on %s", i, p[0], p[1]), waitEntity(i, p[0], p[1]))
		}
	}
}
