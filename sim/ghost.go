package sim

import (
	"fmt"
	"time"
)

// Ticket names one pending event of ScheduleTicket, by value: its queue
// slot and its sequence number. It needs no handle to be kept (no
// allocation), and it goes stale, harmlessly, once the event has fired:
// Ghost and TicketPending then see that the slot holds another event (or
// none). The zero Ticket names no event.
type Ticket struct {
	slot int32
	seq  uint64
}

// ScheduleTicket is Schedule that also returns the event's Ticket, for
// Ghost. The event is keyed, ordered and counted exactly as Schedule's.
func (k *Kernel) ScheduleTicket(d time.Duration, f func()) Ticket {
	t := k.pooled(f)
	k.arm(t, d) // a pooled timer is never the firing one: arm pushes it
	return Ticket{slot: t.slot, seq: t.key.seq}
}

// TicketPending reports whether the event of tk is still pending with its
// callback (not yet fired, not a ghost).
func (k *Kernel) TicketPending(tk Ticket) bool { return k.ticketTimer(tk) != nil }

func (k *Kernel) ticketTimer(tk Ticket) *KernelTimer {
	if tk.seq == 0 || tk.slot < 0 || int(tk.slot) >= len(k.owner) {
		return nil
	}
	t := k.owner[tk.slot].t
	if t == nil || !t.armed || !t.pooled || t == k.firing || t.key.seq != tk.seq {
		return nil
	}
	return t
}

// Ghost turns the pending event of tk into a ghost, for an event whose
// callback is known to do nothing when it runs (a timer of a process that
// died, which checks for that and returns): the callback and whatever it
// holds are dropped and the event's queue slot and timer freed, but the
// event stays in the run. A ghost fires at its own key, in its place among
// the other events, as an event that does nothing: it moves the clock,
// counts in Executed and against Limits.EventBudget, and is Pending until
// it fires, so a run with ghosts is the same run as without. A ghost costs
// its key (24 bytes) instead of a queued timer and callback (about 130).
// Ghost reports whether tk's event was pending; it does nothing otherwise.
func (k *Kernel) Ghost(tk Ticket) bool {
	t := k.ticketTimer(tk)
	if t == nil {
		return false
	}
	g := t.key
	t.armed = false
	k.remove(int(k.pos[t.slot]))
	t.fn = nil
	k.free = append(k.free, t)
	k.ghosts = append(k.ghosts, g)
	k.ghostUp(len(k.ghosts) - 1)
	return true
}

// ghostNext reports whether the least ghost runs before next (the least
// queued entry, nil when none). Called only with a ghost pending.
func (k *Kernel) ghostNext(next *entry) bool {
	if next == nil {
		return true
	}
	g := &k.ghosts[0]
	if g.at != next.at {
		return g.at < next.at
	}
	return g.less(k.owner[next.slot].t.key)
}

// runGhost is Run's step for the least ghost when it is next: the horizon
// and the budget as for any event, then the ghost fires.
func (k *Kernel) runGhost(lim Limits) (EndReason, bool) {
	if lim.Horizon > 0 && k.ghosts[0].at > lim.Horizon {
		k.now = lim.Horizon
		return k.finish(EndHorizon), true
	}
	if lim.EventBudget > 0 && k.executed >= lim.EventBudget {
		k.trace.Fail(Violation{Invariant: EventBudgetExceeded,
			Message: fmt.Sprintf("%d events ran without reaching the horizon (livelock guard)", k.executed)})
		return EndBudget, true
	}
	k.fireGhost()
	return 0, false
}

// fireGhost runs the least ghost: the clock moves to its time and it
// counts as an executed event.
func (k *Kernel) fireGhost() {
	g := k.ghosts
	k.now = g[0].at
	k.executed++
	last := len(g) - 1
	g[0] = g[last]
	k.ghosts = g[:last]
	if last > 0 {
		k.ghostDown(0)
	}
}

// The ghosts are a binary min-heap of keys.
func (k *Kernel) ghostUp(i int) {
	g := k.ghosts
	for i > 0 {
		p := (i - 1) / 2
		if !g[i].less(g[p]) {
			break
		}
		g[i], g[p] = g[p], g[i]
		i = p
	}
}

func (k *Kernel) ghostDown(i int) {
	g := k.ghosts
	n := len(g)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && g[c+1].less(g[c]) {
			c++
		}
		if !g[c].less(g[i]) {
			return
		}
		g[i], g[c] = g[c], g[i]
		i = c
	}
}
