package invariants

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// The probe counter's main and terminal switch on the event's kind (and
// actor) instead of trying every case in turn, and the request checkers ask
// isOrchestratorTool instead of a map. These tests hold each to the form it
// replaced: two counters fed the same random streams, one running the old
// main and terminal (probes_ref_test.go), hit the same probes in the same
// order at the same events and end in the same state.

// probeEvent draws one event over the vocabulary main, terminal and
// toolCall read (and some they do not), with few values per attribute so
// that steps meet.
func probeEvent(p *sim.PRNG, at time.Duration, seq uint64) *sim.Event {
	pick := func(xs ...string) string { return xs[p.Below(uint64(len(xs)))] }
	kinds := slices.Concat(probeMainKinds, probeTerminalKinds, []string{"input.misplaced", "pane.mount",
		"preview_open", "preview_navigate", "preview_click", "t3_preview_close", "delegate_task", "t3_thread_update",
		"task_cancel", "create_threads", "session.attach", "something.else"})
	ev := &sim.Event{At: at, Seq: seq,
		Actor:   pick("main", "main", "user", "psm", "server", "broker", "fault", "agent/thread-a", "agent/thread-b", "pane/p1", "renderer", "orchestrator"),
		Kind:    pick(kinds...),
		Outcome: pick("", "ok", "accepted", "replayed", "live", "failed", "killed", "held", "joined", "spared", "ignored", "unmatched", "post-start", "reserved", "delivered", "resumed", "first-turn-crash", "delegated child", "waitTimedOut", "stopped", "refused", "401 unknown_or_expired_token"),
	}
	attr := func(key string, values ...string) {
		if p.Below(4) != 0 {
			ev.Attrs = append(ev.Attrs, sim.A(key, pick(values...)))
		}
	}
	attr("session", "s1", "s2", "", "psess:thread-a", "psess:codex")
	attr("thread", "thread-a", "thread-b")
	attr("backend", "b1", "b2", "b3")
	attr("kind", "claude", "codex")
	attr("key", "text", "enter")
	attr("jobs", "0", "1")
	attr("entry", "-", "b1", "b2")
	attr("cause", "close", "prepare:caps", "cleanup:psess:thread-a#1", "idle")
	attr("generation", "1", "2")
	attr("caps", "preview", "none", "preview,tools")
	attr("reason", "runtime_restart", "idle_timeout", "manual_shutdown")
	attr("incarnation", "i1", "i2")
	attr("providerSessionId", "psess:thread-a", "psess:codex", "psess:thread-b")
	attr("for", "10m0s", "45m0s", "bad")
	attr("client", "c1", "c2")
	attr("completions", "", "2")
	attr("run", "run:1", "run:2")
	attr("trigger", "startup", "live")
	attr("pin", "-", "h1", "h2")
	attr("tab-host", "-", "h1", "h2")
	attr("tab", "tab_1", "tab_2")
	attr("tab-thread", "thread-a", "thread-b")
	attr("cred", "c1", "c2", "")
	attr("clientRequestId", "-", "r1", "r2", "")
	attr("target", "thread-a", "thread-b", "")
	attr("action", "rename", "archive")
	attr("task", "T1", "T2")
	attr("retry", "true", "false")
	return ev
}

// probeTrace feeds n random events of seed to a counter's parts (each only
// what the trace would feed it) and returns its hits in order and its
// state.
func probeTrace(t *testing.T, seed uint64, n int, ref bool) ([]string, string) {
	t.Helper()
	c := NewProbeCounter()
	var hits []string
	c.OnHit = func(probe string, seq uint64) { hits = append(hits, fmt.Sprintf("%d:%s", seq, probe)) }
	parts := c.Parts()
	if ref {
		main, agents, term := parts[16].(*probePart), parts[17].(*probePart), parts[18].(*probePart)
		if &main.kinds[0] != &probeMainKinds[0] || agents.kinds != nil || agents.actors != 1 || &term.kinds[0] != &probeTerminalKinds[0] {
			t.Fatal("the probe counter's parts moved: find main's two parts and terminal's again")
		}
		refMain := func(ev *sim.Event) { c.refMain(ev, c.hit) }
		main.observe, agents.observe = refMain, refMain
		term.observe = func(ev *sim.Event) { c.refTerminal(ev, c.hit) }
	}
	p := sim.NewPRNG(seed)
	at := time.Duration(0)
	for i := range n {
		at += time.Duration(p.Below(uint64(40 * time.Minute)))
		ev := probeEvent(p, at, uint64(i))
		for _, part := range parts {
			if sim.Feeds(part, ev) {
				part.Observe(ev)
			}
		}
	}
	state := fmt.Sprint(c.Hits(), c.FirstHits(), c.liveSessions, c.starts, c.stopping, c.withTabs, c.backends,
		c.claude, c.draft, c.running, c.starting, c.delivering, c.runs, c.suspended, c.replaced, c.preview, c.tabCred, c.openTabs, c.firstReq)
	return hits, state
}

func TestProbeCounter_KindSwitchMatchesCases(t *testing.T) {
	total := 0
	for seed := uint64(1); seed <= 300; seed++ {
		got, gotState := probeTrace(t, seed, 400, false)
		want, wantState := probeTrace(t, seed, 400, true)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: hits\n got %v\nwant %v", seed, got, want)
		}
		if gotState != wantState {
			t.Fatalf("seed %d: state\n got %s\nwant %s", seed, gotState, wantState)
		}
		total += len(got)
	}
	if total < 1000 {
		t.Fatalf("only %d hits over the streams: they reach too little", total)
	}
}

func TestIsOrchestratorTool_MatchesKinds(t *testing.T) {
	for _, k := range slices.Concat(orchestratorToolKinds, probeMainKinds, probeTerminalKinds, []string{"", "delegate_tasks", "task_cance", "preview_open"}) {
		if got, want := isOrchestratorTool(k), slices.Contains(orchestratorToolKinds, k); got != want {
			t.Errorf("isOrchestratorTool(%q) = %v, want %v", k, got, want)
		}
	}
}

// TestTarget_MatchesTargetOf holds the request checkers' target (a kind and
// an id, no string built) to targetOf's string and isTargetOf, over pairs
// of random events (kept from one, compared with the other).
func TestTarget_MatchesTargetOf(t *testing.T) {
	p := sim.NewPRNG(3)
	same := 0
	for i := range 20000 {
		a, b := probeEvent(p, 0, uint64(i)), probeEvent(p, 0, uint64(i))
		if p.Below(3) == 0 {
			b.Kind = "task_cancel"
		}
		if p.Below(4) == 0 { // the same id as a thread and as a task
			a.Attrs = append(a.Attrs, sim.A("target", "x"))
			b.Attrs = append([]sim.Attr{sim.A("task", "x")}, b.Attrs...)
		}
		if got, want := targetIn(a).String(), targetOf(a); got != want {
			t.Fatalf("targetIn(%v) = %q, targetOf = %q", a, got, want)
		}
		got, want := targetIn(a).of(b), isTargetOf(targetOf(a), b)
		if got != want {
			t.Fatalf("targetIn(%v).of(%v) = %v, isTargetOf = %v", a, b, got, want)
		}
		if got {
			same++
		}
	}
	if same < 1000 {
		t.Fatalf("only %d pairs address the same target", same)
	}
}
