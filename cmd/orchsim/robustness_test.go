package main

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 18, item 1: a failed write to stdout is exit 3 with one line on
// stderr, for every subcommand (it was ignored, exit 0, or bad usage,
// exit 2). Each runs in its own process with stdout on /dev/full.
func TestStdout_AFailedWriteIsExit3Everywhere(t *testing.T) {
	needDevFull(t)
	failing, _ := failingReplayFile(t)
	a, b := mergeable(t, t.TempDir())
	for name, args := range map[string][]string{
		"fuzz":            {"fuzz", "--scenario", "all", "--seeds", "10", "--profile", "fixed"}, // few: a slow machine would add a progress line every 5 s
		"explain":         {"explain", failing},
		"mutants":         {"mutants", "--seeds", "100"},
		"merge-summaries": {"merge-summaries", a, b},
		"list":            {"list"},
		"bench":           {"bench", "--quick"},
		"run":             {"run", "--scenario", "tab-ownership", "--seed", "5"},
		"replay":          {"replay", failing},
		"shrink":          {"shrink", failing, "--runs", "20"},
		"help":            {"--help"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			require.NoError(t, err)
			defer full.Close()
			cmd := command(t, args...)
			var errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = full, &errb
			err = cmd.Run()
			assert.Equal(t, exitHarness, cmd.ProcessState.ExitCode(), "err %v, stderr %q", err, errb.String())
			assert.Equal(t, 1, strings.Count(errb.String(), "\n"), "one line on stderr, got %q", errb.String())
			assert.Contains(t, errb.String(), "orchsim: cannot write to stdout: ")
			assert.Contains(t, errb.String(), "no space left on device")
		})
	}
}

// Issue 18, item 2: an input is read up to replay.MaxInputBytes, so
// /dev/zero (which never ends: that the command returns at all shows the
// read is bounded) is refused as too large, exit 2, as is a regular file
// over the limit (refused by its size). No wall-clock bound: a loaded
// machine made one flaky, and speed goals live in benchmarks.
func TestInput_AnOversizedFileIsRefusedQuickly(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<30)) // sparse: a gigabyte on no disk
	require.NoError(t, f.Close())
	for name, args := range map[string][]string{
		"replay /dev/zero":          {"replay", "/dev/zero"},
		"shrink /dev/zero":          {"shrink", "/dev/zero"},
		"explain /dev/zero":         {"explain", "/dev/zero"},
		"merge-summaries /dev/zero": {"merge-summaries", "/dev/zero"},
		"replay a 1 GiB file":       {"replay", big},
		"merge a 1 GiB file":        {"merge-summaries", big},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := cli(t, args...)
			assertUsage(t, code, out, errOut, "too large: over 64 MiB")
		})
	}
}

// Issue 18, item 5: every string or list flag refuses an empty value
// (--profile "", --fix "" and --shard "" were taken as not given while
// --scenario "" and --out "" were refused), and "-" is not taken as a
// file name: orchsim never wrote stdout for it, it wrote a file named "-".
func TestFlags_EmptyValuesAndDashAreRefused(t *testing.T) {
	run := []string{"run", "--scenario", "tab-ownership", "--seed", "1"}
	fuzz := []string{"fuzz", "--scenario", "tab-ownership", "--seeds", "1"}
	with := func(base []string, more ...string) []string { return append(append([]string{}, base...), more...) }
	dir := t.TempDir()
	t.Chdir(dir)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"--profile empty":   {with(run, "--profile", ""), `invalid argument "" for "--profile" flag: must not be empty`},
		"--fix empty":       {with(run, "--fix", ""), `invalid argument "" for "--fix" flag: must not be empty`},
		"--fix empty name":  {with(run, "--fix", "stable-tab-owner,"), `"stable-tab-owner," has an empty name`},
		"--unfix empty":     {with(run, "--unfix", ""), `"--unfix" flag: must not be empty`},
		"--mutant empty":    {with(run, "--mutant", " "), `"--mutant" flag: must not be empty`},
		"--shard empty":     {with(fuzz, "--shard", ""), `"--shard" flag: must not be empty`},
		"fuzz --fix empty":  {with(fuzz, "--fix", ""), `"--fix" flag: must not be empty`},
		"--scenario empty":  {[]string{"run", "--scenario", "", "--seed", "1"}, `"--scenario" flag: must not be empty`},
		"--out empty":       {with(run, "--out", ""), `"--out" flag: must not be empty`},
		"--strategy empty":  {with(run, "--strategy", ""), `"--strategy" flag: must not be empty`},
		"--out -":           {with(run, "--out", "-"), `--out "-": "-" is not stdin or stdout`},
		"--trace -":         {with(run, "--trace", "-"), `--trace "-"`},
		"--html -":          {with(run, "--html", "-"), `--html "-"`},
		"fuzz --json -":     {with(fuzz, "--json", "-"), `--json "-"`},
		"fuzz --corpus -":   {with(fuzz, "--corpus", "-"), `--corpus "-"`},
		"replay -":          {[]string{"replay", "-"}, `a replay file "-"`},
		"merge-summaries -": {[]string{"merge-summaries", "-"}, `a summary "-"`},
		"merge --out -":     {[]string{"merge-summaries", "--out", "-", "x.json"}, `--out "-"`},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := cli(t, tc.args...)
			assertUsage(t, code, out, errOut, tc.want)
		})
	}
	_, err := os.Stat(filepath.Join(dir, "-"))
	assert.ErrorIs(t, err, os.ErrNotExist, "no file named -")
}

