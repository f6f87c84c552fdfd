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
// The queue is a 4-ary min-heap of 16-byte entries (time, slot); a queued
// timer owns a slot, and dense per-slot arrays hold its position in the
// heap and the timer itself, so sifting touches only the heap and an int32
// array (the rest of the key, in the timer, matters only for events at the
// same instant). Keys are unique (the sequence number is), so
// which event runs next depends on the keys alone, never on the heap's
// shape. A re-armed timer is re-keyed in place (one sift), and the firing
// timer's entry stays queued while its callback runs, so a timer that its
// own callback re-arms (periodic, idle, activity) costs one sift instead of
// a pop and a push.
type Kernel struct {
	now   time.Duration
	seq   uint64
	queue []entry // heapBase unused entries, then the heap
	// Per slot: the position of its entry in queue, and its timer with
	// its callback. Separate arrays, so that sifting writes only to pos.
	pos      []int32
	owner    []slotOwner
	freeSlot []int32
	executed uint64
	trace    *Trace
	tieBreak func() uint64
	// firing is the timer whose callback is running (nil between events);
	// its entry is still queued, under the key it fired with. If the
	// callback re-arms it, the new key waits in rearm until it returns.
	firing *KernelTimer
	rearm  key
	// free holds fired timers of Schedule, which no one else references.
	free []*KernelTimer
	// runs holds, per slot, the Runner of a ScheduleRun event (nil for
	// every other event); runFiring, bound once, is those events' callback.
	runs      []Runner
	runFiring func()
	// asleep is the virtual time spent in host suspends (Suspend).
	asleep time.Duration
	// ghosts are the keys of events made ghosts (Ghost), a min-heap.
	ghosts []key
}

var _ Clock = (*Kernel)(nil)

// NewKernel returns a kernel at virtual time 0 with an empty queue and a
// trace that keeps its events when keep is set.
func NewKernel(keep bool) *Kernel {
	k := &Kernel{queue: make([]entry, heapBase, heapBase+16)}
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
func (k *Kernel) Pending() int {
	n := len(k.queue) - heapBase + len(k.ghosts)
	if k.firing != nil && !k.firing.armed {
		n-- // the firing timer's entry: it is not pending any more
	}
	return n
}

// AfterFunc implements Clock.
func (k *Kernel) AfterFunc(d time.Duration, f func()) Timer {
	t := &KernelTimer{k: k, fn: f, slot: -1}
	k.arm(t, d)
	return t
}

// Schedule runs f d from now; it is AfterFunc without a handle to keep.
func (k *Kernel) Schedule(d time.Duration, f func()) {
	if t := k.reusable(); t != nil {
		k.owner[t.slot].fn = f
		t.fn = f
		k.arm(t, d)
		return
	}
	k.arm(k.pooled(f), d)
}

// reusable returns the firing timer if the event being scheduled can take
// it over: a timer of Schedule or ScheduleRun (no one holds it) that its
// callback has not re-armed yet. Its entry, still queued, is then re-keyed
// when the callback returns (one sift) instead of removed and a new one
// pushed (two). The new event's key, its tie-break draw and Executed are
// the same either way: arm gives the key, and the queue orders by key
// alone.
func (k *Kernel) reusable() *KernelTimer {
	if t := k.firing; t != nil && t.pooled && !t.armed {
		return t
	}
	return nil
}

// Runner is an event that is its own callback: a value the caller has
// anyway (a call record), whose Run would otherwise need a closure over it.
type Runner interface{ Run() }

// ScheduleRun runs r.Run() d from now: Schedule without a closure to
// allocate. The event is keyed, ordered and counted exactly as Schedule's.
func (k *Kernel) ScheduleRun(d time.Duration, r Runner) {
	if k.runFiring == nil {
		k.runFiring = k.runRunner
	}
	t := k.reusable()
	if t != nil {
		// runRunner took the slot's Runner before calling it, so the slot
		// is free for r.
		k.owner[t.slot].fn = k.runFiring
		t.fn = k.runFiring
		k.arm(t, d)
	} else {
		t = k.pooled(k.runFiring)
		k.arm(t, d) // not the firing timer: arm pushes it
	}
	for int(t.slot) >= len(k.runs) {
		k.runs = append(k.runs, nil)
	}
	k.runs[t.slot] = r
}

// runRunner is the callback of a ScheduleRun event: the firing timer's
// slot holds its Runner.
func (k *Kernel) runRunner() {
	slot := k.firing.slot
	r := k.runs[slot]
	k.runs[slot] = nil
	r.Run()
}

// pooled returns a timer of Schedule for f, from the free list if it can.
func (k *Kernel) pooled(f func()) *KernelTimer {
	if n := len(k.free); n > 0 {
		t := k.free[n-1]
		k.free[n-1] = nil
		k.free = k.free[:n-1]
		t.fn = f
		return t
	}
	return &KernelTimer{k: k, fn: f, slot: -1, pooled: true}
}

// arm gives t the key (now+d, priority, next sequence number) and makes it
// pending: it queues t, or re-keys its queued entry in place. It is Reset,
// whose body it is so that a model's Reset through the Timer interface is
// one call.
func (k *Kernel) arm(t *KernelTimer, d time.Duration) { t.Reset(d) }

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
	k *Kernel
	// key is the key of its queue entry (for the firing timer, the key it
	// fired with).
	key  key
	slot int32 // the slot of its queue entry, -1 when it has none
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
	if t != t.k.firing {
		t.k.remove(int(t.k.pos[t.slot]))
	}
	return true
}

