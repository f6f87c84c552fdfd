package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/scenarios"
)

func TestFuzz_FindsShrinksAndReports(t *testing.T) {
	dir := t.TempDir()
	js, ju := filepath.Join(dir, "summary.json"), filepath.Join(dir, "junit.xml")
	code, out, errOut := cli(t, append([]string{"fuzz", "--scenario", "tab-ownership", "--seeds", "20", "--corpus", filepath.Join(dir, "corpus"),
		"--json", js, "--junit", ju, "--shrink-budget", "1s"}, tabBugAlone...)...)
	assert.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, out, "SCENARIO")
	assert.Contains(t, out, "thread-keeps-its-tabs")
	assert.Contains(t, out, "replay: orchsim replay ")

	sum := readJSON[jsonSummary](t, js)
	assert.Equal(t, uint64(20), sum.SeedsRun)
	require.NotEmpty(t, sum.Stories)
	for _, st := range sum.Stories {
		code, rout, rerr := cli(t, "replay", st.ReplayFile)
		assert.Equal(t, exitViolation, code, rerr)
		assert.Contains(t, rout, "fingerprint matches")
	}

	var ju2 junitSuites
	b, err := os.ReadFile(ju)
	require.NoError(t, err)
	require.NoError(t, xml.Unmarshal(b, &ju2))
	require.Len(t, ju2.Suites, 2, "the scenario's suite, then the groups by root cause")
	assert.Equal(t, "orchsim triage", ju2.Suites[1].Name)
	require.NotEmpty(t, ju2.Suites[1].Cases)
	assert.Equal(t, "thread-keeps-its-tabs fixed by stable-tab-owner", ju2.Suites[1].Cases[0].Name)
	for _, c := range ju2.Suites[1].Cases {
		assert.True(t, strings.HasSuffix(c.Name, " fixed by stable-tab-owner"), "only the bug left in has groups: %s", c.Name)
		assert.Nil(t, c.Failure, "a known bug's group is not new")
	}
	sc, err := scenarios.Lookup("tab-ownership")
	require.NoError(t, err)
	// One case per invariant of the scenario, and one per obligation a seed
	// broke; a case fails for every invariant broken, first or later.
	broken := map[string]bool{}
	for _, f := range sum.FailedSeeds {
		broken[f.Invariant] = true
	}
	for _, l := range sum.Later {
		broken[l.Invariant] = true
	}
	extra := 0
	for inv := range broken {
		if !slices.Contains(sc.Invariants, inv) {
			extra++
		}
	}
	assert.Equal(t, len(sc.Invariants)+extra, ju2.Suites[0].Tests)
	assert.Equal(t, len(broken), ju2.Suites[0].Failures)
	assert.True(t, broken["thread-keeps-its-tabs"])
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
		"zero workers":        {"fuzz", "--scenario", "all", "--seeds", "3", "--workers", "0"},
		"too many workers":    {"fuzz", "--scenario", "all", "--seeds", "3", "--workers", fmt.Sprint(maxWorkers() + 1)},
		"huge workers":        {"fuzz", "--scenario", "request-retry", "--seeds", "3", "--workers", "100000000"},
		"index from env only": {"fuzz", "--scenario", "all", "--seeds", "3", "--shard", "/4"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("JOB_COMPLETION_INDEX", "")
			code, out, errOut := cli(t, args...)
			assertUsage(t, code, out, errOut)
		})
	}
}

// No more workers start than there are seeds to run: the banner says how
// many did.
func TestFuzz_WorkersAreCappedAtTheSeeds(t *testing.T) {
	code, out, errOut := cli(t, "fuzz", "--scenario", "request-retry", "--profile", "fixed", "--seeds", "3",
		"--workers", fmt.Sprint(maxWorkers()))
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, " workers=3\n")
}

// --json and --junit are checked before the campaign, as run checks its
// outputs: not writable where they are, or both one file, is exit 2 with
// nothing run and nothing written.
func TestFuzz_OutputsAreCheckedBeforeTheCampaign(t *testing.T) {
	dir := t.TempDir()
	same := filepath.Join(dir, "same.json")
	base := []string{"fuzz", "--scenario", "request-retry", "--profile", "fixed", "--seeds", "2"}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"both one file":   {[]string{"--json", same, "--junit", same}, "--json and --junit name the same file"},
		"both, spelt two": {[]string{"--json", same, "--junit", filepath.Join(dir, ".", "same.json")}, "name the same file"},
		"json in no dir":  {[]string{"--json", filepath.Join(dir, "nodir", "x.json")}, "--json"},
		"junit a dir":     {[]string{"--junit", dir}, "is a directory"},
		"json the corpus": {[]string{"--corpus", same, "--json", same}, "--corpus and --json name the same file"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := cli(t, append(append([]string{}, base...), tc.args...)...)
			assertUsage(t, code, out, errOut, tc.want)
			_, err := os.Stat(same)
			assert.ErrorIs(t, err, os.ErrNotExist, "nothing written")
		})
	}
}

