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
type Kernel struct {
	now      time.Duration
	seq      uint64
	heap     eventHeap
	executed uint64
	trace    *Trace
	tieBreak func() uint64
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
func (k *Kernel) Pending() int { return len(k.heap) }

// AfterFunc implements Clock.
func (k *Kernel) AfterFunc(d time.Duration, f func()) Timer {
	t := &KernelTimer{k: k, fn: f, index: -1}
	k.arm(t, d)
	return t
}

// Schedule runs f d from now; it is AfterFunc without a handle to keep.
func (k *Kernel) Schedule(d time.Duration, f func()) {
	k.arm(&KernelTimer{k: k, fn: f, index: -1}, d)
}

func (k *Kernel) arm(t *KernelTimer, d time.Duration) {
	if d < 0 {
		d = 0
	}
	t.at = k.now + d
	k.seq++
	t.seq = k.seq
	t.prio = 0
	if k.tieBreak != nil {
		t.prio = k.tieBreak()
	}
	k.heap.push(t)
}

// KernelTimer is the kernel's Timer: a queued event that can be stopped or
// re-armed without allocating.
type KernelTimer struct {
	k     *Kernel
	at    time.Duration
	prio  uint64
	seq   uint64
	index int // position in the heap, -1 when not queued
	fn    func()
}

// Stop implements Timer.
func (t *KernelTimer) Stop() bool {
	if t.index < 0 {
		return false
	}
	t.k.heap.remove(t.index)
	return true
}

// Reset implements Timer.
func (t *KernelTimer) Reset(d time.Duration) bool {
	was := t.Stop()
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
func (k *Kernel) Run(lim Limits) EndReason {
	for {
		if k.trace.violation != nil && !lim.KeepGoing {
			return EndViolation
		}
		if len(k.heap) == 0 {
			return k.finish(EndQuiescent)
		}
		next := k.heap[0]
		if lim.Horizon > 0 && next.at > lim.Horizon {
			k.now = lim.Horizon
			return k.finish(EndHorizon)
		}
		if lim.EventBudget > 0 && k.executed >= lim.EventBudget {
			k.trace.Fail(Violation{Invariant: EventBudgetExceeded,
				Message: fmt.Sprintf("%d events ran without reaching the horizon (livelock guard)", k.executed)})
			return EndBudget
		}
		k.heap.pop()
		k.now = next.at
		k.executed++
		if !k.fire(next.fn) {
			return EndViolation
		}
	}
}

// Step runs the next event, if any, regardless of horizon and budget; it
// reports whether one ran. Scripted scenarios and benchmarks drive the
// kernel with it.
func (k *Kernel) Step() bool {
	if len(k.heap) == 0 {
		return false
	}
	next := k.heap.pop()
	k.now = next.at
	k.executed++
	k.fire(next.fn)
	return true
}

// RunUntil runs every event due at or before t, then sets the clock to t.
// It stops early at a violation; it reports whether the run may go on.
func (k *Kernel) RunUntil(t time.Duration) bool {
	for len(k.heap) > 0 && k.heap[0].at <= t {
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

func (k *Kernel) fire(fn func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			k.trace.Fail(Violation{Invariant: ModelPanic, Message: fmt.Sprint(r)})
			ok = false
		}
	}()
	fn()
	return true
}

// eventHeap is a 4-ary min-heap of timers keyed by (at, prio, seq). A 4-ary
// heap halves the depth of a binary one and keeps siblings in one cache line.
type eventHeap []*KernelTimer

func less(a, b *KernelTimer) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.prio != b.prio {
		return a.prio < b.prio
	}
	return a.seq < b.seq
}

func (h *eventHeap) push(t *KernelTimer) {
	*h = append(*h, t)
	t.index = len(*h) - 1
	h.up(t.index)
}

func (h *eventHeap) pop() *KernelTimer {
	return h.remove(0)
}

func (h *eventHeap) remove(i int) *KernelTimer {
	old := *h
	t := old[i]
	last := len(old) - 1
	if i != last {
		old[i] = old[last]
		old[i].index = i
	}
	old[last] = nil
	*h = old[:last]
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
	t.index = -1
	return t
}

func (h eventHeap) up(i int) {
	t := h[i]
	for i > 0 {
		parent := (i - 1) / 4
		if !less(t, h[parent]) {
			break
		}
		h[i] = h[parent]
		h[i].index = i
		i = parent
	}
	h[i] = t
	t.index = i
}

// down sifts h[i] towards the leaves; it reports whether it moved.
func (h eventHeap) down(i int) bool {
	t := h[i]
	start := i
	n := len(h)
	for {
		first := 4*i + 1
		if first >= n {
			break
		}
		best := first
		end := first + 4
		if end > n {
			end = n
		}
		for c := first + 1; c < end; c++ {
			if less(h[c], h[best]) {
				best = c
			}
		}
		if !less(h[best], t) {
			break
		}
		h[i] = h[best]
		h[i].index = i
		i = best
	}
	h[i] = t
	t.index = i
	return i != start
}
