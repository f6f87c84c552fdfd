package bench

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/orchsim/orchsim/scenarios"
)

// Plan says what a benchmark report measures and how much.
type Plan struct {
	// Name labels the report ("quick", "full").
	Name string
	// Sessions lists the workload sizes.
	Sessions []int
	// Warmup is the untimed virtual time every engine runs first, except
	// the Mock at MockNoWarmupFrom sessions or more (its warm-up alone
	// would take minutes: it sleeps 1 ms per event).
	Warmup           time.Duration
	MockNoWarmupFrom int
	// Events is how many events each engine measures, per repeat; the Mock
	// and synctest engines measure fewer (they are 1,000 to 10,000 times
	// slower), MockEvents and SynctestEvents, indexed like Sessions.
	Events         []uint64
	MockEvents     []uint64
	SynctestEvents []uint64
	// Repeats runs every measurement this many times, interleaved (all
	// engines at one size, then the next size, then again), and reports
	// medians: other load on the machine then hits every engine alike.
	Repeats int
	// ScenarioSeeds is how many seeds every registered scenario runs.
	ScenarioSeeds int
	// MemoryScenario and MemorySeeds: the memory loop (MeasureMemory).
	// An empty MemoryScenario means chaos if registered, else the first.
	MemoryScenario string
	MemorySeeds    int
	// ScaleThreads, ScaleSeeds and ScaleHorizon: the scale measurement
	// (MeasureScale), ScaleSeeds seeds of ScaleScenario at each world
	// size for ScaleHorizon each; no sizes, no scale table.
	ScaleThreads []int
	ScaleSeeds   int
	ScaleHorizon time.Duration
	// Seed seeds the workload's sessions.
	Seed uint64
}

// QuickPlan finishes in well under 30 s on a 2-core machine.
func QuickPlan() Plan {
	return Plan{
		Name:             "quick",
		Sessions:         []int{1, 100, 10_000},
		Warmup:           2 * time.Hour,
		MockNoWarmupFrom: 10_000,
		Events:           []uint64{300_000, 300_000, 100_000},
		MockEvents:       []uint64{100, 100, 40},
		SynctestEvents:   []uint64{20_000, 20_000, 10_000},
		Repeats:          1,
		ScenarioSeeds:    10,
		MemorySeeds:      10,
		ScaleThreads:     ScaleThreads,
		ScaleSeeds:       1,
		ScaleHorizon:     ScenarioHorizon,
		Seed:             1,
	}
}

// FullPlan takes a few minutes: more events, five interleaved repeats,
// more seeds.
func FullPlan() Plan {
	p := QuickPlan()
	p.Name = "full"
	p.Events = []uint64{3_000_000, 3_000_000, 1_000_000}
	p.MockEvents = []uint64{500, 500, 200}
	p.SynctestEvents = []uint64{300_000, 300_000, 100_000}
	p.Repeats = 5
	p.ScenarioSeeds, p.MemorySeeds = 200, 200
	p.ScaleSeeds, p.ScaleHorizon = 3, ScenarioHorizon
	return p
}

// Report is what RunPlan measured.
type Report struct {
	Plan Plan
	// Engines holds the median result of every (sessions, engine), in plan
	// order; Runs every repeat.
	Engines []Result
	Runs    [][]Result
	// Scenarios holds one result per registered scenario.
	Scenarios []ScenarioResult
	Memory    MemoryResult
	// Scale holds one result per world size of Plan.ScaleThreads.
	Scale []ScaleResult
	// Wall is how long the whole report took.
	Wall time.Duration
	// LoadBefore and LoadAfter are the machine's load averages (1, 5 and
	// 15 min) when the report started and ended, from /proc/loadavg; ""
	// where it cannot be read.
	LoadBefore, LoadAfter string
	// GC is the collector setting the kernel, scenario and memory
	// measurements ran with, and GCSource where it came from; the scale
	// measurement runs at DefaultGC whatever it is.
	GC       GC
	GCSource string
}

// LoadAverage returns the machine's 1, 5 and 15 min load averages as
// /proc/loadavg gives them ("0.52 0.58 0.59"), or "" where it cannot be read
// (not Linux).
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// Ratios are the comparisons the report is for, at one workload size.
type Ratios struct {
	Sessions int
	// KernelOverBare is orchsim's events/s over the bare heap loop's.
	KernelOverBare float64
	// MockOverKernel and SynctestOverKernel are their time per event over
	// orchsim's.
	MockOverKernel     float64
	SynctestOverKernel float64
}

// Ratios computes the comparisons from the median results.
func (r *Report) Ratios() []Ratios {
	var out []Ratios
	for _, n := range r.Plan.Sessions {
		k, b, m, s := r.find(Kernel, n), r.find(Bare, n), r.find(Mock, n), r.find(Synctest, n)
		out = append(out, Ratios{
			Sessions:           n,
			KernelOverBare:     div(k.EventsPerSecond(), b.EventsPerSecond()),
			MockOverKernel:     div(m.NsPerEvent(), k.NsPerEvent()),
			SynctestOverKernel: div(s.NsPerEvent(), k.NsPerEvent()),
		})
	}
	return out
}

