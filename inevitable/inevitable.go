// Package inevitable finds a failing run's point of no return: the earliest
// event after which the violation is (nearly) certain. For a prefix of the
// run's events it replays the run's own choices up to and including that
// event and draws everything after it afresh, Tries times with different
// suffix seeds, and counts how often the same invariant is violated. The
// point is the earliest event whose prefix fails in at least Threshold of
// the tries while the prefix one event shorter fails clearly less often.
//
// Antithesis calls the same idea "the moment a bug became inevitable";
// here it is computed, deterministically, from the tape a replay file
// already carries: the suffix seeds derive from the run's seed and the
// prefix length, so the same file gives the same point on every machine.
package inevitable

import (
	"fmt"
	"time"

	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
)

// Options tune the search. The zero value means the defaults.
type Options struct {
	// Tries is the number of reseeded suffixes per prefix (default 20).
	Tries int
	// Threshold is the fraction of tries that must fail for a prefix to
	// count as doomed (default 0.95: with 20 tries, 19 must fail).
	Threshold float64
	// Clear is the most the event before the point may fail for the point
	// to be a clear one (default 0.9): a boundary between 56/60 and 20/20
	// is noise around a failure that was likely all along, not a point.
	Clear float64
	// Later counts a run as violating the invariant when it breaks it at
	// all, first or after another invariant's violation (for a keep-going
	// cfg whose invariant is a later one: explain --invariant); by default
	// only a run whose first violation it is counts.
	Later bool
}

func (o Options) withDefaults() Options {
	if o.Tries <= 0 {
		o.Tries = 20
	}
	if o.Threshold <= 0 || o.Threshold > 1 {
		o.Threshold = 0.95
	}
	if o.Clear <= 0 || o.Clear >= o.Threshold {
		o.Clear = 0.9
	}
	return o
}

// maxStepsBack bounds how far Find walks back from a noisy boundary.
const maxStepsBack = 8

// Point is a run's point of no return.
type Point struct {
	// Seq is the event's position in the trace (0-based, as sim.Event.Seq);
	// -1 when the run is doomed before its first event (a reseeded run of
	// the whole scenario fails at least Threshold of the time).
	Seq int64
	// Event is the event itself (zero when Seq is -1).
	Event sim.Event
	// Doomed is the fraction of reseeded suffixes after the event that
	// violate the invariant; Before the fraction after the event before it
	// (for Seq -1, Before equals Doomed), over BeforeTries suffixes.
	Doomed, Before float64
	BeforeTries    int
	// Tries is the number of suffixes tried after the event (the one
	// before may have had more: a boundary is looked at again); Runs is
	// every run the search made, the original one included.
	Tries, Runs int
}

// String renders p for a timeline: "event 41 at T+00:05:12.000 (19/20
// reseeded continuations fail; 9/20 after event 40)".
func (p Point) String() string {
	if p.Seq < 0 {
		return fmt.Sprintf("before the first event (%s reseeded runs fail)", frac(p.Doomed, p.Tries))
	}
	return fmt.Sprintf("event %d at %s (%s reseeded continuations fail; %s)",
		p.Seq, clock(p.Event.At), frac(p.Doomed, p.Tries), p.before())
}

// before renders the certainty one event earlier: "9/20 after event 40",
// or for the first event (Seq 0) "3/20 from the start".
func (p Point) before() string {
	if p.Seq == 0 {
		return frac(p.Before, p.BeforeTries) + " from the start"
	}
	return fmt.Sprintf("%s after event %d", frac(p.Before, p.BeforeTries), p.Seq-1)
}

// Certainty says how certain the point is: "19/20 reseeded continuations
// fail; 9/20 after event 40".
func (p Point) Certainty() string {
	if p.Seq < 0 {
		return frac(p.Doomed, p.Tries) + " reseeded runs fail from the start"
	}
	return fmt.Sprintf("%s reseeded continuations fail; %s", frac(p.Doomed, p.Tries), p.before())
}

func frac(f float64, n int) string { return fmt.Sprintf("%d/%d", int(f*float64(n)+0.5), n) }

func clock(d time.Duration) string {
	ms := d.Milliseconds()
	return fmt.Sprintf("T+%02d:%02d:%02d.%03d", ms/3_600_000, ms/60_000%60, ms/1000%60, ms%1000)
}

