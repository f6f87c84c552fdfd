package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/sim"
)

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		// The test binary as the orchsim command (see command).
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

// asCLI makes the test binary run as orchsim itself.
const asCLI = "ORCHSIM_TEST_AS_CLI"

// command returns the test binary set up to run as orchsim with args, in
// its own process, with real file descriptors (a redirected stdout).
func command(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), asCLI+"=1")
	return cmd
}

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

// tabBugAlone is the profile these tests run tab-ownership under: every fix
// but stable-tab-owner, so the seeds they find fail on T3 Code #23021
// (thread-keeps-its-tabs) whatever bugs the reported profile gains.
var tabBugAlone = []string{"--profile", "fixed", "--unfix", "stable-tab-owner"}

// runTab returns the arguments of `run --scenario tab-ownership --seed
// seed` under tabBugAlone, then extra.
func runTab(seed string, extra ...string) []string {
	return append(append([]string{"run", "--scenario", "tab-ownership", "--seed", seed}, tabBugAlone...), extra...)
}

// firstFailingSeed finds a seed of tab-ownership that fails under
// tabBugAlone.
func firstFailingSeed(t *testing.T) string {
	for seed := 1; seed <= 20; seed++ {
		s := runTab(itoa(seed))
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
	code, out, errOut := cli(t, runTab(seed)...)
	assert.Equal(t, exitViolation, code)
	assert.Empty(t, errOut)
	assert.Regexp(t, violationLine, lastLineOf(out))
	assert.Contains(t, lastLineOf(out), "violation: thread-keeps-its-tabs")
	assert.True(t, strings.HasPrefix(out, "SEED "+seed+" scenario=tab-ownership profile=fixed~stable-tab-owner"), out[:80])
	assert.Contains(t, out, "agentMismatch")
}

func TestRun_FixedEndsOK(t *testing.T) {
	seed := firstFailingSeed(t)
	code, out, _ := cli(t, "run", "--scenario", "tab-ownership", "--seed", seed, "--profile", "fixed")
	assert.Equal(t, exitOK, code)
	assert.Regexp(t, okLine, lastLineOf(out))
	code, out, _ = cli(t, runTab(seed)...)
	assert.Equal(t, exitViolation, code, "the single switch is the fix: without it the seed fails")
	assert.Contains(t, lastLineOf(out), "violation: thread-keeps-its-tabs")
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
	code, out, _ := cli(t, runTab(seed, "--out", file)...)
	require.Equal(t, exitViolation, code)
	code, rout, rerr := cli(t, "replay", file)
	assert.Equal(t, exitViolation, code, rerr)
	assert.Contains(t, rout, "fingerprint matches")
	assert.Equal(t, lastLineOf(out), lastLineOf(rout), "replay prints the same last line")
	// The README's promise: replay's output is run's, byte for byte, with
	// the fingerprint line added before the last.
	lines := strings.SplitAfter(out, "\n")
	last := len(lines) - 2 // SplitAfter leaves "" after the final newline
	want := strings.Join(lines[:last], "") + "fingerprint matches: " + fingerprintOf(t, lines[last]) + "\n" + strings.Join(lines[last:], "")
	assert.Equal(t, want, rout)
}

// fingerprintOf returns the fingerprint= value of a run's last line.
func fingerprintOf(t *testing.T, last string) string {
	t.Helper()
	m := regexp.MustCompile(`fingerprint=([0-9a-f]{16})`).FindStringSubmatch(last)
	require.NotNil(t, m, "no fingerprint in %q", last)
	return m[1]
}

// failingReplayFile records a failing tab-ownership run and returns its
// path and bytes.
func failingReplayFile(t *testing.T) (string, []byte) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "failure.json")
	code, _, errOut := cli(t, runTab(firstFailingSeed(t), "--out", file)...)
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
	file, _ := failingReplayFile(t)
	// The same seed under the fixed profile, re-drawn from the seed (no tape).
	f, err := replay.Read(file)
	require.NoError(t, err)
	f.Profile, f.Fixes, f.Unfix, f.Tape = model.PresetFixed, nil, nil, nil
	require.NoError(t, replay.Write(file, f))
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
		"near command":         {"rn"},
		"no command":           {},
		"help unknown topic":   {"help", "frobnicate"},
		"help near topic":      {"help", "rn"},
		"fuzz zero budget":     {"fuzz", "--scenario", "chaos", "--budget", "0s"},
		"fuzz negative budget": {"fuzz", "--scenario", "chaos", "--budget", "-1s"},
		"negative shrink":      {"fuzz", "--scenario", "chaos", "--seeds", "1", "--shrink-budget", "-1s"},
		"corpus parent absent": {"fuzz", "--scenario", "chaos", "--seeds", "1", "--corpus", filepath.Join(dir, "no", "such")},
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

