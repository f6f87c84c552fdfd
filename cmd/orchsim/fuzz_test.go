package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"orchsim/scenarios"
)

func TestFuzz_FindsShrinksAndReports(t *testing.T) {
	dir := t.TempDir()
	js, ju := filepath.Join(dir, "summary.json"), filepath.Join(dir, "junit.xml")
	code, out, errOut := cli(t, "fuzz", "--scenario", "tab-ownership", "--seeds", "20", "--corpus", filepath.Join(dir, "corpus"),
		"--json", js, "--junit", ju, "--shrink-budget", "1s")
	assert.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, out, "SCENARIO")
	assert.Contains(t, out, "thread-keeps-its-tabs")
	assert.Contains(t, out, "replay: orchsim replay ")

	var sum jsonSummary
	b, err := os.ReadFile(js)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sum))
	assert.Equal(t, uint64(20), sum.SeedsRun)
	require.NotEmpty(t, sum.Stories)
	for _, st := range sum.Stories {
		code, rout, rerr := cli(t, "replay", st.ReplayFile)
		assert.Equal(t, exitViolation, code, rerr)
		assert.Contains(t, rout, "fingerprint matches")
	}

	var ju2 junitSuites
	b, err = os.ReadFile(ju)
	require.NoError(t, err)
	require.NoError(t, xml.Unmarshal(b, &ju2))
	require.Len(t, ju2.Suites, 1)
	sc, err := scenarios.Lookup("tab-ownership")
	require.NoError(t, err)
	assert.Equal(t, len(sc.Invariants), ju2.Suites[0].Tests, "one case per invariant of the scenario")
	assert.Equal(t, 1, ju2.Suites[0].Failures)
	for _, c := range ju2.Suites[0].Cases {
		if c.Failure != nil {
			assert.Contains(t, c.Failure.Body, "replay: orchsim replay")
		}
	}
}

func TestFuzz_FixedIsClean(t *testing.T) {
	code, out, errOut := cli(t, "fuzz", "--scenario", "all", "--profile", "fixed", "--seeds", "30")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "0 failures")
}

func TestFuzz_BadUsage(t *testing.T) {
	for name, args := range map[string][]string{
		"no scenario":         {"fuzz", "--seeds", "3"},
		"seeds and budget":    {"fuzz", "--scenario", "all", "--seeds", "3", "--budget", "1s"},
		"neither":             {"fuzz", "--scenario", "all"},
		"bad shard":           {"fuzz", "--scenario", "all", "--seeds", "3", "--shard", "4/4"},
		"shard syntax":        {"fuzz", "--scenario", "all", "--seeds", "3", "--shard", "two"},
		"unknown scenario":    {"fuzz", "--scenario", "nope", "--seeds", "3"},
		"unknown strategy":    {"fuzz", "--scenario", "all", "--seeds", "3", "--strategy", "genetic"},
		"negative workers":    {"fuzz", "--scenario", "all", "--seeds", "3", "--workers", "-1"},
		"index from env only": {"fuzz", "--scenario", "all", "--seeds", "3", "--shard", "/4"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("JOB_COMPLETION_INDEX", "")
			code, _, errOut := cli(t, args...)
			assert.Equal(t, exitUsage, code)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
		})
	}
}

func TestFuzz_ShardIndexFromJobCompletionIndex(t *testing.T) {
	t.Setenv("JOB_COMPLETION_INDEX", "2")
	code, out, errOut := cli(t, "fuzz", "--scenario", "tab-ownership", "--profile", "fixed", "--seeds", "8", "--shard", "/4")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "shard=2/4")
	assert.Contains(t, out, "fuzz: 2 seeds")
}

