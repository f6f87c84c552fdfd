package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/orchsim/orchsim/bench"
	"github.com/orchsim/orchsim/scenarios"
)

// newBenchCmd is orchsim bench: the kernel against its alternatives, and
// every scenario's throughput (package bench does the measuring).
// maxMemorySeeds bounds --memory-seeds: the loop runs 10N seeds, some
// milliseconds each.
const maxMemorySeeds = 100_000_000

func newBenchCmd() *cobra.Command {
	var quick, verbose bool
	var memScenario string
	var memSeeds int
	cmd := &cobra.Command{
		Use:   "bench [--quick]",
		Short: "Kernel and scenario throughput against the baselines",
		Long: `Measure orchsim's kernel against the alternatives on one timer-heavy workload
(N sessions with 30 min idle timers that activity resets; released on firing,
resumed after 0-60 min), at N = 1, 100 and 10,000: a bare 4-ary heap loop with
inline callbacks (the limit), benbjohnson/clock's Mock (AfterFunc + Add) and
testing/synctest (time.AfterFunc in a bubble). All four run the same events from
the same seeded streams. Then every scenario's seeds/s and events/s under the
fixed profile over 24 h of virtual time, and the heap of one long seed loop
sampled at N and 10N seeds (it must stay flat). Last, the scale table: chaos
with worlds of 10, 100 and 1,000 threads (an agent and a user per thread,
preview hosts and terminal panes in proportion) over 24 h, with ns/event,
allocations/event and the peak heap of a run, and their growth from the
smallest world to the largest. The header prints the machine's load average
at the start and the end: a loaded machine's figures are not comparable. It
also prints the collector's setting: like every command that runs seeds,
bench sets GOGC=400 and a soft memory limit of half the machine's memory
unless GOGC or GOMEMLIMIT is set (then it keeps the environment's); the
scale table always runs at Go's default (GOGC=100, no limit), since its peak
heap counts garbage not yet collected, and so stays comparable.

It prints ns/event, allocs/event and virtual seconds per wall second per engine,
and the ratios: orchsim / bare (events per second), Mock / orchsim and
synctest / orchsim (time per event). Ratios are the result; absolute figures
depend on the machine. The full run interleaves 5 repeats and takes a few
minutes; --quick measures less and finishes in well under 30 s.

The last table, GOALS, compares the figures with issue 19's goals (ratios, and
milliseconds also scaled to the reference machine by the bare loop's speed).
bench exits 0 whenever it measured, goals met or not: it is a measurement, and
a busy or slow machine misses a goal without a regression; a gate reads the
table. Exit 2 is bad usage, 3 a measurement that could not run.

The same measurements run as Go benchmarks:
  go test ./sim -run '^$' -bench Compare -count 5
  go test ./scenarios -run '^$' -bench 'Scenario$' -count 5
  go test ./scenarios -run '^$' -bench Scale -benchtime 3x`,
		Example: `  orchsim bench --quick
  orchsim bench
  orchsim bench --memory-scenario tab-ownership --memory-seeds 10000`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plan := bench.FullPlan()
			if quick {
				plan = bench.QuickPlan()
			}
			if cmd.Flags().Changed("memory-seeds") {
				if memSeeds < 1 {
					return usageErr("--memory-seeds must be at least 1, got %d", memSeeds)
				}
				if memSeeds > maxMemorySeeds {
					// The loop runs 10N seeds; beyond this it would run for years (and 10N overflows).
					return usageErr("--memory-seeds must be at most %d, got %d", maxMemorySeeds, memSeeds)
				}
				plan.MemorySeeds = memSeeds
			}
			plan.MemoryScenario = memScenario
			return runBench(cmd.OutOrStdout(), cmd.ErrOrStderr(), plan, verbose)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&quick, "quick", false, "measure less; finishes in under 30 s")
	fl.BoolVarP(&verbose, "verbose", "v", false, "print each step on stderr as it starts")
	fl.StringVar(&memScenario, "memory-scenario", "", "scenario of the memory loop (default chaos)")
	fl.IntVar(&memSeeds, "memory-seeds", 0, "seeds N of the memory loop, sampled at N and 10N (default 10 quick, 200 full)")
	return cmd
}

// runBench measures plan and prints its report on stdout.
func runBench(stdout, stderr io.Writer, plan bench.Plan, verbose bool) error {
	progress := io.Discard
	if verbose {
		progress = stderr
	}
	if plan.MemoryScenario != "" {
		if _, err := scenarios.Lookup(plan.MemoryScenario); err != nil {
			return usageErr("%v", err)
		}
	}
	rep, err := bench.RunPlan(plan, progress)
	if err != nil {
		return &exitError{code: exitHarness, msg: err.Error()}
	}
	return rep.Write(stdout)
}
