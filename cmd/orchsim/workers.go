package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// workersPerCPU bounds --workers at this many per CPU. Seeds are CPU-bound,
// so more workers than CPUs gain nothing; each one holds a seed in flight
// (a few hundred kilobytes), and a signal waits for the seeds in flight to
// finish. At 64 per CPU that wait stays under a second (about 64 seeds'
// time), and a typo such as --workers 100000000 is bad usage instead of
// gigabytes of goroutines.
const workersPerCPU = 64

// maxWorkers is the most --workers fuzz and mutants accept.
func maxWorkers() int { return workersPerCPU * runtime.NumCPU() }

// workersUsage is the --workers flag's help.
var workersUsage = fmt.Sprintf("parallel workers, 1 to %d x the number of CPUs (%d here; default: the number of CPUs)",
	workersPerCPU, maxWorkers())

func defaultWorkers() int { return runtime.NumCPU() }

// workersFlag reads the --workers flag of cmd: the number of CPUs when it
// is not given, else a value from 1 to maxWorkers (0 and negatives are bad
// usage, not "the default"). jobs, when not negative, is how many jobs
// there are: no more workers than that (and at least one) are started.
func workersFlag(cmd *cobra.Command, workers int, jobs int64) (int, error) {
	if !cmd.Flags().Changed("workers") {
		workers = defaultWorkers()
	}
	switch limit := maxWorkers(); {
	case workers < 1:
		return 0, usageErr("--workers must be positive (default: the number of CPUs), got %d", workers)
	case workers > limit:
		return 0, usageErr("--workers must be at most %d (%d per CPU), got %d", limit, workersPerCPU, workers)
	}
	if jobs >= 0 && int64(workers) > jobs {
		workers = max(1, int(jobs))
	}
	return workers, nil
}