// A summary that cannot be written after the campaign ran (a full disk) is
// a harness failure: the summary is printed first, then one line on
// stderr, exit 3; the other file is still written.
func TestFuzz_AWriteFailingAfterTheCampaignIsExit3(t *testing.T) {
	needDevFull(t)
	dir := t.TempDir()
	for name, tc := range map[string]struct{ full, other, otherPath string }{
		"json":  {"--json", "--junit", filepath.Join(dir, "junit.xml")},
		"junit": {"--junit", "--json", filepath.Join(dir, "summary.json")},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := cli(t, "fuzz", "--scenario", "request-retry", "--seeds", "2", "--shrink-runs", "0",
				tc.full, "/dev/full", tc.other, tc.otherPath)
			assert.Equal(t, exitHarness, code)
			assert.Contains(t, out, "fuzz: 2 seeds in ", "the summary is printed first")
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line, got %q", errOut)
			assert.True(t, strings.HasPrefix(errOut, "orchsim: "), errOut)
			assert.Contains(t, errOut, "could not be saved: "+tc.full+" /dev/full")
			assert.FileExists(t, tc.otherPath)
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

// asProcess, set to 1, makes TestOrchsimProcess run orchsim.
const asProcess = "ORCHSIM_TEST_PROCESS"

// TestOrchsimProcess is not a test: in a process started by orchsimProcess
// it runs orchsim with the arguments after "--" and exits.
func TestOrchsimProcess(t *testing.T) {
	if os.Getenv(asProcess) != "1" {
		return
	}
	args := os.Args
	for len(args) > 0 && args[0] != "--" {
		args = args[1:]
	}
	os.Exit(run(args[1:], os.Stdout, os.Stderr))
}

// orchsimProcess is orchsim with args in a process of its own (the test
// binary, so nothing is built), for tests that signal it.
func orchsimProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, append([]string{"-test.run=^TestOrchsimProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), asProcess+"=1")
	return cmd
}

// SIGINT during a campaign: it stops starting seeds, writes every failure
// found so far and the summary, and exits 1 (failures were found).
func TestFuzz_SIGINTKeepsWhatWasFound(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus")
	js := filepath.Join(dir, "summary.json")
	cmd := orchsimProcess(t, "fuzz", "--scenario", "tab-ownership", "--seeds", "100000000", "--workers", "1",
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
	sum := readJSON[jsonSummary](t, js)
	assert.True(t, sum.Interrupted)
	assert.Positive(t, sum.Failures)
	named := map[string]bool{}
	for _, st := range sum.Stories {
		named[st.ReplayFile] = true
	}
	for _, l := range sum.Later {
		named[l.ReplayFile] = true
	}
	assert.Len(t, files, len(named), "one replay file per story and per later group in the summary")
	for _, f := range files {
		assert.True(t, named[f], "%s is named in the summary", f)
	}
}

// SIGTERM stops a campaign at the most workers allowed promptly: the
// seeds in flight finish (at most 64 per CPU), no new one starts; no
// failure, so exit 130.
func TestFuzz_SIGTERMStopsTheMostWorkersPromptly(t *testing.T) {
	cmd := orchsimProcess(t, "fuzz", "--scenario", "all", "--profile", "fixed", "--budget", "10m",
		"--workers", fmt.Sprint(maxWorkers()))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	time.Sleep(time.Second)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	signalled := time.Now()
	err := cmd.Wait()
	waited := time.Since(signalled)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stdout %s stderr %s", stdout.String(), stderr.String())
	assert.Equal(t, exitInterrupted, ee.ExitCode(), stderr.String())
	assert.Contains(t, stdout.String(), "(interrupted)")
	assert.Less(t, waited, 5*time.Second, "from SIGTERM to exit")
}

func TestShrinkAndExplain(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.json")
	code, _, _ := cli(t, runTab(firstFailingSeed(t), "--out", file)...)
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
	sum := readJSON[jsonSummary](t, js)
	sc, err := scenarios.Lookup("terminal-remount")
	require.NoError(t, err)
	assert.Equal(t, jsonSummary{Scenarios: []string{"terminal-remount"}, HorizonMs: []int64{sc.Horizon.Milliseconds()},
		Profile: "fixed", Strategy: "pct", Start: 40, Seeds: 3, ShrinkRuns: 50, ShrinkBudgetMs: 2000, Shard: "1/2"},
		jsonSummary{Scenarios: sum.Scenarios, HorizonMs: sum.HorizonMs, Profile: sum.Profile, Strategy: sum.Strategy,
			Start: sum.Start, Seeds: sum.Seeds, BudgetMs: sum.BudgetMs, ShrinkRuns: sum.ShrinkRuns,
			ShrinkBudgetMs: sum.ShrinkBudgetMs, Shard: sum.Shard})
}

// Seeds end at 2^64-1: --start 18446744073709551615 --seeds 1 runs that
// seed (as run --seed does), one more is bad usage, and a --budget
// campaign ends at the largest seed instead of wrapping around to 0.
func TestFuzz_SeedsEndAtTheLargest(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "s.json")
	code, out, errOut := cli(t, "fuzz", "--scenario", "request-retry", "--profile", "fixed", "--start", "18446744073709551615",
		"--seeds", "1", "--json", js)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "fuzz: 1 seeds in ")
	sum := readJSON[jsonSummary](t, js)
	assert.Equal(t, uint64(18446744073709551615), sum.Start)

	code, out, errOut = cli(t, "fuzz", "--scenario", "request-retry", "--start", "18446744073709551614", "--seeds", "3")
	assertUsage(t, code, out, errOut, "--start 18446744073709551614 with --seeds 3 runs past the largest seed, 18446744073709551615")

	code, out, errOut = cli(t, "fuzz", "--scenario", "request-retry", "--profile", "fixed", "--start", "18446744073709551610",
		"--budget", "20s")
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `fuzz: 6 seeds in [^\n]* \(ran every seed up to the largest, 18446744073709551615\)\n`, out)
}

// A mutant's failure survives every fix: explain names no switch as
// necessary and says the mutant is the cause (removing any one switch from
// fixed "fails again" only because the mutant is still on).
func TestExplain_MutantFailureNeedsNoSwitch(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "m.json")
	code, _, errOut := cli(t, "run", "--scenario", "request-retry", "--seed", "1", "--profile", "fixed",
		"--mutant", "receipt-write-behind", "--strategy", "commit", "--out", file)
	require.Equal(t, exitViolation, code, errOut)
	code, out, errOut := cli(t, "explain", file, "--tries", "2")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "necessary: [nothing]")
	assert.Contains(t, out, "the cause is the mutant receipt-write-behind, not a switch")
}

