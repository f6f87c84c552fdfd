package report

import (
	"strings"

	"github.com/orchsim/orchsim/sim"
)

// role says how an event is drawn.
type role int

const (
	// roleSelf is a step inside one component (a self-message).
	roleSelf role = iota
	// roleMessage goes from the acting actor to the component that handled
	// it; the outcome, if any, is part of the message.
	roleMessage
	// roleCall is a request answered by a reply: an arrow to the handler
	// and a dashed arrow back carrying the outcome (agent tool calls).
	roleCall
	// roleAnswer is a dashed arrow from the actor to whoever asked (the
	// registry answering the provider session manager with a credential).
	roleAnswer
	// roleNote is a note over the actor (a user leaving).
	roleNote
	// roleTimer is a timer firing: a note over the component that owns it.
	roleTimer
	// roleFault is an injected fault: a note over the component it hit.
	roleFault
	// roleWorld is the run's set-up (swarm banner, threads): a comment.
	roleWorld
	// roleViolation is the violated invariant.
	roleViolation
	// rolePhase is the harness changing the run's phase (the heal phase
	// after the horizon, when faults stop): a note across the diagram.
	rolePhase
)

// step is one event as the renderers draw it. Lanes are actor names (the
// lane of a component that never acts is its actor name, e.g.
// "server-browser"). The event sits in its own actor's lane; from and to
// are the ends of its arrow (equal for self-steps and notes, where to is
// the lane the note is about).
type step struct {
	ev       *sim.Event
	role     role
	from, to string
	// lost marks a call whose answer a response-lost fault dropped on its
	// way back (drawn as a crossed arrow).
	lost bool
}

// answerLost reports whether next is the fault that dropped the answer to
// the tool call ev.
func answerLost(ev, next *sim.Event) bool {
	return next.Actor == "fault" && next.Kind == "response-lost" && next.At == ev.At &&
		next.Get("tool") == ev.Kind && "agent/"+next.Get("thread") == ev.Actor
}

// route says who handled ev. It is the single table both renderers use;
// an (actor, kind) it does not know is drawn as a step of its actor.
func route(ev *sim.Event) step {
	a, k := ev.Actor, ev.Kind
	s := step{ev: ev, role: roleSelf, from: a, to: a}
	to := func(lane string, r role) step { s.to, s.role = lane, r; return s }
	thread, session, pane := ev.Get("thread"), ev.Get("session"), ev.Get("pane")
	switch {
	case a == "invariant":
		s.role = roleViolation
		return s
	case a == "world":
		s.role = roleWorld
		return s
	case a == "harness":
		s.role = rolePhase
		return s
	case a == "fault":
		return to(faultTarget(ev), roleFault)
	case isTimer(ev):
		return to(a, roleTimer)
	}
	switch {
	case strings.HasPrefix(a, "user/"):
		if k == "leave" {
			return to(a, roleNote)
		}
		return to("server", roleMessage)
	case strings.HasPrefix(a, "viewer/"):
		return to("server-browser", roleMessage)
	case a == "user":
		switch {
		case k == "settings.browser-access" || k == "thread.switch-provider":
			return to("server", roleMessage)
		case pane != "":
			return to("pane/"+pane, roleMessage)
		}
		return to("renderer", roleMessage)
	case strings.HasPrefix(a, "agent/"):
		if ev.Has("backend") { // a terminal backend: its screen is read by main
			return to("main", roleMessage)
		}
		if strings.HasPrefix(k, "preview_") || strings.HasPrefix(k, "t3_preview_") {
			return to("server-browser", roleCall)
		}
		return to("orchestrator", roleCall)
	case strings.HasPrefix(a, "mcp-client/"):
		return to("agent/"+strings.TrimPrefix(a, "mcp-client/"), roleSelf)
	case a == "desktop":
		return to("server-browser", roleMessage)
	case a == "psm":
		switch k {
		case "session.open", "credential.cleanup":
			return to("mcp-registry", roleMessage)
		case "session.opened", "turn.start", "session.attach", "session.detach":
			if thread != "" {
				return to("agent/"+thread, roleMessage)
			}
		case "turn.terminal":
			return to("server", roleMessage)
		}
	case a == "mcp-registry":
		if k == "credential.issue" {
			return to("psm", roleAnswer)
		}
	case a == "server":
		switch k {
		case "run.start", "restart-continuation":
			return to("psm", roleMessage)
		case "run.end":
			if thread != "" {
				return to("user/"+thread, roleAnswer)
			}
		}
	case a == "orchestrator":
		if k == "delegate_task.wait" && thread != "" {
			return to("agent/"+thread, roleAnswer)
		}
	case a == "renderer":
		switch k {
		case "rehydrate", "wake", "kill.request":
			return to("main", roleMessage)
		case "rehydrate.recover", "wake.recover":
			// The renderer reports main's answer: drawn from main.
			s.from = "main"
			return to("renderer", roleAnswer)
		}
	case a == "main":
		switch k {
		case "spawn", "kill", "pty.resize", "pty.write", "pty.restore", "send":
			if session != "" {
				return to("agent/"+session, roleMessage)
			}
		case "input-readiness", "exit":
			return to("renderer", roleMessage)
		case "pty.attach":
			if pane != "" {
				return to("pane/"+pane, roleAnswer)
			}
		}
	case strings.HasPrefix(a, "pane/"):
		switch k {
		case "pane.mount", "pane.unmount":
			return to("renderer", roleMessage)
		case "pane.toast":
			return to("user", roleMessage)
		}
	}
	return s
}

