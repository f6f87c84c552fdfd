package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Defects a fresh-clone review found, each pinned by the command it ran.

// A passing run recorded with run --out replays as recorded: exit 0 and a
// matching fingerprint (it was judged inconsistent, exit 3).
func TestReview_PassingRunReplays(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.json")
	code, _, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "2", "--profile", "fixed", "--horizon", "2h", "--out", file)
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut := cli(t, "replay", file)
	assert.Equal(t, exitOK, code, errOut)
	assert.Empty(t, errOut)
	assert.Contains(t, out, "fingerprint matches")
}

// script reads at most the 64 MiB every input may hold: /dev/zero is
// refused (that it returns at all shows the read is bounded), not read
// until memory runs out.
func TestReview_ScriptInputIsCapped(t *testing.T) {
	code, out, errOut := cli(t, "script", "/dev/zero")
	assertUsage(t, code, out, errOut, "/dev/zero: too large: over 64 MiB")
}

// A directory of scripts may hold links: to a directory (walked once), to
// a script, or to a device (not a script).
func TestReview_ScriptFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	restart, err := filepath.Abs("../../scenarios/testdata/restart")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(restart, filepath.Join(dir, "restart")))
	require.NoError(t, os.Symlink(dir, filepath.Join(dir, "loop")))
	require.NoError(t, os.Symlink("/dev/null", filepath.Join(dir, "null")))
	entries, err := os.ReadDir(restart)
	require.NoError(t, err)
	code, out, errOut := cli(t, "script", dir)
	require.Equal(t, exitOK, code, errOut)
	// Every script of the linked directory once, through one link; the
	// loop and the device add none.
	assert.Contains(t, lastLineOf(out), fmt.Sprintf("ok: %d script files", len(entries)))
}

// Script commands refuse what they cannot mean: a key given twice, a
// negative duration, a session or thread declared twice.
func TestReview_ScriptRefusesContradictions(t *testing.T) {
	for name, body := range map[string]string{
		"key twice":         "# language: terminal\nnew profile=fixed profile=reported\n----\n",
		"negative duration": "# language: terminal\nnew\n----\n\nrun for=-5s\n----\n",
		"agent twice":       "# language: terminal\nnew\n----\n\nagent s1\n----\n\nagent s1\n----\n",
		"thread twice":      "# language: t3\nnew threads=(thread-a:codex, thread-a:codex)\n----\n",
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "bad")
			require.NoError(t, os.WriteFile(file, []byte(body), 0o644))
			code, out, errOut := cli(t, "script", file)
			assert.Equal(t, exitUsage, code, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.True(t, strings.HasPrefix(errOut, "orchsim: "+file+":"), errOut)
		})
	}
}

// A replay file may not carry what the command line refuses: an empty
// profile, an empty or repeated name, an event budget of 0.
func TestReview_ReplayFileSettingsAreChecked(t *testing.T) {
	file, b := failingReplayFile(t)
	s := string(b)
	for name, edited := range map[string]string{
		"empty profile": regexp.MustCompile(`"profile": "[a-z]+"`).ReplaceAllString(s, `"profile": ""`),
		"empty unfix":   strings.Replace(s, `"unfix": [`, `"unfix": ["",`, 1),
		"unfix twice":   strings.Replace(s, `"unfix": [`, `"unfix": ["stable-tab-owner",`, 1),
		"zero budget":   strings.Replace(s, `"horizon":`, `"event_budget": 0, "horizon":`, 1),
		"empty mutant":  strings.Replace(s, `"seed":`, `"mutants": [""], "seed":`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			require.NotEqual(t, s, edited)
			require.NoError(t, os.WriteFile(file, []byte(edited), 0o644))
			code, out, errOut := cli(t, "replay", file)
			assertUsage(t, code, out, errOut, "malformed replay file: ")
		})
	}
}

// fuzz checks its corpus directory before the run, like every output.
func TestReview_FuzzCorpusCheckedFirst(t *testing.T) {
	_, err := os.Stat("/sys/kernel")
	require.NoError(t, err, "this test needs Linux's /sys/kernel: a directory that exists and takes no file")
	code, out, errOut := cli(t, "fuzz", "--scenario", "tab-ownership", "--seeds", "300", "--corpus", "/sys/kernel")
	assertUsage(t, code, out, errOut, "--corpus: ")
}

// A value flag given twice, or a list naming one thing twice, is bad usage
// (the first was silently dropped).
func TestReview_FlagsGivenTwice(t *testing.T) {
	for name, args := range map[string][]string{
		"seed twice":  {"run", "--scenario", "tab-ownership", "--seed", "5", "--seed", "6"},
		"fix a,a":     {"run", "--scenario", "tab-ownership", "--seed", "5", "--fix", "stable-tab-owner,stable-tab-owner"},
		"unfix twice": {"run", "--scenario", "tab-ownership", "--seed", "5", "--profile", "fixed", "--unfix", "stable-tab-owner", "--unfix", "stable-tab-owner"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := cli(t, args...)
			assertUsage(t, code, out, errOut)
			assert.Regexp(t, `given twice|names stable-tab-owner twice`, errOut)
		})
	}
	// Two different list entries across repeats are fine.
	code, _, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "5", "--profile", "fixed",
		"--unfix", "stable-tab-owner", "--unfix", "keep-pty-size")
	assert.Equal(t, exitViolation, code, errOut)
}

// cobra's completion command refuses an unknown shell like any bad argument.
func TestReview_CompletionUnknownShell(t *testing.T) {
	code, out, errOut := cli(t, "completion", "bogus")
	assertUsage(t, code, out, errOut, `unknown shell "bogus"`)
	code, out, _ = cli(t, "completion", "bash")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "bash completion")
}
