package sim

import (
	"math/bits"
	"time"
)

// queue is the kernel's event queue: a radix heap over the events' times,
// with the events at the earliest time in a binary heap by (tie-break
// priority, sequence number).
//
// A discrete-event simulation never schedules into the past, so every
// queued time is at least last, the time of the latest event taken. An
// event with time at sits in bucket bits.Len64(at ^ last): bucket 0 holds
// the events at last itself, bucket b > 0 those whose time first differs
// from last in bit b-1, so every time in bucket b is below every time in
// bucket b+1. Arming, re-arming and stopping a timer are O(1) (an append
// or a swap-remove). To find the next event when bucket 0 is empty, the
// queue takes the lowest non-empty bucket, makes its least time the new
// last, and spreads its events over lower buckets; an event moves down a
// few times in its life, never up. A comparison-based heap instead sifts
// through its depth on every re-arm, and every level is a branch the CPU
// cannot predict, which is where a timer-heavy run spent its time.
//
// Bucket 0's heap is ordered by the rest of the key, so events at the same
// instant run in priority, then sequence order (insertion order without a
// tie-break). Times are compared as uint64: they are never negative.
//
// A queued timer owns a slot; dense per-slot arrays hold its key, its
// bucket and its index there, and the timer itself. A bucket's entries
// carry their time, so spreading a bucket reads it front to back instead of
// looking every slot's key up.
type queue struct {
	last uint64
	// mask has bit b set when bucket b is not empty.
	mask    uint64
	buckets [65][]qentry
	keys    []key
	bucket  []uint8
	index   []int32
	owner   []*KernelTimer
	free    []int32
	n       int
	scratch []qentry
}

// qentry is one queued event in a bucket: its time and its slot.
type qentry struct {
	at   uint64
	slot int32
}

func (q *queue) len() int { return q.n }

// at returns the time of the event in slot s.
func (q *queue) at(s int32) time.Duration { return q.keys[s].at }

// push queues t under k and returns its slot.
func (q *queue) push(t *KernelTimer, k key) int32 {
	var s int32
	if n := len(q.free); n > 0 {
		s = q.free[n-1]
		q.free = q.free[:n-1]
	} else {
		s = int32(len(q.keys))
		q.keys = append(q.keys, key{})
		q.bucket = append(q.bucket, 0)
		q.index = append(q.index, 0)
		q.owner = append(q.owner, nil)
	}
	q.keys[s] = k
	q.owner[s] = t
	q.n++
	q.insert(s)
	return s
}

// rekey gives the queued slot s the key k.
func (q *queue) rekey(s int32, k key) {
	at := uint64(k.at)
	if b := q.bucket[s]; b != 0 && at >= q.last && uint8(bits.Len64(at^q.last)) == b {
		// The same bucket, which is unordered: nothing moves.
		q.keys[s] = k
		q.buckets[b][q.index[s]].at = at
		return
	}
	q.unlink(s)
	q.keys[s] = k
	q.insert(s)
}

// remove takes slot s out of the queue and frees it.
func (q *queue) remove(s int32) {
	q.unlink(s)
	q.owner[s] = nil
	q.free = append(q.free, s)
	q.n--
}

// peek returns the slot of the next event, -1 when the queue is empty.
func (q *queue) peek() int32 {
	if q.mask&1 == 0 {
		if q.mask == 0 {
			return -1
		}
		q.spread(bits.TrailingZeros64(q.mask))
	}
	return q.buckets[0][0].slot
}

// insert files slot s, whose key is set, into its bucket.
func (q *queue) insert(s int32) {
	at := uint64(q.keys[s].at)
	if at < q.last {
		// Only after a run stopped at a horizon short of the next event,
		// whose time had become last: move last back and refile.
		q.rebase(at)
	}
	q.file(qentry{at: at, slot: s})
}

// file appends e to its bucket; e.at is at least last.
func (q *queue) file(e qentry) {
	b := bits.Len64(e.at ^ q.last)
	q.mask |= 1 << b
	q.bucket[e.slot] = uint8(b)
	q.index[e.slot] = int32(len(q.buckets[b]))
	q.buckets[b] = append(q.buckets[b], e)
	if b == 0 {
		q.up(len(q.buckets[0]) - 1)
	}
}

// unlink takes slot s out of its bucket, keeping bucket 0 a heap.
func (q *queue) unlink(s int32) {
	b := q.bucket[s]
	list := q.buckets[b]
	i := int(q.index[s])
	last := len(list) - 1
	if i != last {
		moved := list[last]
		list[i] = moved
		q.index[moved.slot] = int32(i)
	}
	q.buckets[b] = list[:last]
	if last == 0 {
		q.mask &^= 1 << b
	} else if b == 0 && i != last {
		if !q.down(i) {
			q.up(i)
		}
	}
}

// spread empties bucket b, the lowest non-empty one: its least time becomes
// last and its events move to lower buckets.
func (q *queue) spread(b int) {
	list := q.buckets[b]
	least := list[0].at
	for _, e := range list[1:] {
		least = min(least, e.at)
	}
	q.last = least
	q.buckets[b] = list[:0]
	q.mask &^= 1 << b
	for _, e := range list {
		q.file(e) // into a bucket below b: list is not appended to
	}
}

// rebase moves last back to at, below every queued time, and refiles every
// queued event.
func (q *queue) rebase(at uint64) {
	all := q.scratch[:0]
	for b := range q.buckets {
		all = append(all, q.buckets[b]...)
		q.buckets[b] = q.buckets[b][:0]
	}
	q.mask = 0
	q.last = at
	for _, e := range all {
		q.file(e)
	}
	q.scratch = all[:0]
}

// less orders two slots of bucket 0, whose times are equal.
func (q *queue) less(a, b int32) bool {
	ka, kb := &q.keys[a], &q.keys[b]
	if ka.prio != kb.prio {
		return ka.prio < kb.prio
	}
	return ka.seq < kb.seq
}

func (q *queue) up(i int) {
	h := q.buckets[0]
	e := h[i]
	for i > 0 {
		parent := (i - 1) / 2
		if !q.less(e.slot, h[parent].slot) {
			break
		}
		h[i] = h[parent]
		q.index[h[i].slot] = int32(i)
		i = parent
	}
	h[i] = e
	q.index[e.slot] = int32(i)
}

// down sifts bucket 0's entry at i towards the leaves; it reports whether
// it moved.
func (q *queue) down(i int) bool {
	h := q.buckets[0]
	e := h[i]
	start := i
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && q.less(h[c+1].slot, h[c].slot) {
			c++
		}
		if !q.less(h[c].slot, e.slot) {
			break
		}
		h[i] = h[c]
		q.index[h[i].slot] = int32(i)
		i = c
	}
	h[i] = e
	q.index[e.slot] = int32(i)
	return i != start
}
