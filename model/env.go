package model

import (
	"fmt"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// Env is what the harness gives every component: the clock it schedules on,
// the trace it reports observable steps to, the run's choice source, the
// profile of switches, and the environment's id.
type Env struct {
	Clock         sim.Clock
	Trace         *sim.Trace
	Source        sim.Source
	Profile       Profile
	EnvironmentID string
	// Swarm asks the world to draw which fault kinds and actor behaviours
	// are enabled, and their rates, from the seed (swarm testing); without
	// it the scenario's fixed mix is used.
	Swarm bool
	// Off lists actors the shrinker switched off: a world does not start
	// them (an agent, a user, the fault injector or one fault kind).
	Off []string

	// Obligations is the run's liveness ledger (nil: obligations are not
	// tracked).
	Obligations *sim.Ledger
	// Healing is set for the heal phase after the horizon: fault injectors
	// stop, actors and timers run on so that obligations can be kept.
	Healing bool
	// CommitFaults asks for faults at commit points (the commit strategy;
	// AtCommitPoint).
	CommitFaults bool
	// CommitReached, when set, is told every time the run reaches a commit
	// point where a fault could be placed (before the draw that decides
	// it): the branch strategy's rarity counts the points reached.
	CommitReached func(name string)
	// Crash, set by a world with a server process, kills that process now
	// (memory lost, store kept) and boots the next one after an outage: how
	// a model injects a crash at a commit point (CrashProcess).
	Crash func()
	// Prompt, set by a world with users, has the user of threadID send a
	// prompt at this instant (PromptNow): how a commit point races a prompt
	// with the step that reached it.
	Prompt func(threadID string)
	// commitPlaced counts the faults placed per commit point in this run.
	commitPlaced map[string]int
	// Threads asks a scenario that scales (scenarios.Scenario.Scalable)
	// for a world of this many T3 threads, with its agents, users, preview
	// hosts and terminal panes in proportion; 0 (the default) is the
	// scenario's own draw, so every existing seed is unchanged. The scale
	// benchmark sets it (bench.MeasureScale).
	Threads int

	taken uniqueSet
	strs  *sim.Strings
	// rands caches Rand's streams by actor for randSrc (a Rand is two
	// immutable words, so one per actor serves every call).
	rands   map[string]*sim.Rand
	randSrc sim.Source
}

// Str returns the run's string builder: attribute values and ids such as a
// count or "p12" without an allocation each (see sim.Strings).
func (e *Env) Str() *sim.Strings {
	if e.strs == nil {
		e.strs = &sim.Strings{}
	}
	return e.strs
}

// Itoa is strconv.Itoa(n), built by Str.
func (e *Env) Itoa(n int) string { return e.Str().Itoa(n) }

// Unique returns id, or id with a ".N" suffix if it was already handed out
// in this run. Upstream ids drawn as random UUIDs never collide, across
// server restarts included; drawn ids can (a replayed or shrunk tape draws
// the same value again), so every random id goes through here.
func (e *Env) Unique(id string) string {
	out := id
	for n := 2; !e.taken.insert(out); n++ {
		out = fmt.Sprintf("%s.%d", id, n)
	}
	return out
}

// Enabled reports whether actor may act (it is not in Off).
func (e *Env) Enabled(actor string) bool {
	for _, a := range e.Off {
		if a == actor {
			return false
		}
	}
	return true
}

// Rand returns the sub-stream of actor.
// The same stream for the same actor and Source: models call it per event,
// so each actor's is made once (registering the actor on the first call, as
// sim.NewRand does) and kept.
func (e *Env) Rand(actor string) *sim.Rand {
	if e.randSrc != e.Source || e.rands == nil {
		e.rands, e.randSrc = map[string]*sim.Rand{}, e.Source
	}
	r := e.rands[actor]
	if r == nil {
		r = sim.NewRand(e.Source, actor)
		e.rands[actor] = r
	}
	return r
}

// Now returns virtual time since the run's start. On the kernel it reads
// the elapsed time directly: sim.Since's round trip through time.Time gives
// the same value and was 2% of terminal-remount's CPU.
func (e *Env) Now() time.Duration {
	if k, ok := e.Clock.(*sim.Kernel); ok {
		return k.Elapsed()
	}
	return sim.Since(e.Clock)
}

// Emit appends an observable event to the trace.
func (e *Env) Emit(actor, kind, outcome string, attrs ...sim.Attr) {
	e.Trace.Emit(actor, kind, outcome, attrs...)
}

// EmitPrefixed is Emit with the attributes pre followed by attrs
// (sim.Trace.EmitPrefixed: copied once, not joined first).
func (e *Env) EmitPrefixed(actor, kind, outcome string, pre []sim.Attr, attrs ...sim.Attr) {
	e.Trace.EmitPrefixed(actor, kind, outcome, pre, attrs...)
}

// After schedules f d from now (a cross-process delivery or a timer the
// caller never cancels). On the kernel it goes through Schedule, which
// recycles its timer: most of a run's events are such deliveries.
func (e *Env) After(d time.Duration, f func()) {
	if k, ok := e.Clock.(*sim.Kernel); ok {
		k.Schedule(d, f)
		return
	}
	e.Clock.AfterFunc(d, f)
}

// AfterTicket is After that also returns the event's sim.Ticket, for
// Ghost; off the kernel the ticket is the zero one, which names nothing.
func (e *Env) AfterTicket(d time.Duration, f func()) sim.Ticket {
	if k, ok := e.Clock.(*sim.Kernel); ok {
		return k.ScheduleTicket(d, f)
	}
	e.Clock.AfterFunc(d, f)
	return sim.Ticket{}
}

// Ghost makes the pending event of tk a ghost (sim.Kernel.Ghost): for an
// event of AfterTicket whose callback would do nothing when it runs. It
// reports whether the event was pending; off the kernel it does nothing.
func (e *Env) Ghost(tk sim.Ticket) bool {
	if k, ok := e.Clock.(*sim.Kernel); ok {
		return k.Ghost(tk)
	}
	return false
}

// TicketPending reports whether the event of tk is pending with its
// callback (sim.Kernel.TicketPending); off the kernel, false.
func (e *Env) TicketPending(tk sim.Ticket) bool {
	if k, ok := e.Clock.(*sim.Kernel); ok {
		return k.TicketPending(tk)
	}
	return false
}

// RunAfter is After(d, r.Run) without the method value's allocation: on
// the kernel it goes through ScheduleRun (the same key and order as
// After's Schedule).
func (e *Env) RunAfter(d time.Duration, r sim.Runner) {
	if k, ok := e.Clock.(*sim.Kernel); ok {
		k.ScheduleRun(d, r)
		return
	}
	e.Clock.AfterFunc(d, r.Run)
}

// Awake returns the time the host was awake since the run's start: Now
// minus every host suspend (a monotonic clock that stops in sleep, beside
// Now's wall clock). Off the kernel it is Now.
func (e *Env) Awake() time.Duration {
	if k, ok := e.Clock.(*sim.Kernel); ok {
		return k.Awake()
	}
	return e.Now()
}

// Suspend suspends the host for d (sim.Kernel.Suspend); off the kernel it
// does nothing.
func (e *Env) Suspend(d time.Duration) {
	if k, ok := e.Clock.(*sim.Kernel); ok {
		k.Suspend(d)
	}
}
