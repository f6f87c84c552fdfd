package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/replay"
)

// --profile fixed --unfix X is every fix but X: the bug X fixes is
// explored alone (issue 13).
func TestUnfix_FixedMinusTheSwitchFindsItsBug(t *testing.T) {
	code, out, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "5", "--profile", "fixed", "--unfix", "stable-tab-owner")
	assert.Equal(t, exitViolation, code, errOut)
	assert.True(t, strings.HasPrefix(lastLineOf(out), "violation: thread-keeps-its-tabs "), lastLineOf(out))
	assert.Contains(t, out, "profile=fixed~stable-tab-owner")
	code, out, _ = cli(t, "run", "--scenario", "tab-ownership", "--seed", "5", "--profile", "fixed")
	assert.Equal(t, exitOK, code, "the fix is what the unfix turned off")
	assert.Regexp(t, okLine, lastLineOf(out))
}

// An unknown --unfix name, or one both fixed and unfixed, is bad usage on
// every command that has the flag: exit 2, one line.
func TestUnfix_BadNamesAreBadUsage(t *testing.T) {
	file, _ := failingReplayFile(t)
	for name, args := range map[string][]string{
		"run":     {"run", "--scenario", "tab-ownership", "--seed", "1", "--unfix", "nope"},
		"fuzz":    {"fuzz", "--scenario", "all", "--seeds", "1", "--unfix", "nope"},
		"replay":  {"replay", file, "--unfix", "nope"},
		"explain": {"explain", file, "--unfix", "nope"},
		"mutants": {"mutants", "--seeds", "1", "--unfix", "nope"},
		"both":    {"run", "--scenario", "tab-ownership", "--seed", "1", "--fix", "stable-tab-owner", "--unfix", "stable-tab-owner"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := cli(t, args...)
			assertUsage(t, code, out, errOut)
			if name == "both" {
				assert.Contains(t, errOut, `switch "stable-tab-owner" is both fixed and unfixed`)
			} else {
				assert.Contains(t, errOut, `unknown switch "nope"`)
			}
		})
	}
}

// An --unfix that turns nothing off is bad usage, not a silent no-op: any
// switch under reported, one upstream never merged under upstream, and one
// a replay file already has off.
func TestUnfix_AlreadyOffIsBadUsage(t *testing.T) {
	file := "../../testdata/corpus/reported/002-request-retry-one-effect-per-request.min.json"
	for name, args := range map[string][]string{
		"run reported":  {"run", "--scenario", "tab-ownership", "--seed", "1", "--unfix", "stable-tab-owner"},
		"fuzz upstream": {"fuzz", "--scenario", "request-retry", "--profile", "upstream", "--seeds", "1", "--unfix", "single-backend-per-home"},
		"replay":        {"replay", file, "--unfix", "stable-request-namespace"},
		"explain":       {"explain", file, "--unfix", "stable-request-namespace"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := cli(t, args...)
			assertUsage(t, code, out, errOut)
			assert.Contains(t, errOut, "the switch is already off under profile")
		})
	}
	// The same switch on under the profile is turned off as asked.
	code, _, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "1", "--profile", "fixed", "--unfix", "stable-tab-owner")
	assert.NotEqual(t, exitUsage, code, errOut)
}

// A replay file records --unfix (in the settings its settings_hash
// covers) and replays as recorded; replay --unfix on a file recorded under
// fixed is a settings edit, judged by outcome.
func TestUnfix_ReplayFilesRecordIt(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "unfixed.json")
	code, _, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "5", "--profile", "fixed", "--unfix", "stable-tab-owner", "--out", file)
	require.Equal(t, exitViolation, code, errOut)
	f, err := replay.Read(file)
	require.NoError(t, err)
	assert.Equal(t, []string{"stable-tab-owner"}, f.Unfix)
	assert.Equal(t, replay.SettingsHash(f), f.SettingsHash)
	g := *f
	g.Unfix = nil
	assert.NotEqual(t, replay.SettingsHash(&g), f.SettingsHash, "the settings hash covers unfix")
	code, out, errOut := cli(t, "replay", file)
	assert.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, out, "fingerprint matches: ")

	passing := filepath.Join(dir, "fixed.json")
	code, _, _ = cli(t, "run", "--scenario", "tab-ownership", "--seed", "5", "--profile", "fixed", "--out", passing)
	require.Equal(t, exitOK, code)
	code, out, errOut = cli(t, "replay", passing, "--unfix", "stable-tab-owner")
	assert.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, out, "regressed: "+passing+" passed when recorded, now fails with its edited settings")
	assert.Contains(t, out, "profile=fixed~stable-tab-owner")

	// explain builds its candidates on the file's profile after --unfix.
	code, out, errOut = cli(t, "explain", passing, "--unfix", "stable-tab-owner")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "sufficient: [stable-tab-owner]")
}

// fuzz --json names the unfixed switches, and mutants --unfix runs every
// mutant on the fixed profile minus the switch.
func TestUnfix_FuzzSummaryAndMutants(t *testing.T) {
	sum := filepath.Join(t.TempDir(), "sum.json")
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, _, errOut := cli(t, "fuzz", "--scenario", "tab-ownership", "--seeds", "10", "--profile", "fixed", "--unfix", "stable-tab-owner",
		"--json", sum, "--junit", junit, "--shrink-runs", "0")
	require.Equal(t, exitViolation, code, errOut)
	js := readJSON[jsonSummary](t, sum)
	assert.Equal(t, "fixed~stable-tab-owner", js.Profile)
	assert.Equal(t, []string{"stable-tab-owner"}, js.Unfix)
	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	assert.Contains(t, string(b), "replay: orchsim run --scenario tab-ownership --seed ")
	assert.Contains(t, string(b), " --profile fixed --unfix stable-tab-owner")

	// With a bug left in, a mutant is killed only by what it breaks
	// itself: ignore-tab-owner still by no-cross-thread-tab-action, and
	// nothing by the unfixed bug's thread-keeps-its-tabs (some mutants
	// survive 20 seeds then: the bug ends their runs first, exit 1).
	code, out, errOut := cli(t, "mutants", "--seeds", "20", "--unfix", "stable-tab-owner")
	assert.Contains(t, []int{exitOK, exitViolation}, code, errOut)
	assert.Regexp(t, `(?m)^ignore-tab-owner +no-cross-thread-tab-action`, out)
	assert.NotContains(t, out, "thread-keeps-its-tabs")
}
