package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/replay"
)

func brokenLines(out string) []string {
	var bs []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "broken: ") {
			bs = append(bs, l)
		}
	}
	return bs
}

// run --keep-going reports every distinct invariant a run breaks, each at
// its first event, before the last line, which still names the first; its
// replay file reproduces it byte for byte.
func TestRun_KeepGoingReportsEveryInvariant(t *testing.T) {
	args := []string{"run", "--scenario", "chaos", "--seed", "1"}
	code, plain, _ := cli(t, args...)
	assert.Equal(t, exitViolation, code)
	assert.Empty(t, brokenLines(plain), "without --keep-going, no broken: lines")

	out := filepath.Join(t.TempDir(), "kg.json")
	code, kg, errOut := cli(t, append(args, "--keep-going", "--out", out)...)
	assert.Equal(t, exitViolation, code, errOut)
	last := lastLineOf(kg)
	assert.Regexp(t, violationLine, last)
	inv := strings.Fields(lastLineOf(plain))[1]
	assert.True(t, strings.HasPrefix(last, "violation: "+inv+" at "), "the last line names the same first violation")
	broken := brokenLines(kg)
	require.Greater(t, len(broken), 1, "chaos seed 1 under reported breaks several invariants")
	assert.True(t, strings.HasPrefix(broken[0], "broken: "+inv+" at ") && strings.HasSuffix(broken[0], " (first)"), broken[0])
	seen := map[string]bool{}
	for _, b := range broken {
		name := strings.Fields(b)[1]
		assert.False(t, seen[name], "each invariant once: %s", b)
		seen[name] = true
	}
	assert.Contains(t, kg, "(follows ", "a later violation that follows from an earlier one is marked")

	code, rep, errOut := cli(t, "replay", out)
	assert.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, rep, "fingerprint matches")
	assert.Equal(t, last, lastLineOf(rep))
	assert.Equal(t, broken, brokenLines(rep))
}

// A keep-going replay file shrinks to a keep-going .min.json that replays
// with its fingerprint (the shrunk file once dropped keep_going, so its
// fingerprint, a keep-going run's, never matched).
func TestShrink_KeepGoingFileReplays(t *testing.T) {
	dir := t.TempDir()
	k := filepath.Join(dir, "k.json")
	code, _, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "2", "--keep-going", "--out", k)
	require.Equal(t, exitViolation, code, errOut)
	code, _, errOut = cli(t, "shrink", k, "--runs", "60")
	require.Equal(t, exitOK, code, errOut)
	f, err := replay.Read(filepath.Join(dir, "k.min.json"))
	require.NoError(t, err)
	assert.True(t, f.KeepGoing)
	code, out, errOut := cli(t, "replay", filepath.Join(dir, "k.min.json"))
	assert.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, out, "fingerprint matches")
}

// shrink --invariant on a keep-going file shrinks toward an invariant the
// run broke only later: chaos seed 1 breaks delegated-task-settles after
// other invariants, and the minimal run has it first, written as a plain
// file that replays and names it on its last line. Bad targets are usage
// errors.
func TestShrink_InvariantBrokenLater(t *testing.T) {
	const inv = "delegated-task-settles"
	dir := t.TempDir()
	k := filepath.Join(dir, "k.json")
	code, out, errOut := cli(t, "run", "--scenario", "chaos", "--seed", "1", "--keep-going", "--out", k)
	require.Equal(t, exitViolation, code, errOut)
	require.Contains(t, out, "broken: "+inv+" at ")
	require.False(t, strings.HasPrefix(lastLineOf(out), "violation: "+inv+" "), "the seed must break it later, not first")

	code, out, errOut = cli(t, "shrink", k, "--invariant", inv, "--runs", "300")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "alone: "+inv+" fails first in the minimal run")
	assert.True(t, strings.HasPrefix(lastLineOf(out), "violation: "+inv+" at "), lastLineOf(out))
	min := filepath.Join(dir, "k.min.json")
	f, err := replay.Read(min)
	require.NoError(t, err)
	assert.False(t, f.KeepGoing, "written alone, as a plain file")
	assert.NotEmpty(t, f.Fixes, "other bugs' fixes turned on")
	code, rep, errOut := cli(t, "replay", min)
	assert.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, rep, "fingerprint matches")
	assert.Equal(t, lastLineOf(out), lastLineOf(rep))

	for _, tc := range []struct{ file, inv, msg string }{
		{k, "no-such-invariant", "unknown invariant"},
		{k, "one-fire-per-slot", "neither first nor after its first violation"},
		{min, "thread-keeps-its-tabs", "is not keep-going"},
	} {
		code, _, errOut := cli(t, "shrink", tc.file, "--invariant", tc.inv, "--runs", "10")
		assert.Equal(t, exitUsage, code, tc.inv)
		assert.Contains(t, errOut, tc.msg)
	}
}

// explain --invariant judges an invariant a keep-going file breaks only
// later: chaos seed 1's delegated-task-settles is made to pass by its own
// switch (the one that declares it), and by no switch that does not;
// without --invariant the file's first violation is explained as before.
// Bad targets are usage errors.
func TestExplain_InvariantBrokenLater(t *testing.T) {
	const inv = "delegated-task-settles"
	dir := t.TempDir()
	k := filepath.Join(dir, "k.json")
	code, _, errOut := cli(t, "run", "--scenario", "chaos", "--seed", "1", "--keep-going", "--out", k)
	require.Equal(t, exitViolation, code, errOut)

	code, out, errOut := cli(t, "explain", k, "--invariant", inv, "--tries", "3")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, ": "+inv+", broken after ")
	var own []string
	for _, sw := range model.Switches() {
		if slices.Contains(sw.Invariants, inv) {
			own = append(own, string(sw.Name))
		}
	}
	require.NotEmpty(t, own)
	var sufficient string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "sufficient: ") {
			sufficient = strings.Trim(strings.TrimPrefix(l, "sufficient: "), "[]")
		}
	}
	require.NotEmpty(t, sufficient, out)
	for _, s := range strings.Fields(sufficient) {
		assert.Contains(t, own, s, "a sufficient switch is one that declares %s", inv)
	}
	assert.Contains(t, out, "point of no return: ")

	code, plain, errOut := cli(t, "explain", k, "--tries", "3")
	require.Equal(t, exitOK, code, errOut)
	assert.NotContains(t, plain, "broken after", "the file's first violation, as before")

	code, _, errOut = cli(t, "run", "--scenario", "chaos", "--seed", "1", "--out", filepath.Join(dir, "p.json"))
	require.Equal(t, exitViolation, code, errOut)
	code, none, errOut := cli(t, "explain", k, "--invariant", "one-fire-per-slot", "--tries", "3")
	assert.Equal(t, exitOK, code, "a file that does not break it: nothing to explain, as a passing file (%s)", errOut)
	assert.Contains(t, none, "it does not break one-fire-per-slot, neither first nor after its first violation: nothing to explain")
	for _, tc := range []struct{ file, inv, msg string }{
		{k, "no-such-invariant", "unknown invariant"},
		{filepath.Join(dir, "p.json"), inv, "is not keep-going"},
	} {
		code, _, errOut := cli(t, "explain", tc.file, "--invariant", tc.inv, "--tries", "3")
		assert.Equal(t, exitUsage, code, tc.inv)
		assert.Contains(t, errOut, tc.msg)
	}
}
