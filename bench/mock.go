package bench

import (
	"time"

	"github.com/benbjohnson/clock"
)

// mockEngine runs the workload on benbjohnson/clock's Mock: timers from
// AfterFunc, time moved by Add. The Mock runs each callback on a new
// goroutine and sleeps 1 ms of real time after each timer so that the
// callback gets to run; mu serialises the callbacks' access to the world.
type mockEngine struct {
	m     *clock.Mock
	epoch time.Time
	lockedWorld
	// due holds each timer's deadline in virtual time (2i idle, 2i+1
	// activity), so that a callback re-arms relative to the instant it was
	// due even if it runs after the Mock has moved on.
	due     []time.Duration
	timers  []mockTimers
	stopped bool
}

func newMockEngine(w *world) *mockEngine {
	e := &mockEngine{m: clock.NewMock(), lockedWorld: lockedWorld{w: w}}
	e.epoch = e.m.Now()
	n := len(w.sessions)
	e.due = make([]time.Duration, 2*n)
	e.timers = make([]mockTimers, n)
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range w.sessions {
		first := w.firstActivity(i)
		e.due[2*i+timerIdle], e.due[2*i+timerAct] = IdleTimeout, first
		e.timers[i].idle = e.m.AfterFunc(IdleTimeout, func() { e.onIdle(i) })
		e.timers[i].act = e.m.AfterFunc(first, func() { e.onAct(i) })
	}
	return e
}

// reset re-arms t (timer number timer) to fire at virtual time at.
func (e *mockEngine) reset(t *clock.Timer, timer int, at time.Duration) {
	e.due[timer] = at
	t.Reset(at - e.m.Now().Sub(e.epoch))
}

func (e *mockEngine) onIdle(i int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return
	}
	now := e.due[2*i+timerIdle]
	resume := e.w.onIdle(i, now)
	e.reset(e.timers[i].act, 2*i+timerAct, now+resume)
}

func (e *mockEngine) onAct(i int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return
	}
	now := e.due[2*i+timerAct]
	_, next := e.w.onAct(i, now)
	e.reset(e.timers[i].idle, 2*i+timerIdle, now+IdleTimeout)
	e.reset(e.timers[i].act, 2*i+timerAct, now+next)
}

func (e *mockEngine) advance(to time.Duration) {
	if d := to - e.m.Now().Sub(e.epoch); d > 0 {
		e.m.Add(d)
	}
}

// close stops every timer. A callback already started on its goroutine
// finds stopped set and returns at once.
func (e *mockEngine) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stopped = true
	for i := range e.timers {
		e.timers[i].idle.Stop()
		e.timers[i].act.Stop()
	}
}

// mockTimers holds one session's two timers side by side.
type mockTimers struct {
	idle, act *clock.Timer
}
