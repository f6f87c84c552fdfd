package bench

import "time"

// bareEngine is the baseline: a 4-ary min-heap of (time, sequence, timer)
// values and a loop that calls the workload inline. No interfaces, no
// closures, no trace: the least a single-threaded discrete-event loop can
// do for this workload. It uses the same heap techniques as the kernel, so
// the comparison measures what the kernel adds (interfaces, closures,
// tracing, fingerprinting), not a better heap: the firing timer's entry
// stays at the root and is re-keyed in place when the callback re-arms it,
// and a pending timer is re-keyed in place.
type bareEngine struct {
	w    *world
	now  time.Duration
	seq  uint64
	heap []bareEntry
	// pos is each timer's index in heap (-1 when not queued); timer 2i is
	// session i's idle timer, 2i+1 its activity timer.
	pos []int32
}

type bareEntry struct {
	at    time.Duration
	seq   uint64
	timer int32
}

func newBareEngine(w *world) *bareEngine {
	e := &bareEngine{w: w}
	e.pos = make([]int32, 2*len(w.sessions))
	for i := range e.pos {
		e.pos[i] = -1
	}
	e.heap = make([]bareEntry, 0, 2*len(w.sessions))
	for i := range w.sessions {
		e.arm(2*i+timerIdle, IdleTimeout)
		e.arm(2*i+timerAct, w.firstActivity(i))
	}
	return e
}

func (e *bareEngine) advance(to time.Duration) {
	for len(e.heap) > 0 && e.heap[0].at <= to {
		top := e.heap[0]
		e.now = top.at
		i := int(top.timer >> 1)
		if top.timer&1 == timerIdle {
			// The idle timer is not re-armed: pop it.
			e.remove(0)
			e.arm(2*i+timerAct, e.w.onIdle(i, e.now))
		} else {
			// The activity timer is re-armed: re-key it at the root.
			_, next := e.w.onAct(i, e.now)
			e.arm(2*i+timerIdle, IdleTimeout)
			e.arm(2*i+timerAct, next)
		}
	}
	if to > e.now {
		e.now = to
	}
}

func (e *bareEngine) count() uint64 { return e.w.events }

func (e *bareEngine) digest() uint64 { return e.w.digest }

func (e *bareEngine) close() {}

// arm (re-)queues timer to fire d from now, re-keying its entry in place
// when it has one.
func (e *bareEngine) arm(timer int, d time.Duration) {
	e.seq++
	x := bareEntry{at: e.now + d, seq: e.seq, timer: int32(timer)}
	p := int(e.pos[timer])
	if p < 0 {
		e.heap = append(e.heap, x)
		e.up(len(e.heap) - 1)
		return
	}
	// The new key is later than the old (the sequence number grew) unless
	// its time is earlier.
	earlier := x.at < e.heap[p].at
	e.heap[p] = x
	if earlier {
		e.up(p)
	} else {
		e.down(p)
	}
}

func (a *bareEntry) less(b *bareEntry) bool {
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

func (e *bareEngine) remove(i int) {
	h := e.heap
	last := len(h) - 1
	e.pos[h[i].timer] = -1
	if i != last {
		h[i] = h[last]
		e.pos[h[i].timer] = int32(i)
	}
	e.heap = h[:last]
	if i != last {
		if !e.down(i) {
			e.up(i)
		}
	}
}

func (e *bareEngine) up(i int) {
	h := e.heap
	x := h[i]
	for i > 0 {
		parent := (i - 1) / 4
		if !x.less(&h[parent]) {
			break
		}
		h[i] = h[parent]
		e.pos[h[i].timer] = int32(i)
		i = parent
	}
	h[i] = x
	e.pos[x.timer] = int32(i)
}

func (e *bareEngine) down(i int) bool {
	h := e.heap
	x := h[i]
	start := i
	n := len(h)
	for {
		first := 4*i + 1
		if first >= n {
			break
		}
		best := first
		for c := first + 1; c < min(first+4, n); c++ {
			if h[c].less(&h[best]) {
				best = c
			}
		}
		if !h[best].less(&x) {
			break
		}
		h[i] = h[best]
		e.pos[h[i].timer] = int32(i)
		i = best
	}
	h[i] = x
	e.pos[x.timer] = int32(i)
	return i != start
}
