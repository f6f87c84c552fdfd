package invariants

import (
	"sort"
	"strings"

	"github.com/orchsim/orchsim/sim"
)

// Probes are sometimes-assertions: named situations a campaign should
// reach at least once ("a tab was acted on after a credential rotation").
// They never fail a run; fuzz counts their hits and lists the probes a
// campaign never hit, so a workload that stopped reaching a situation is
// noticed.

// ProbeInfo documents a probe.
type ProbeInfo struct {
	Name string
	Doc  string
}

// Probes lists every probe, sorted by name.
var Probes = []ProbeInfo{
	{"capability-change-reissued-credential", "a capability change made prepareMcpSession revoke and re-issue a thread's credential"},
	{"delegate-wait-timed-out", "a delegate_task wait ran out of budget and was upgraded (waitTimedOut)"},
	{"human-took-agent-tab", "a human viewer took control of an agent's tab"},
	{"idle-release-deferred-by-pin", "an idle release was deferred for pending background work"},
	{"idle-release-with-open-tab", "a provider session idled out while its thread had an open agent tab"},
	{"remount-with-claude-draft", "a pane of a Claude session remounted while the user's draft was in its composer"},
	{"restart-continuation", "a restart continuation resumed a thread (\"Continue where you left off.\")"},
	{"retry-crossed-credential-reissue", "an agent retried a call under a different credential than its first attempt"},
	{"retry-crossed-server-restart", "an agent retried a call after a server restart"},
	{"stale-credential-refused", "a call with a revoked or expired credential was refused (401)"},
	{"tab-acted-after-rotation", "a thread acted on its tab with a credential other than the one that opened it"},
}

func init() {
	sort.Slice(Probes, func(i, j int) bool { return Probes[i].Name < Probes[j].Name })
}

// ProbeCounter is a checker that counts probe hits; it never reports a
// violation.
type ProbeCounter struct {
	hits      map[string]int
	tabCred   map[string]string // tab -> credential that opened it
	openTabs  []threadTabs      // open agent tabs per thread (by open/close/sweep events)
	tabThread map[string]string
	firstCall map[string]string // request -> credential of the first attempt
	firstAt   map[string]int    // request -> server incarnations seen at the first attempt
	starts    int
	claude    map[string]bool // terminal session -> Claude
	draft     map[string]bool // terminal session -> a draft is in the composer
}

// NewProbeCounter returns a counter with every probe at zero.
func NewProbeCounter() *ProbeCounter {
	return &ProbeCounter{hits: map[string]int{}, tabCred: map[string]string{},
		tabThread: map[string]string{}, firstCall: map[string]string{}, firstAt: map[string]int{},
		claude: map[string]bool{}, draft: map[string]bool{}}
}

// Name implements sim.Checker.
func (*ProbeCounter) Name() string { return "probes" }

// Hits returns the hit count of every probe, in Probes order.
func (p *ProbeCounter) Hits() []int {
	out := make([]int, len(Probes))
	for i, pr := range Probes {
		out[i] = p.hits[pr.Name]
	}
	return out
}

// Observe implements sim.Checker; it counts and never fails.
func (p *ProbeCounter) Observe(ev *sim.Event) *sim.Violation {
	hit := func(name string) { p.hits[name]++ }
	switch {
	case ev.Kind == "server.start":
		p.starts++
		p.openTabs = p.openTabs[:0]
	case ev.Kind == "credential.revoke" && strings.HasPrefix(ev.Get("cause"), "prepare:"):
		hit("capability-change-reissued-credential")
	case ev.Kind == "delegate_task.wait" && ev.Outcome == "waitTimedOut":
		hit("delegate-wait-timed-out")
	case ev.Kind == "control.take" && ev.Outcome == "ok":
		hit("human-took-agent-tab")
	case ev.Kind == "idle-release-deferred":
		hit("idle-release-deferred-by-pin")
	case ev.Kind == "session.release" && ev.Get("reason") == "idle_timeout":
		for _, t := range p.threadsWithTabs() {
			if strings.HasSuffix(ev.Get("providerSessionId"), t) || ev.Get("providerSessionId") == "psess:codex" {
				hit("idle-release-with-open-tab")
				break
			}
		}
	case ev.Kind == "restart-continuation":
		hit("restart-continuation")
	case ev.Kind == "tab.swept":
		p.closeTab(ev.Get("tab"))
	case strings.HasPrefix(ev.Actor, "agent/") && ev.Outcome == "401 unknown_or_expired_token":
		hit("stale-credential-refused")
	case strings.HasPrefix(ev.Actor, "agent/"):
		p.toolCall(ev, hit)
	}
	p.terminal(ev, hit)
	return nil
}

