package mcp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Expect only sizes a fresh registry: a sized one issues and resolves what
// an unsized one does, and Expect after an issue keeps what was issued.
func TestRegistryExpect_SizesOnlyAFreshRegistry(t *testing.T) {
	for _, p := range profiles() {
		x := newReg(t, p)
		x.r.Expect(1000)
		c := x.r.Issue("thread-a", "codex", CapPreview, "inc-1")
		require.NotNil(t, c)
		assert.Same(t, c, x.r.Resolve(c.Token))
		x.r.Expect(10)
		assert.Same(t, c, x.r.Resolve(c.Token), "Expect after an issue must keep the credential")
	}
}
