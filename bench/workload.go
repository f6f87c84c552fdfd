// Package bench measures orchsim against the alternatives a Go user would
// reach for, on one shared timer-heavy workload run four ways, and measures
// the throughput of every registered scenario.
//
// The engines:
//
//   - orchsim's kernel (sim.Kernel) with tracing and fingerprinting on: every
//     event is emitted to the trace, hashed, and not kept;
//   - a bare (time, seq) 4-ary heap loop with inline callbacks, the
//     physical limit of a single-threaded discrete-event loop;
//   - github.com/benbjohnson/clock's Mock (AfterFunc + Add), which runs each
//     callback on a new goroutine and sleeps 1 ms of real time per timer;
//   - testing/synctest with time.AfterFunc, whose callbacks run on
//     goroutines inside a bubble with a fake clock.
//
// Every engine runs the same sessions with the same per-session PRNG
// streams, so they produce the same events at the same virtual times; Check
// proves it by comparing an order-independent digest. The package is
// outside the simulated path: the Mock and synctest engines use goroutines,
// the kernel engine's loop is single-threaded.
package bench

import (
	"strconv"
	"sync"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// The workload's timing. A session is active or released. An active session
// has an idle timer (IdleTimeout) and an activity timer; each activity comes
// after a gap drawn uniformly from [ActivityGapMin, ActivityGapMax] and
// resets the idle timer, so about one gap in four outlasts the idle timeout
// and the idle timer fires: the session is released, and resumed after a
// delay drawn uniformly from [0, ResumeMax].
const (
	IdleTimeout    = 30 * time.Minute
	ActivityGapMin = time.Second
	ActivityGapMax = 40 * time.Minute
	ResumeMax      = 60 * time.Minute
)

// meanEventGap is the mean virtual time between two events of one session,
// from the parameters above (three activities of 15 min on average, an idle
// timeout of 30 min and a resume of 30 min: five events in about 105 min).
// Drivers use it only to size the slices of virtual time they advance by.
const meanEventGap = 21 * time.Minute

// Event kinds, as emitted to the kernel's trace.
const (
	KindActivity = "activity"
	KindRelease  = "release"
	KindResume   = "resume"
)

// Which timer of a session fired.
const (
	timerIdle = 0
	timerAct  = 1
)

// session is the engine-neutral state of one session.
type session struct {
	name     string
	rng      sim.PRNG
	released bool
}

// world is the engine-neutral workload: the sessions, their logic, and the
// count and digest of the events they produced.
type world struct {
	sessions []session
	// events counts every event.
	events uint64
	// digest is an order-independent digest of the events at virtual times
	// before limit (every event when limit is 0): the sum of one mixed hash
	// per (session, kind, time). Engines that run same-instant callbacks in
	// an unspecified order still agree on it.
	digest uint64
	limit  time.Duration
}

func newWorld(sessions int, seed uint64) *world {
	w := &world{sessions: make([]session, sessions)}
	for i := range w.sessions {
		s := &w.sessions[i]
		s.name = "session/" + strconv.Itoa(i)
		s.rng.Seed(sim.SubSeed(seed, s.name))
	}
	return w
}

// firstActivity returns the delay of session i's first activity; its idle
// timer starts at IdleTimeout.
func (w *world) firstActivity(i int) time.Duration { return w.gap(i) }

func (w *world) gap(i int) time.Duration {
	const steps = uint64((ActivityGapMax-ActivityGapMin)/time.Millisecond) + 1
	return ActivityGapMin + time.Duration(w.sessions[i].rng.Below(steps))*time.Millisecond
}

// onIdle handles session i's idle timer firing at now: the session is
// released. The engine must re-arm the (pending) activity timer to fire
// after the returned resume delay.
func (w *world) onIdle(i int, now time.Duration) (resume time.Duration) {
	const steps = uint64(ResumeMax/time.Millisecond) + 1
	s := &w.sessions[i]
	s.released = true
	w.record(i, 1, now)
	return time.Duration(s.rng.Below(steps)) * time.Millisecond
}

// onAct handles session i's activity timer firing at now: an activity, or
// the resume of a released session. The engine must re-arm the idle timer to
// IdleTimeout (pending after an activity, fired after a release) and the
// activity timer to the returned gap. It returns the event's kind.
func (w *world) onAct(i int, now time.Duration) (kind string, next time.Duration) {
	s := &w.sessions[i]
	kind = KindActivity
	code := uint64(0)
	if s.released {
		s.released = false
		kind, code = KindResume, 2
	}
	w.record(i, code, now)
	return kind, w.gap(i)
}

func (w *world) record(i int, kind uint64, now time.Duration) {
	w.events++
	if w.limit == 0 || now < w.limit {
		w.digest += mix(uint64(now) ^ mix(uint64(i)<<2|kind))
	}
}

// mix is SplitMix64's finaliser: a bijection that spreads every input bit.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// chunk returns the slice of virtual time in which sessions sessions make
// about n events (at least 1 ms).
func chunk(sessions int, n uint64) time.Duration {
	d := time.Duration(uint64(meanEventGap) * n / uint64(sessions))
	if d < time.Millisecond {
		d = time.Millisecond
	}
	return d
}

// lockedWorld is the world of an engine whose callbacks run on goroutines
// (the Mock, synctest): mu serialises their access to it, and count and
// digest read it under mu.
type lockedWorld struct {
	mu sync.Mutex
	w  *world
}

func (l *lockedWorld) count() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.events
}

func (l *lockedWorld) digest() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.digest
}