type threadTabs struct {
	thread string
	n      int
}

func (p *ProbeCounter) addTab(thread string, delta int) {
	for i := range p.openTabs {
		if p.openTabs[i].thread == thread {
			p.openTabs[i].n += delta
			return
		}
	}
	p.openTabs = append(p.openTabs, threadTabs{thread, delta})
}

func (p *ProbeCounter) threadsWithTabs() []string {
	var out []string
	for _, t := range p.openTabs {
		if t.n > 0 {
			out = append(out, t.thread)
		}
	}
	return out
}

func (p *ProbeCounter) closeTab(tab string) {
	if t, ok := p.tabThread[tab]; ok {
		p.addTab(t, -1)
		delete(p.tabThread, tab)
	}
}

func (p *ProbeCounter) toolCall(ev *sim.Event, hit func(string)) {
	tab, cred := ev.Get("tab"), ev.Get("cred")
	switch {
	case ev.Kind == "preview_open" && ev.Outcome == "ok":
		if _, seen := p.tabCred[tab]; !seen {
			p.tabCred[tab] = cred
			p.tabThread[tab] = ev.Get("thread")
			p.addTab(ev.Get("thread"), 1)
		}
	case acting(ev.Kind) && ev.Get("tab-thread") == ev.Get("thread"):
		// Its own tab resolved: the attempt counts whether it was allowed
		// (fixed) or refused as agentMismatch (reported).
		if opened, ok := p.tabCred[tab]; ok && opened != cred {
			hit("tab-acted-after-rotation")
		}
		if ev.Kind == "t3_preview_close" && ev.Outcome == "ok" {
			p.closeTab(tab)
		}
	}
	if k, ok := requestKey(ev); ok {
		if first, seen := p.firstCall[k]; !seen {
			p.firstCall[k], p.firstAt[k] = cred, p.starts
		} else if ev.Get("retry") == "true" {
			if first != cred {
				hit("retry-crossed-credential-reissue")
			}
			if p.firstAt[k] != p.starts {
				hit("retry-crossed-server-restart")
			}
		}
	}
}

// terminal follows the desktop app's sessions: which are Claude, whether a
// draft sits in the composer, and pane remounts.
func (p *ProbeCounter) terminal(ev *sim.Event, hit func(string)) {
	session := ev.Get("session")
	switch {
	case ev.Actor == "main" && ev.Kind == "spawn":
		p.claude[session] = ev.Get("kind") == "claude"
	case ev.Actor == "user" && ev.Kind == "type" && session != "":
		p.draft[session] = ev.Get("key") == "text"
	case ev.Actor == "user" && (ev.Kind == "send" || ev.Kind == "submit") && session != "":
		p.draft[session] = false
	case strings.HasPrefix(ev.Actor, "pane/") && ev.Kind == "pane.mount":
		if p.claude[session] && p.draft[session] {
			hit("remount-with-claude-draft")
		}
	}
}

// ObligationInfo documents a liveness obligation the models open and
// discharge (sim.Ledger); one still open after the heal phase is reported as
// a violation with its name.
type ObligationInfo struct {
	Name     string
	Property string
	Source   string
}

// Obligations lists the liveness obligations of the models, sorted by name.
var Obligations = []ObligationInfo{
	{"delegated-task-settles", "a delegated task reaches a terminal state", "MODEL.md §7 (delegated tasks, recovery)"},
	{"running-thread-settles", "a running run gets a live provider turn or is settled (also after a restart)", "MODEL.md §8 (reconcile)"},
	{"thread-regains-its-tabs", "a thread refused on its own agent tab can act on it again, or the tab closes", "000_993d1fdfc50e8ec7 (#23021)"},
	{"wait-returns-within-budget", "a delegate_task wait returns, settled or timed out, unless its server process died", "MODEL.md §7 (wait mode)"},
}

// IsLiveness reports whether a violation named name is a liveness failure
// (an obligation left open after the heal phase, or a liveness invariant
// judged at the end of a run) rather than a safety one.
func IsLiveness(name string) bool {
	if name == WedgedSpawnReplaced {
		return true
	}
	for _, o := range Obligations {
		if o.Name == name {
			return true
		}
	}
	return false
}

// KindOf returns "liveness" or "safety" for a violation name.
func KindOf(name string) string {
	if IsLiveness(name) {
		return "liveness"
	}
	return "safety"
}
