package sim

import (
	"fmt"
	"time"
)

// Kernel is the deterministic scheduler of one run: a virtual clock and one
// event queue ordered by (time, tie-break priority, sequence number). It runs
// every callback on the calling goroutine, one at a time.
//
// Events at the same instant run in the order they were scheduled, unless a
// TieBreak is installed (PCT-style exploration), whose draws come from the
// run's Source and so replay.
//
// The queue is a radix heap (see queue.go): arming, re-arming and stopping
// a timer cost O(1), and the next event is found by a scan of one small
// bucket. Keys are unique (the sequence number is), so which event runs
// next depends on the keys alone, never on the queue's layout.
type Kernel struct {
	now      time.Duration
	seq      uint64
	q        queue
	executed uint64
	trace    *Trace
	tieBreak func() uint64
	// firing is the timer whose callback is running (nil between events).
	// It left the queue when it fired; re-arming it queues it again.
	firing *KernelTimer
	// free holds fired timers of Schedule, which no one else references.
	free []*KernelTimer
}

var _ Clock = (*Kernel)(nil)

// NewKernel returns a kernel at virtual time 0 with an empty queue and a
// trace that keeps its events when keep is set.
func NewKernel(keep bool) *Kernel {
	k := &Kernel{}
	k.trace = NewTrace(k, keep)
	return k
}

// Trace returns the run's trace.
func (k *Kernel) Trace() *Trace { return k.trace }

// SetTieBreak installs a function drawing a priority for each newly
// scheduled event; among events at the same instant, lower priorities run
// first. nil restores insertion order.
func (k *Kernel) SetTieBreak(f func() uint64) { k.tieBreak = f }

// Now implements Clock: Epoch plus the virtual time elapsed.
func (k *Kernel) Now() time.Time { return Epoch.Add(k.now) }

// Elapsed returns the virtual time since the run's start.
func (k *Kernel) Elapsed() time.Duration { return k.now }

// Executed returns how many events have run.
func (k *Kernel) Executed() uint64 { return k.executed }

// Pending returns how many events are queued.
func (k *Kernel) Pending() int { return k.q.len() }

// AfterFunc implements Clock.
func (k *Kernel) AfterFunc(d time.Duration, f func()) Timer {
	t := &KernelTimer{k: k, fn: f, slot: -1}
	k.arm(t, d)
	return t
}

// Schedule runs f d from now; it is AfterFunc without a handle to keep.
func (k *Kernel) Schedule(d time.Duration, f func()) {
	var t *KernelTimer
	if n := len(k.free); n > 0 {
		t = k.free[n-1]
		k.free[n-1] = nil
		k.free = k.free[:n-1]
		t.fn = f
	} else {
		t = &KernelTimer{k: k, fn: f, slot: -1, pooled: true}
	}
	k.arm(t, d)
}

// arm gives t the key (now+d, priority, next sequence number) and makes it
// pending: it queues t, or re-keys its queued entry.
func (k *Kernel) arm(t *KernelTimer, d time.Duration) {
	if d < 0 {
		d = 0
	}
	k.seq++
	next := key{at: k.now + d, seq: k.seq}
	if k.tieBreak != nil {
		next.prio = k.tieBreak()
	}
	t.armed = true
	if t.slot < 0 {
		t.slot = k.q.push(t, next)
	} else {
		k.q.rekey(t.slot, next)
	}
}

// key orders events: time, then tie-break priority, then sequence number.
// Keys are unique (seq is).
type key struct {
	at   time.Duration
	prio uint64
	seq  uint64
}

func (a key) less(b key) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.prio != b.prio {
		return a.prio < b.prio
	}
	return a.seq < b.seq
}

// KernelTimer is the kernel's Timer: a queued event that can be stopped or
// re-armed without allocating.
type KernelTimer struct {
	k    *Kernel
	slot int32 // its slot in the queue, -1 when it is not queued
	// armed: pending, will fire at its key unless stopped.
	armed bool
	// pooled: made by Schedule; returned to the kernel's free list once run.
	pooled bool
	fn     func()
}

// Stop implements Timer.
func (t *KernelTimer) Stop() bool {
	if !t.armed {
		return false
	}
	t.armed = false
	t.k.q.remove(t.slot)
	t.slot = -1
	return true
}

// Reset implements Timer.
func (t *KernelTimer) Reset(d time.Duration) bool {
	was := t.armed
	t.k.arm(t, d)
	return was
}

// EndReason says why a run stopped.
type EndReason int

const (
	// EndHorizon: the next event lay beyond the horizon.
	EndHorizon EndReason = iota
	// EndQuiescent: no event was left to run.
	EndQuiescent
	// EndViolation: an invariant was violated (or a model panicked).
	EndViolation
	// EndBudget: the event budget ran out (livelock guard).
	EndBudget
)