// Find returns the point of no return of the run cfg describes, which must
// violate invariant inv. cfg.Tape, when set, is the run's recorded tape (a
// replay file's); otherwise the run is drawn from cfg.Seed and its tape
// recorded first. The error says when the run does not violate inv, or
// when even the whole prefix before the violation is not doomed.
//
// The search is a binary search over prefix lengths: it assumes that a
// longer prefix is at least as doomed as a shorter one, which holds for
// the usual story (a fault lands, and from then on the failure only waits
// for its trigger) but not always; the returned point always has its own
// prefix doomed and the one before it not, so it is a true boundary even
// where the fraction is not monotone.
func Find(cfg scenarios.Config, inv string, opt Options) (Point, error) {
	opt = opt.withDefaults()
	base := cfg
	base.KeepTrace, base.RecordTape, base.Source, base.OnEvent = true, true, nil, nil
	res, err := scenarios.Run(base)
	if err != nil {
		return Point{}, err
	}
	runs := 1
	fails := func(r *scenarios.Result) bool {
		if r.Violation == nil {
			return false
		}
		if r.Violation.Invariant == inv {
			return true
		}
		for i := range r.Later {
			if opt.Later && r.Later[i].Invariant == inv {
				return true
			}
		}
		return false
	}
	if !fails(&res) {
		got := "no violation"
		if res.Violation != nil {
			got = res.Violation.Invariant
		}
		return Point{}, fmt.Errorf("the run does not violate %s (%s)", inv, got)
	}
	tape := res.Tape
	if cfg.Tape != nil {
		tape = cfg.Tape
	}
	// The violation is appended after the event that triggered it, so the
	// prefix through the event before the violation is certain to fail.
	last := int64(len(res.Trace)) - 2
	for i, ev := range res.Trace {
		if ev.Actor == "invariant" && ev.Kind == inv {
			last = int64(i) - 1
			break
		}
	}
	// counts[k] is (fails, tries) over the suffixes tried after prefix k.
	type count struct{ fails, tries int }
	counts := map[int64]count{}
	try := func(k int64, n int) float64 {
		c := counts[k]
		for i := c.tries; i < c.tries+n; i++ {
			rc := cfg
			rc.Tape, rc.RecordTape, rc.KeepTrace = nil, false, false
			// The run's own draws through event k, fresh ones after it
			// (sim.PrefixSource, which the branch strategy shares).
			src := sim.NewPrefixSource(tape, sim.SubSeed(cfg.Seed, fmt.Sprintf("inevitable/%d/%d", k, i)), false)
			if k < 0 {
				src.Switch()
			}
			rc.Source = src
			rc.OnEvent = func(ev *sim.Event) {
				if int64(ev.Seq) == k {
					src.Switch()
				}
			}
			r, err := scenarios.Run(rc)
			runs++
			if err == nil && fails(&r) {
				c.fails++
			}
		}
		c.tries += n
		counts[k] = c
		return float64(c.fails) / float64(c.tries)
	}
	doomed := func(k int64) float64 {
		if c, ok := counts[k]; ok {
			return float64(c.fails) / float64(c.tries)
		}
		return try(k, opt.Tries)
	}
	point := func(k int64) Point {
		p := Point{Seq: k, Doomed: doomed(k), Tries: counts[k].tries}
		if k >= 0 {
			p.Event = res.Trace[k]
			p.Before = doomed(k - 1)
			p.BeforeTries = counts[k-1].tries
		} else {
			p.Before, p.BeforeTries = p.Doomed, p.Tries
		}
		p.Runs = runs
		return p
	}
	if doomed(-1) >= opt.Threshold {
		return point(-1), nil
	}
	if last < 0 {
		last = 0
	}
	// Invariant: doomed(lo) < Threshold, doomed(hi) >= Threshold.
	lo, hi := int64(-1), last
	if f := doomed(hi); f < opt.Threshold {
		// Not even the full prefix is doomed: the violation needs draws
		// made after its last event (a liveness obligation judged in the
		// heal phase, say).
		return Point{}, fmt.Errorf("no point of no return: with every event before the violation replayed, %s of reseeded continuations fail", frac(f, opt.Tries))
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if doomed(mid) >= opt.Threshold {
			hi = mid
		} else {
			lo = mid
		}
	}
	// A boundary found on Tries suffixes may be noise (18/20 before, 19/20
	// at it). Look again at the event before with twice as many more
	// suffixes, and step back while it is doomed after all, so the point
	// is the earliest doomed event, not a lucky one.
	for steps := 0; hi > 0 && steps < maxStepsBack; steps++ {
		if try(hi-1, 2*opt.Tries) < opt.Threshold {
			break
		}
		hi--
	}
	p := point(hi)
	if hi > 0 && p.Before > opt.Clear {
		return Point{}, fmt.Errorf("no clear point of no return: the failure was likely all along (the boundary found, %s, has more than %.0f%% before it)",
			p.String(), 100*opt.Clear)
	}
	return p, nil
}