// isTimer reports whether ev is a timer firing: an idle release or sweep,
// a client-side timeout, a readiness wait or deadline running out.
func isTimer(ev *sim.Event) bool {
	k := strings.ToLower(ev.Kind)
	for _, w := range []string{"timeout", "deadline", "expired", "swept", "deferred"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	if r := strings.ToLower(ev.Get("reason")); strings.Contains(r, "timeout") || strings.Contains(r, "expir") {
		return true
	}
	o := strings.ToLower(ev.Outcome)
	return strings.Contains(o, "timeout") || strings.Contains(o, "timedout")
}

// faultTarget is the lane a fault's note is drawn over: the agent of the
// thread it hit, the provider session manager for a crash, else the server.
func faultTarget(ev *sim.Event) string {
	switch {
	case ev.Get("thread") != "":
		return "agent/" + ev.Get("thread")
	case ev.Get("providerSessionId") != "":
		return "psm"
	case ev.Get("session") != "":
		return "agent/" + ev.Get("session")
	}
	return "server"
}

// laneRank orders lanes (and Mermaid participants) left to right, people
// first, then the T3 server's components in call order, then the desktop
// app's renderer, panes, main process and backends.
func laneRank(lane string, terminal map[string]bool) int {
	switch {
	case lane == "world":
		return 0
	case lane == "user" || strings.HasPrefix(lane, "user/") || strings.HasPrefix(lane, "viewer/"):
		return 1
	case strings.HasPrefix(lane, "agent/") || strings.HasPrefix(lane, "mcp-client/"):
		name := lane[strings.IndexByte(lane, '/')+1:]
		if terminal[name] {
			return 13
		}
		return 2
	case lane == "psm":
		return 3
	case lane == "mcp-registry":
		return 4
	case lane == "server-browser":
		return 5
	case lane == "desktop":
		return 6
	case lane == "orchestrator":
		return 7
	case lane == "server":
		return 8
	case strings.HasPrefix(lane, "pane/"):
		return 9
	case lane == "renderer":
		return 10
	case lane == "app" || lane == "main":
		return 11
	case lane == "fault":
		return 14
	case lane == "harness":
		return 15
	case lane == "invariant":
		return 17
	}
	return 16
}

// terminalSessions returns the names of agents that are terminal backends
// (they act with a backend attribute, or main drives their session).
func terminalSessions(trace []sim.Event) map[string]bool {
	out := map[string]bool{}
	for i := range trace {
		ev := &trace[i]
		switch {
		case strings.HasPrefix(ev.Actor, "agent/") && ev.Has("backend"):
			out[strings.TrimPrefix(ev.Actor, "agent/")] = true
		case ev.Actor == "main" && ev.Get("session") != "":
			out[ev.Get("session")] = true
		}
	}
	return out
}

// label renders an event's kind and attributes for a message, leaving out
// the attributes its ends already say (thread=X on agent X's arrow; all
// users share one participant, so their thread stays).
func label(ev *sim.Event, ends ...string) []string {
	implied := func(a sim.Attr) bool {
		for _, e := range ends {
			switch {
			case a.Key == "thread" && (e == "agent/"+a.Value || e == "mcp-client/"+a.Value):
				return true
			case a.Key == "session" && e == "agent/"+a.Value:
				return true
			case a.Key == "pane" && e == "pane/"+a.Value:
				return true
			}
		}
		return false
	}
	out := []string{ev.Kind}
	for _, a := range ev.Attrs {
		if !implied(a) {
			out = append(out, a.Key+"="+a.Value)
		}
	}
	return out
}