// A branch campaign's failing continuation is listed in --json with its
// root and branch event, and run --strategy branch --branch ROOT:AT with
// its seed fails the same invariant; the story's run command says so too.
func TestFuzz_BranchFailureReproducesFromJSON(t *testing.T) {
	js := filepath.Join(t.TempDir(), "b.json")
	code, _, errOut := cli(t, "fuzz", "--scenario", "request-retry", "--strategy", "branch", "--seeds", "120", "--json", js)
	require.Equal(t, exitViolation, code, errOut)
	sum := readJSON[jsonSummary](t, js)
	var br *jsonFailed
	for i := range sum.FailedSeeds {
		if sum.FailedSeeds[i].Branch != nil {
			br = &sum.FailedSeeds[i]
			break
		}
	}
	require.NotNil(t, br, "120 seeds of request-retry under reported branch")
	code, out, errOut := cli(t, "run", "--scenario", br.Scenario, "--seed", strconv.FormatUint(br.Seed, 10), "--strategy", "branch",
		"--branch", fmt.Sprintf("%d:%d", br.Branch.Root, br.Branch.At))
	require.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, out, "violation: "+br.Invariant+" at ")
	for _, bad := range [][]string{{"--branch", "7"}, {"--branch", "a:b"}, {"--strategy", "commit", "--branch", "1:2"}} {
		code, _, errOut = cli(t, append([]string{"run", "--scenario", "request-retry", "--seed", "1", "--strategy", "branch"}, bad...)...)
		assert.Equal(t, exitUsage, code, "%v", bad)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	}
}

// An invariant a keep-going campaign breaks only after a seed's first
// violation of another is a failure too: its JUnit testcase fails (an
// obligation, not among the scenario's invariants, gets one), and with
// --corpus its first seed's keep-going run is a replay file that replays
// to it.
func TestFuzz_LaterViolationsFailAndReplay(t *testing.T) {
	dir := t.TempDir()
	js, ju, corpus := filepath.Join(dir, "s.json"), filepath.Join(dir, "j.xml"), filepath.Join(dir, "corpus")
	code, _, errOut := cli(t, "fuzz", "--scenario", "tab-ownership", "--seeds", "12", "--shrink-runs", "0",
		"--json", js, "--junit", ju, "--corpus", corpus)
	require.Equal(t, exitViolation, code, errOut)
	sum := readJSON[jsonSummary](t, js)
	require.NotEmpty(t, sum.Later, "tab-ownership under reported breaks invariants after the first")
	var suites junitSuites
	b, err := os.ReadFile(ju)
	require.NoError(t, err)
	require.NoError(t, xml.Unmarshal(b, &suites))
	failed := map[string]*junitFailure{}
	for _, c := range suites.Suites[0].Cases {
		failed[c.Name] = c.Failure
	}
	replayed := 0
	for _, l := range sum.Later {
		f := failed[l.Invariant]
		if assert.NotNil(t, f, "%s broke later in seed %d: its testcase fails", l.Invariant, l.Seed) {
			assert.Contains(t, f.Body, "failing after another invariant's violation (keep-going)")
		}
		require.NotEmpty(t, l.ReplayFile, "%s seed %d", l.Invariant, l.Seed)
		if replayed < 3 {
			replayed++
			code, out, rerr := cli(t, "replay", l.ReplayFile)
			assert.Equal(t, exitViolation, code, rerr)
			assert.Contains(t, out, "fingerprint matches")
			assert.Contains(t, out, "broken: "+l.Invariant+" at ", "the replay goes on to %s", l.Invariant)
		}
	}
}