// withoutTapeHash returns replay file bytes b as a file written before
// tape hashes were: version 1 (a version-2 file with a tape must have a
// tape_hash), without its tape_hash and settings_hash.
func withoutTapeHash(b []byte) []byte {
	b = regexp.MustCompile(`,\s*"(tape|settings)_hash": "[0-9a-f]+"`).ReplaceAll(b, nil)
	return bytes.Replace(b, []byte(`"version": 2`), []byte(`"version": 1`), 1)
}

// A damaged tape is not a fix. With a tape_hash, the file is refused before
// anything runs (exit 2). In a version-1 file without one, a replay that did not follow its
// tape exits 3 with the counts and the first departure on stderr, never 0.
func TestReplay_DamagedTapeIsExit3(t *testing.T) {
	file, b := failingReplayFile(t)
	for name, n := range map[string]int{"cut to 10 choices": 10, "emptied": 0} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(file, withTape(t, b, n), 0o644))
			code, out, errOut := cli(t, "replay", file)
			assertUsage(t, code, out, errOut, "the tape was edited or damaged: ")

			require.NoError(t, os.WriteFile(file, withTape(t, withoutTapeHash(b), n), 0o644))
			code, out, errOut = cli(t, "replay", file)
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
	file, _ := failingReplayFile(t)
	f, err := replay.Read(file)
	require.NoError(t, err)
	f.Profile, f.Fixes, f.Unfix = model.PresetFixed, nil, nil // the tape stays
	require.NoError(t, replay.Write(file, f))
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
	f.Profile, f.Fixes, f.Unfix = model.PresetFixed, nil, []string{string(model.StableTabOwner)}
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
		assert.Contains(t, out, "fingerprint matches: ", "%s drifted: go test ./scenarios -run TestCorpus -rerecord", file)
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

// tapeEdit returns replay file bytes b with the first tape choice above 0
// lowered by one: still within its range.
func tapeEdit(t *testing.T, b []byte) []byte {
	t.Helper()
	re := regexp.MustCompile(`"v":([1-9][0-9]*)\}`)
	m := re.FindSubmatchIndex(b)
	require.NotNil(t, m, "a choice above 0")
	v, err := strconv.Atoi(string(b[m[2]:m[3]]))
	require.NoError(t, err)
	return append(append(append([]byte{}, b[:m[2]]...), strconv.Itoa(v-1)...), b[m[3]:]...)
}

// A file's tape_hash covers its tape, seed, scenario, strategy and off: a
// choice changed within its range, or another seed (which replay would
// print, with a fingerprint run --seed does not give), is refused before
// the run as an edited or damaged tape, not reported as fixed.
func TestReplay_EditedTapeOrSeedIsRefused(t *testing.T) {
	file, b := failingReplayFile(t)
	seed := regexp.MustCompile(`"seed": \d+`)
	for name, edited := range map[string][]byte{
		"a choice within its range": tapeEdit(t, b),
		"the seed":                  seed.ReplaceAll(b, []byte(`"seed": 2`)),
		"the seed, a fixed profile": seed.ReplaceAll([]byte(strings.Replace(string(b), `"profile": "reported"`, `"profile": "fixed"`, 1)), []byte(`"seed": 2`)),
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(file, edited, 0o644))
			code, out, errOut := cli(t, "replay", file)
			assertUsage(t, code, out, errOut, file+": the tape was edited or damaged: ")
		})
	}
}

var (
	recordedUnfix  = regexp.MustCompile(`"(unfix|fixes)": \[[^\]]*\],\s*`)
	recordedPreset = regexp.MustCompile(`"profile": "[a-z]+"`)
)

