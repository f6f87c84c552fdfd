package invariants

import (
	"fmt"
	"strings"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Restart invariants, written from ProviderRuntimeRecoveryService's
// contract (reconcile at startup, ProviderRuntimeRecoveryService.ts
// @0928e05e; MODEL.md §8): a run whose provider process died with its
// server never gets a turn.terminal, so the new process settles it
// (interrupted or cancelled, never completed) before it takes a command.
// They read the server's server.start, run.start, run.end and reconcile
// events and the commands that follow a start (user prompts, agent tool
// calls, new runs).
const NoRunOutlivesItsProcess = "no-run-outlives-its-process"

func init() {
	register(Info{Name: NoRunOutlivesItsProcess, Group: catalog.RestartContinuation,
		Property: "after a server restart, no run the dead process left running is still running when the new process takes its first command, and none is ever recorded completed",
		Source:   "ProviderRuntimeRecoveryService.ts@0928e05e reconcile(startup); MODEL.md §8",
		Reports:  []catalog.Report{"t3code#4584"},
		New:      func() sim.Checker { return &runOutlives{} }})
}

// openRun is a run that started and has not ended.
type openRun struct {
	run, thread string
	started     time.Duration
	incarnation string
}

// openRuns are the runs started and not yet settled, in start order
// (linked), found by run id: byRun chains each id's open runs (sameRun),
// in start order. Settling a run costs its
// id's runs, not every open run (hundreds at once in a world of 1,000
// threads). Nodes come from a slab. Looked up only; walked through the
// links.
type openRuns struct {
	first, last *openRunNode
	byRun       sim.Chains[openRunNode]
	nodes       sim.Slab[openRunNode]
}

type openRunNode struct {
	openRun
	prev, next, sameRun *openRunNode
}

func (s *openRuns) add(o openRun) {
	n := s.nodes.New()
	n.openRun, n.prev = o, s.last
	if s.last == nil {
		s.first = n
	} else {
		s.last.next = n
	}
	s.last = n
	s.byRun.Append(o.run, n, sameRun)
}

// sameRun is an open run's link in openRuns.byRun.
func sameRun(n *openRunNode) **openRunNode { return &n.sameRun }

// settle removes the first open run with id run and returns it.
func (s *openRuns) settle(run string) (openRun, bool) {
	n := s.byRun.First(run)
	if n == nil {
		return openRun{}, false
	}
	s.byRun.Remove(run, n, sameRun)
	if n.prev == nil {
		s.first = n.next
	} else {
		n.prev.next = n.next
	}
	if n.next == nil {
		s.last = n.prev
	} else {
		n.next.prev = n.prev
	}
	o := n.openRun
	*n = openRunNode{} // a settled node keeps nothing alive (its slab may outlive it)
	return o, true
}

type runOutlives struct {
	open        openRuns
	incarnation string
	restartAt   time.Duration
	checked     bool // the first command after the latest start was judged
}

func (*runOutlives) Name() string { return NoRunOutlivesItsProcess }

// ObservedKinds implements sim.KindObserver: starts, settlements and the
// commands other than agent tool calls.
func (*runOutlives) ObservedKinds() []string { return runOutlivesKinds }

var runOutlivesKinds = []string{"server.start", "ingest.replay", "reconcile", "run.end", "run.start", "prompt"}

// ObservedActors implements sim.ActorObserver: any agent tool call is a
// first command.
func (*runOutlives) ObservedActors() []string { return agentActors }

func (r *runOutlives) settle(run string) (openRun, bool) { return r.open.settle(run) }

func (r *runOutlives) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Kind == "server.start":
		r.incarnation, r.restartAt, r.checked = ev.Get("incarnation"), ev.At, false
		return nil
	case ev.Actor == "server" && ev.Kind == "ingest.replay":
		// A completion the old process's provider produced, journaled
		// before it died and projected now: not invented.
		r.settle(ev.Get("run"))
		return nil
	case ev.Actor == "server" && (ev.Kind == "reconcile" || ev.Kind == "run.end"):
		o, ok := r.settle(ev.Get("run"))
		if ok && o.incarnation != r.incarnation && ev.Outcome == "completed" {
			return violation(NoRunOutlivesItsProcess,
				"run %s of thread %s, started at %s under server incarnation %s, was recorded completed at %s by incarnation %s: its provider process died with the old server, so nothing completed it",
				o.run, o.thread, at(o.started), o.incarnation, at(ev.At), r.incarnation)
		}
		return nil
	}
	command := (ev.Actor == "server" && ev.Kind == "run.start") || isToolEvent(ev) ||
		(strings.HasPrefix(ev.Actor, "user/") && ev.Kind == "prompt")
	if command && !r.checked && r.incarnation != "" {
		r.checked = true
		for n := r.open.first; n != nil; n = n.next {
			if o := n.openRun; o.incarnation != r.incarnation {
				return violation(NoRunOutlivesItsProcess,
					"run %s of thread %s, started at %s under server incarnation %s, is still running at %s when incarnation %s (started at %s) takes its first command (%s %s): its provider process died with the old server, so no turn.terminal will come; the thread shows Working and its next message queues behind it",
					o.run, o.thread, at(o.started), o.incarnation, at(ev.At), r.incarnation, at(r.restartAt), ev.Actor, ev.Kind)
			}
		}
	}
	if ev.Actor == "server" && ev.Kind == "run.start" {
		r.open.add(openRun{run: ev.Get("run"), thread: ev.Get("thread"), started: ev.At, incarnation: r.incarnation})
	}
	return nil
}

