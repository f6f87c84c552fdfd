//go:build orchsim_extra_invariant

package script

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/invariants"
)

// In the test build with the extra invariant, the scripts that check their
// language's default groups run it: it reached them, and (TestScripts in
// the same build) no expected output changed.
func TestExtraInvariantReachesTheScripts(t *testing.T) {
	for _, path := range []string{testdata + "/terminal/blank_pane.txt", testdata + "/tab_ownership/idle_sweep"} {
		before := invariants.ExtraObserved
		_, err := RunFile(path)
		require.NoError(t, err)
		require.Greater(t, invariants.ExtraObserved, before, "%s ran the extra invariant", path)
	}
}