// Reset implements Timer. It is the kernel's arm (see arm).
func (t *KernelTimer) Reset(d time.Duration) bool {
	was := t.armed
	k := t.k
	if d < 0 {
		d = 0
	}
	k.seq++
	next := key{at: k.now + d, seq: k.seq}
	if k.tieBreak != nil {
		next.prio = k.tieBreak()
	}
	t.armed = true
	switch {
	case t == k.firing:
		// Re-keyed when its callback returns (fire): until then its entry
		// keeps the key it fired with, the least in the queue.
		k.rearm = next
	case t.slot < 0:
		t.key = next
		k.push(t)
	default:
		// move, inlined: the pending timer's entry re-keyed in place.
		i := int(k.pos[t.slot])
		earlier := next.less(t.key)
		t.key = next
		k.queue[i].at = next.at
		// Sift the way the key moved; not up from the root, nor down from
		// a leaf (three nodes in four; the idle timer's at one session).
		if earlier {
			if i > heapBase {
				k.up(i)
			}
		} else if 4*(i-heapBase)+1+heapBase < len(k.queue) {
			k.down(i)
		}
	}
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
	// KeepGoing continues past the first violation (the default stops),
	// as the trace's keep-going mode (Trace.SetKeepGoing) records: Run
	// then returns why the run stopped (horizon, quiescence, budget) even
	// when it violated, and stops at a model panic.
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
	// The limits as bounds that every event is checked against (none: the
	// largest).
	horizon, budget := lim.Horizon, lim.EventBudget
	if horizon <= 0 {
		horizon = maxDuration
	}
	if budget == 0 {
		budget = ^uint64(0)
	}
	tr := k.trace
	for {
		if tr.violation != nil && (!lim.KeepGoing || tr.panicked) {
			return EndViolation
		}
		if len(k.ghosts) > 0 {
			if k.ghostNext(k.next()) {
				if end, stop := k.runGhost(lim); stop {
					return end
				}
				continue
			}
		} else if len(k.queue) == heapBase {
			return k.finish(EndQuiescent)
		}
		next := &k.queue[heapBase]
		if next.at > horizon {
			k.now = lim.Horizon
			return k.finish(EndHorizon)
		}
		if k.executed >= budget {
			k.trace.Fail(Violation{Invariant: EventBudgetExceeded,
				Message: fmt.Sprintf("%d events ran without reaching the horizon (livelock guard)", k.executed)})
			return EndBudget
		}
		// fire, inlined, and settle's re-keying of a re-armed timer.
		o := &k.owner[next.slot]
		t, fn := o.t, o.fn
		k.now = next.at
		k.executed++
		t.armed = false
		k.firing = t
		fn()
		k.firing = nil
		if !t.armed {
			k.settle(t)
			continue
		}
		// Its entry is still the root unless a tie-break let an event
		// scheduled meanwhile pass it: then its position says where.
		i := heapBase
		if k.queue[heapBase].slot != t.slot {
			i = int(k.pos[t.slot])
		}
		rearm := k.rearm
		earlier := rearm.less(t.key)
		t.key = rearm
		k.queue[i].at = rearm.at
		if earlier {
			if i > heapBase {
				k.up(i)
			}
		} else if 4*(i-heapBase)+1+heapBase < len(k.queue) {
			k.down(i) // not from a leaf, as in Reset
		}
	}
}

