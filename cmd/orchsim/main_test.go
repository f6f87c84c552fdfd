package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"orchsim/model"
	"orchsim/replay"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func lastLineOf(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

var (
	violationLine = regexp.MustCompile(`^violation: [a-z-]+ at T\+\d{2,}:\d{2}:\d{2}\.\d{3} seed=\d+ fingerprint=[0-9a-f]{16}$`)
	okLine        = regexp.MustCompile(`^ok: \d+ events, \S+ virtual, seed=\d+ fingerprint=[0-9a-f]{16}$`)
)

// firstFailingSeed finds a seed of tab-ownership that fails under reported.
func firstFailingSeed(t *testing.T) string {
	for seed := 1; seed <= 20; seed++ {
		s := []string{"run", "--scenario", "tab-ownership", "--seed", itoa(seed)}
		if code, _, _ := cli(t, s...); code == exitViolation {
			return itoa(seed)
		}
	}
	t.Fatal("no failing seed in 1-20")
	return ""
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(i)) }

func fmtInt(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
		if i == 0 {
			return string(b)
		}
	}
}

func TestRun_ViolationIsTheLastLine(t *testing.T) {
	seed := firstFailingSeed(t)
	code, out, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", seed)
	assert.Equal(t, exitViolation, code)
	assert.Empty(t, errOut)
	assert.Regexp(t, violationLine, lastLineOf(out))
	assert.Contains(t, lastLineOf(out), "violation: thread-keeps-its-tabs")
	assert.True(t, strings.HasPrefix(out, "SEED "+seed+" scenario=tab-ownership profile=reported"), out[:80])
	assert.Contains(t, out, "agentMismatch")
}

func TestRun_FixedEndsOK(t *testing.T) {
	seed := firstFailingSeed(t)
	code, out, _ := cli(t, "run", "--scenario", "tab-ownership", "--seed", seed, "--profile", "fixed")
	assert.Equal(t, exitOK, code)
	assert.Regexp(t, okLine, lastLineOf(out))
	code, out, _ = cli(t, "run", "--scenario", "tab-ownership", "--seed", seed, "--fix", "stable-tab-owner")
	assert.Equal(t, exitOK, code, "the single switch is the fix")
	assert.Regexp(t, okLine, lastLineOf(out))
}

func TestRun_TraceIsByteIdenticalAcrossRuns(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	cli(t, "run", "--scenario", "tab-ownership", "--seed", "7", "--trace", a)
	cli(t, "run", "--scenario", "tab-ownership", "--seed", "7", "--trace", b)
	ba, err := os.ReadFile(a)
	require.NoError(t, err)
	bb, err := os.ReadFile(b)
	require.NoError(t, err)
	assert.NotEmpty(t, ba)
	assert.Equal(t, ba, bb)
}

func TestRun_OutThenReplayReproduces(t *testing.T) {
	seed := firstFailingSeed(t)
	file := filepath.Join(t.TempDir(), "failure.json")
	code, out, _ := cli(t, "run", "--scenario", "tab-ownership", "--seed", seed, "--out", file)
	require.Equal(t, exitViolation, code)
	code, rout, rerr := cli(t, "replay", file)
	assert.Equal(t, exitViolation, code, rerr)
	assert.Contains(t, rout, "fingerprint matches")
	assert.Equal(t, lastLineOf(out), lastLineOf(rout), "replay prints the same last line")
}

// failingReplayFile records a failing tab-ownership run and returns its
// path and bytes.
func failingReplayFile(t *testing.T) (string, []byte) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "failure.json")
	code, _, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", firstFailingSeed(t), "--out", file)
	require.Equal(t, exitViolation, code, errOut)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	return file, b
}

func TestReplay_FingerprintMismatchIsExit3(t *testing.T) {
	file, b := failingReplayFile(t)
	tampered := regexp.MustCompile(`"fingerprint": "[0-9a-f]{16}"`).ReplaceAll(b, []byte(`"fingerprint": "0000000000000000"`))
	require.NoError(t, os.WriteFile(file, tampered, 0o644))
	code, _, errOut := cli(t, "replay", file)
	assert.Equal(t, exitHarness, code)
	assert.Contains(t, errOut, "fingerprint mismatch")
}

