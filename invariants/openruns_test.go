package invariants

import (
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/orchsim/orchsim/sim"
)

// no-run-outlives-its-process and reconcile-spares-live-runs kept their
// open runs in a slice walked on every settlement; with openRuns they
// must report the same violations, with the same messages, at the same
// events. The old versions, kept here as the reference:

type scanRunOutlives struct {
	open        []openRun
	incarnation string
	restartAt   time.Duration
	checked     bool
}

func (r *scanRunOutlives) settle(run string) (openRun, bool) {
	for i, o := range r.open {
		if o.run == run {
			r.open = append(r.open[:i], r.open[i+1:]...)
			return o, true
		}
	}
	return openRun{}, false
}

func (r *scanRunOutlives) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Kind == "server.start":
		r.incarnation, r.restartAt, r.checked = ev.Get("incarnation"), ev.At, false
		return nil
	case ev.Actor == "server" && ev.Kind == "ingest.replay":
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

type scanSparesLive struct {
	open        []openRun
	incarnation string
	dead        []string
}

func (x *scanSparesLive) alive(inc string) bool {
	for _, d := range x.dead {
		if d == inc {
			return false
		}
	}
	return true
}

func (x *scanSparesLive) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Actor == "server" && ev.Kind == "server.start":
		x.incarnation = ev.Get("incarnation")
	case ev.Actor == "fault" && ev.Kind == "server-restart", ev.Actor == "user" && ev.Kind == "app.quit":
		if len(x.dead) == 64 {
			x.dead = x.dead[1:]
		}
		x.dead = append(x.dead, ev.Get("incarnation"))
	case ev.Actor == "server" && ev.Kind == "run.start":
		x.open = append(x.open, openRun{run: ev.Get("run"), thread: ev.Get("thread"), started: ev.At, incarnation: x.incarnation})
	case ev.Actor == "server" && (ev.Kind == "run.end" || ev.Kind == "reconcile" || ev.Kind == "ingest.replay"):
		for i, o := range x.open {
			if o.run != ev.Get("run") {
				continue
			}
			x.open = append(x.open[:i], x.open[i+1:]...)
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

// Few run ids, so a run starts twice (open twice at once) and settles
// first, last or in between; restarts move the incarnation.
func TestOpenRuns_AgreeWithTheScans(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		type checker interface {
			Observe(*sim.Event) *sim.Violation
		}
		pairs := [][2]checker{{&runOutlives{}, &scanRunOutlives{}}, {&sparesLive{}, &scanSparesLive{}}}
		pick := func(label string, xs ...string) string { return rapid.SampledFrom(xs).Draw(t, label) }
		now := time.Duration(0)
		for i := range rapid.IntRange(0, 150).Draw(t, "events") {
			now += rapid.SampledFrom([]time.Duration{0, time.Second}).Draw(t, "gap")
			ev := &sim.Event{At: now, Actor: "server"}
			switch rapid.IntRange(0, 7).Draw(t, "kind") {
			case 0:
				ev.Kind = "server.start"
			case 1:
				ev.Actor, ev.Kind = pick("restarter", "fault", "user"), pick("restart", "server-restart", "app.quit")
			case 2, 3:
				ev.Kind = "run.start"
			case 4:
				ev.Kind, ev.Outcome = pick("settle", "run.end", "reconcile", "ingest.replay"), pick("outcome", "completed", "cancelled")
			case 5:
				ev.Actor, ev.Kind = "agent/t1", "delegate_task"
			case 6:
				ev.Actor, ev.Kind = "user/t1", "prompt"
			default:
				ev.Kind, ev.Outcome = "reconcile", "cancelled"
			}
			ev.Attrs = []sim.Attr{sim.A("run", pick("run", "r1", "r2", "r3")), sim.A("thread", pick("thread", "t1", "t2")),
				sim.A("incarnation", pick("incarnation", "1", "2", "3")), sim.A("trigger", pick("trigger", "startup", "shutdown")),
				sim.A("instance", pick("instance", "", "codex"))}
			for _, p := range pairs {
				got, want := p[0].Observe(ev), p[1].Observe(ev)
				if (got == nil) != (want == nil) || got != nil && *got != *want {
					t.Fatalf("event %d (%s %s %s %v): openRuns %v, scan %v", i, ev.Actor, ev.Kind, ev.Outcome, ev.Attrs, got, want)
				}
			}
		}
	})
}