// maxDuration is the largest time.Duration.
const maxDuration = time.Duration(1<<63 - 1)

// Step runs the next event, if any, regardless of horizon and budget; it
// reports whether one ran. Scripted scenarios and benchmarks drive the
// kernel with it.
func (k *Kernel) Step() (ran bool) {
	k.mustNotBeFiring("Step")
	next := k.next()
	if len(k.ghosts) > 0 && k.ghostNext(next) {
		k.fireGhost()
		return true
	}
	if next == nil {
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
// It stops early at a violation (in the keep-going mode, at a model
// panic); it reports whether the run may go on.
func (k *Kernel) RunUntil(t time.Duration) bool {
	k.mustNotBeFiring("RunUntil")
	for {
		next := k.next()
		if len(k.ghosts) > 0 && k.ghostNext(next) {
			if k.ghosts[0].at > t {
				break
			}
		} else if next == nil || next.at > t {
			break
		}
		if k.trace.Stopped() {
			return false
		}
		k.Step()
	}
	if t > k.now {
		k.now = t
	}
	return !k.trace.Stopped()
}

func (k *Kernel) mustNotBeFiring(what string) {
	if k.firing != nil {
		panic("sim: Kernel." + what + " called from inside an event callback")
	}
}

// slotOwner is what a queue slot belongs to: the timer and its callback,
// side by side, so that running an event loads the callback without first
// loading the timer. In a large world both are cache misses; this way they
// are independent instead of one after the other (measured at 10,000
// sessions: about 10% less CPU per event, docs/performance.md).
type slotOwner struct {
	t  *KernelTimer
	fn func()
}

// next returns the entry of the event that runs next, nil when none is queued.
func (k *Kernel) next() *entry {
	if len(k.queue) == heapBase {
		return nil
	}
	return &k.queue[heapBase]
}

// fire runs the event of next (the top entry).
func (k *Kernel) fire(next *entry) {
	o := &k.owner[next.slot]
	t, fn := o.t, o.fn
	k.now = next.at
	k.executed++
	t.armed = false
	k.firing = t
	fn()
	k.firing = nil
	k.settle(t)
}

// settle re-keys the entry of a timer whose callback has run if the
// callback re-armed it, and removes it otherwise.
func (k *Kernel) settle(t *KernelTimer) {
	i := int(k.pos[t.slot])
	if t.armed {
		k.move(i, t, k.rearm)
		return
	}
	k.remove(i)
	if t.pooled {
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
	if k.trace.keepGoing {
		k.trace.finishAll(k.now)
		return r
	}
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

// entry is one queued event: its time and the slot of its timer, where
// the rest of its key (prio, seq) is. Keys are unique (seq is), so they
// order events totally.
type entry struct {
	at   time.Duration
	slot int32
}

// heapBase is where the heap starts in the queue slice: with the root at 3,
// the four children of a node start at a multiple of 4, so they share one
// 64-byte cache line when the array is line-aligned (large ones are).
const heapBase = 3

// push queues t under its armed key.
func (k *Kernel) push(t *KernelTimer) {
	var id int32
	if n := len(k.freeSlot); n > 0 {
		id = k.freeSlot[n-1]
		k.freeSlot = k.freeSlot[:n-1]
	} else {
		id = int32(len(k.pos))
		k.pos = append(k.pos, 0)
		k.owner = append(k.owner, slotOwner{})
	}
	i := len(k.queue)
	k.pos[id] = int32(i)
	k.owner[id] = slotOwner{t, t.fn}
	t.slot = id
	k.queue = append(k.queue, entry{at: t.key.at, slot: id})
	k.up(i)
}

// move gives t's entry, at queue position i, the key next and sifts it the
// way the key moved.
func (k *Kernel) move(i int, t *KernelTimer, next key) {
	earlier := next.less(t.key)
	t.key = next
	k.queue[i].at = next.at
	if earlier {
		k.up(i)
	} else {
		k.down(i)
	}
}

// fix restores the heap after the key at i changed: down unless i is a
// leaf, then up if it did not move and is not the root.
func (k *Kernel) fix(i int) {
	if 4*(i-heapBase)+1+heapBase < len(k.queue) && k.down(i) {
		return
	}
	if i > heapBase {
		k.up(i)
	}
}

// remove deletes the entry at queue position i and frees its slot.
func (k *Kernel) remove(i int) {
	q := k.queue
	id := q[i].slot
	k.owner[id].t.slot = -1
	k.owner[id] = slotOwner{}
	k.freeSlot = append(k.freeSlot, id)
	last := len(q) - 1
	if i != last {
		q[i] = q[last]
		k.pos[q[i].slot] = int32(i)
	}
	k.queue = q[:last]
	if i != last {
		k.fix(i)
	}
}

func (k *Kernel) up(i int) {
	q := k.queue
	e := q[i]
	for i > heapBase {
		parent := (i-heapBase-1)/4 + heapBase
		if pat := q[parent].at; e.at > pat || e.at == pat && !k.tieLess(e.slot, q[parent].slot) {
			break
		}
		q[i] = q[parent]
		k.pos[q[i].slot] = int32(i)
		i = parent
	}
	q[i] = e
	k.pos[e.slot] = int32(i)
}

// down sifts the entry at i towards the leaves; it reports whether it moved.
// The least child's time is kept in a register; only entries at the same
// instant compare the rest of their keys (tieLess).
func (k *Kernel) down(i int) bool {
	q := k.queue
	e := q[i]
	start := i
	n := len(q)
	for {
		first := 4*(i-heapBase) + 1 + heapBase
		if first >= n {
			break
		}
		best, bat := first, q[first].at
		if first+3 < n {
			// A full node, unrolled: one bounds check for its four children.
			c := q[first : first+4 : first+4]
			if at := c[1].at; at < bat || at == bat && k.tieLess(c[1].slot, q[best].slot) {
				best, bat = first+1, at
			}
			if at := c[2].at; at < bat || at == bat && k.tieLess(c[2].slot, q[best].slot) {
				best, bat = first+2, at
			}
			if at := c[3].at; at < bat || at == bat && k.tieLess(c[3].slot, q[best].slot) {
				best, bat = first+3, at
			}
		} else {
			for c := first + 1; c < n; c++ {
				if at := q[c].at; at < bat || at == bat && k.tieLess(q[c].slot, q[best].slot) {
					best, bat = c, at
				}
			}
		}
		if bat > e.at || bat == e.at && !k.tieLess(q[best].slot, e.slot) {
			break
		}
		q[i] = q[best]
		k.pos[q[i].slot] = int32(i)
		i = best
	}
	q[i] = e
	k.pos[e.slot] = int32(i)
	return i != start
}

// tieLess orders the queued entries of slots a and b whose times are equal
// by the rest of their timers' keys.
func (k *Kernel) tieLess(a, b int32) bool {
	return k.owner[a].t.key.less(k.owner[b].t.key)
}

// Suspend is a host suspend of d: the whole host freezes, so nothing runs
// while the wall clock (Now, Elapsed) jumps d ahead, and every pending
// event, whose delay counts awake time as a monotonic timer's does
// (setTimeout, CLOCK_MONOTONIC), is pushed back by d. Awake does not
// advance. It is called from inside an event callback (the fault that
// suspends the host); the rest of that callback runs after the wake.
func (k *Kernel) Suspend(d time.Duration) {
	if d <= 0 {
		return
	}
	for i := heapBase; i < len(k.queue); i++ {
		k.queue[i].at += d
		k.owner[k.queue[i].slot].t.key.at += d
	}
	for i := range k.ghosts {
		k.ghosts[i].at += d
	}
	if k.firing != nil && k.firing.armed {
		k.rearm.at += d
	}
	k.now += d
	k.asleep += d
}

// Awake returns the virtual time the host was awake since the run's start
// (Elapsed minus every Suspend).
func (k *Kernel) Awake() time.Duration { return k.now - k.asleep }