// A file of the previous format (FNV-1a fingerprint) still replays: the
// violation decides the exit status, the fingerprint is not compared, and
// the note says how to re-record it.
func TestReplay_LegacyFormatReplaysWithoutComparingTheFingerprint(t *testing.T) {
	file, b := failingReplayFile(t)
	legacy := strings.Replace(string(b), `"version": 2`, `"version": 1`, 1)
	legacy = regexp.MustCompile(`"fingerprint": "[0-9a-f]{16}"`).ReplaceAllString(legacy, `"fingerprint": "06a4540c915519de"`)
	require.NoError(t, os.WriteFile(file, []byte(legacy), 0o644))
	code, out, errOut := cli(t, "replay", file)
	assert.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, out, "not compared: ")
	assert.Contains(t, out, "orchsim shrink "+file)
	assert.True(t, strings.HasPrefix(lastLineOf(out), "violation: thread-keeps-its-tabs"), lastLineOf(out))
}

func TestReplay_FixedFailureSaysSo(t *testing.T) {
	file, b := failingReplayFile(t)
	// The same seed under the fixed profile, re-drawn from the seed (no tape).
	fixed := strings.Replace(string(b), `"profile": "reported"`, `"profile": "fixed"`, 1)
	fixed = fixed[:strings.Index(fixed, `,
  "tape"`)] + "\n}\n"
	require.NoError(t, os.WriteFile(file, []byte(fixed), 0o644))
	code, out, errOut := cli(t, "replay", file)
	assert.Equal(t, exitOK, code, errOut)
	assert.True(t, strings.Contains(out, "fixed: "), "replay says the failure is fixed; last line %q", lastLineOf(out))
}

func TestBadInput_IsExit2WithOneLine(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.json")
	require.NoError(t, os.WriteFile(garbage, []byte("{not json"), 0o644))
	future := filepath.Join(dir, "future.json")
	require.NoError(t, os.WriteFile(future, []byte(`{"format":"orchsim-replay","version":99,"scenario":"tab-ownership","fingerprint":"0000000000000000"}`), 0o644))
	cases := map[string][]string{
		"unknown scenario":     {"run", "--scenario", "nope", "--seed", "1"},
		"missing seed":         {"run", "--scenario", "tab-ownership"},
		"missing scenario":     {"run", "--seed", "1"},
		"negative seed":        {"run", "--scenario", "tab-ownership", "--seed", "-1"},
		"bad seed":             {"run", "--scenario", "tab-ownership", "--seed", "x"},
		"unknown profile":      {"run", "--scenario", "tab-ownership", "--seed", "1", "--profile", "best"},
		"unknown switch":       {"run", "--scenario", "tab-ownership", "--seed", "1", "--fix", "nope"},
		"unknown mutant":       {"run", "--scenario", "tab-ownership", "--seed", "1", "--mutant", "nope"},
		"bad horizon":          {"run", "--scenario", "tab-ownership", "--seed", "1", "--horizon", "soon"},
		"negative horizon":     {"run", "--scenario", "tab-ownership", "--seed", "1", "--horizon", "-1h"},
		"bad format":           {"run", "--scenario", "tab-ownership", "--seed", "1", "--format", "xml"},
		"unknown flag":         {"run", "--scenario", "tab-ownership", "--seed", "1", "--frobnicate"},
		"unknown command":      {"frobnicate"},
		"replay missing file":  {"replay", filepath.Join(dir, "absent.json")},
		"replay garbage":       {"replay", garbage},
		"replay future format": {"replay", future},
		"replay no args":       {"replay"},
		"unwritable out":       {"run", "--scenario", "tab-ownership", "--seed", "1", "--profile", "fixed", "--out", filepath.Join(dir, "no", "such", "dir.json")},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := cli(t, args...)
			assert.Equal(t, exitUsage, code)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line on stderr, got %q", errOut)
			assert.True(t, strings.HasPrefix(errOut, "orchsim: "), errOut)
		})
	}
}

func TestList_NamesTheContracts(t *testing.T) {
	code, out, _ := cli(t, "list")
	assert.Equal(t, exitOK, code)
	for _, want := range []string{"tab-ownership", "no-cross-thread-tab-action", "human-control-exclusive",
		"thread-keeps-its-tabs", "revoked-credential-denied", "stale-cleanup-spares-replacement",
		"stable-tab-owner", "ignore-tab-owner", "revoke-by-thread"} {
		assert.Contains(t, out, want)
	}
}

// withTape returns replay file bytes b with its tape replaced by the first n
// choices ("tape": [] for n == 0).
func withTape(t *testing.T, b []byte, n int) []byte {
	t.Helper()
	s := string(b)
	i := strings.Index(s, `,
  "tape": [`)
	require.Positive(t, i, "the file has a tape")
	lines := strings.Split(s[i:], "\n")[2:] // the choices, then "  ]" and "}"
	require.Greater(t, len(lines), n+2)
	kept := strings.Join(lines[:n], "\n")
	if n == 0 {
		return []byte(s[:i] + ",\n  \"tape\": []\n}\n")
	}
	return []byte(s[:i] + ",\n  \"tape\": [\n" + strings.TrimSuffix(kept, ",") + "\n  ]\n}\n")
}

