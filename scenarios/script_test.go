package scenarios

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/require"

	scripts "github.com/orchsim/orchsim/script" // fidelity_test.go has a func script
)

var rewrite = flag.Bool("rewrite", false, "rewrite the fidelity scripts' expected output, and docs/fidelity.md's copy of the fidelity table, with the actual output (review the diff)")

// runScript runs one script file (package script) and fails t on an error
// or on output that differs from the file's; with -rewrite it writes the
// actual output into the file instead.
func runScript(t *testing.T, path string) {
	t.Helper()
	res, err := scripts.RunFile(path)
	require.NoError(t, err)
	if *rewrite {
		require.NoError(t, scripts.WriteAtomic(path, res.Rewritten()))
		return
	}
	if d := res.Diff(); d != "" {
		t.Errorf("output differs from the file's (-rewrite regenerates it):\n%s", d)
	}
}

// The script worlds use the scenarios' environment id (package script
// cannot import scenarios: this package's tests import it).
func TestScript_EnvironmentID(t *testing.T) {
	require.Equal(t, EnvironmentID, scripts.EnvironmentID)
}