// asFixed edits replay file text s to the fixed preset: every fix on, no
// unfix.
func asFixed(s string) string {
	return recordedPreset.ReplaceAllString(recordedUnfix.ReplaceAllString(s, ""), `"profile": "fixed"`)
}

// The seed bugs' shrunk files are compacted (each site's trailing zero
// choices left out) and say so: under the fixed profile the replay follows
// their tapes, the left-out zeros included, and says "fixed:".
func TestReplay_CompactedCorpusFilesAreFixedUnderFixed(t *testing.T) {
	files, err := filepath.Glob("../../testdata/corpus/reported/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	dir := t.TempDir()
	for _, src := range files {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.Contains(t, string(b), `"compacted": true`, src)
		file := filepath.Join(dir, filepath.Base(src))
		require.NoError(t, os.WriteFile(file, []byte(asFixed(string(b))), 0o644))
		code, out, errOut := cli(t, "replay", file)
		assert.Equal(t, exitOK, code, "%s: %s", src, errOut)
		assert.Empty(t, errOut, src)
		assert.Contains(t, out, "fixed: "+file+" no longer fails", src)
		assert.Regexp(t, okLine, lastLineOf(out), src)
	}
}

// A compacted tape forgives a missing choice (the implicit 0), not a choice
// recorded for another range: that is still a departure (exit 3).
func TestReplay_CompactedTapeStillChecksRanges(t *testing.T) {
	b, err := os.ReadFile("../../testdata/corpus/reported/000-tab-ownership-thread-keeps-its-tabs.min.json")
	require.NoError(t, err)
	s := asFixed(string(withoutTapeHash(b)))
	edited := strings.Replace(s, `{"actor":"swarm","label":"watch","n":5,"v":1}`, `{"actor":"swarm","label":"watch","n":6,"v":1}`, 1)
	require.NotEqual(t, s, edited)
	file := filepath.Join(t.TempDir(), "x.min.json")
	require.NoError(t, os.WriteFile(file, []byte(edited), 0o644))
	code, out, errOut := cli(t, "replay", file)
	assert.Equal(t, exitHarness, code, errOut)
	assert.NotContains(t, out, "fixed:")
	assert.Contains(t, errOut, "found no recorded choice and 1 one for another range")
	assert.Contains(t, errOut, `first: swarm "watch" drew from 5 values after 0 events: its next recorded choice is for another range`)
}

// When the fingerprint matches, the recorded outcome must be the replay's:
// a violation added to a passing file, deleted from a failing one, or
// naming another invariant makes the file inconsistent (exit 3, one line),
// not "fingerprint matches" with the replay's status. A violation of an
// invariant that does not exist is a malformed file (exit 2).
func TestReplay_RecordedOutcomeMustMatchTheReplay(t *testing.T) {
	failing, _ := failingReplayFile(t)
	passing := filepath.Join(t.TempDir(), "pass.json")
	code, _, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "1", "--profile", "fixed", "--horizon", "2h", "--out", passing)
	require.Equal(t, exitOK, code, errOut)
	edit := func(path string, change func(f *replay.File)) {
		t.Helper()
		f, err := replay.Read(path)
		require.NoError(t, err)
		change(f)
		require.NoError(t, replay.Write(path, f))
	}
	edit(passing, func(f *replay.File) {
		f.Violation = &sim.Violation{Invariant: "thread-keeps-its-tabs", At: time.Hour, Message: "m"}
	})
	code, out, errOut := cli(t, "replay", passing)
	assert.Equal(t, exitHarness, code)
	assert.Regexp(t, okLine, lastLineOf(out))
	assert.NotContains(t, out, "fingerprint matches")
	assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	assert.Contains(t, errOut, passing+" is inconsistent: the fingerprint ")
	assert.Contains(t, errOut, "records a violation of thread-keeps-its-tabs at T+01:00:00.000 and the replay ended in no violation")

	b, err := os.ReadFile(failing)
	require.NoError(t, err)
	edit(failing, func(f *replay.File) { f.Violation = nil })
	code, out, errOut = cli(t, "replay", failing)
	assert.Equal(t, exitHarness, code)
	assert.Regexp(t, violationLine, lastLineOf(out))
	assert.Contains(t, errOut, "records no violation and the replay ended in a violation of thread-keeps-its-tabs")

	require.NoError(t, os.WriteFile(failing, b, 0o644))
	edit(failing, func(f *replay.File) { f.Violation.Invariant = "one-effect-per-request" })
	code, _, errOut = cli(t, "replay", failing)
	assert.Equal(t, exitHarness, code)
	assert.Contains(t, errOut, "records a violation of one-effect-per-request at ")

	require.NoError(t, os.WriteFile(failing, b, 0o644))
	edit(failing, func(f *replay.File) { f.Events++ })
	code, out, errOut = cli(t, "replay", failing)
	assert.Equal(t, exitHarness, code)
	assert.Regexp(t, violationLine, lastLineOf(out))
	assert.NotContains(t, out, "fingerprint matches")
	assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	assert.Regexp(t, `is inconsistent: the fingerprint [0-9a-f]{16} matches, but the file records \d+ events and the replay ran \d+`, errOut)

	require.NoError(t, os.WriteFile(failing, b, 0o644))
	edit(failing, func(f *replay.File) { f.Violation.Invariant = "no-such-invariant" })
	for _, cmd := range []string{"replay", "shrink", "explain"} {
		code, out, errOut = cli(t, cmd, failing)
		assertUsage(t, code, out, errOut, `the violation names unknown invariant "no-such-invariant"`)
	}
}

