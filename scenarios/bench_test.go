package scenarios_test

import (
	"fmt"
	"testing"

	"github.com/orchsim/orchsim/bench"
	"github.com/orchsim/orchsim/scenarios"
)

// BenchmarkScenario measures the throughput of every registered scenario
// (chaos included once it is registered) under the fixed profile, each
// seed running 24 h of virtual time: seeds/s, kernel events/s and the
// median wall time of one seed. One b.N iteration is one seed.
//
//	go test ./scenarios -run '^$' -bench Scenario -count 5
func BenchmarkScenario(b *testing.B) {
	profile := bench.FixedProfile()
	for _, sc := range scenarios.All() {
		b.Run(sc.Name, func(b *testing.B) {
			b.ReportAllocs()
			r, err := bench.MeasureScenario(sc.Name, profile, bench.ScenarioHorizon, 1, b.N)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(r.SeedsPerSecond(), "seeds/s")
			b.ReportMetric(r.EventsPerSecond(), "events/s")
			b.ReportMetric(r.EventsPerSeed(), "events/seed")
			b.ReportMetric(float64(r.Median.Microseconds())/1000, "ms/seed")
		})
	}
}

// BenchmarkScenarioMemory runs one long seed loop per scenario, seeds 1 to
// 10N with N = b.N (set it: -benchtime 1000x), and reports the heap in use
// after a forced GC at N and at 10N seeds, the peak seen without forcing
// GCs, and the memory obtained from the OS. Flat means the 10N figures are
// no larger than the N ones beyond noise: nothing a seed allocates
// outlives it.
//
//	go test ./scenarios -run '^$' -bench ScenarioMemory -benchtime 1000x
func BenchmarkScenarioMemory(b *testing.B) {
	profile := bench.FixedProfile()
	for _, sc := range scenarios.All() {
		b.Run(sc.Name, func(b *testing.B) {
			m, err := bench.MeasureMemory(sc.Name, profile, bench.ScenarioHorizon, b.N)
			if err != nil {
				b.Fatal(err)
			}
			const mb = 1 << 20
			b.ReportMetric(float64(m.HeapInuse[0])/mb, "heap-MB-at-N")
			b.ReportMetric(float64(m.HeapInuse[1])/mb, "heap-MB-at-10N")
			b.ReportMetric(float64(m.PeakHeapInuse[1])/mb, "peak-heap-MB")
			b.ReportMetric(float64(m.Sys[0])/mb, "sys-MB-at-N")
			b.ReportMetric(float64(m.Sys[1])/mb, "sys-MB-at-10N")
		})
	}
}

// BenchmarkScale runs the chaos scenario with worlds of 10, 100 and 1,000
// threads (bench.ScaleThreads: one agent and one user per thread, preview
// hosts and terminal panes in proportion), 24 h of virtual time per seed
// under the fixed profile, one b.N iteration per seed: ns/event,
// allocations/event and the largest heap one run held. The goal is that
// from 10 to 1,000 threads ns/event grows at most 1.5x and the peak heap
// at most linearly (100x).
//
//	go test ./scenarios -run '^$' -bench Scale -benchtime 3x -count 3
func BenchmarkScale(b *testing.B) {
	profile := bench.FixedProfile()
	for _, threads := range bench.ScaleThreads {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			r, err := bench.MeasureScale(threads, profile, bench.ScenarioHorizon, 1, b.N)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(r.NsPerEvent(), "ns/event")
			b.ReportMetric(r.AllocsPerEvent(), "allocs/event")
			b.ReportMetric(r.EventsPerSeed(), "events/seed")
			b.ReportMetric(float64(r.PeakHeap)/(1<<20), "peak-heap-MB")
		})
	}
}