// ProjectionAgreesWithProvider is written from ProviderRuntimeIngestion's
// and CheckpointReactor's contract (ProviderRuntimeIngestion.ts@006fa4ca:
// drain() means "every observed event's effects are visible"; the
// checkpoint is captured from the same provider event): a run whose
// provider turn completed, so that a durable checkpoint of it exists, is
// recorded completed: it is never settled otherwise (cancelled by a
// reconcile, interrupted, failed). It reads checkpoint.captured and the run's settlement (run.end,
// reconcile, ingest.replay).
const ProjectionAgreesWithProvider = "projection-agrees-with-provider"

func init() {
	register(Info{Name: ProjectionAgreesWithProvider, Group: catalog.RestartContinuation,
		Property: "a run whose provider turn completed (a checkpoint of it was captured) is recorded completed, never cancelled, interrupted or failed",
		Source:   "ProviderRuntimeIngestion.ts@006fa4ca (drain: every observed event's effects are visible) and CheckpointReactor; t3code#6560 expected behaviour",
		Reports:  []catalog.Report{"t3code#6560"},
		New:      func() sim.Checker { return &agreesWithProvider{} }})
}

type checkpointed struct {
	run, thread string
	at          time.Duration
}

type agreesWithProvider struct {
	open []checkpointed
}

func (*agreesWithProvider) Name() string { return ProjectionAgreesWithProvider }

// ObservedKinds implements sim.KindObserver.
func (*agreesWithProvider) ObservedKinds() []string { return agreesWithProviderKinds }

var agreesWithProviderKinds = []string{"checkpoint.captured", "run.end", "reconcile", "ingest.replay"}

func (a *agreesWithProvider) Observe(ev *sim.Event) *sim.Violation {
	if ev.Actor != "server" {
		return nil
	}
	switch ev.Kind {
	case "checkpoint.captured":
		a.open = append(a.open, checkpointed{run: ev.Get("run"), thread: ev.Get("thread"), at: ev.At})
	case "run.end", "reconcile", "ingest.replay":
		for i, c := range a.open {
			if c.run != ev.Get("run") {
				continue
			}
			a.open = append(a.open[:i], a.open[i+1:]...)
			if ev.Outcome != "completed" {
				return violation(ProjectionAgreesWithProvider,
					"run %s of thread %s was recorded %s at %s (%s), but its provider had completed the turn and a checkpoint of it was captured at %s: the completion waited in the ingestion queue, and the projection now contradicts the provider",
					c.run, c.thread, ev.Outcome, at(ev.At), ev.Kind, at(c.at))
			}
			return nil
		}
	}
	return nil
}

