package bench

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"time"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
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

// ScaleScenario is the scenario the scale measurement sizes (it must be
// Scalable), and ScaleThreads the world sizes it runs by default: chaos
// with 10, 100 and 1,000 threads, one agent and one user per thread,
// preview hosts and terminal panes in proportion (scenarios.Config.Threads).
const ScaleScenario = scenarios.Chaos

// ScaleThreads are the world sizes of the scale measurement.
var ScaleThreads = []int{10, 100, 1000}

// ScaleResult is the cost of runs of one world size: seeds first,
// first+1, ... of ScaleScenario with Threads threads, each for the
// horizon.
type ScaleResult struct {
	Threads int
	Seeds   int
	// Events counts the kernel events of all seeds; TraceEvents their
	// trace events.
	Events      uint64
	TraceEvents uint64
	Violations  int
	// Wall is the real time of all seeds.
	Wall time.Duration
	// Allocs and Bytes were allocated by all seeds.
	Allocs uint64
	Bytes  uint64
	// PeakHeap is the largest heap a run held beyond the heap before it
	// (after a forced GC), the most over the seeds: live and not yet
	// collected objects ("/memory/classes/heap/objects:bytes"), sampled
	// every scaleSampleEvery trace events and at the end.
	PeakHeap uint64
}

// NsPerEvent is wall nanoseconds per kernel event.
func (r ScaleResult) NsPerEvent() float64 { return perEvent(float64(r.Wall.Nanoseconds()), r.Events) }

// AllocsPerEvent is heap allocations per kernel event.
func (r ScaleResult) AllocsPerEvent() float64 { return perEvent(float64(r.Allocs), r.Events) }

// EventsPerSeed is kernel events per seed.
func (r ScaleResult) EventsPerSeed() float64 { return ratio(float64(r.Events), r.Seeds) }

// scaleSampleEvery is how many trace events pass between two samples of
// the heap during a scaled run.
const scaleSampleEvery = 4096

const heapObjects = "/memory/classes/heap/objects:bytes"

// MeasureScale runs seeds first, first+1, ... of ScaleScenario with a world
// of threads threads under profile for horizon each, and measures them.
func MeasureScale(threads int, profile model.Profile, horizon time.Duration, first uint64, seeds int) (ScaleResult, error) {
	r := ScaleResult{Threads: threads, Seeds: seeds}
	sample := []metrics.Sample{{Name: heapObjects}}
	heap := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	var before, after runtime.MemStats
	for i := range seeds {
		runtime.GC()
		base, peak := heap(), uint64(0)
		n := 0
		onEvent := func(*sim.Event) {
			if n++; n%scaleSampleEvery == 0 {
				peak = max(peak, heap())
			}
		}
		runtime.ReadMemStats(&before)
		t0 := time.Now()
		res, err := scenarios.Run(scenarios.Config{Scenario: ScaleScenario, Seed: first + uint64(i), Profile: profile,
			Horizon: horizon, Threads: threads, OnEvent: onEvent})
		r.Wall += time.Since(t0)
		peak = max(peak, heap())
		runtime.ReadMemStats(&after)
		if err != nil {
			return r, err
		}
		r.Allocs += after.Mallocs - before.Mallocs
		r.Bytes += after.TotalAlloc - before.TotalAlloc
		if peak > base {
			r.PeakHeap = max(r.PeakHeap, peak-base)
		}
		r.Events += res.Executed
		r.TraceEvents += res.Events
		if res.Failed() {
			r.Violations++
		}
	}
	return r, nil
}