// shrink X.min.json improves a regular file in place, but when X.min.json
// is a link to the file being shrunk, writing it would replace that file:
// refused before shrinking (exit 2), the file untouched.
func TestShrink_RefusesALinkOverItsInput(t *testing.T) {
	file, b := failingReplayFile(t)
	min := strings.TrimSuffix(file, ".json") + ".min.json"
	require.NoError(t, os.Symlink(filepath.Base(file), min))
	for _, in := range []string{min, file} {
		code, out, errOut := cli(t, "shrink", in, "--runs", "10")
		assertUsage(t, code, out, errOut, min+" is a link to ", "the file being shrunk")
		got, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Equal(t, b, got, "the failure file is untouched")
	}
}

// A write that fails after shrinking comes after the story and the last
// line, as for run and replay: exit 3, one line on stderr.
func TestShrink_AWriteFailingAfterShrinkingPrintsTheStoryFirst(t *testing.T) {
	needDevFull(t)
	file, _ := failingReplayFile(t)
	require.NoError(t, os.Symlink("/dev/full", strings.TrimSuffix(file, ".json")+".min.json"))
	code, out, errOut := cli(t, "shrink", file, "--runs", "20")
	assert.Equal(t, exitHarness, code)
	assert.Contains(t, out, "SEED ")
	assert.Contains(t, out, "\nshrunk: ")
	assert.NotContains(t, out, "wrote ")
	assert.Regexp(t, violationLine, lastLineOf(out))
	assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	assert.Contains(t, errOut, "shrunk, but could not write ")
}

// The tape count before shrinking is the file's own tape: re-shrinking a
// shrunk file starts from its few choices, not from every draw the run made.
func TestShrink_CountsTheFilesTape(t *testing.T) {
	b, err := os.ReadFile("../../testdata/corpus/reported/000-tab-ownership-thread-keeps-its-tabs.min.json")
	require.NoError(t, err)
	f, err := replay.Parse(b)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "x.min.json")
	require.NoError(t, os.WriteFile(file, b, 0o644))
	code, out, errOut := cli(t, "shrink", file)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, fmt.Sprintf(", tape %d -> ", len(f.Tape)))
	got, err := replay.Read(file)
	require.NoError(t, err)
	assert.True(t, got.Compacted, "a shrunk file says its tape is compacted")
	assert.NotEmpty(t, got.TapeHash)
}

// reported is the path of the corpus file of the report whose name starts
// with prefix ("003-").
func reported(t *testing.T, prefix string) []byte {
	t.Helper()
	paths, err := filepath.Glob("../../testdata/corpus/reported/" + prefix + "*.min.json")
	require.NoError(t, err)
	require.Len(t, paths, 1)
	b, err := os.ReadFile(paths[0])
	require.NoError(t, err)
	return b
}

