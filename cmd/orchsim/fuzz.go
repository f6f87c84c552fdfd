package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchsim/orchsim/fuzz"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/scenarios"
)

// exitInterrupted is fuzz's status when a signal stopped a campaign that
// found no failure (128 + SIGINT).
const exitInterrupted = 130

type fuzzFlags struct {
	scenario     string
	seeds        uint64
	budget       time.Duration
	start        uint64
	shard        string
	workers      int
	strategy     string
	profile      string
	fixes        []string
	unfix        []string
	mutants      []string
	corpus       string
	jsonOut      string
	junitOut     string
	shrinkBudget time.Duration
	shrinkRuns   int
	determinism  int
	keepGoing    bool
	baseline     string
	writeBase    string
}

func newFuzzCmd() *cobra.Command {
	var f fuzzFlags
	cmd := &cobra.Command{
		Use:   "fuzz --scenario S|all (--seeds N | --budget D)",
		Short: "Run many seeds in parallel; shrink, dedup and keep every distinct failure",
		Long: `Run a seed campaign. Seeds run in parallel workers; each failure is grouped with
the failures that tell the same story, the first of each group is shrunk (within
--shrink-budget) and written to --corpus as a replay file. The summary table lists,
per scenario and invariant, the failures, the first seed and the distinct stories:
a seed counts there once, under its first violation. The groups by root cause count
every violation a seed kept going to, so an invariant can show more failures there;
an invariant broken only after another's violation in a seed is a later violation.
A root-cause group with no story (its bug was never a seed's first violation: a
denser one hides it) gets a "later" line; with --corpus its first signature's run
is shrunk toward it (shrink --invariant: other bugs' fixes turned on, "shrunk
alone" when it then fails first) and written as "-later.json"; the other later
violations keep their seed's keep-going run there and are counted on one line.

--seeds N runs seeds --start to --start+N-1 of every scenario named: N seeds per
scenario, before sharding (--scenario all --seeds N runs N of each scenario). Seeds
are 0 to 18446744073709551615 (2^64-1) and do not wrap: --seeds past the largest
is bad usage, and a --budget campaign that reaches it ends there.
--shard i/n runs the seeds whose offset from --start is i modulo n, so n machines
together run exactly the unsharded range; "--shard /n" takes i from
JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs).

--json and --junit are checked before the campaign: a file that cannot be written
or both naming one file is bad usage (exit 2, nothing run). --workers is 1 to 64 per
CPU (default: the number of CPUs); no more workers start than there are seeds to run.

Failures are grouped by root cause: (invariant, the minimal set of fix switches
that makes the shrunk run pass), each group naming the reports its switches cite;
a group no known fix explains is new, listed first. Every seed keeps going past
its first violation (--keep-going=false stops there), so one seed can feed
several groups. --baseline FILE judges the groups against a committed baseline:
a group is known when it lists it, or when it saw the invariant fail and knows every
switch of the group (known bugs in a new combination); a group of a switch or an
invariant it never saw, or with no known fix, is new. --write-baseline FILE
records the groups found.

Exit status: 0 no failure (with --baseline: no new group); 1 failures found (with
--baseline: a new group); 2 bad usage; 3 the campaign ran but
--json or --junit could not be written (after the summary); 130 interrupted by
SIGINT/SIGTERM with no failure (failures found before the signal are still written,
with the summary, and give 1).`,
		Example: `  orchsim fuzz --scenario all --seeds 10000 --corpus failures/
  orchsim fuzz --scenario tab-ownership --profile fixed --budget 10m --shard 3/16`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runFuzz(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scenario, "scenario", "", "scenario name, or all")
	fl.Uint64Var(&f.seeds, "seeds", 0, "seeds per scenario, before sharding (--scenario all runs N seeds of each scenario)")
	fl.DurationVar(&f.budget, "budget", 0, "run seeds for this long instead of a fixed number (a positive duration, such as 10m)")
	fl.Uint64Var(&f.start, "start", 1, "first seed")
	fl.StringVar(&f.shard, "shard", "", "i/n: run shard i of n (i may come from JOB_COMPLETION_INDEX: /n)")
	fl.IntVar(&f.workers, "workers", 0, workersUsage)
	fl.StringVar(&f.strategy, "strategy", string(scenarios.DefaultStrategy), "exploration strategy: random, swarm, pct, commit or branch (branch: a campaign strategy; one run under it is a commit run)")
	fl.StringVar(&f.profile, "profile", model.PresetReported, "preset: reported, fixed or upstream")
	fl.StringSliceVar(&f.fixes, "fix", nil, "fix switches to turn on")
	fl.StringSliceVar(&f.unfix, "unfix", nil, unfixUsage)
	fl.StringSliceVar(&f.mutants, "mutant", nil, "mutants to turn on")
	fl.StringVar(&f.corpus, "corpus", "", "directory for one replay file per distinct failure")
	fl.StringVar(&f.jsonOut, "json", "", "write a machine-readable summary to FILE")
	fl.StringVar(&f.junitOut, "junit", "", "write a JUnit XML report to FILE")
	fl.IntVar(&f.determinism, "check-determinism", 0, "re-run P% of the seeds (0 to 100, chosen from --start) on another worker with the other GOMAXPROCS setting and compare fingerprints; a mismatch is exit 3")
	fl.BoolVar(&f.keepGoing, "keep-going", true, "run every seed past its first violation (run --keep-going), so one seed can feed several groups; --keep-going=false stops each at its first")
	fl.StringVar(&f.baseline, "baseline", "", baselineUsage)
	fl.StringVar(&f.writeBase, "write-baseline", "", "write the groups found (those a known fix explains) as a baseline to FILE")
	fl.IntVar(&f.shrinkRuns, "shrink-runs", 300, "candidate runs to shrink each distinct failure (0: no shrinking)")
	fl.DurationVar(&f.shrinkBudget, "shrink-budget", 30*time.Second, "wall-clock cap on shrinking each failure (a safety net: a failure it cuts short depends on the machine); 0 is no cap, --shrink-runs 0 no shrinking")
	return cmd
}

// parseShard reads "i/n" or "/n" (i from JOB_COMPLETION_INDEX).
func parseShard(s string) (uint64, uint64, error) {
	if s == "" {
		return 0, 1, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("--shard %q: want i/n", s)
	}
	n, err := strconv.ParseUint(ns, 10, 64)
	if err != nil || n == 0 {
		return 0, 0, fmt.Errorf("--shard %q: the shard count must be a positive integer", s)
	}
	from := ""
	if is == "" {
		is, from = os.Getenv("JOB_COMPLETION_INDEX"), " (from JOB_COMPLETION_INDEX)"
		if is == "" {
			return 0, 0, fmt.Errorf("--shard %q: no index given and JOB_COMPLETION_INDEX is not set", s)
		}
	}
	i, err := strconv.ParseUint(is, 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("--shard %q: the index %q%s must be a non-negative integer", s, is, from)
	}
	if i >= n {
		return 0, 0, fmt.Errorf("--shard %q: the index must be below %d", s, n)
	}
	return i, n, nil
}

func runFuzz(cmd *cobra.Command, f fuzzFlags) error {
	if f.scenario == "" {
		return usageErr("fuzz needs --scenario (a name or all)")
	}
	// The name first: a misspelt scenario is the error to report, not a
	// flag that would only matter once the name is right.
	names := []string{f.scenario}
	if f.scenario == "all" {
		names = nil
		for _, s := range scenarios.All() {
			names = append(names, s.Name)
		}
	} else if _, err := scenarios.Lookup(f.scenario); err != nil {
		return usageErr("%v", err)
	}
	if f.budget < 0 || cmd.Flags().Changed("budget") && f.budget == 0 {
		return usageErr("--budget must be positive (a wall-clock duration such as 10m), got %v", f.budget)
	}
	if (f.seeds == 0) == (f.budget <= 0) {
		return usageErr("fuzz needs exactly one of --seeds N (N > 0) or --budget D")
	}
	prof, err := model.Spec{Preset: f.profile, Fix: f.fixes, Unfix: f.unfix, Mutants: f.mutants}.Profile()
	if err != nil {
		return usageErr("%v", err)
	}
	if before, err := (model.Spec{Preset: f.profile, Fix: f.fixes}).Profile(); err == nil {
		if err := unfixOff(before, f.unfix); err != nil {
			return err
		}
	}
	strategy, err := scenarios.ParseStrategy(f.strategy)
	if err != nil {
		return usageErr("%v", err)
	}
	shard, shards, err := parseShard(f.shard)
	if err != nil {
		return usageErr("%v", err)
	}
	if f.determinism < 0 || f.determinism > 100 {
		return usageErr("--check-determinism is a percentage of the seeds, 0 to 100, got %d", f.determinism)
	}
	if f.shrinkRuns < 0 {
		return usageErr("--shrink-runs must not be negative (0 keeps failures unshrunk), got %d", f.shrinkRuns)
	}
	if f.shrinkBudget < 0 {
		return usageErr("--shrink-budget must not be negative (0 is no cap), got %v", f.shrinkBudget)
	}
	if f.seeds > 0 && f.start > ^uint64(0)-(f.seeds-1) {
		return usageErr("--start %d with --seeds %d runs past the largest seed, %d", f.start, f.seeds, ^uint64(0))
	}
	if err := checkFiles(outFile{"--json", f.jsonOut}, outFile{"--junit", f.junitOut}, outFile{"--write-baseline", f.writeBase}); err != nil {
		return err
	}
	if err := checkDistinct(outFile{"--corpus", f.corpus}, outFile{"--json", f.jsonOut}, outFile{"--junit", f.junitOut},
		outFile{"--write-baseline", f.writeBase}); err != nil {
		return err
	}
	base, err := readBaseline(f.baseline)
	if err != nil {
		return err
	}
	total := int64(-1) // seeds to run: unknown for a --budget campaign
	if f.seeds > 0 {
		total = int64(min(fuzz.ShardCount(f.seeds, shard, shards), 1<<40)) * int64(len(names))
	}
	if f.workers, err = workersFlag(cmd, f.workers, total); err != nil {
		return err
	}
	if err := notDash("--corpus", f.corpus); err != nil {
		return err
	}
	if f.corpus != "" {
		// The directory itself is made, its parent must exist: a typo in a
		// CI path is refused, not a tree created somewhere else.
		if err := os.Mkdir(f.corpus, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return usageErr("--corpus: %v (its parent directory must exist)", err)
		}
		// Checked before the run like every output: a directory that
		// exists but takes no file (read-only, /sys) is bad usage.
		probe, err := os.CreateTemp(f.corpus, ".orchsim-probe-*")
		if err != nil {
			return usageErr("--corpus: %v", err)
		}
		probe.Close()
		os.Remove(probe.Name())
	}
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &fuzz.Campaign{Scenarios: names, Profile: prof, Strategy: strategy, Start: f.start, Seeds: f.seeds,
		Budget: f.budget, Shard: shard, Shards: shards, Workers: f.workers, ShrinkRuns: f.shrinkRuns,
		ShrinkBudget: f.shrinkBudget, Corpus: f.corpus, CheckPercent: f.determinism, KeepGoing: f.keepGoing,
		Baseline: base, BaselineName: f.baseline}
	c.Progress = progress(errOut, total)
	fmt.Fprintf(out, "fuzz: scenarios=%s profile=%s strategy=%s shard=%d/%d workers=%d\n",
		strings.Join(names, ","), prof, strategy, shard, shards, f.workers)
	sum, err := c.Run(ctx, false)
	if err != nil {
		return &exitError{code: exitHarness, msg: err.Error()}
	}
	printSummary(out, names, sum)
	// The files were checked before the campaign; a write failing now (a
	// full disk) is the harness failing to save a campaign that did run:
	// exit 3, after the summary.
	saveErr := saveOutputs(
		output{"--json", f.jsonOut, func() ([]byte, error) { return jsonSummaryBytes(c, sum) }},
		output{"--junit", f.junitOut, func() ([]byte, error) { return junitBytes(names, c, sum) }},
		baselineOutput(f.writeBase, func() (fuzz.Report, error) { return c.Report(sum) }))
	annotate(out, sum)
	d := sum.Determinism
	switch {
	case saveErr != nil:
		return saveErr
	case d != nil && len(d.Mismatches) > 0:
		return &exitError{code: exitHarness, msg: fmt.Sprintf("nondeterminism: %d of %d re-run seeds gave another fingerprint; first: %s",
			len(d.Mismatches), d.Checked, d.Mismatches[0])}
	case base != nil && len(sum.Failures) > 0 && baselineVerdict(fuzz.Results(names, sum).Groups) != nil:
		return baselineVerdict(fuzz.Results(names, sum).Groups)
	case base == nil && len(sum.Failures) > 0:
		return &exitError{code: exitViolation}
	case sum.Interrupted:
		return &exitError{code: exitInterrupted, msg: "interrupted"}
	}
	return nil
}

// jsonSummaryBytes is the --json summary of a campaign (Campaign.Report).
func jsonSummaryBytes(c *fuzz.Campaign, sum *fuzz.Summary) ([]byte, error) {
	r, err := c.Report(sum)
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
