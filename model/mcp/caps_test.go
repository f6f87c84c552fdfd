package mcp

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Caps.String is the comma-joined names of the set bits ("none" for
// none), for every value, the bits beyond the named ones ignored.
func TestCapsString_JoinsTheSetBitsNames(t *testing.T) {
	assert.Equal(t, "none", Caps(0).String())
	assert.Equal(t, "orchestration,preview", (CapOrchestration | CapPreview).String())
	for c := range 256 {
		assert.Equal(t, Caps(c).join(), Caps(c).String(), "caps %d", c)
	}
}
