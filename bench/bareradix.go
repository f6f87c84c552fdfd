package bench

import (
	"math/bits"
	"time"
)

// radixEngine is the bare loop of bare.go on a radix heap, the kernel's
// queue structure (sim/queue.go explains it), keyed by (time, sequence):
// no interfaces, closures, trace or fingerprint. Timer 2i is session i's
// idle timer, 2i+1 its activity timer; per timer, where is its bucket (-1
// when not queued) and idx its index there.
type radixEngine struct {
	w       *world
	now     time.Duration
	seq     uint64
	last    uint64
	mask    uint64
	buckets [65][]int32
	where   []int8
	idx     []int32
	at      []uint64
	sq      []uint64
}

func newRadixEngine(w *world) *radixEngine {
	n := 2 * len(w.sessions)
	e := &radixEngine{w: w, where: make([]int8, n), idx: make([]int32, n), at: make([]uint64, n), sq: make([]uint64, n)}
	for i := range e.where {
		e.where[i] = -1
	}
	for i := range w.sessions {
		e.arm(2*i+timerIdle, IdleTimeout)
		e.arm(2*i+timerAct, w.firstActivity(i))
	}
	return e
}

func (e *radixEngine) insert(t int32) {
	b := 0
	if x := e.at[t] ^ e.last; x != 0 {
		b = bits.Len64(x)
	}
	e.where[t] = int8(b)
	e.idx[t] = int32(len(e.buckets[b]))
	e.buckets[b] = append(e.buckets[b], t)
	e.mask |= 1 << uint(b)
}

func (e *radixEngine) remove(t int32) {
	b := e.where[t]
	s := e.buckets[b]
	i := e.idx[t]
	lastI := int32(len(s) - 1)
	if i != lastI {
		m := s[lastI]
		s[i] = m
		e.idx[m] = i
	}
	e.buckets[b] = s[:lastI]
	if lastI == 0 {
		e.mask &^= 1 << uint(b)
	}
	e.where[t] = -1
}

func (e *radixEngine) arm(timer int, d time.Duration) {
	t := int32(timer)
	if e.where[t] >= 0 {
		e.remove(t)
	}
	e.seq++
	e.at[t] = uint64(e.now + d)
	e.sq[t] = e.seq
	e.insert(t)
}

// top returns the next timer, -1 if none: the one with the least sequence
// number at the least time.
func (e *radixEngine) top() int32 {
	if e.mask == 0 {
		return -1
	}
	if e.mask&1 == 0 {
		b := bits.TrailingZeros64(e.mask)
		s := e.buckets[b]
		m := e.at[s[0]]
		for _, t := range s[1:] {
			if a := e.at[t]; a < m {
				m = a
			}
		}
		e.last = m
		e.buckets[b] = s[:0]
		e.mask &^= 1 << uint(b)
		for _, t := range s {
			e.insert(t)
		}
	}
	s := e.buckets[0]
	best := s[0]
	for _, t := range s[1:] {
		if e.sq[t] < e.sq[best] {
			best = t
		}
	}
	return best
}

func (e *radixEngine) advance(to time.Duration) {
	for {
		t := e.top()
		if t < 0 || time.Duration(e.at[t]) > to {
			break
		}
		e.now = time.Duration(e.at[t])
		i := int(t >> 1)
		if t&1 == timerIdle {
			e.remove(t)
			e.arm(2*i+timerAct, e.w.onIdle(i, e.now))
		} else {
			_, next := e.w.onAct(i, e.now)
			e.arm(2*i+timerIdle, IdleTimeout)
			e.arm(2*i+timerAct, next)
		}
	}
	if to > e.now {
		e.now = to
	}
}

func (e *radixEngine) count() uint64  { return e.w.events }
func (e *radixEngine) digest() uint64 { return e.w.digest }
func (e *radixEngine) close()         {}
