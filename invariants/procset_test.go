package invariants

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/orchsim/orchsim/sim"
)

// oneAgent and exitOwnGen as they were, walking a slice of every running
// process: over any stream of main's and the renderer's events the
// procSet versions must report the same violations, with the same
// messages, at the same events.

type scanOneAgent struct {
	callers []agentProc
	running []agentProc
}

func (o *scanOneAgent) end(backend string) {
	for i, r := range o.running {
		if r.backend == backend {
			o.running = append(o.running[:i], o.running[i+1:]...)
			return
		}
	}
}

func (o *scanOneAgent) Observe(ev *sim.Event) *sim.Violation {
	if ev.Actor != "main" {
		return nil
	}
	switch {
	case ev.Kind == "spawn" && ev.Outcome == "starting":
		p := agentProc{session: ev.Get("session"), backend: ev.Get("backend"), caller: "?", at: ev.At}
		for i, c := range o.callers {
			if c.backend == p.backend {
				p.caller = c.caller
				o.callers = append(o.callers[:i], o.callers[i+1:]...)
				break
			}
		}
		for _, r := range o.running {
			if r.session == p.session {
				return violation(OneAgentPerSession,
					"session %s has two agent processes: backend %s spawned at %s for %s while backend %s, spawned at %s for %s, was still running (not stopped, exited or cancelled); the registry can name only one",
					p.session, p.backend, at(p.at), p.caller, r.backend, at(r.at), r.caller)
			}
		}
		o.running = append(o.running, p)
	case ev.Get("caller") != "" && ev.Get("backend") != "":
		if len(o.callers) == 16 {
			o.callers = o.callers[1:]
		}
		o.callers = append(o.callers, agentProc{backend: ev.Get("backend"), caller: ev.Get("caller")})
	case ev.Kind == "start" && ev.Outcome != "live", ev.Kind == "kill" && ev.Outcome == "killed", ev.Kind == "exit":
		o.end(ev.Get("backend"))
	}
	return nil
}

type scanExitOwnGen struct{ running []agentProc }

func (x *scanExitOwnGen) find(backend string) int {
	for i, r := range x.running {
		if r.backend == backend {
			return i
		}
	}
	return -1
}

func (x *scanExitOwnGen) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Actor == "main" && ev.Kind == "spawn" && ev.Outcome == "starting":
		x.running = append(x.running, agentProc{session: ev.Get("session"), backend: ev.Get("backend"), at: ev.At})
	case ev.Actor == "main" && (ev.Kind == "start" && ev.Outcome != "live" || ev.Kind == "kill" && ev.Outcome == "killed" || ev.Kind == "exit"):
		if i := x.find(ev.Get("backend")); i >= 0 {
			x.running = append(x.running[:i], x.running[i+1:]...)
		}
	case ev.Actor == "main" && ev.Kind == "exit.late" && ev.Outcome == "applied":
		if entry, b := ev.Get("entry"), ev.Get("backend"); entry != b {
			since := "?"
			if i := x.find(entry); i >= 0 {
				since = at(x.running[i].at)
			}
			return violation(ExitEndsOwnGeneration,
				"the exit of backend %s of session %s, given up before it went live, arrived at %s and was applied to the session's current entry, backend %s (spawned at %s): the newer generation left the registry while its process runs on",
				b, ev.Get("session"), at(ev.At), entry, since)
		}
	case ev.Actor == "renderer" && ev.Kind == "session.exit":
		if i := x.find(ev.Get("backend")); i >= 0 {
			r := x.running[i]
			return violation(ExitEndsOwnGeneration,
				"the renderer marked backend %s of session %s exited at %s (cause %s), but main never saw it stop: it was spawned at %s and is still running",
				r.backend, r.session, at(ev.At), ev.Get("cause"), at(r.at))
		}
	}
	return nil
}

// Few sessions and backends, so a backend is spawned twice (under one
// session or two), a session runs two, and ends find the first.
func TestProcSet_AgreesWithTheScans(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		type checker interface {
			Observe(*sim.Event) *sim.Violation
		}
		pairs := [][2]checker{{&oneAgent{}, &scanOneAgent{}}, {&exitOwnGen{}, &scanExitOwnGen{}}}
		pick := func(label string, xs ...string) string { return rapid.SampledFrom(xs).Draw(t, label) }
		now := time.Duration(0)
		for i := range rapid.IntRange(0, 150).Draw(t, "events") {
			now += rapid.SampledFrom([]time.Duration{0, time.Second}).Draw(t, "gap")
			ev := &sim.Event{At: now, Actor: "main"}
			backend := pick("backend", "b1", "b2", "b3", "b4")
			attrs := []sim.Attr{sim.A("session", pick("session", "s1", "s2")), sim.A("backend", backend)}
			switch rapid.IntRange(0, 6).Draw(t, "kind") {
			case 0, 1:
				ev.Kind, ev.Outcome = "spawn", pick("spawn", "starting", "refused")
			case 2:
				ev.Kind = "attach"
				attrs = append(attrs, sim.A("caller", pick("caller", "user", "agent")))
			case 3:
				ev.Kind, ev.Outcome = "start", pick("start", "live", "failed")
			case 4:
				ev.Kind, ev.Outcome = pick("end", "kill", "exit"), pick("outcome", "killed", "")
			case 5:
				ev.Kind, ev.Outcome = "exit.late", "applied"
				attrs = append(attrs, sim.A("entry", pick("entry", "b1", "b2", "b3", "b4")))
			default:
				ev.Actor, ev.Kind = "renderer", "session.exit"
				attrs = append(attrs, sim.A("cause", "exit"))
			}
			ev.Attrs = attrs
			for _, p := range pairs {
				got, want := p[0].Observe(ev), p[1].Observe(ev)
				if (got == nil) != (want == nil) || got != nil && *got != *want {
					t.Fatalf("event %d (%s %s %s %v): procSet %v, scan %v", i, ev.Actor, ev.Kind, ev.Outcome, ev.Attrs, got, want)
				}
			}
		}
	})
}
