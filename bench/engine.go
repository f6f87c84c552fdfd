package bench

import (
	"fmt"
	"runtime"
	"time"
)

// Engine names, as printed in tables and benchmark names.
const (
	Kernel   = "orchsim"
	Bare     = "bare-heap"
	Mock     = "clock.Mock"
	Synctest = "synctest"
)

// Engines lists the engine names in table order.
var Engines = []string{Kernel, Bare, Mock, Synctest}

// Result is what one measured section produced.
type Result struct {
	Engine   string
	Sessions int
	// Events ran in the measured section.
	Events uint64
	// Virtual is the virtual time the measured section covered, in seconds
	// (a float: long measurements at one session span centuries).
	Virtual float64
	// Wall is the real time the measured section took.
	Wall time.Duration
	// Allocs and Bytes were allocated (by every goroutine) in the measured section.
	Allocs uint64
	Bytes  uint64
}

// NsPerEvent is wall nanoseconds per event.
func (r Result) NsPerEvent() float64 { return perEvent(float64(r.Wall.Nanoseconds()), r.Events) }

// AllocsPerEvent is heap allocations per event.
func (r Result) AllocsPerEvent() float64 { return perEvent(float64(r.Allocs), r.Events) }

// BytesPerEvent is bytes allocated per event.
func (r Result) BytesPerEvent() float64 { return perEvent(float64(r.Bytes), r.Events) }

// EventsPerSecond is events per wall second.
func (r Result) EventsPerSecond() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Events) / r.Wall.Seconds()
}

// VirtualPerWall is virtual seconds simulated per wall second.
func (r Result) VirtualPerWall() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return r.Virtual / r.Wall.Seconds()
}

func perEvent(x float64, events uint64) float64 {
	if events == 0 {
		return 0
	}
	return x / float64(events)
}

// engine is what an Instance needs from one of the four implementations.
type engine interface {
	// advance runs every event due at or before virtual time to.
	advance(to time.Duration)
	// count returns how many events have run.
	count() uint64
	// digest returns the world's order-independent digest.
	digest() uint64
	// close stops every timer and ends every goroutine the engine started.
	close()
}

// Instance is the workload set up on one engine: every session armed at
// virtual time 0, advanced by the caller. It is used by one goroutine.
type Instance struct {
	name     string
	sessions int
	impl     engine
	at       time.Duration
	closed   bool
}

// Open sets the workload's sessions up on the named engine, at virtual time
// 0. Close it to release its timers and goroutines.
func Open(name string, sessions int, seed uint64) (*Instance, error) {
	return open(name, sessions, seed, 0)
}

// open is Open with a digest limit (see world.limit).
func open(name string, sessions int, seed uint64, limit time.Duration) (*Instance, error) {
	if sessions < 1 {
		return nil, fmt.Errorf("bench: %d sessions (want at least 1)", sessions)
	}
	w := newWorld(sessions, seed)
	w.limit = limit
	var impl engine
	switch name {
	case Kernel:
		impl = newKernelEngine(w)
	case Bare:
		impl = newBareEngine(w)
	case Mock:
		impl = newMockEngine(w)
	case Synctest:
		impl = newSynctestEngine(w)
	default:
		return nil, fmt.Errorf("bench: unknown engine %q (known: %v)", name, Engines)
	}
	return &Instance{name: name, sessions: sessions, impl: impl}, nil
}

// Engine returns the engine's name.
func (in *Instance) Engine() string { return in.name }

// Elapsed returns the virtual time the instance has been advanced to.
func (in *Instance) Elapsed() time.Duration { return in.at }

// Total returns how many events have run.
func (in *Instance) Total() uint64 { return in.impl.count() }

// Digest returns the order-independent digest of the events so far: the
// sum of one mixed hash per (session, kind, virtual time).
func (in *Instance) Digest() uint64 { return in.impl.digest() }

// Fingerprint returns the kernel trace's fingerprint (0 for other engines).
func (in *Instance) Fingerprint() uint64 {
	if k, ok := in.impl.(*kernelEngine); ok {
		return k.trace.Fingerprint()
	}
	return 0
}

