package bench

import (
	"testing"
	"testing/synctest"
	"time"
)

// synctestEngine runs the workload with time.AfterFunc inside a
// testing/synctest bubble: the bubble's fake clock jumps to the next timer
// once every goroutine in it is blocked, and each callback runs on its own
// goroutine. mu serialises the callbacks' access to the world.
//
// The bubble's root goroutine serves advance requests sent from outside,
// so the caller (a benchmark, orchsim bench) measures with the real clock
// and can stop its timer around the set-up; inside the bubble time.Now is
// the fake one.
type synctestEngine struct {
	epoch time.Time
	lockedWorld
	timers  []goTimers
	stopped bool
	// requests carries the virtual time to advance to, or -1 to stop;
	// replies says the request is done.
	requests chan time.Duration
	replies  chan struct{}
}

// newSynctestEngine starts the bubble on a goroutine and returns once the
// sessions are armed.
//
// synctest.Test wants a *testing.T, and orchsim bench is not a test binary
// (neither is a benchmark's *testing.B a T). A zero testing.T is enough in
// Go 1.25 and 1.26: synctest.Test creates the bubble itself, and the
// testing package's helper it calls builds the bubble's T from the parent's
// name, level, chatty printer and shared test state, all of which may be
// zero. What would not work on a zero T is a failure (FailNow, Fatal,
// a panic in the bubble), which would unwind past this goroutine; the
// engine never reports through t and does not panic.
func newSynctestEngine(w *world) *synctestEngine {
	e := &synctestEngine{lockedWorld: lockedWorld{w: w}, requests: make(chan time.Duration), replies: make(chan struct{})}
	go synctest.Test(new(testing.T), func(*testing.T) {
		e.epoch = time.Now()
		e.mu.Lock()
		e.timers = make([]goTimers, len(w.sessions))
		for i := range w.sessions {
			e.timers[i].idle = time.AfterFunc(IdleTimeout, func() { e.onIdle(i) })
			e.timers[i].act = time.AfterFunc(w.firstActivity(i), func() { e.onAct(i) })
		}
		e.mu.Unlock()
		e.replies <- struct{}{}
		for to := range e.requests {
			if to < 0 {
				e.stop()
				break
			}
			if d := to - time.Since(e.epoch); d > 0 {
				time.Sleep(d)
			}
			// Let the callbacks due at this instant finish.
			synctest.Wait()
			e.replies <- struct{}{}
		}
		synctest.Wait()
		e.replies <- struct{}{}
	})
	<-e.replies
	return e
}

func (e *synctestEngine) onIdle(i int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return
	}
	e.timers[i].act.Reset(e.w.onIdle(i, time.Since(e.epoch)))
}

func (e *synctestEngine) onAct(i int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return
	}
	_, next := e.w.onAct(i, time.Since(e.epoch))
	t := &e.timers[i]
	t.idle.Reset(IdleTimeout)
	t.act.Reset(next)
}

func (e *synctestEngine) stop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stopped = true
	for i := range e.timers {
		e.timers[i].idle.Stop()
		e.timers[i].act.Stop()
	}
}

func (e *synctestEngine) advance(to time.Duration) {
	e.requests <- to
	<-e.replies
}

// close stops the timers and waits for the bubble to end.
func (e *synctestEngine) close() {
	e.requests <- -1
	<-e.replies
	close(e.requests)
}

// goTimers holds one session's two timers side by side.
type goTimers struct {
	idle, act *time.Timer
}
