package store

import "github.com/orchsim/orchsim/sim"

// Rows allocates the rows the models append to a Store a slab at a time
// (sim.Slab): rows live as long as the store does, so one allocation per
// sim.SlabSize rows instead of one per row changes nothing but the
// allocation count. A row from Rows is an ordinary row: it may be kept,
// compared by pointer, or dropped from its table. The zero value is ready.
type Rows struct {
	Receipts     sim.Slab[Receipt]
	Tasks        sim.Slab[Task]
	Threads      sim.Slab[Thread]
	Messages     sim.Slab[Message]
	Items        sim.Slab[ThreadItem]
	Deliveries   sim.Slab[DeliveryRun]
	Reservations sim.Slab[Reservation]
	Schedules    sim.Slab[Schedule]
	Runs         sim.Slab[Run]
	Checkpoints  sim.Slab[Checkpoint]
	// Str builds the store's own ids (run ids).
	Str sim.Strings
	// resultStrs backs the strings of PackResult's results.
	resultStrs []string
}

// NewRow returns a pointer to a copy of v from s.
func NewRow[T any](s *sim.Slab[T], v T) *T {
	p := s.New()
	*p = v
	return p
}
