package invariants

import (
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

type runOutlives struct {
	open        []openRun
	incarnation string
	restartAt   time.Duration
	checked     bool // the first command after the latest start was judged
}

func (*runOutlives) Name() string { return NoRunOutlivesItsProcess }

func (r *runOutlives) settle(run string) (openRun, bool) {
	for i, o := range r.open {
		if o.run == run {
			r.open = append(r.open[:i], r.open[i+1:]...)
			return o, true
		}
	}
	return openRun{}, false
}

func (r *runOutlives) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Kind == "server.start":
		r.incarnation, r.restartAt, r.checked = ev.Get("incarnation"), ev.At, false
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
		for _, o := range r.open {
			if o.incarnation != r.incarnation {
				return violation(NoRunOutlivesItsProcess,
					"run %s of thread %s, started at %s under server incarnation %s, is still running at %s when incarnation %s (started at %s) takes its first command (%s %s): its provider process died with the old server, so no turn.terminal will come; the thread shows Working and its next message queues behind it",
					o.run, o.thread, at(o.started), o.incarnation, at(ev.At), r.incarnation, at(r.restartAt), ev.Actor, ev.Kind)
			}
		}
	}
	if ev.Actor == "server" && ev.Kind == "run.start" {
		r.open = append(r.open, openRun{run: ev.Get("run"), thread: ev.Get("thread"), started: ev.At, incarnation: r.incarnation})
	}
	return nil
}