// StoppedSessionSettles is written from the session projector's contract
// (projector.ts: a stopped, interrupted or error session-set abandons the
// pending turn start; ProviderSessionReaper, PR #4562) and from
// t3code#4561's expectation ("stopping the turn should persist a final
// stopped session state across restart"): once a thread's provider
// session runtime binding is written stopped, its session projection says
// stopped and its queued turns are resolved (adopted or cancelled) by the
// time a restarted server takes its first command. It reads turn.queued, turn.queue-resolved, session.runtime,
// session.projected, run.start and server.start.
const StoppedSessionSettles = "stopped-session-settles"

func init() {
	register(Info{Name: StoppedSessionSettles, Group: catalog.RestartContinuation,
		Property: "a thread whose provider session runtime was written stopped is projected stopped with no queued turn pending, by the time a restarted server takes its first command",
		Source:   "projector.ts pendingTurnStart clearing (PR #4245 review); ProviderSessionReaper PR #4562; t3code#4561 expected behaviour",
		Reports:  []catalog.Report{"t3code#4561"},
		New:      func() sim.Checker { return &stoppedSettles{} }})
}

type threadSession struct {
	thread    string
	stopped   bool
	stoppedAt time.Duration
	projected string
	queued    []queuedTurn
}

type queuedTurn struct {
	message string
	at      time.Duration
}

type stoppedSettles struct {
	threads []*threadSession // in order of first sight
	// byThread indexes threads (a world of 1,000 threads would scan them
	// on every event of a thread).
	byThread    map[string]*threadSession
	starts      int
	incarnation string
	restartAt   time.Duration
	checked     bool
}

func (*stoppedSettles) Name() string { return StoppedSessionSettles }

// ObservedKinds implements sim.KindObserver: starts, the session and
// queue events, and the commands other than agent tool calls.
func (*stoppedSettles) ObservedKinds() []string { return stoppedSettlesKinds }

var stoppedSettlesKinds = []string{"server.start", "run.start", "prompt", "turn.queued", "turn.queue-resolved",
	"session.runtime", "session.projected"}

// ObservedActors implements sim.ActorObserver: any agent tool call is a
// first command.
func (*stoppedSettles) ObservedActors() []string { return agentActors }

func (s *stoppedSettles) thread(id string) *threadSession {
	if t := s.byThread[id]; t != nil {
		return t
	}
	if s.byThread == nil {
		s.byThread = map[string]*threadSession{}
	}
	t := &threadSession{thread: id}
	s.threads = append(s.threads, t)
	s.byThread[id] = t
	return t
}

// unsettled describes the first thread whose stopped session did not
// settle, or "".
func (s *stoppedSettles) unsettled() string {
	for _, t := range s.threads {
		if !t.stopped {
			continue
		}
		if len(t.queued) > 0 {
			q := t.queued[0]
			return fmt.Sprintf("thread %s: its provider session runtime was written stopped at %s (the shutdown finalizer), but the session projection says %s and the turn queued for %s at %s is still pending",
				t.thread, at(t.stoppedAt), t.projected, q.message, at(q.at))
		}
		if t.projected == "starting" || t.projected == "running" {
			return fmt.Sprintf("thread %s: its provider session runtime was written stopped at %s (the shutdown finalizer), but the session projection still says %s",
				t.thread, at(t.stoppedAt), t.projected)
		}
	}
	return ""
}

func (s *stoppedSettles) Observe(ev *sim.Event) *sim.Violation {
	if ev.Kind == "server.start" {
		s.starts++
		s.incarnation, s.restartAt, s.checked = ev.Get("incarnation"), ev.At, false
		return nil
	}
	command := (ev.Actor == "server" && ev.Kind == "run.start") || isToolEvent(ev) ||
		(strings.HasPrefix(ev.Actor, "user/") && ev.Kind == "prompt")
	if command && s.starts > 1 && !s.checked {
		s.checked = true
		if msg := s.unsettled(); msg != "" {
			return violation(StoppedSessionSettles,
				"%s when server incarnation %s (started at %s) takes its first command (%s %s) at %s: nothing replayed the stopped state across the restart, so the thread shows Working and cannot settle",
				msg, s.incarnation, at(s.restartAt), ev.Actor, ev.Kind, at(ev.At))
		}
	}
	if ev.Actor != "server" {
		return nil
	}
	switch ev.Kind {
	case "turn.queued":
		t := s.thread(ev.Get("thread"))
		t.queued = append(t.queued, queuedTurn{message: ev.Get("message"), at: ev.At})
		t.projected = "starting"
	case "turn.queue-resolved":
		t := s.thread(ev.Get("thread"))
		for i, q := range t.queued {
			if q.message == ev.Get("message") {
				t.queued = append(t.queued[:i], t.queued[i+1:]...)
				break
			}
		}
	case "session.runtime":
		t := s.thread(ev.Get("thread"))
		t.stopped, t.stoppedAt = ev.Outcome == "stopped", ev.At
	case "session.projected":
		s.thread(ev.Get("thread")).projected = ev.Outcome
	case "run.start":
		t := s.thread(ev.Get("thread"))
		t.stopped, t.projected = false, "running"
	}
	return nil
}

