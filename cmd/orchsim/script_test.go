package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScript_EveryScriptMatches(t *testing.T) {
	code, out, errOut := cli(t, "script", "../../scenarios/testdata")
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `^ok: \d+ script files, \d+ commands match$`, lastLineOf(out))
	assert.Contains(t, out, "== ../../scenarios/testdata/terminal/feed_send.txt\n")
}

// copyScript copies a project script into a temporary directory under name.
func copyScript(t *testing.T, from, name string) (path string, data []byte) {
	t.Helper()
	data, err := os.ReadFile(from)
	require.NoError(t, err)
	path = filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path, data
}

// Editing one expected line makes the run exit 1 with a diff of that
// command; --rewrite puts the file back as it was.
func TestScript_EditedExpectedLineIsAMismatch(t *testing.T) {
	path, orig := copyScript(t, "../../scenarios/testdata/tab_ownership/idle_sweep", "idle_sweep")
	const line = "=> turn started with credential 9f4d0b34\n"
	require.Contains(t, string(orig), line)
	edited := strings.Replace(string(orig), line, "=> turn started with credential 00000000\n", 1)
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))

	code, out, errOut := cli(t, "script", path)
	require.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, out, path+":11: prompt thread=thread-a\n--- expected\n+++ actual\n")
	assert.Contains(t, out, "\n-=> turn started with credential 00000000\n+=> turn started with credential 9f4d0b34\n")
	assert.Equal(t, "mismatch: 1 of 15 commands differ in 1 of 1 script files", lastLineOf(out))
	assert.Empty(t, errOut)

	code, out, errOut = cli(t, "script", "--rewrite", path)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "ok: 1 script files, 15 commands; rewrote 1 files (1 commands changed)", lastLineOf(out))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(orig), string(got))
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
}

func TestScript_BadInputIsUsage(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(bad, []byte("# language: terminal\nnew profile=reported chek=none\n----\n"), 0o644))
	for _, args := range [][]string{{"script", bad}, {"script"}, {"script", filepath.Join(dir, "missing")}, {"script", t.TempDir()}} {
		code, _, errOut := cli(t, args...)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%v: one line on stderr: %q", args, errOut)
	}
	_, _, errOut := cli(t, "script", bad)
	assert.Equal(t, "orchsim: "+bad+":2: new: unknown or unused argument \"chek=none\"\n", errOut)
}

// A rewrite that cannot be written is exit 3. The temporary file's name
// (the script's name with a prefix and suffix) is too long for the file
// system, whoever runs the test.
func TestScript_WriteFailureIsHarness(t *testing.T) {
	path, orig := copyScript(t, "../../scenarios/testdata/tab_ownership/idle_sweep", strings.Repeat("s", 250))
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(orig), "9f4d0b34\n", "0\n", 1)), 0o644))
	code, _, errOut := cli(t, "script", "--rewrite", path)
	assert.Equal(t, exitHarness, code)
	assert.Contains(t, errOut, "orchsim: rewrite "+path+": ")
	assert.Equal(t, 1, strings.Count(errOut, "\n"))
}