// A replay file is one JSON object: garbage after it or a second object is
// a malformed file (exit 2), not a replay of the first object.
func TestReplay_DataAfterTheObjectIsMalformed(t *testing.T) {
	file, b := failingReplayFile(t)
	for name, tail := range map[string]string{"garbage": "trailing garbage\n", "second object": string(b)} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(file, append(append([]byte{}, b...), tail...), 0o644))
			code, out, errOut := cli(t, "replay", file)
			assertUsage(t, code, out, errOut, "malformed replay file")
		})
	}
}

// A damaged tape is not a fix: a replay that did not follow its tape exits
// 3 with the counts and the first departure on stderr, never 0.
func TestReplay_DamagedTapeIsExit3(t *testing.T) {
	file, b := failingReplayFile(t)
	for name, n := range map[string]int{"cut to 10 choices": 10, "emptied": 0} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(file, withTape(t, b, n), 0o644))
			code, out, errOut := cli(t, "replay", file)
			assert.Equal(t, exitHarness, code)
			assert.NotContains(t, out, "fixed:")
			assert.Regexp(t, okLine, lastLineOf(out), "the run's last line is still the last line")
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line on stderr, got %q", errOut)
			assert.Contains(t, errOut, "the replay did not follow its tape: ")
			assert.Regexp(t, `\d+ draws in the first \d+ events found no recorded choice`, errOut)
			assert.Contains(t, errOut, "first: ")
		})
	}
}

// The whole recorded tape under the fixed profile is a real fix: the
// replay follows the tape up to the failing step, then goes on.
func TestReplay_FixedWithItsTapeSaysSo(t *testing.T) {
	file, b := failingReplayFile(t)
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(b), `"profile": "reported"`, `"profile": "fixed"`, 1)), 0o644))
	code, out, errOut := cli(t, "replay", file)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "fixed: "+file+" no longer fails")
	assert.Regexp(t, okLine, lastLineOf(out))
}

// A recorded pass that now fails is a regression, the mirror of fixed:
// exit 1 with a note and the violation as the last line.
func TestReplay_RegressedPassIsExit1(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pass.json")
	code, _, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", firstFailingSeed(t), "--profile", "fixed", "--out", file)
	require.Equal(t, exitOK, code, errOut)
	f, err := replay.Read(file)
	require.NoError(t, err)
	f.Profile, f.Fixes = model.PresetReported, nil
	require.NoError(t, replay.Write(file, f))
	for _, format := range []string{"text", "mermaid"} {
		code, out, errOut := cli(t, "replay", file, "--format", format)
		assert.Equal(t, exitViolation, code, errOut)
		assert.Contains(t, out, "regressed: "+file+" passed when recorded, now fails with thread-keeps-its-tabs")
		assert.Regexp(t, violationLine, strings.TrimPrefix(lastLineOf(out), "%% "))
	}
}

// The seed bugs' shrunk files replay cleanly: their compacted tapes leave
// out trailing zero choices, which the matching fingerprint vouches for.
func TestReplay_CorpusReplaysCleanly(t *testing.T) {
	files, err := filepath.Glob("../../testdata/corpus/reported/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		code, out, errOut := cli(t, "replay", file)
		assert.Equal(t, exitViolation, code, "%s: %s", file, errOut)
		assert.Empty(t, errOut, file)
		assert.Contains(t, out, "fingerprint matches: ", file)
	}
	file, _ := failingReplayFile(t)
	code, out, errOut := cli(t, "replay", file)
	assert.Equal(t, exitViolation, code, errOut)
	assert.Empty(t, errOut)
	assert.Contains(t, out, "fingerprint matches: ")
}

// shrink is bounded by runs, not wall time: the same file shrinks to the
// same bytes twice, and a bad --runs is bad usage.
func TestShrink_IsDeterministicAndBoundedByRuns(t *testing.T) {
	file, _ := failingReplayFile(t)
	var outs []string
	for range 2 {
		code, out, errOut := cli(t, "shrink", file, "--runs", "40")
		require.Equal(t, exitOK, code, errOut)
		m := regexp.MustCompile(`shrunk: (\d+) runs`).FindStringSubmatch(out)
		require.NotNil(t, m, out)
		n, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		assert.LessOrEqual(t, n, 40)
		b, err := os.ReadFile(strings.TrimSuffix(file, ".json") + ".min.json")
		require.NoError(t, err)
		outs = append(outs, string(b))
	}
	assert.Equal(t, outs[0], outs[1])
	code, _, errOut := cli(t, "shrink", file, "--runs", "0")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "orchsim: --runs must be positive\n", errOut)
}
