package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxCLIFileLines bounds each non-test source file of the CLI (issue 18):
// the CLI parses flags, reads and writes files and prints; a file that
// grows past this is logic that belongs in a package with its own tests.
const maxCLIFileLines = 300

func TestCLI_SourceFilesStaySmall(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.LessOrEqual(t, bytes.Count(b, []byte("\n")), maxCLIFileLines, "%s: move its logic into a package", f)
	}
}
