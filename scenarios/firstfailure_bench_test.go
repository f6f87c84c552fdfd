package scenarios

import (
	"sort"
	"testing"

	"github.com/orchsim/orchsim/model"
)

// seedBugs maps each seed report's scenario to the invariant that finds it.
var seedBugs = []struct{ report, scenario, invariant string }{
	{"000", TabOwnership, "thread-keeps-its-tabs"},
	{"002", RequestRetry, "one-effect-per-request"},
	{"003", "terminal-remount", "live-agent-survives-remount"},
}

// BenchmarkSeedsToFirstFailure measures, per seed bug and strategy, the
// median number of seeds a campaign runs before the first seed that finds
// the bug: 25 campaigns starting 10,000 seeds apart, each capped at 300
// seeds. Read the "median-seeds" metric (lower is better). Each bug is
// measured in its own scenario and in chaos, where every other invariant is
// switched off so that only this bug ends a run.
//
//	go test ./scenarios -run XXX -bench SeedsToFirstFailure -benchtime 1x
func BenchmarkSeedsToFirstFailure(b *testing.B) {
	prof := model.MustProfile(model.PresetReported, nil, nil)
	chaos, _ := Lookup(Chaos)
	for _, bug := range seedBugs {
		for _, where := range []string{bug.scenario, Chaos} {
			var without []string
			if where == Chaos {
				for _, inv := range chaos.Invariants {
					if inv != bug.invariant {
						without = append(without, inv)
					}
				}
			}
			for _, st := range Strategies {
				b.Run(bug.report+"/"+where+"/"+string(st), func(b *testing.B) {
					var medians []float64
					for i := 0; i < b.N; i++ {
						var counts []int
						for c := 0; c < 25; c++ {
							start := uint64(1 + c*10_000)
							n := 300
							for k := 0; k < 300; k++ {
								res, err := Run(Config{Scenario: where, Seed: start + uint64(k), Profile: prof, Strategy: st, Without: without})
								if err != nil {
									b.Fatal(err)
								}
								if res.Violation != nil && res.Violation.Invariant == bug.invariant {
									n = k + 1
									break
								}
							}
							counts = append(counts, n)
						}
						sort.Ints(counts)
						medians = append(medians, float64(counts[len(counts)/2]))
					}
					b.ReportMetric(medians[len(medians)-1], "median-seeds")
				})
			}
		}
	}
}