// Advance runs every event due at or before virtual time to (which must not
// lie before Elapsed).
func (in *Instance) Advance(to time.Duration) {
	if to < in.at {
		panic(fmt.Sprintf("bench: Advance(%s) before %s", to, in.at))
	}
	in.impl.advance(to)
	in.at = to
}

// Measure runs at least events more events and measures them. It advances
// in slices of virtual time worth about 256 events (fewer near the target),
// so that no engine overshoots by much and the cost of a slice (a Run call,
// an Add, a Sleep) is spread thin.
func (in *Instance) Measure(events uint64) Result {
	return in.measure(func(first uint64) {
		for {
			n := in.impl.count() - first
			if n >= events {
				return
			}
			in.Advance(in.at + chunk(in.sessions, min(events-n, 256)))
		}
	})
}

// MeasureUntil advances to horizon and measures it.
func (in *Instance) MeasureUntil(horizon time.Duration) Result {
	return in.measure(func(uint64) { in.Advance(horizon) })
}

func (in *Instance) measure(run func(first uint64)) Result {
	r := Result{Engine: in.name, Sessions: in.sessions}
	var before, after runtime.MemStats
	from := in.at
	runtime.ReadMemStats(&before)
	first := in.impl.count()
	start := time.Now()
	run(first)
	r.Wall = time.Since(start)
	runtime.ReadMemStats(&after)
	r.Events = in.impl.count() - first
	r.Virtual = (in.at - from).Seconds()
	r.Allocs = after.Mallocs - before.Mallocs
	r.Bytes = after.TotalAlloc - before.TotalAlloc
	return r
}

// Close stops the instance's timers and goroutines; it is idempotent.
func (in *Instance) Close() {
	if !in.closed {
		in.closed = true
		in.impl.close()
	}
}

// MaxEvents is how many events one Instance of sessions sessions may run
// before its virtual clock (a time.Duration, at most 292 years) could
// overflow: the events of 100 virtual years. Longer measurements use
// several instances (Measure does).
func MaxEvents(sessions int) uint64 {
	const years = 100 * 365 * 24 * time.Hour
	return uint64(years/meanEventGap) * uint64(sessions)
}

// Add accumulates o (a later segment of the same measurement) into r.
func (r *Result) Add(o Result) {
	r.Engine, r.Sessions = o.Engine, o.Sessions
	r.Events += o.Events
	r.Virtual += o.Virtual
	r.Wall += o.Wall
	r.Allocs += o.Allocs
	r.Bytes += o.Bytes
}

// Measure opens engine, runs warmup of virtual time untimed, measures at
// least events events, and closes the instance; beyond MaxEvents it goes on
// with a fresh instance (set up and warmed up untimed).
func Measure(name string, sessions int, seed uint64, warmup time.Duration, events uint64) (Result, error) {
	var total Result
	for total.Events < events {
		in, err := Open(name, sessions, seed)
		if err != nil {
			return Result{}, err
		}
		in.Advance(warmup)
		total.Add(in.Measure(min(events-total.Events, MaxEvents(sessions))))
		in.Close()
	}
	return total, nil
}

// Check runs every engine on the same sessions up to horizon and reports an
// error unless all of them ran the same events: the same count and the same
// order-independent digest of (session, kind, virtual time) before the
// horizon. Keep sessions*horizon small: the Mock spends over 1 ms of real
// time per event.
func Check(sessions int, seed uint64, horizon time.Duration) ([]Result, error) {
	type outcome struct {
		r      Result
		digest uint64
	}
	var outs []outcome
	for _, name := range Engines {
		in, err := open(name, sessions, seed, horizon)
		if err != nil {
			return nil, err
		}
		r := in.MeasureUntil(horizon)
		outs = append(outs, outcome{r, in.Digest()})
		in.Close()
	}
	results := make([]Result, len(outs))
	for i, o := range outs {
		results[i] = o.r
		if o.r.Events != outs[0].r.Events || o.digest != outs[0].digest {
			return results, fmt.Errorf("bench: %s ran %d events (digest %016x) but %s ran %d (digest %016x) up to %s",
				o.r.Engine, o.r.Events, o.digest, outs[0].r.Engine, outs[0].r.Events, outs[0].digest, horizon)
		}
	}
	return results, nil
}
