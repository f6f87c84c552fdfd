package orchestrator

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"

	"github.com/stretchr/testify/assert"
)

// The appended ids are their fmt forms, for empty, long and escaped parts.
func TestIDs_MatchTheirFmtForms(t *testing.T) {
	long := string(make([]byte, 300))
	var str sim.Strings
	for _, p := range [][2]string{{"", ""}, {"ns", "k"}, {"n%3As", "k:x"}, {long, long}} {
		for _, i := range []int{0, 7, -3, 1 << 40} {
			assert.Equal(t, fmt.Sprintf("thread:mcp:%s:%s:%d", p[0], p[1], i), idOf(&str, "thread:mcp:", p[0], p[1], i))
			assert.Equal(t, fmt.Sprintf("wait #%d of %s on %s", i, p[0], p[1]), waitEntity(i, p[0], p[1]))
		}
	}
}

// cat is the concatenation of its parts, for empty, long and very long ones.
func TestCat_IsConcatenation(t *testing.T) {
	o := &Orchestrator{env: &model.Env{}}
	for _, parts := range [][]string{nil, {""}, {"a", "", "b"}, {"message:mcp:", "ns", ":thread-send:", "k"},
		{string(make([]byte, 200)), "x"}, {string(make([]byte, 5000)), "y"}} {
		assert.Equal(t, strings.Join(parts, ""), o.cat(parts...))
	}
}