// ReconcileSparesLiveRuns is written from the startup reconcile's own
// contract (ProviderRuntimeRecoveryService.ts@0928e05e reconcile(startup):
// it settles what a dead process left running; the thread's message
// "Provider session did not survive a server restart") and from issue 14's
// stored state agrees with provider reality: a startup reconcile settles a
// run only once the server process that started it has died (its restart
// or the app's quit); a run whose process is alive is never settled as
// lost. It reads server.start, the fault server-restart and user app.quit
// events (the incarnation that ends), run.start, run.end and reconcile
// (instance= names a backend other than the live one).
const ReconcileSparesLiveRuns = "reconcile-spares-live-runs"

func init() {
	register(Info{Name: ReconcileSparesLiveRuns, Group: catalog.RestartContinuation,
		Property: "a startup reconcile cancels a run only after the server process that started it has died: a live process's runs are never settled as not having survived a restart",
		Source:   "ProviderRuntimeRecoveryService.ts@0928e05e reconcile(startup) (what a dead process left running); t3code#12926 expected behaviour; issue 14's stored state agrees with provider reality",
		Reports:  []catalog.Report{"t3code#12926"},
		New:      func() sim.Checker { return &sparesLive{} }})
}

type sparesLive struct {
	open        openRuns
	incarnation string
	dead        []string // incarnations whose process ended (bounded by restarts)
}

func (*sparesLive) Name() string { return ReconcileSparesLiveRuns }

// ObservedKinds implements sim.KindObserver.
func (*sparesLive) ObservedKinds() []string { return sparesLiveKinds }

var sparesLiveKinds = []string{"server.start", "server-restart", "app.quit", "run.start", "run.end", "reconcile", "ingest.replay"}

func (x *sparesLive) alive(inc string) bool {
	for _, d := range x.dead {
		if d == inc {
			return false
		}
	}
	return true
}

func (x *sparesLive) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Actor == "server" && ev.Kind == "server.start":
		x.incarnation = ev.Get("incarnation")
	case ev.Actor == "fault" && ev.Kind == "server-restart", ev.Actor == "user" && ev.Kind == "app.quit":
		if len(x.dead) == 64 {
			x.dead = x.dead[1:]
		}
		x.dead = append(x.dead, ev.Get("incarnation"))
	case ev.Actor == "server" && ev.Kind == "run.start":
		x.open.add(openRun{run: ev.Get("run"), thread: ev.Get("thread"), started: ev.At, incarnation: x.incarnation})
	case ev.Actor == "server" && (ev.Kind == "run.end" || ev.Kind == "reconcile" || ev.Kind == "ingest.replay"):
		if o, ok := x.open.settle(ev.Get("run")); ok {
			if ev.Kind == "reconcile" && ev.Get("trigger") == "startup" && x.alive(o.incarnation) {
				by := ev.Get("instance")
				if by == "" {
					by = "incarnation " + x.incarnation
				}
				return violation(ReconcileSparesLiveRuns,
					"run %s of thread %s, started at %s under server incarnation %s, was %s at %s by the startup reconcile of %s while incarnation %s is alive: the thread says its provider session did not survive a restart while its agent works on",
					o.run, o.thread, at(o.started), o.incarnation, ev.Outcome, at(ev.At), by, o.incarnation)
			}
			return nil
		}
	}
	return nil
}