func (r *Report) find(engine string, sessions int) Result {
	for _, e := range r.Engines {
		if e.Engine == engine && e.Sessions == sessions {
			return e
		}
	}
	return Result{}
}

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// RunPlan measures everything the plan lists, writing a line of progress
// per step to progress (which may be io.Discard).
func RunPlan(p Plan, progress io.Writer) (*Report, error) {
	start := time.Now()
	load := LoadAverage()
	if p.Repeats < 1 || len(p.Events) != len(p.Sessions) || len(p.MockEvents) != len(p.Sessions) ||
		len(p.SynctestEvents) != len(p.Sessions) {
		return nil, fmt.Errorf("bench: plan %q: want Repeats >= 1 and one event count per size", p.Name)
	}
	gc := CurrentGC()
	rep := &Report{Plan: p, Runs: make([][]Result, len(p.Sessions)*len(Engines)), LoadBefore: load, GC: gc, GCSource: gcSource(gc)}
	for repeat := range p.Repeats {
		for i, n := range p.Sessions {
			for j, engine := range Engines {
				events, warmup := p.Events[i], p.Warmup
				switch engine {
				case Mock:
					events = p.MockEvents[i]
					if n >= p.MockNoWarmupFrom {
						warmup = 0
					}
				case Synctest:
					events = p.SynctestEvents[i]
				}
				fmt.Fprintf(progress, "repeat %d/%d: %s, %d sessions, %d events\n", repeat+1, p.Repeats, engine, n, events)
				r, err := Measure(engine, n, p.Seed, warmup, events)
				if err != nil {
					return nil, err
				}
				k := i*len(Engines) + j
				rep.Runs[k] = append(rep.Runs[k], r)
			}
		}
	}
	for _, runs := range rep.Runs {
		rep.Engines = append(rep.Engines, median(runs))
	}
	profile := FixedProfile()
	for _, sc := range scenarios.All() {
		fmt.Fprintf(progress, "scenario %s: %d seeds\n", sc.Name, p.ScenarioSeeds)
		r, err := MeasureScenario(sc.Name, profile, ScenarioHorizon, 1, p.ScenarioSeeds)
		if err != nil {
			return nil, err
		}
		rep.Scenarios = append(rep.Scenarios, r)
	}
	if name := memoryScenario(p.MemoryScenario); name != "" && p.MemorySeeds > 0 {
		fmt.Fprintf(progress, "memory: %s, %d then %d seeds\n", name, p.MemorySeeds, 10*p.MemorySeeds)
		m, err := MeasureMemory(name, profile, ScenarioHorizon, p.MemorySeeds)
		if err != nil {
			return nil, err
		}
		rep.Memory = m
	}
	// The scale table's peak heap counts garbage not yet collected, so it
	// depends on the collector's pace: measured at Go's default always, it
	// compares with every earlier report, whatever the process' setting.
	if len(p.ScaleThreads) > 0 {
		old := DefaultGC.set()
		for _, n := range p.ScaleThreads {
			fmt.Fprintf(progress, "scale: %s with %d threads, %d seeds\n", ScaleScenario, n, p.ScaleSeeds)
			r, err := MeasureScale(n, profile, p.ScaleHorizon, 1, p.ScaleSeeds)
			if err != nil {
				old.set()
				return nil, err
			}
			rep.Scale = append(rep.Scale, r)
		}
		old.set()
	}
	rep.Wall = time.Since(start)
	rep.LoadAfter = LoadAverage()
	return rep, nil
}

func memoryScenario(name string) string {
	if name != "" {
		return name
	}
	all := scenarios.All()
	for _, sc := range all {
		if sc.Name == "chaos" {
			return sc.Name
		}
	}
	if len(all) > 0 {
		return all[0].Name
	}
	return ""
}

