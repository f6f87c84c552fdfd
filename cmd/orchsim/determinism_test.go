package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/orchsim/orchsim/scenarios/scenariotest"
)

// fuzz --check-determinism over a model with a map range: exit 3, one
// stderr line naming the first event where the traces part.
func TestFuzz_CheckDeterminismCatchesAMapRange(t *testing.T) {
	scenariotest.RegisterMapOrder(t)
	code, out, errOut := cli(t, "fuzz", "--scenario", scenariotest.MapOrder, "--seeds", "20", "--check-determinism", "100", "--workers", "2")
	assert.Equal(t, exitHarness, code, out)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line on stderr, got %q", errOut)
	assert.Contains(t, errOut, "orchsim: nondeterminism: ")
	assert.Contains(t, errOut, " of 20 re-run seeds gave another fingerprint; first: test-map-order seed ")
	assert.Contains(t, out, "determinism: 20 seeds (100%) re-run on another worker")
	assert.Contains(t, out, "determinism: MISMATCH test-map-order seed ")
	assert.Contains(t, out, "the traces part at event ")
	t.Log(lastLineOf(errOut))
}

func TestFuzz_CheckDeterminismOfTheRealScenarios(t *testing.T) {
	code, out, errOut := cli(t, "fuzz", "--scenario", "all", "--seeds", "25", "--check-determinism", "100", "--shrink-runs", "0")
	assert.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, out, "determinism: 100 seeds (100%) re-run on another worker")
	assert.Contains(t, out, ": 0 mismatches")
	for _, bad := range []string{"101", "-1"} {
		code, out, errOut := cli(t, "fuzz", "--scenario", "all", "--seeds", "1", "--check-determinism", bad)
		assertUsage(t, code, out, errOut, "--check-determinism is a percentage of the seeds, 0 to 100")
	}
}
