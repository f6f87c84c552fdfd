package sim

import "time"

// Epoch is the wall-clock instant virtual time 0 maps onto, for model code
// that wants a time.Time. It is fixed so traces never depend on the host clock.
var Epoch = time.Date(2026, time.October, 21, 0, 0, 0, 0, time.UTC)

// Clock is the small clock interface models use. The kernel implements it
// deterministically on virtual time; WallClock adapts it to real time.
type Clock interface {
	// Now returns the current instant.
	Now() time.Time
	// AfterFunc calls f once, d from now, unless the returned Timer is
	// stopped first. Negative d counts as 0.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is the handle of a pending AfterFunc.
type Timer interface {
	// Stop cancels the timer; it reports whether the timer was pending.
	Stop() bool
	// Reset re-arms the timer to fire d from now (whether or not it had
	// fired); it reports whether the timer was pending.
	Reset(d time.Duration) bool
}

// Since returns the virtual time elapsed from Epoch to c.Now().
func Since(c Clock) time.Duration { return c.Now().Sub(Epoch) }