// reproduceCommand reads the "Reproduce" command out of an HTML report.
func reproduceCommand(t *testing.T, page string) []string {
	t.Helper()
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	m := regexp.MustCompile(`<code id="replay-cmd">([^<]*)</code>`).FindSubmatch(b)
	require.NotNil(t, m, "the page has a Reproduce command")
	args := strings.Fields(html.UnescapeString(string(m[1])))
	require.Equal(t, "orchsim", args[0])
	return args[1:]
}

// Issue 18, item 3: the HTML report's Reproduce command carries every flag
// that changes the run (--event-budget was dropped, so the page's command
// failed another way), and running it ends in the same last line.
func TestHTML_ReproduceCommandReproduces(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		args []string
		flag string
	}{
		"event budget": {[]string{"--seed", "1", "--event-budget", "10"}, "--event-budget 10"},
		"unfix":        {[]string{"--seed", "5", "--profile", "fixed", "--unfix", "stable-tab-owner"}, "--profile fixed --unfix stable-tab-owner"},
		"fix and pct":  {[]string{"--seed", "3", "--fix", "stable-tab-owner", "--strategy", "pct", "--horizon", "2h"}, "--fix stable-tab-owner --strategy pct --horizon 2h0m0s"},
		"mutant":       {[]string{"--seed", "2", "--profile", "fixed", "--mutant", "ignore-tab-owner"}, "--profile fixed --mutant ignore-tab-owner"},
	} {
		t.Run(name, func(t *testing.T) {
			page := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".html")
			args := append([]string{"run", "--scenario", "tab-ownership", "--html", page}, tc.args...)
			code, out, errOut := cli(t, args...)
			require.Contains(t, []int{exitOK, exitViolation}, code, errOut)
			again := reproduceCommand(t, page)
			assert.Contains(t, strings.Join(again, " "), tc.flag)
			code2, out2, errOut2 := cli(t, again...)
			assert.Equal(t, code, code2, errOut2)
			assert.Equal(t, lastLineOf(out), lastLineOf(out2), "the page's command ends as the run did")
		})
	}
	code, out, _ := cli(t, "run", "--scenario", "tab-ownership", "--seed", "1", "--event-budget", "10")
	assert.Equal(t, exitViolation, code)
	assert.Contains(t, lastLineOf(out), "violation: event-budget-exceeded")
}

// withField returns replay file bytes b with one top-level field set to
// the JSON value v.
func withField(t *testing.T, b []byte, key, v string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	m[key] = json.RawMessage(v)
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

// Issue 18, item 4: shrink and explain replay the file first and refuse
// what replay refuses (exit 3): an edited fingerprint (shrink wrote a
// .min.json, explain exited 0) and a violation set to null whose trace
// still fails (explain exited 0).
func TestShrinkAndExplain_CheckTheRecordedFingerprint(t *testing.T) {
	_, b := failingReplayFile(t)
	dir := t.TempDir()
	edited := filepath.Join(dir, "edited.json")
	require.NoError(t, os.WriteFile(edited, withField(t, b, "fingerprint", `"0123456789abcdef"`), 0o644))
	noViolation := filepath.Join(dir, "noviolation.json")
	require.NoError(t, os.WriteFile(noViolation, withField(t, b, "violation", "null"), 0o644))

	code, _, errOut := cli(t, "replay", edited)
	assert.Equal(t, exitHarness, code, errOut)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"shrink edited fingerprint":  {[]string{"shrink", edited}, "shrink: fingerprint mismatch: " + edited + " recorded 0123456789abcdef"},
		"explain edited fingerprint": {[]string{"explain", edited}, "explain: fingerprint mismatch: " + edited + " recorded 0123456789abcdef"},
		"explain null violation":     {[]string{"explain", noViolation}, "explain: " + noViolation + " is inconsistent"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := cli(t, tc.args...)
			assert.Equal(t, exitHarness, code, out)
			assert.Empty(t, out, "nothing explained or shrunk")
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line on stderr, got %q", errOut)
			assert.Contains(t, errOut, tc.want)
		})
	}
	_, err := os.Stat(filepath.Join(dir, "edited.min.json"))
	assert.ErrorIs(t, err, os.ErrNotExist, "no .min.json written")
}

// Issue 18, item 6: merge-summaries --markdown calls a story "shrunk" only
// when the shards shrank their stories.
func TestMergeSummaries_MarkdownSaysWhetherStoriesAreShrunk(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		shrinkRuns string
		want, not  string
	}{
		{"0", "<summary>story, not shrunk (--shrink-runs 0)</summary>", "shrunk story"},
		{"20", "<summary>shrunk story</summary>", "not shrunk"},
	} {
		t.Run(tc.shrinkRuns, func(t *testing.T) {
			sum := filepath.Join(dir, "sum-"+tc.shrinkRuns+".json")
			code, _, errOut := cli(t, "fuzz", "--scenario", "tab-ownership", "--seeds", "5", "--shrink-runs", tc.shrinkRuns, "--json", sum)
			require.Equal(t, exitViolation, code, errOut)
			md := filepath.Join(dir, "sum-"+tc.shrinkRuns+".md")
			code, _, errOut = cli(t, "merge-summaries", "--markdown", md, sum)
			require.Equal(t, exitViolation, code, errOut)
			b, err := os.ReadFile(md)
			require.NoError(t, err)
			assert.Contains(t, string(b), tc.want)
			assert.NotContains(t, string(b), tc.not)
		})
	}
}