// median returns the run with the median time per event.
func median(runs []Result) Result {
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b Result) int {
		switch x, y := a.NsPerEvent(), b.NsPerEvent(); {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	return sorted[len(sorted)/2]
}

// Write prints the report as tables.
func (r *Report) Write(w io.Writer) error {
	p := r.Plan
	fmt.Fprintf(w, "orchsim bench (%s): %s %s/%s, %d CPUs, GOMAXPROCS=%d; medians of %d interleaved repeats; %s in all\n",
		p.Name, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), p.Repeats,
		r.Wall.Round(100*time.Millisecond))
	fmt.Fprintf(w, "load average (1, 5, 15 min): %s at the start, %s at the end\n", orUnknown(r.LoadBefore), orUnknown(r.LoadAfter))
	fmt.Fprintf(w, "collector: %s (%s); the scale table at %s (Go's default)\n", r.GC, r.GCSource, DefaultGC)
	fmt.Fprintf(w, "\nKERNEL WORKLOAD: N sessions, 30 min idle timers reset by activity, release and resume;\n"+
		"%s untimed warm-up (none for the Mock at %d+ sessions); orchsim traces and fingerprints every event\n", p.Warmup, p.MockNoWarmupFrom)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "sessions\tengine\tevents\tns/event\tallocs/event\tevents/s\tvirtual-s/wall-s\t")
	for _, e := range r.Engines {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%.3f\t%s\t%s\t\n", e.Sessions, e.Engine, e.Events,
			sig(e.NsPerEvent()), e.AllocsPerEvent(), sig(e.EventsPerSecond()), sig(e.VirtualPerWall()))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nRATIOS (orchsim / bare: events per second; Mock / orchsim and synctest / orchsim: time per event)")
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "sessions\torchsim/bare\tMock/orchsim\tsynctest/orchsim\t")
	for _, x := range r.Ratios() {
		fmt.Fprintf(tw, "%d\t%.2fx\t%.0fx\t%.1fx\t\n", x.Sessions, x.KernelOverBare, x.MockOverKernel, x.SynctestOverKernel)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nSCENARIOS: profile fixed, %s of virtual time per seed, seeds 1-%d\n", ScenarioHorizon, p.ScenarioSeeds)
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tseeds\tseeds/s\tms/seed (median)\tevents/seed\tevents/s\tallocs/event\tviolations\t")
	for _, s := range r.Scenarios {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.2f\t%.0f\t%s\t%.1f\t%d\t\n", s.Scenario, s.Seeds, sig(s.SeedsPerSecond()),
			float64(s.Median.Microseconds())/1000, s.EventsPerSeed(), sig(s.EventsPerSecond()), s.AllocsPerEvent(), s.Violations)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := r.writeMemory(w); err != nil {
		return err
	}
	if err := r.writeScale(w); err != nil {
		return err
	}
	return r.writeGoals(w)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func (r *Report) writeMemory(w io.Writer) error {
	m := r.Memory
	if m.Scenario == "" {
		return nil
	}
	const mb = 1 << 20
	fmt.Fprintf(w, "\nMEMORY: one loop of %s seeds 1-%d (profile fixed, %s each), sampled at %d and %d seeds\n",
		m.Scenario, m.Seeds[1], ScenarioHorizon, m.Seeds[0], m.Seeds[1])
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "after seeds\theap in use after GC (MB)\tpeak heap in use (MB)\tsys (MB)\t")
	for i := range 2 {
		fmt.Fprintf(tw, "%d\t%.2f\t%.2f\t%.1f\t\n", m.Seeds[i], float64(m.HeapInuse[i])/mb, float64(m.PeakHeapInuse[i])/mb, float64(m.Sys[i])/mb)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "growth from %d to %d seeds: %.2fx heap in use, %.2fx sys\n",
		m.Seeds[0], m.Seeds[1], m.Growth(), div(float64(m.Sys[1]), float64(m.Sys[0])))
	return err
}

// sig renders x with about three significant digits: 0.123, 12.3, 1234,
// 12.3k, 1.23M, 1.23G.
func sig(x float64) string {
	switch {
	case x >= 1e9:
		return fmt.Sprintf("%.3gG", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.3gM", x/1e6)
	case x >= 1e4:
		return fmt.Sprintf("%.3gk", x/1e3)
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

func (r *Report) writeScale(w io.Writer) error {
	if len(r.Scale) == 0 {
		return nil
	}
	p := r.Plan
	fmt.Fprintf(w, "\nSCALE: %s with N threads (an agent and a user each; preview hosts and terminal panes in proportion),\n"+
		"profile fixed, %s of virtual time per seed, seeds 1-%d; peak heap: the most one run held above the heap before it\n",
		ScaleScenario, p.ScaleHorizon, p.ScaleSeeds)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "threads\tseeds\tevents/seed\tns/event\tallocs/event\tpeak heap (MB)\tms/seed\tviolations\t")
	for _, s := range r.Scale {
		fmt.Fprintf(tw, "%d\t%d\t%.0f\t%s\t%.1f\t%.2f\t%.1f\t%d\t\n", s.Threads, s.Seeds, s.EventsPerSeed(), sig(s.NsPerEvent()),
			s.AllocsPerEvent(), float64(s.PeakHeap)/(1<<20), ratio(float64(s.Wall.Microseconds())/1000, s.Seeds), s.Violations)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	first, last := r.Scale[0], r.Scale[len(r.Scale)-1]
	_, err := fmt.Fprintf(w, "growth from %d to %d threads (%.0fx): %.2fx ns/event (goal at most 1.5x), %.1fx peak heap (goal at most %.0fx)\n",
		first.Threads, last.Threads, div(float64(last.Threads), float64(first.Threads)),
		div(last.NsPerEvent(), first.NsPerEvent()), div(float64(last.PeakHeap), float64(first.PeakHeap)),
		div(float64(last.Threads), float64(first.Threads)))
	return err
}