// SIGINT during a campaign: it stops starting seeds, writes every failure
// found so far and the summary, and exits 1 (failures were found).
func TestFuzz_SIGINTKeepsWhatWasFound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "orchsim")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	corpus := filepath.Join(dir, "corpus")
	js := filepath.Join(dir, "summary.json")
	cmd := exec.Command(bin, "fuzz", "--scenario", "tab-ownership", "--seeds", "100000000", "--workers", "1",
		"--corpus", corpus, "--json", js, "--shrink-budget", "200ms")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	time.Sleep(1500 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stdout %s stderr %s", stdout.String(), stderr.String())
	assert.Equal(t, exitViolation, ee.ExitCode())
	assert.Contains(t, stdout.String(), "(interrupted)")
	files, _ := filepath.Glob(filepath.Join(corpus, "*.json"))
	assert.NotEmpty(t, files)
	b, err := os.ReadFile(js)
	require.NoError(t, err)
	var sum jsonSummary
	require.NoError(t, json.Unmarshal(b, &sum))
	assert.True(t, sum.Interrupted)
	assert.Positive(t, sum.Failures)
	assert.Len(t, files, len(sum.Stories), "one replay file per story in the summary")
}

func TestShrinkAndExplain(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.json")
	code, _, _ := cli(t, "run", "--scenario", "tab-ownership", "--seed", firstFailingSeed(t), "--out", file)
	require.Equal(t, exitViolation, code)
	code, out, errOut := cli(t, "shrink", file, "--budget", "5s")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "shrunk: ")
	min := filepath.Join(dir, "f.min.json")
	code, rout, _ := cli(t, "replay", min)
	assert.Equal(t, exitViolation, code)
	assert.Contains(t, rout, "fingerprint matches")
	code, out, _ = cli(t, "explain", min)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "sufficient: [stable-tab-owner]")
	assert.Contains(t, out, "necessary: [stable-tab-owner]")

	okFile := filepath.Join(dir, "ok.json")
	cli(t, "run", "--scenario", "tab-ownership", "--seed", "1", "--profile", "fixed", "--out", okFile)
	code, _, errOut = cli(t, "shrink", okFile)
	assert.Equal(t, exitUsage, code, errOut)
}

// --seeds counts seeds per scenario: --scenario all --seeds N makes N runs
// of every scenario, and the help says so.
func TestFuzz_SeedsArePerScenario(t *testing.T) {
	usage := newFuzzCmd().Flags().Lookup("seeds").Usage
	assert.Contains(t, usage, "per scenario")
	code, out, errOut := cli(t, "fuzz", "--scenario", "all", "--profile", "fixed", "--seeds", "2")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, fmt.Sprintf("fuzz: %d seeds in ", 2*len(scenarios.All())))
}

// The --json summary names the campaign: everything but the shard index
// that its results depend on.
func TestFuzz_JSONNamesTheCampaign(t *testing.T) {
	js := filepath.Join(t.TempDir(), "s.json")
	code, _, errOut := cli(t, "fuzz", "--scenario", "terminal-remount", "--profile", "fixed", "--seeds", "3", "--start", "40",
		"--shard", "1/2", "--shrink-runs", "50", "--shrink-budget", "2s", "--strategy", "pct", "--json", js)
	require.Equal(t, exitOK, code, errOut)
	b, err := os.ReadFile(js)
	require.NoError(t, err)
	var sum jsonSummary
	require.NoError(t, json.Unmarshal(b, &sum))
	sc, err := scenarios.Lookup("terminal-remount")
	require.NoError(t, err)
	assert.Equal(t, jsonSummary{Scenarios: []string{"terminal-remount"}, HorizonMs: []int64{sc.Horizon.Milliseconds()},
		Profile: "fixed", Strategy: "pct", Start: 40, Seeds: 3, ShrinkRuns: 50, ShrinkBudgetMs: 2000, Shard: "1/2"},
		jsonSummary{Scenarios: sum.Scenarios, HorizonMs: sum.HorizonMs, Profile: sum.Profile, Strategy: sum.Strategy,
			Start: sum.Start, Seeds: sum.Seeds, BudgetMs: sum.BudgetMs, ShrinkRuns: sum.ShrinkRuns,
			ShrinkBudgetMs: sum.ShrinkBudgetMs, Shard: sum.Shard})
}