// Settings edited to test a fix (profile, fixes, mutants, horizon, event
// budget) change what is drawn: the replay is judged by its outcome, not
// its fingerprint or its tape. A fix that does not fix is "still fails:"
// (exit 1), not nondeterminism (exit 3); an unshrunk file's real fix is
// "fixed:" even though the fix changed draws before the last step.
func TestReplay_EditedSettingsAreJudgedByOutcome(t *testing.T) {
	dir := t.TempDir()
	f3 := string(reported(t, "003-"))
	write := func(name, s string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(s), 0o644))
		return path
	}
	for name, s := range map[string]string{
		"a settings edit that does not fix": strings.Replace(f3, `"unfix": [`, `"unfix": ["stable-tab-owner",`, 1),
		"the horizon":                       strings.Replace(f3, `"horizon": "1h0m0s"`, `"horizon": "2h0m0s"`, 1),
	} {
		file := write("f3.json", s)
		code, out, errOut := cli(t, "replay", file)
		assert.Equal(t, exitViolation, code, name+": "+errOut)
		assert.Empty(t, errOut, name)
		assert.Contains(t, out, "still fails: the settings of "+file+" were edited", name)
		assert.Contains(t, out, "recorded a violation of live-agent-survives-remount at T+00:00:33.003, now a violation of live-agent-survives-remount", name)
		assert.Regexp(t, violationLine, lastLineOf(out), name)
	}

	x := filepath.Join(dir, "x.json")
	code, _, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "3", "--out", x)
	require.Equal(t, exitViolation, code, errOut)
	b, err := os.ReadFile(x)
	require.NoError(t, err)
	file := write("x-fixed.json", strings.Replace(string(b), `"profile": "reported"`, `"profile": "fixed"`, 1))
	code, out, errOut := cli(t, "replay", file)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "fixed: "+file+" no longer fails with its edited settings")
	assert.Regexp(t, okLine, lastLineOf(out))

	pass := filepath.Join(dir, "pass.json")
	code, _, errOut = cli(t, "run", "--scenario", "tab-ownership", "--seed", "1", "--profile", "fixed", "--horizon", "2h", "--out", pass)
	require.Equal(t, exitOK, code, errOut)
	b, err = os.ReadFile(pass)
	require.NoError(t, err)
	file = write("pass-edited.json", strings.Replace(string(b), `"horizon": "2h0m0s"`, `"horizon": "3h0m0s"`, 1))
	code, out, errOut = cli(t, "replay", file)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "still passes: the settings of "+file+" were edited")
	assert.Regexp(t, okLine, lastLineOf(out))
}

// The three reported files carry a settings_hash and replay as recorded.
func TestReplay_ReportedFilesCarryASettingsHash(t *testing.T) {
	for _, prefix := range []string{"000-", "002-", "003-"} {
		f, err := replay.Parse(reported(t, prefix))
		require.NoError(t, err)
		assert.Equal(t, replay.SettingsHash(f), f.SettingsHash, prefix)
	}
}

// A run's event budget is part of its replay file: a failure to stay
// within --event-budget replays as that failure, not as "fixed:" under
// the default budget, and shrinks under it.
func TestReplay_EventBudgetIsRecorded(t *testing.T) {
	file := filepath.Join(t.TempDir(), "eb.json")
	code, _, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "1", "--event-budget", "50", "--out", file)
	require.Equal(t, exitViolation, code, errOut)
	f, err := replay.Read(file)
	require.NoError(t, err)
	assert.Equal(t, uint64(50), f.EventBudget)
	require.Equal(t, sim.EventBudgetExceeded, f.Violation.Invariant)
	code, out, errOut := cli(t, "replay", file)
	assert.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, out, "fingerprint matches: "+f.Fingerprint)
	code, out, errOut = cli(t, "shrink", file, "--runs", "3")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "wrote ")
	small, err := replay.Read(strings.TrimSuffix(file, ".json") + ".min.json")
	require.NoError(t, err)
	assert.Equal(t, uint64(50), small.EventBudget)
	code, out, errOut = cli(t, "explain", file)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, ": "+sim.EventBudgetExceeded+"\n", "explained under its own budget")
}

