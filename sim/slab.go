package sim

// Slab hands out pointers to zeroed values of T allocated up to SlabSize
// at a time (2, 4, 8, then SlabSize: a slab used a few times wastes
// little): one allocation per SlabSize values instead of one per value, for
// values a run keeps until its end anyway (store rows, call records). A
// value handed out is never handed out again; the collector frees a
// slab's array once no pointer into it is left, so a value kept keeps
// its whole slab (at most SlabSize-1 neighbours) alive.
//
// The zero value is ready to use. A Slab belongs to one run (it is not
// safe for concurrent use).
type Slab[T any] struct {
	free []T
	next int // the size of the next allocation
}

// SlabSize is how many values one allocation of a Slab holds at most.
const SlabSize = 16

// New returns a pointer to a zero T that no other New returned.
func (s *Slab[T]) New() *T {
	if len(s.free) == 0 {
		n := max(s.next, 2)
		s.free = make([]T, n)
		s.next = min(2*n, SlabSize)
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}