func (r EndReason) String() string {
	switch r {
	case EndHorizon:
		return "horizon"
	case EndQuiescent:
		return "quiescent"
	case EndViolation:
		return "violation"
	case EndBudget:
		return "budget"
	}
	return fmt.Sprintf("EndReason(%d)", int(r))
}

// Limits bound a run.
type Limits struct {
	// Horizon is the virtual time after which no event runs (0: unbounded).
	Horizon time.Duration
	// EventBudget is the most events that may run (0: unbounded); running
	// out is reported as the violation "event-budget-exceeded".
	EventBudget uint64
	// KeepGoing continues past the first violation (the default stops).
	KeepGoing bool
}

// ModelPanic and EventBudgetExceeded are the pseudo-invariants the kernel
// reports for a panic inside a model and for a run that exhausted its budget.
const (
	ModelPanic          = "model-panic"
	EventBudgetExceeded = "event-budget-exceeded"
)

// Run executes events in order until the horizon, quiescence, a violation
// or the budget. A panic inside a callback is recovered and reported as the
// violation "model-panic"; the run then stops. Checkers that implement
// Finisher judge the end state when the run ends without a violation.
//
// Run, Step and RunUntil must not be called from inside a callback.
func (k *Kernel) Run(lim Limits) (end EndReason) {
	k.mustNotBeFiring("Run")
	defer func() {
		// Only a panic raised inside a callback is the model's; any other
		// keeps unwinding.
		if k.firing != nil {
			if r := recover(); r != nil {
				k.recoverModelPanic(r)
				end = EndViolation
			}
		}
	}()
	for {
		if k.trace.violation != nil && !lim.KeepGoing {
			return EndViolation
		}
		next := k.q.peek()
		if next < 0 {
			return k.finish(EndQuiescent)
		}
		if lim.Horizon > 0 && k.q.at(next) > lim.Horizon {
			k.now = lim.Horizon
			return k.finish(EndHorizon)
		}
		if lim.EventBudget > 0 && k.executed >= lim.EventBudget {
			k.trace.Fail(Violation{Invariant: EventBudgetExceeded,
				Message: fmt.Sprintf("%d events ran without reaching the horizon (livelock guard)", k.executed)})
			return EndBudget
		}
		k.fire(next)
	}
}

// Step runs the next event, if any, regardless of horizon and budget; it
// reports whether one ran. Scripted scenarios and benchmarks drive the
// kernel with it.
func (k *Kernel) Step() (ran bool) {
	k.mustNotBeFiring("Step")
	next := k.q.peek()
	if next < 0 {
		return false
	}
	defer func() {
		if k.firing != nil {
			if r := recover(); r != nil {
				k.recoverModelPanic(r)
				ran = true
			}
		}
	}()
	k.fire(next)
	return true
}

// RunUntil runs every event due at or before t, then sets the clock to t.
// It stops early at a violation; it reports whether the run may go on.
func (k *Kernel) RunUntil(t time.Duration) bool {
	k.mustNotBeFiring("RunUntil")
	for {
		next := k.q.peek()
		if next < 0 || k.q.at(next) > t {
			break
		}
		if k.trace.violation != nil {
			return false
		}
		k.Step()
	}
	if t > k.now {
		k.now = t
	}
	return k.trace.violation == nil
}

func (k *Kernel) mustNotBeFiring(what string) {
	if k.firing != nil {
		panic("sim: Kernel." + what + " called from inside an event callback")
	}
}

// fire runs the event in slot s, the next one: it leaves the queue, and
// its callback may queue it again.
func (k *Kernel) fire(s int32) {
	t := k.q.owner[s]
	k.now = k.q.at(s)
	k.executed++
	k.q.remove(s)
	t.slot = -1
	t.armed = false
	k.firing = t
	t.fn()
	k.firing = nil
	k.settle(t)
}

// settle returns a Schedule timer whose callback has run to the pool.
func (k *Kernel) settle(t *KernelTimer) {
	if t.pooled && !t.armed {
		t.fn = nil
		k.free = append(k.free, t)
	}
}

// recoverModelPanic cleans up after a callback panicked (the timer may have
// been re-armed before the panic) and records the violation.
func (k *Kernel) recoverModelPanic(r any) {
	t := k.firing
	k.firing = nil
	k.settle(t)
	k.trace.Fail(Violation{Invariant: ModelPanic, Message: fmt.Sprint(r)})
}

func (k *Kernel) finish(r EndReason) EndReason {
	if k.trace.violation != nil {
		return EndViolation
	}
	for _, c := range k.trace.checkers {
		if f, ok := c.(Finisher); ok {
			if v := f.Finish(k.now); v != nil {
				k.trace.Fail(*v)
				return EndViolation
			}
		}
	}
	return r
}
