package invariants

import (
	"time"

	"github.com/orchsim/orchsim/sim"
)

// awakeClock follows the host's awake time from the world's `fault
// host.resume slept=D` events: awake(at) is at minus every host sleep seen
// so far, the clock a monotonic timer reads (sim.Kernel.Awake). A bound the
// desktop app or the server keeps with its own timers (a pane's attach, a
// PTY reference settling, a cancel's cascade) is an awake-time bound: a host
// that sleeps through it has not broken it, and a checker that counted the
// wall clock reported a sleeping laptop as a bug (found by the upstream hunt,
// docs/findings.md: chaos seed 1019859 under commit blanked a pane "for
// 2h25m" that the host slept).
type awakeClock struct{ slept time.Duration }

// observe folds a host resume into the clock; call it first in Observe.
func (c *awakeClock) observe(ev *sim.Event) {
	if d, ok := hostSlept(ev); ok {
		c.slept += d
	}
}

// awake returns the awake time at wall time at (at must be the current
// event's time or later: a sleep is counted once the host has resumed).
func (c *awakeClock) awake(at time.Duration) time.Duration { return at - c.slept }

// sleptSince returns how much of the wall time since an awake-time mark the
// host slept, for messages: wall elapsed minus awake elapsed.
func (c *awakeClock) sleptSince(wallFrom, awakeFrom, now time.Duration) time.Duration {
	return (now - wallFrom) - (c.awake(now) - awakeFrom)
}

// sleptNote is " of awake time, the host having slept D in between" for a
// message, or "" when it did not sleep (a message without a sleep reads as
// before the awake clock, so recorded fingerprints stay valid).
func sleptNote(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return " of awake time, the host having slept " + d.String() + " in between"
}

// awakeNote is sleptNote for a message whose duration is followed by
// "after ...".
func awakeNote(d time.Duration) string { return sleptNote(d) }
