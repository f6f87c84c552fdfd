package scenarios

import (
	"slices"
	"sort"
	"testing"

	"github.com/orchsim/orchsim/model"
)

// BenchmarkSeedsToFirstFailure measures, per exploration target (every
// switch off alone, every mutant; see Targets) and strategy, the median
// number of seeds a campaign runs before the first seed that violates one
// of the target's invariants: 25 campaigns starting 10,000 seeds apart,
// each capped at 300 seeds. Read the "median-seeds" metric (lower is
// better). Each target runs in its own scenario and in chaos, where every
// other component runs too.
//
//	go test ./scenarios -run XXX -bench SeedsToFirstFailure -benchtime 1x
func BenchmarkSeedsToFirstFailure(b *testing.B) {
	for _, tg := range Targets() {
		prof := model.MustSpec(tg.Spec)
		wheres := []string{tg.Scenario}
		if tg.Scenario != Chaos {
			wheres = append(wheres, Chaos)
		}
		for _, where := range wheres {
			for _, st := range Strategies {
				b.Run(tg.Name+"/"+where+"/"+string(st), func(b *testing.B) {
					var medians []float64
					for i := 0; i < b.N; i++ {
						var counts []int
						for c := 0; c < 25; c++ {
							start := uint64(1 + c*10_000)
							n := 300
							for k := 0; k < 300; k++ {
								res, err := Run(Config{Scenario: where, Seed: start + uint64(k), Profile: prof, Strategy: st})
								if err != nil {
									b.Fatal(err)
								}
								if res.Violation != nil && slices.Contains(tg.Invariants, res.Violation.Invariant) {
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
