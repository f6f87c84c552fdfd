package bench

import (
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/scenarios"
)

// ScenarioHorizon is the virtual time every scenario runs per seed in the
// throughput measurements.
const ScenarioHorizon = 24 * time.Hour

// FixedProfile returns the profile the throughput measurements use: every
// fix on, so that runs go to the horizon instead of stopping at the first
// violation of a reported bug.
func FixedProfile() model.Profile { return model.MustProfile(model.PresetFixed, nil, nil) }

// ScenarioResult is the throughput of one scenario over consecutive seeds.
type ScenarioResult struct {
	Scenario string
	Seeds    int
	// Events counts the kernel events run; TraceEvents the trace events.
	Events      uint64
	TraceEvents uint64
	// Violations counts seeds that ended at a violation (before the horizon).
	Violations int
	// Wall is the real time of all seeds; Median the median of one seed.
	Wall   time.Duration
	Median time.Duration
	// Allocs and Bytes were allocated by all seeds.
	Allocs uint64
	Bytes  uint64
}

// SeedsPerSecond is seeds per wall second.
func (r ScenarioResult) SeedsPerSecond() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Seeds) / r.Wall.Seconds()
}

// EventsPerSecond is kernel events per wall second.
func (r ScenarioResult) EventsPerSecond() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Events) / r.Wall.Seconds()
}

// EventsPerSeed is kernel events per seed.
func (r ScenarioResult) EventsPerSeed() float64 { return ratio(float64(r.Events), r.Seeds) }

// AllocsPerSeed is heap allocations per seed.
func (r ScenarioResult) AllocsPerSeed() float64 { return ratio(float64(r.Allocs), r.Seeds) }

// AllocsPerEvent is heap allocations per kernel event.
func (r ScenarioResult) AllocsPerEvent() float64 { return perEvent(float64(r.Allocs), r.Events) }

func ratio(x float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return x / float64(n)
}

// MeasureScenario runs seeds first, first+1, ... of the named scenario under
// profile for horizon of virtual time each, and measures them.
func MeasureScenario(name string, profile model.Profile, horizon time.Duration, first uint64, seeds int) (ScenarioResult, error) {
	r := ScenarioResult{Scenario: name, Seeds: seeds}
	if _, err := scenarios.Lookup(name); err != nil {
		return r, err
	}
	per := make([]time.Duration, 0, seeds)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for i := range seeds {
		t0 := time.Now()
		res, err := scenarios.Run(scenarios.Config{Scenario: name, Seed: first + uint64(i), Profile: profile, Horizon: horizon})
		per = append(per, time.Since(t0))
		if err != nil {
			return r, err
		}
		r.Events += res.Executed
		r.TraceEvents += res.Events
		if res.Failed() {
			r.Violations++
		}
	}
	r.Wall = time.Since(start)
	runtime.ReadMemStats(&after)
	r.Allocs = after.Mallocs - before.Mallocs
	r.Bytes = after.TotalAlloc - before.TotalAlloc
	slices.Sort(per)
	if len(per) > 0 {
		r.Median = per[len(per)/2]
	}
	return r, nil
}

// MemoryResult samples the heap of one long many-seed loop at two points:
// after Seeds[0] seeds and after Seeds[1]. Flat memory means the later
// figures are no larger than the earlier ones beyond noise: nothing a seed
// allocates outlives it.
type MemoryResult struct {
	Scenario string
	Seeds    [2]int
	// HeapInuse after a forced GC: the live heap (plus fragmentation).
	HeapInuse [2]uint64
	// PeakHeapInuse is the largest HeapInuse seen, sampled every few seeds
	// without forcing a GC, up to each point.
	PeakHeapInuse [2]uint64
	// Sys is the memory obtained from the OS so far (it never shrinks, so
	// it is the peak footprint).
	Sys [2]uint64
}

// Growth is HeapInuse at the second point over HeapInuse at the first.
func (m MemoryResult) Growth() float64 {
	if m.HeapInuse[0] == 0 {
		return 0
	}
	return float64(m.HeapInuse[1]) / float64(m.HeapInuse[0])
}

// MeasureMemory runs seeds 1..10*seeds of the named scenario and samples
// the heap after seeds and after 10*seeds.
func MeasureMemory(name string, profile model.Profile, horizon time.Duration, seeds int) (MemoryResult, error) {
	m := MemoryResult{Scenario: name, Seeds: [2]int{seeds, 10 * seeds}}
	if seeds < 1 {
		return m, fmt.Errorf("bench: %d seeds (want at least 1)", seeds)
	}
	if _, err := scenarios.Lookup(name); err != nil {
		return m, err
	}
	every := max(1, seeds/20)
	var ms runtime.MemStats
	var peak uint64
	point := 0
	for seed := 1; seed <= m.Seeds[1]; seed++ {
		if _, err := scenarios.Run(scenarios.Config{Scenario: name, Seed: uint64(seed), Profile: profile, Horizon: horizon}); err != nil {
			return m, err
		}
		if seed%every == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
		if seed == m.Seeds[point] {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			m.HeapInuse[point], m.PeakHeapInuse[point], m.Sys[point] = ms.HeapInuse, peak, ms.Sys
			point++
		}
	}
	return m, nil
}