// Keys are matched exactly, once; fingerprints are lowercase hex: anything
// else is a malformed file (exit 2), not a replay of a guess.
func TestReplay_AmbiguousFilesAreMalformed(t *testing.T) {
	file, b := failingReplayFile(t)
	s := string(b)
	for name, edited := range map[string]string{
		"a duplicate key":     strings.Replace(s, `"seed": `, `"seed": 1, "seed": `, 1),
		"an upper-case key":   strings.Replace(s, `"seed": `, `"SEED": `, 1),
		"an upper-case print": regexp.MustCompile(`"fingerprint": "[0-9a-f]+"`).ReplaceAllStringFunc(s, strings.ToUpper),
		"an empty tape_hash":  regexp.MustCompile(`"tape_hash": "[0-9a-f]+"`).ReplaceAllString(s, `"tape_hash": ""`),
		"no tape_hash, v2":    regexp.MustCompile(`,\s*"tape_hash": "[0-9a-f]+"`).ReplaceAllString(s, ""),
	} {
		require.NotEqual(t, s, edited, name)
		require.NoError(t, os.WriteFile(file, []byte(edited), 0o644))
		code, out, errOut := cli(t, "replay", file)
		assertUsage(t, code, out, errOut, file+": ")
	}
}

// When only the violation's "at" or "message" was edited, the inconsistent
// file's message says which field differs (the outcomes read alike).
func TestReplay_InconsistentFileNamesTheField(t *testing.T) {
	file, _ := failingReplayFile(t)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	for field, change := range map[string]func(v *sim.Violation){
		`"at"`:      func(v *sim.Violation) { v.At++ },
		`"message"`: func(v *sim.Violation) { v.Message += "!" },
	} {
		require.NoError(t, os.WriteFile(file, b, 0o644))
		f, err := replay.Read(file)
		require.NoError(t, err)
		change(f.Violation)
		require.NoError(t, replay.Write(file, f))
		code, _, errOut := cli(t, "replay", file)
		assert.Equal(t, exitHarness, code)
		assert.Contains(t, errOut, "the violation's "+field+" differs", field)
	}
}

// Edits that change nothing a run does are not edits: the strict verdict
// (fingerprint matches) stays.
func TestReplay_NoOpSettingsEditsKeepTheStrictVerdict(t *testing.T) {
	// A reported-profile file, so that leaving the profile out is a no-op.
	file := filepath.Join(t.TempDir(), "reported.json")
	code, _, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "1", "--out", file)
	require.Equal(t, exitViolation, code, errOut)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	for name, edit := range map[string]func(string) string{
		"default budget written out": func(s string) string {
			return strings.Replace(s, `"horizon":`, `"event_budget": 5000000, "horizon":`, 1)
		},
		"profile left out": func(s string) string { return strings.Replace(s, `"profile": "reported",`, ``, 1) },
	} {
		t.Run(name, func(t *testing.T) {
			edited := edit(string(b))
			require.NotEqual(t, string(b), edited)
			require.NoError(t, os.WriteFile(file, []byte(edited), 0o644))
			code, out, errOut := cli(t, "replay", file)
			assert.Equal(t, exitViolation, code, errOut)
			assert.Contains(t, out, "fingerprint matches")
		})
	}
}

// A failure recorded under a small event budget is explained as one
// recorded under the default: a candidate the fix lets run to the horizon
// is not counted as still failing because it ran out of that budget.
func TestExplain_ASmallRecordedBudgetDoesNotFailTheCandidates(t *testing.T) {
	file := filepath.Join(t.TempDir(), "eb.json")
	code, _, errOut := cli(t, runTab("5", "--event-budget", "1000", "--out", file)...)
	require.Equal(t, exitViolation, code, errOut)
	code, out, errOut := cli(t, "explain", file)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "sufficient: [stable-tab-owner]")
	assert.Contains(t, out, "necessary: [stable-tab-owner]")
}

// A misspelt command, run or asked help for, names the nearest command on
// its one line.
func TestBadInput_MisspeltCommandSuggests(t *testing.T) {
	for _, args := range [][]string{{"rn"}, {"help", "rn"}} {
		code, _, errOut := cli(t, args...)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Contains(t, errOut, "(did you mean run?)", "%v", args)
	}
}
