package invariants

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Terminal-session invariants (report 003_9aa3504d0982c1a7, agent-code #596;
// MODEL.md C6-C7 and P1-P5). They read the trace vocabulary of
// orchsim/model/terminal (docs/terminal.md): main's start, kill, exit and
// pty.* events, the renderer's wake events, the panes' events and the
// agents' screen and prompt events.
const (
	LiveAgentSurvivesRemount = "live-agent-survives-remount"
	RemountAttachesPromptly  = "remount-attaches-promptly"
	PTYAttachBalanced        = "pty-attach-balanced"
	PTYSizeKept              = "pty-size-kept"
	NoInputLost              = "no-input-lost"
	WedgedSpawnReplaced      = "wedged-spawn-replaced"
	InputLandsInComposer     = "input-lands-in-composer"
	PTYDetachOwnReference    = "pty-detach-releases-own-reference"
	NoReapOfLiveWork         = "no-reap-of-live-work"
	OneAgentPerSession       = "one-agent-process-per-session"
	ExitEndsOwnGeneration    = "exit-ends-own-generation"
	PromptDeliveryLands      = "prompt-delivery-lands-in-composer"
)

// Bounds of the terminal invariants.
const (
	// PromptAttach is how soon a remounted pane of a live session must
	// attach (issue 4: 1 s of virtual time).
	PromptAttach = time.Second
	// AttachSettle is how long main's attach count may differ from the
	// number of attached panes: far above an IPC round trip.
	AttachSettle = time.Second
	// WedgeReplaceBy is how long a spawned backend that never paints its
	// composer or a prompt may stay alive once it is live and shown in a
	// pane: the 30 s readiness wait plus 1 s for the poll, IPC and kill.
	WedgeReplaceBy = 31 * time.Second
	// InputHeldMax is how long keystrokes typed before attach may wait at
	// the end of a run before they count as lost.
	InputHeldMax = 35 * time.Second
	// ReapIdleAfter is how long a detached session must have been idle,
	// counting from the end of its last turn, prompt or background job,
	// before an idle reaper may kill it: nebula's session_idle_timeout
	// default (5 min, AgentSystemLabs/nebula#78).
	ReapIdleAfter = 5 * time.Minute
)

func init() {
	register(Info{Name: LiveAgentSurvivesRemount, Group: catalog.TerminalSession,
		Property: "no kill follows a wake whose recovery disposition was adopted, when the backend had reached its composer or a prompt",
		Source:   "003_9aa3504d0982c1a7 (agent-code #596); MODEL.md C6, C7",
		Reports:  []catalog.Report{"Juliusolsson05/agent-code#596"},
		New: func() sim.Checker {
			return &liveAgent{started: map[string]string{}, adopted: map[string]adoption{}, interactive: map[string]time.Duration{}}
		}})
	register(Info{Name: RemountAttachesPromptly, Group: catalog.TerminalSession,
		Property: "a terminal pane mounted for a live backend attaches within 1 s (judged when it attaches, unmounts, shows a failure, or the run ends)",
		Source:   "003_9aa3504d0982c1a7 secondary effects (blank pane); MODEL.md C5, C7",
		Reports:  []catalog.Report{"Juliusolsson05/agent-code#596"},
		New:      func() sim.Checker { return &promptAttach{live: map[string]string{}} }})
	register(Info{Name: PTYAttachBalanced, Group: catalog.TerminalSession,
		Property: "main's agent PTY attach count is never negative and, within 1 s of any change, equals the number of attached panes (zero with none; forwarding on while one is)",
		Source:   "003_9aa3504d0982c1a7 refcount leak; MODEL.md C6, C7 P4",
		Reports:  []catalog.Report{"Juliusolsson05/agent-code#596"},
		New:      func() sim.Checker { return &attachBalance{} }})
	register(Info{Name: PTYSizeKept, Group: catalog.TerminalSession,
		Property: "a detach never resizes a session's PTY away from the size of a terminal pane still showing it",
		Source:   "003_9aa3504d0982c1a7 (120x40 snap, left open by #597); MODEL.md C5",
		Reports:  []catalog.Report{"Juliusolsson05/agent-code#596"},
		New:      func() sim.Checker { return &sizeKept{} }})
	register(Info{Name: NoInputLost, Group: catalog.TerminalSession,
		Property: "keystrokes typed into a pane before it attached are delivered in order, or reported dropped past the 256-chunk cap, or visibly rejected by main",
		Source:   "003_9aa3504d0982c1a7 secondary effects; MODEL.md C7 P5",
		Reports:  []catalog.Report{"Juliusolsson05/agent-code#596"},
		New:      func() sim.Checker { return &inputLost{} }})
	register(Info{Name: InputLandsInComposer, Group: catalog.TerminalSession,
		Property: "keystrokes main writes to an agent's PTY reach a TUI that has painted its composer, in the order typed; input sent before that is held and delivered after it, or visibly rejected, never dropped",
		Source:   "claude-code#22936 (\"input-ready\" is a separate event from \"process started\"); agent-orchestrator#3023; agent-code AgentTerminalLeaf.tsx (input goes to the TUI the pane shows)",
		Reports:  []catalog.Report{"Untrivial-ai/agent-orchestrator#3023"},
		New:      func() sim.Checker { return &composerInput{painted: map[string]time.Duration{}, last: map[string]int{}} }})
	register(Info{Name: PTYDetachOwnReference, Group: catalog.TerminalSession,
		Property: "main's agent PTY attach count equals its live attach references: a detach lowers it only by releasing a reference the same client took and still holds (detach is idempotent per client and attach)",
		Source:   "agent-code SessionManager.attachAgentPty doc comment (null takes no reference, '' holds one; the count is per consumer) and AgentTerminalLeaf.tsx (only detach what we attached); qwen-code PR #7386 ledger tests",
		Reports:  []catalog.Report{"QwenLM/qwen-code#7385"},
		New:      func() sim.Checker { return &detachOwnRef{refs: map[string]*[]string{}} }})
	register(Info{Name: NoReapOfLiveWork, Group: catalog.TerminalSession,
		Property: "an idle reaper (a kill no owner asked for) never kills a session while a pane is attached to it or its turn, prompt or a background job runs, nor within 5 min of such work ending",
		Source:   "nebula PR #80 (the reaper spares a running background job and restarts the idle clock when it ends; RUNNING and NEEDS FEEDBACK are spared); issue 14's no destruction of live, user-visible work without an owner's request",
		Reports:  []catalog.Report{"AgentSystemLabs/nebula#78"},
		New:      func() sim.Checker { return &noReapLive{} }})
	register(Info{Name: WedgedSpawnReplaced, Group: catalog.TerminalSession,
		Kind:     Liveness,
		Property: "a spawned backend that never paints its composer or a prompt is stopped within 31 s of being live and shown in a pane",
		Source:   "MODEL.md C7 P2 and accepted cost; issue 4 beyond upstream",
		New:      func() sim.Checker { return &wedgedReplaced{} }})
	register(Info{Name: PromptDeliveryLands, Group: catalog.TerminalSession,
		Property: "the bytes a prompt delivery writes reach a TUI whose composer is painted and free (no permission prompt or approval on screen), and its Enter follows only text the composer has absorbed: none lands in the output area or a prompt, none is swallowed into a paste still accumulating",
		Source:   "agent-code src/providers/codex/runtime/promptDelivery.ts@428aed2d (bytes written on startup or trust chrome disappear: readiness before the paste), src/providers/claude/runtime/promptDelivery.ts and src/shared/claude/pasteConfirm.ts@428aed2d (an Enter inside Claude's ~100 ms paste accumulator is swallowed: absorption before Enter)",
		New:      func() sim.Checker { return promptLands{} }})
	register(Info{Name: OneAgentPerSession, Group: catalog.TerminalSession,
		Property: "at most one agent process runs per session id: a backend is spawned only when every earlier backend of that session has stopped, exited or been cancelled (adopt or join before spawn)",
		Source:   "agent-code src/main/sessionManager.ts@428aed2d recover() (\"renderer state disappears on reload... The persisted local SessionId is the only ownership key\") and spawnWithId (\"reserve before any provider/tmux await\"); docs/superpowers/plans/2026-07-16-session-recovery-reconciliation.md core invariants 1-4",
		Reports:  []catalog.Report{"im-ian/acorn#37", "stablyai/orca#11006"},
		New:      func() sim.Checker { return &oneAgent{} }})
	register(Info{Name: ExitEndsOwnGeneration, Group: catalog.TerminalSession,
		Property: "a process exit ends only its own backend: main never applies one backend's exit to another backend's registry entry, and the renderer is told a backend exited only once main has seen that backend stop (kill, exit, or a start that failed or was cancelled)",
		Source:   "agent-code src/main/sessionManager.ts@428aed2d cleanupSessionState (\"cleanup is generation-owned... every entry-backed teardown proves it still owns the exact object installed under this id\") and the ownsEntry() guard of every backend listener; issue 14's effects bound to the generation they were admitted for",
		Reports:  []catalog.Report{"crynta/terax-ai#132", "RunMaestro/Maestro#1302"},
		New:      func() sim.Checker { return &exitOwnGen{} }})
}

// The liveness checkers also judge the end of a run.
var (
	_ sim.Finisher = (*promptAttach)(nil)
	_ sim.Finisher = (*attachBalance)(nil)
	_ sim.Finisher = (*inputLost)(nil)
	_ sim.Finisher = (*wedgedReplaced)(nil)
	_ sim.Finisher = (*composerInput)(nil)
)

func isAgent(ev *sim.Event) bool { return strings.HasPrefix(ev.Actor, "agent/") }

// becameInteractive reports whether ev shows a backend's TUI painting its
// composer or a prompt.
// interactiveKinds, backendGoneKinds and awakeClockKinds are the kinds
// becameInteractive, backendGone and awakeClock.observe (hostSlept) read.
var (
	interactiveKinds = []string{"screen", "prompt"}
	backendGoneKinds = []string{"kill", "exit"}
	awakeClockKinds  = []string{"host.resume"}
)

func becameInteractive(ev *sim.Event) bool {
	return isAgent(ev) && (ev.Kind == "screen" && ev.Outcome == "composer" || ev.Kind == "prompt" && ev.Outcome == "shown")
}

// backendGone reports whether ev stops a backend.
func backendGone(ev *sim.Event) bool {
	return ev.Actor == "main" && (ev.Kind == "kill" && ev.Outcome == "killed" || ev.Kind == "exit")
}

func isTerminalMount(ev *sim.Event) bool {
	return ev.Kind == "pane.mount" && ev.Get("view") == "terminal"
}

func paneID(ev *sim.Event) string { return strings.TrimPrefix(ev.Actor, "pane/") }

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1 << 31
	}
	return n
}

// --- live-agent-survives-remount ---

type adoption struct {
	session, backend, by string
	at                   time.Duration
}

type liveAgent struct {
	started     map[string]string // wake -> pane that started it
	str         sim.Strings       // the values of started
	adopted     map[string]adoption
	interactive map[string]time.Duration
}

func (*liveAgent) Name() string { return LiveAgentSurvivesRemount }

// ObservedKinds implements sim.KindObserver.
func (*liveAgent) ObservedKinds() []string { return liveAgentKinds }

var liveAgentKinds = joinKinds(interactiveKinds, []string{"wake", "wake.recover", "kill"})

func (l *liveAgent) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case becameInteractive(ev):
		if _, ok := l.interactive[ev.Get("backend")]; !ok {
			l.interactive[ev.Get("backend")] = ev.At
		}
	case ev.Actor == "renderer" && ev.Kind == "wake" && ev.Outcome == "":
		var sb [96]byte
		l.started[ev.Get("wake")] = l.str.Bytes(append(append(append(sb[:0], ev.Get("caller")...), " by "...), orNone(ev.Get("by"))...))
	case ev.Actor == "renderer" && ev.Kind == "wake.recover" && ev.Get("disposition") == "adopted":
		l.adopted[ev.Get("wake")] = adoption{session: ev.Get("session"), backend: ev.Get("backend"),
			by: l.started[ev.Get("wake")], at: ev.At}
	case ev.Actor == "main" && ev.Kind == "kill" && ev.Outcome == "killed" && ev.Get("wake") != "":
		a, ok := l.adopted[ev.Get("wake")]
		if !ok {
			return nil
		}
		killed := ev.Get("backend")
		since, live := l.interactive[killed]
		if !live {
			return nil
		}
		return violation(LiveAgentSurvivesRemount,
			"wake %s of session %s (%s) adopted live backend %s at %s; the same wake's %s killed backend %s at %s, a live agent (interactive since %s)",
			ev.Get("wake"), a.session, a.by, a.backend, at(a.at), ev.Get("cause"), killed, at(ev.At), at(since))
	}
	return nil
}

// --- remount-attaches-promptly ---

type paneWait struct {
	pane, session, backend, surface string
	at                              time.Duration
	awakeAt                         time.Duration // the mount on the awake clock
}

type promptAttach struct {
	live    map[string]string // session -> live backend
	waiting []paneWait
	clock   awakeClock // the 1 s is the renderer's, counted in awake time
}

func (*promptAttach) Name() string { return RemountAttachesPromptly }

// ObservedKinds implements sim.KindObserver.
func (*promptAttach) ObservedKinds() []string { return promptAttachKinds }

var promptAttachKinds = joinKinds(awakeClockKinds, []string{"start"}, backendGoneKinds, []string{"pane.mount", "pane.attach", "pane.unmount", "pane.toast"})

func (p *promptAttach) Observe(ev *sim.Event) *sim.Violation {
	p.clock.observe(ev)
	switch {
	case ev.Actor == "main" && ev.Kind == "start" && ev.Outcome == "live":
		p.live[ev.Get("session")] = ev.Get("backend")
	case backendGone(ev):
		if p.live[ev.Get("session")] == ev.Get("backend") {
			delete(p.live, ev.Get("session"))
		}
	case isTerminalMount(ev):
		if b := p.live[ev.Get("session")]; b != "" {
			p.waiting = append(p.waiting, paneWait{pane: paneID(ev), session: ev.Get("session"), backend: b,
				surface: ev.Get("surface"), at: ev.At, awakeAt: p.clock.awake(ev.At)})
		}
	case ev.Kind == "pane.attach" && ev.Outcome == "attached", ev.Kind == "pane.unmount", ev.Kind == "pane.toast":
		id := paneID(ev)
		for i, w := range p.waiting {
			if w.pane != id {
				continue
			}
			p.waiting = append(p.waiting[:i], p.waiting[i+1:]...)
			if blank := p.clock.awake(ev.At) - w.awakeAt; blank > PromptAttach {
				how := map[string]string{"pane.attach": "attached only", "pane.unmount": "unmounted without attaching",
					"pane.toast": "showed " + strconv.Quote(ev.Outcome) + " without attaching"}[ev.Kind]
				return violation(RemountAttachesPromptly,
					"pane %s (%s) of session %s mounted at %s while backend %s was live; it %s at %s: blank for %s%s (limit %s)",
					w.pane, w.surface, w.session, at(w.at), w.backend, how, at(ev.At), blank, sleptNote(p.clock.sleptSince(w.at, w.awakeAt, ev.At)), PromptAttach)
			}
			break
		}
	}
	return nil
}

func (p *promptAttach) Finish(end time.Duration) *sim.Violation {
	for _, w := range p.waiting {
		if p.clock.awake(end)-w.awakeAt > PromptAttach {
			return violation(RemountAttachesPromptly,
				"pane %s (%s) of session %s mounted at %s while backend %s was live and had not attached when the run ended at %s",
				w.pane, w.surface, w.session, at(w.at), w.backend, at(end))
		}
	}
	return nil
}

// --- pty-attach-balanced ---

type ptyBalance struct {
	session    string
	count      int
	consumers  []string
	since      time.Duration // start of the current mismatch, -1 when balanced
	sinceAwake time.Duration // the same start on the awake clock
	// notes are the last noteRing attach/detach steps, for messages
	// (formatted only then): a ring, notes[head] the oldest once full, so
	// a step overwrites one entry instead of shifting the others.
	notes  [noteRing]note
	nNotes int
	head   int
}

// noteRing is how many recent steps a session's messages show.
const noteRing = 4

type attachBalance struct {
	sessions []*ptyBalance // in first-seen order: overdue reports the first
	// index finds a session's entry (lookup only; a closed session's entry
	// stays, so a workspace that opens sessions all day has dozens), and
	// cache remembers the entries found by the address of the session id
	// (sim.AddrCache).
	index map[string]*ptyBalance
	cache sim.AddrCache[*ptyBalance]
	// unsettled counts the sessions with a mismatch (since >= 0), and
	// earliest is at most the least of their sinceAwake: while the awake
	// clock is within AttachSettle of it, none is overdue and the scan is
	// skipped (the checker is fed every event).
	unsettled int
	earliest  time.Duration
	clock     awakeClock // AttachSettle is main's, counted in awake time
}

// attachBalance declares no kinds (sim.KindObserver): a mismatch becomes overdue on any event.
func (*attachBalance) Name() string { return PTYAttachBalanced }

func (a *attachBalance) get(session string) *ptyBalance {
	if s, ok := a.cache.Get(session); ok {
		return s
	}
	s := a.index[session]
	if s == nil {
		if a.index == nil {
			a.index = map[string]*ptyBalance{}
		}
		s = &ptyBalance{session: session, since: -1}
		a.sessions = append(a.sessions, s)
		a.index[session] = s
	}
	a.cache.Put(session, s)
	return s
}

// note is one attach/detach step, kept unformatted: formatting every step
// of every run cost more than the rest of the checker.
// A step of main's (main set) keeps its kind, outcome and count, and its
// what is built from them only when a message is.
type note struct {
	what, pane string
	at         time.Duration
	main       bool
	kind       string
	outcome    string
	count      string
}

func (n note) String() string {
	what := n.what
	if n.main {
		what = "main " + n.kind + " (" + n.outcome + ", count " + n.count + ") for pane"
	}
	return fmt.Sprintf("%s %s at %s", what, n.pane, at(n.at))
}

// mainNote notes one of main's attach/detach steps.
func (s *ptyBalance) mainNote(ev *sim.Event) {
	n := s.note(ev, "")
	n.main, n.kind, n.outcome, n.count = true, ev.Kind, ev.Outcome, ev.Get("count")
}

// note records one step, dropping the oldest of a full ring, and returns
// its entry.
func (s *ptyBalance) note(ev *sim.Event, what string) *note {
	pane := ev.Get("pane")
	if pane == "" {
		pane = paneID(ev)
	}
	i := (s.head + s.nNotes) % noteRing
	if s.nNotes == noteRing {
		s.head = (s.head + 1) % noteRing
	} else {
		s.nNotes++
	}
	s.notes[i] = note{what: what, pane: pane, at: ev.At}
	return &s.notes[i]
}

// recent returns the noted steps, oldest first.
func (s *ptyBalance) recent() []note {
	out := make([]note, s.nNotes)
	for i := range out {
		out[i] = s.notes[(s.head+i)%noteRing]
	}
	return out
}

func joinNotes(ns []note) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = n.String()
	}
	return strings.Join(parts, "; ")
}

func (a *attachBalance) Observe(ev *sim.Event) *sim.Violation {
	var s *ptyBalance
	switch ev.Kind {
	case "host.resume":
		a.clock.observe(ev)
	case "pty.attach", "pty.detach":
		if ev.Actor != "main" || ev.Kind == "pty.attach" && ev.Outcome != "attached" {
			break
		}
		s = a.get(ev.Get("session"))
		s.count = atoi(ev.Get("count"))
		s.mainNote(ev)
		if s.count < 0 {
			return violation(PTYAttachBalanced, "session %s: attach count went negative (%d) at %s", s.session, s.count, at(ev.At))
		}
	case "pane.attach":
		switch ev.Outcome {
		case "attached":
			s = a.get(ev.Get("session"))
			s.consumers = append(s.consumers, paneID(ev))
			s.note(ev, "attached pane")
		case "late-ignored":
			s = a.get(ev.Get("session"))
			s.note(ev, "late attach ignored by unmounted pane")
		}
	case "pane.unmount":
		s = a.get(ev.Get("session"))
		for i, c := range s.consumers {
			if c == paneID(ev) {
				s.consumers = append(s.consumers[:i], s.consumers[i+1:]...)
				s.note(ev, "unmounted attached pane")
				break
			}
		}
	}
	if s != nil {
		if s.count != len(s.consumers) {
			if s.since < 0 {
				s.since, s.sinceAwake = ev.At, a.clock.awake(ev.At)
				if a.unsettled == 0 || s.sinceAwake < a.earliest {
					a.earliest = s.sinceAwake
				}
				a.unsettled++
			}
		} else if s.since >= 0 {
			s.since = -1
			a.unsettled--
		}
	}
	if a.unsettled == 0 || a.clock.awake(ev.At)-a.earliest <= AttachSettle {
		return nil // none is overdue (the scan would find none)
	}
	return a.overdue(ev.At, false)
}

// overdue reports the first session whose mismatch has outlasted
// AttachSettle at now, and otherwise makes earliest exact again.
func (a *attachBalance) overdue(now time.Duration, end bool) *sim.Violation {
	earliest, found := time.Duration(0), false
	for _, s := range a.sessions {
		if s.since < 0 {
			continue
		}
		if a.clock.awake(now)-s.sinceAwake <= AttachSettle {
			if !found || s.sinceAwake < earliest {
				earliest, found = s.sinceAwake, true
			}
			continue
		}
		panes := "none"
		if len(s.consumers) > 0 {
			panes = strings.Join(s.consumers, ",")
		}
		what := "holds"
		if s.count == 0 {
			what = "forwards nothing with"
		}
		suffix := ""
		if end {
			suffix = " (run ended)"
		}
		return violation(PTYAttachBalanced,
			"session %s: main %s %d PTY reference(s) but attached panes are [%s] since %s, still at %s%s; recent: %s",
			s.session, what, s.count, panes, at(s.since), at(now), suffix, joinNotes(s.recent()))
	}
	a.earliest = earliest
	return nil
}

func (a *attachBalance) Finish(end time.Duration) *sim.Violation { return a.overdue(end, true) }

// --- pty-size-kept ---

type shownPane struct {
	pane, session, surface string
	cols, rows             string // the size, COLSxROWS only in a message
	at                     time.Duration
}

type sizeKept struct {
	panes []shownPane
}

func (*sizeKept) Name() string { return PTYSizeKept }

// ObservedKinds implements sim.KindObserver.
func (*sizeKept) ObservedKinds() []string { return sizeKeptKinds }

var sizeKeptKinds = []string{"pane.mount", "pane.unmount", "pty.resize"}

func (k *sizeKept) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case isTerminalMount(ev):
		k.panes = append(k.panes, shownPane{pane: paneID(ev), session: ev.Get("session"), surface: ev.Get("surface"),
			cols: ev.Get("cols"), rows: ev.Get("rows"), at: ev.At})
	case ev.Kind == "pane.unmount":
		for i, p := range k.panes {
			if p.pane == paneID(ev) {
				k.panes = append(k.panes[:i], k.panes[i+1:]...)
				break
			}
		}
	case ev.Actor == "main" && ev.Kind == "pty.resize" && ev.Get("cause") == "restore":
		cols, rows := ev.Get("cols"), ev.Get("rows")
		for _, p := range k.panes {
			if p.session == ev.Get("session") && (p.cols != cols || p.rows != rows) {
				return violation(PTYSizeKept,
					"detach by pane %s resized session %s's PTY to %s at %s while pane %s (%s, %s, mounted at %s) shows it",
					ev.Get("pane"), p.session, cols+"x"+rows, at(ev.At), p.pane, p.surface, p.cols+"x"+p.rows, at(p.at))
			}
		}
	}
	return nil
}

// --- no-input-lost ---

type typedInput struct {
	pane, session string
	next          int // first queued seq not yet delivered or dropped
	queuedTo      int // last seq typed while unattached (0 none)
	firstAt       time.Duration
}

type inputLost struct {
	panes []*typedInput
}

func (*inputLost) Name() string { return NoInputLost }

// ObservedKinds implements sim.KindObserver.
func (*inputLost) ObservedKinds() []string { return inputLostKinds }

var inputLostKinds = []string{"type", "input.drop", "pty.write", "pane.unmount"}

func (l *inputLost) get(pane, session string) *typedInput {
	for _, t := range l.panes {
		if t.pane == pane {
			return t
		}
	}
	t := &typedInput{pane: pane, session: session}
	l.panes = append(l.panes, t)
	return t
}

func parseSeq(s string) (int, int) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return atoi(a), atoi(a)
	}
	return atoi(a), atoi(b)
}

func (t *typedInput) held() bool { return t.queuedTo > 0 && t.next <= t.queuedTo }

func (l *inputLost) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Actor == "user" && ev.Kind == "type" && ev.Outcome == "queued":
		t := l.get(ev.Get("pane"), ev.Get("session"))
		from, to := parseSeq(ev.Get("seq"))
		if !t.held() {
			t.next, t.firstAt = from, ev.At
		}
		t.queuedTo = to
	case ev.Kind == "input.drop":
		t := l.get(paneID(ev), ev.Get("session"))
		from, to := parseSeq(ev.Get("seq"))
		if from != t.next {
			return violation(NoInputLost, "pane %s of session %s dropped keystrokes %s at %s but the oldest held was %d",
				t.pane, t.session, ev.Get("seq"), at(ev.At), t.next)
		}
		t.next = to + 1
	case ev.Actor == "main" && ev.Kind == "pty.write":
		t := l.get(ev.Get("pane"), ev.Get("session"))
		if !t.held() {
			return nil
		}
		if ev.Outcome == "held" {
			return nil // main holds it for the composer; judged when delivered or rejected
		}
		from, to := parseSeq(ev.Get("seq"))
		// A write refused while a prompt delivery holds the session is
		// reported (write returns false), not lost silently.
		if from != t.next || ev.Outcome != "delivered" && ev.Outcome != "rejected" && ev.Outcome != "refused" {
			return violation(NoInputLost,
				"pane %s of session %s held keystrokes %d-%d typed before attach (from %s); main's write of %s at %s was %s",
				t.pane, t.session, t.next, t.queuedTo, at(t.firstAt), ev.Get("seq"), at(ev.At),
				map[bool]string{true: "out of order", false: ev.Outcome}[ev.Outcome == "delivered"])
		}
		t.next = to + 1
	case ev.Kind == "pane.unmount":
		for i, t := range l.panes {
			if t.pane != paneID(ev) {
				continue
			}
			l.panes = append(l.panes[:i], l.panes[i+1:]...)
			if t.held() {
				return violation(NoInputLost,
					"pane %s of session %s unmounted at %s holding keystrokes %d-%d typed before attach (from %s), neither delivered nor reported dropped",
					t.pane, t.session, at(ev.At), t.next, t.queuedTo, at(t.firstAt))
			}
			break
		}
	}
	return nil
}

func (l *inputLost) Finish(end time.Duration) *sim.Violation {
	for _, t := range l.panes {
		if t.held() && end-t.firstAt > InputHeldMax {
			return violation(NoInputLost,
				"pane %s of session %s still held keystrokes %d-%d typed before attach (from %s) when the run ended at %s",
				t.pane, t.session, t.next, t.queuedTo, at(t.firstAt), at(end))
		}
	}
	return nil
}

// --- wedged-spawn-replaced ---

// hostSlept reports the length of a host suspend that ended at ev (the
// world's fault host.resume slept=D): bounds measured on the host's
// monotonic timers move by it.
func hostSlept(ev *sim.Event) (time.Duration, bool) {
	if ev.Actor != "fault" || ev.Kind != "host.resume" {
		return 0, false
	}
	d, err := time.ParseDuration(ev.Get("slept"))
	return d, err == nil
}

type spawnWatch struct {
	session, backend string
	live             time.Duration
	shown            time.Duration // -1 until a pane shows the session
	shownBy          string
	// slept is the host sleep since it went live: the bound is awake time.
	slept time.Duration
}

func (w *spawnWatch) deadline() time.Duration {
	if w.shown > w.live {
		return w.shown + WedgeReplaceBy + w.slept
	}
	return w.live + WedgeReplaceBy + w.slept
}

type wedgedReplaced struct {
	mounted []paneOf // mounted panes
	watch   []*spawnWatch
	// due is at most the earliest deadline of a shown watch (a deadline
	// only moves later, by a host sleep): until an event passes it, none
	// is overdue and the scan is skipped (the checker is fed every event).
	// Zero, as built, means unknown: the first event scans.
	due time.Duration
}

// noDeadline is wedgedReplaced.due with no shown watch.
const noDeadline = time.Duration(1<<63 - 1)

// paneOf is a pane and its session.
type paneOf struct{ pane, session string }

// wedgedReplaced declares no kinds (sim.KindObserver): a spawn becomes overdue on any event.
func (*wedgedReplaced) Name() string { return WedgedSpawnReplaced }

func (w *wedgedReplaced) shownBy(session string) string {
	for _, m := range w.mounted {
		if m.session == session {
			return m.pane
		}
	}
	return ""
}

func (w *wedgedReplaced) drop(backend string) {
	for i, s := range w.watch {
		if s.backend == backend {
			w.watch = append(w.watch[:i], w.watch[i+1:]...)
			return
		}
	}
}

// shown lowers due to s's deadline once a pane shows it.
func (w *wedgedReplaced) shown(s *spawnWatch) {
	if d := s.deadline(); d < w.due {
		w.due = d
	}
}

func (w *wedgedReplaced) Observe(ev *sim.Event) *sim.Violation {
	switch ev.Kind {
	case "host.resume":
		if slept, ok := hostSlept(ev); ok {
			// The 31 s are awake time: main's deadline timer is monotonic and
			// stops while the host sleeps, so every bound moves by the sleep.
			for _, s := range w.watch {
				s.slept += slept
			}
		}
	case "start":
		if ev.Actor == "main" && ev.Outcome == "live" {
			s := &spawnWatch{session: ev.Get("session"), backend: ev.Get("backend"), live: ev.At, shown: -1}
			if p := w.shownBy(s.session); p != "" {
				s.shown, s.shownBy = ev.At, p
				w.shown(s)
			}
			w.watch = append(w.watch, s)
		}
	case "screen", "prompt", "kill", "exit":
		if becameInteractive(ev) || backendGone(ev) {
			w.drop(ev.Get("backend"))
		}
	case "pane.mount":
		w.mounted = append(w.mounted, paneOf{paneID(ev), ev.Get("session")})
		for _, s := range w.watch {
			if s.session == ev.Get("session") && s.shown < 0 {
				s.shown, s.shownBy = ev.At, paneID(ev)
				w.shown(s)
			}
		}
	case "pane.unmount":
		for i, m := range w.mounted {
			if m == (paneOf{paneID(ev), ev.Get("session")}) {
				w.mounted = append(w.mounted[:i], w.mounted[i+1:]...)
				break
			}
		}
	}
	if ev.At <= w.due {
		return nil // no shown watch is past its deadline (the scan would find none)
	}
	due := noDeadline
	for _, s := range w.watch {
		if s.shown < 0 {
			continue
		}
		d := s.deadline()
		if ev.At > d {
			return w.fail(s, ev.At, false)
		}
		due = min(due, d)
	}
	w.due = due
	return nil
}

func (w *wedgedReplaced) fail(s *spawnWatch, now time.Duration, end bool) *sim.Violation {
	shown := "no pane showed it"
	if s.shown >= 0 {
		shown = fmt.Sprintf("pane %s showed it from %s", s.shownBy, at(s.shown))
	}
	when := "still alive at"
	if end {
		when = "still alive when the run ended at"
	}
	due := s.deadline()
	awake := ""
	if s.slept > 0 {
		awake = fmt.Sprintf(" of awake time, the host having slept %s", s.slept)
	}
	return violation(WedgedSpawnReplaced,
		"backend %s of session %s went live at %s and never painted its composer or a prompt; %s; it was due to be stopped by %s (%s after live and shown%s) and was %s %s",
		s.backend, s.session, at(s.live), shown, at(due), WedgeReplaceBy, awake, when, at(now))
}

func (w *wedgedReplaced) Finish(end time.Duration) *sim.Violation {
	for _, s := range w.watch {
		if s.shown >= 0 && end > s.deadline() || s.shown < 0 && end > s.live+WedgeReplaceBy+s.slept {
			return w.fail(s, end, true)
		}
	}
	return nil
}

// --- input-lands-in-composer ---

// heldInput is a write main holds for a backend's composer.
type heldInput struct {
	pane, session, backend, seq string
	at                          time.Duration
}

type composerInput struct {
	painted map[string]time.Duration // backend -> when its composer painted
	last    map[string]int           // pane -> last seq delivered
	held    []heldInput
}

func (*composerInput) Name() string { return InputLandsInComposer }

// ObservedKinds implements sim.KindObserver.
func (*composerInput) ObservedKinds() []string { return composerInputKinds }

var composerInputKinds = []string{"screen", "pty.write"}

func (c *composerInput) unhold(pane, seq string) {
	for i, h := range c.held {
		if h.pane == pane && h.seq == seq {
			c.held = append(c.held[:i], c.held[i+1:]...)
			return
		}
	}
}

func (c *composerInput) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case isAgent(ev) && ev.Kind == "screen" && ev.Outcome == "composer":
		if _, ok := c.painted[ev.Get("backend")]; !ok {
			c.painted[ev.Get("backend")] = ev.At
		}
	case ev.Actor == "main" && ev.Kind == "pty.write" && ev.Get("backend") != "":
		pane, seq, backend := ev.Get("pane"), ev.Get("seq"), ev.Get("backend")
		switch ev.Outcome {
		case "held":
			c.held = append(c.held, heldInput{pane: pane, session: ev.Get("session"), backend: backend, seq: seq, at: ev.At})
			return nil
		case "rejected":
			c.unhold(pane, seq)
			return nil
		case "delivered":
		default:
			return nil
		}
		c.unhold(pane, seq)
		if _, ok := c.painted[backend]; !ok {
			return violation(InputLandsInComposer,
				"pane %s wrote keystrokes %s to session %s at %s, but backend %s had not painted its composer: the keys landed in the output area",
				pane, seq, ev.Get("session"), at(ev.At), backend)
		}
		from, to := parseSeq(seq)
		if last, ok := c.last[pane]; ok && from <= last {
			return violation(InputLandsInComposer,
				"pane %s's keystrokes %s reached backend %s of session %s at %s after keystroke %d: out of the order typed",
				pane, seq, backend, ev.Get("session"), at(ev.At), last)
		}
		c.last[pane] = to
	}
	return nil
}

func (c *composerInput) Finish(end time.Duration) *sim.Violation {
	for _, h := range c.held {
		if end-h.at > InputHeldMax {
			return violation(InputLandsInComposer,
				"main held keystrokes %s of pane %s for backend %s of session %s from %s and had neither delivered nor rejected them when the run ended at %s",
				h.seq, h.pane, h.backend, h.session, at(h.at), at(end))
		}
	}
	return nil
}

// --- pty-detach-releases-own-reference ---

type detachOwnRef struct {
	// refs: session -> client (pane) of each attach reference main took,
	// appended to and cut in place (no map store per step).
	refs map[string]*[]string
	// cache remembers refs' entries by the address of the session id
	// (sim.AddrCache; entries are never deleted).
	cache sim.AddrCache[*[]string]
}

func (*detachOwnRef) Name() string { return PTYDetachOwnReference }

// held returns refs[session], nil if none.
func (d *detachOwnRef) held(session string) *[]string {
	if h, ok := d.cache.Get(session); ok {
		return h
	}
	h := d.refs[session]
	if h != nil {
		d.cache.Put(session, h)
	}
	return h
}

// ObservedKinds implements sim.KindObserver.
func (*detachOwnRef) ObservedKinds() []string { return detachOwnRefKinds }

var detachOwnRefKinds = []string{"pty.attach", "pty.detach"}

func (d *detachOwnRef) Observe(ev *sim.Event) *sim.Violation {
	if ev.Actor != "main" {
		return nil
	}
	session, pane := ev.Get("session"), ev.Get("pane")
	switch {
	case ev.Kind == "pty.attach" && ev.Outcome == "attached":
		held := d.held(session)
		if held == nil {
			held = new([]string)
			d.refs[session] = held
			d.cache.Put(session, held)
		}
		*held = append(*held, pane)
	case ev.Kind == "pty.detach" && (ev.Outcome == "decremented" || ev.Outcome == "released"):
		var refs []string
		if held := d.held(session); held != nil {
			refs = *held
			for i, r := range refs {
				if r == pane {
					*held = append(refs[:i], refs[i+1:]...) // in place: nothing else holds refs
					return nil
				}
			}
		}
		holders := "none"
		if len(refs) > 0 {
			holders = strings.Join(refs, ",")
		}
		return violation(PTYDetachOwnReference,
			"pane %s detached session %s's PTY at %s holding no attach reference of its own; main %s the count to %s, taking a reference of [%s]",
			pane, session, at(ev.At), ev.Outcome, ev.Get("count"), holders)
	}
	return nil
}

// --- one-agent-process-per-session ---

type agentProc struct {
	session, backend, caller string
	at                       time.Duration
}

type oneAgent struct {
	callers []agentProc // requests seen for backends not yet spawned
	running procSet     // by session too
}

// procSet holds the running agent processes in spawn order, found by
// backend and (when added by session) by session: each map holds a key's
// first process, which links the key's next (nextBackend, nextSession) in
// spawn order, so the first is the one a walk of every running process in
// spawn order would meet (a world of 1,000 threads runs one per pane, and
// every restart spawns them again). Nodes come from a slab. Looked up
// only.
type procSet struct {
	byBackend sim.Chains[procNode]
	bySession sim.Chains[procNode]
	nodes     sim.Slab[procNode]
}

type procNode struct {
	agentProc
	nextBackend, nextSession *procNode
}

func (s *procSet) add(p agentProc, bySession bool) {
	n := s.nodes.New()
	n.agentProc = p
	s.byBackend.Append(p.backend, n, nextBackend)
	if bySession {
		s.bySession.Append(p.session, n, nextSession)
	}
}

// nextBackend and nextSession are a process's links in procSet's chains.
func nextBackend(n *procNode) **procNode { return &n.nextBackend }
func nextSession(n *procNode) **procNode { return &n.nextSession }

// withBackend returns the first running process of backend, or nil.
func (s *procSet) withBackend(backend string) *agentProc {
	if n := s.byBackend.First(backend); n != nil {
		return &n.agentProc
	}
	return nil
}

// inSession returns the first running process of session, or nil.
func (s *procSet) inSession(session string) *agentProc {
	if n := s.bySession.First(session); n != nil {
		return &n.agentProc
	}
	return nil
}

// end removes the first running process of backend, if any.
func (s *procSet) end(backend string) {
	n := s.byBackend.First(backend)
	if n == nil {
		return
	}
	s.byBackend.Remove(backend, n, nextBackend)
	s.bySession.Remove(n.session, n, nextSession)
	*n = procNode{} // an ended node keeps nothing alive (its slab may outlive it)
}

// oneAgent declares no kinds (sim.KindObserver): it notes every main event's caller.
func (*oneAgent) Name() string { return OneAgentPerSession }

func (o *oneAgent) end(backend string) { o.running.end(backend) }

func (o *oneAgent) Observe(ev *sim.Event) *sim.Violation {
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
		if r := o.running.inSession(p.session); r != nil {
			return violation(OneAgentPerSession,
				"session %s has two agent processes: backend %s spawned at %s for %s while backend %s, spawned at %s for %s, was still running (not stopped, exited or cancelled); the registry can name only one",
				p.session, p.backend, at(p.at), p.caller, r.backend, at(r.at), r.caller)
		}
		o.running.add(p, true)
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

// --- exit-ends-own-generation ---

// exitOwnGen tracks the backends main has spawned and not yet seen stop.
type exitOwnGen struct {
	running procSet // bounded by the backends alive at once
}

func (*exitOwnGen) Name() string { return ExitEndsOwnGeneration }

// ObservedKinds implements sim.KindObserver.
func (*exitOwnGen) ObservedKinds() []string { return exitOwnGenKinds }

var exitOwnGenKinds = []string{"spawn", "start", "kill", "exit", "exit.late", "session.exit"}

func (x *exitOwnGen) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Actor == "main" && ev.Kind == "spawn" && ev.Outcome == "starting":
		x.running.add(agentProc{session: ev.Get("session"), backend: ev.Get("backend"), at: ev.At}, false)
	case ev.Actor == "main" && (ev.Kind == "start" && ev.Outcome != "live" || ev.Kind == "kill" && ev.Outcome == "killed" || ev.Kind == "exit"):
		x.running.end(ev.Get("backend"))
	case ev.Actor == "main" && ev.Kind == "exit.late" && ev.Outcome == "applied":
		if entry, b := ev.Get("entry"), ev.Get("backend"); entry != b {
			since := "?"
			if r := x.running.withBackend(entry); r != nil {
				since = at(r.at)
			}
			return violation(ExitEndsOwnGeneration,
				"the exit of backend %s of session %s, given up before it went live, arrived at %s and was applied to the session's current entry, backend %s (spawned at %s): the newer generation left the registry while its process runs on",
				b, ev.Get("session"), at(ev.At), entry, since)
		}
	case ev.Actor == "renderer" && ev.Kind == "session.exit":
		if r := x.running.withBackend(ev.Get("backend")); r != nil {
			return violation(ExitEndsOwnGeneration,
				"the renderer marked backend %s of session %s exited at %s (cause %s), but main never saw it stop: it was spawned at %s and is still running",
				r.backend, r.session, at(ev.At), ev.Get("cause"), at(r.at))
		}
	}
	return nil
}

// --- no-reap-of-live-work ---

// work is one piece of a backend's live work: a turn, a prompt or a
// background job, from start to end (end < 0 while it runs).
type work struct {
	backend, what string
	job           string // a background job's id ("" for a turn or a prompt)
	start, end    time.Duration
}

// label names the work in a message: "turn", "prompt", "background job J".
func (w work) label() string {
	if w.what == "background job" {
		return w.what + " " + w.job
	}
	return w.what
}

type noReapLive struct {
	work     []work   // bounded: ended work older than ReapIdleAfter is dropped (prune)
	attached []paneOf // attached panes
	pruneAt  int      // len(work) at which begin prunes
}

func (*noReapLive) Name() string { return NoReapOfLiveWork }

// ObservedKinds implements sim.KindObserver.
func (*noReapLive) ObservedKinds() []string { return noReapLiveKinds }

var noReapLiveKinds = joinKinds([]string{"turn.start", "turn.end", "prompt", "bg.start", "bg.end", "pane.attach", "pane.unmount", "kill"}, backendGoneKinds)

func (n *noReapLive) begin(backend, what, job string, at time.Duration) {
	if len(n.work) >= n.pruneAt {
		n.prune(at)
	}
	n.work = append(n.work, work{backend: backend, what: what, job: job, start: at, end: -1})
}

// prune drops the work that ended ReapIdleAfter or more before now: no
// later kill can be judged against it (judge reports work still running or
// ended less than ReapIdleAfter before the kill), and finish looks only at
// running work. Without it a backend that is never stopped kept every turn
// of the day, and every finish scanned them. pruneAt, twice what is left,
// keeps the pruning amortized O(1) per piece of work.
func (n *noReapLive) prune(now time.Duration) {
	kept := n.work[:0]
	for _, w := range n.work {
		if w.end < 0 || now-w.end < ReapIdleAfter {
			kept = append(kept, w)
		}
	}
	clear(n.work[len(kept):])
	n.work = kept
	n.pruneAt = max(2*len(kept), 16)
}

func (n *noReapLive) finish(backend, what, job string, at time.Duration) {
	for i := range n.work {
		if w := &n.work[i]; w.backend == backend && w.what == what && w.job == job && w.end < 0 {
			w.end = at
			return
		}
	}
}

func (n *noReapLive) Observe(ev *sim.Event) *sim.Violation {
	// The panes' events, most of those observed, first: they read no
	// backend.
	switch ev.Kind {
	case "pane.attach":
		if ev.Outcome == "attached" {
			n.attached = append(n.attached, paneOf{paneID(ev), ev.Get("session")})
		}
		return nil
	case "pane.unmount":
		for i, a := range n.attached {
			if a == (paneOf{paneID(ev), ev.Get("session")}) {
				n.attached = append(n.attached[:i], n.attached[i+1:]...)
				break
			}
		}
		return nil
	}
	backend := ev.Get("backend")
	switch {
	case isAgent(ev) && ev.Kind == "turn.start":
		n.begin(backend, "turn", "", ev.At)
	case isAgent(ev) && ev.Kind == "turn.end":
		n.finish(backend, "turn", "", ev.At)
	case isAgent(ev) && ev.Kind == "prompt" && ev.Outcome == "shown":
		n.begin(backend, "prompt", "", ev.At)
	case isAgent(ev) && ev.Kind == "prompt" && ev.Outcome == "answered":
		n.finish(backend, "prompt", "", ev.At)
	case isAgent(ev) && ev.Kind == "bg.start":
		n.begin(backend, "background job", ev.Get("job"), ev.At)
	case isAgent(ev) && ev.Kind == "bg.end":
		n.finish(backend, "background job", ev.Get("job"), ev.At)
	case ev.Actor == "main" && ev.Kind == "kill" && ev.Outcome == "killed" && ev.Get("cause") == "detached-idle":
		return n.judge(ev)
	case backendGone(ev):
		n.forget(backend)
	}
	return nil
}

func (n *noReapLive) forget(backend string) {
	kept := n.work[:0]
	for _, w := range n.work {
		if w.backend != backend {
			kept = append(kept, w)
		}
	}
	n.work = kept
}

func (n *noReapLive) judge(ev *sim.Event) *sim.Violation {
	session, backend := ev.Get("session"), ev.Get("backend")
	defer n.forget(backend)
	for _, a := range n.attached {
		if a.session == session {
			return violation(NoReapOfLiveWork, "the idle reaper killed backend %s of session %s at %s while pane %s was attached to it",
				backend, session, at(ev.At), a.pane)
		}
	}
	for _, w := range n.work {
		if w.backend != backend {
			continue
		}
		if w.end < 0 {
			return violation(NoReapOfLiveWork, "the idle reaper killed backend %s of session %s at %s while its %s, running since %s, was still running",
				backend, session, at(ev.At), w.label(), at(w.start))
		}
		if ev.At-w.end < ReapIdleAfter {
			return violation(NoReapOfLiveWork, "the idle reaper killed backend %s of session %s at %s, %s after its %s (from %s) ended at %s: idle less than %s",
				backend, session, at(ev.At), ev.At-w.end, w.label(), at(w.start), at(w.end), ReapIdleAfter)
		}
	}
	return nil
}

// --- prompt-delivery-lands-in-composer ---

// promptLands judges the TUI's account of a delivery's bytes: an agent's
// input.misplaced carrying delivery data (pane keystrokes carry seq
// instead), or an input.swallowed Enter.
type promptLands struct{}

func (promptLands) Name() string { return PromptDeliveryLands }

// ObservedKinds implements sim.KindObserver.
func (promptLands) ObservedKinds() []string { return promptLandsKinds }

var promptLandsKinds = []string{"input.misplaced", "input.swallowed"}

func (promptLands) Observe(ev *sim.Event) *sim.Violation {
	if !isAgent(ev) {
		return nil
	}
	switch {
	case ev.Kind == "input.misplaced" && ev.Get("data") != "":
		return violation(PromptDeliveryLands,
			"a prompt delivery wrote %s to backend %s of session %s at %s, but its TUI took no input there (%s): the bytes are lost",
			ev.Get("data"), ev.Get("backend"), ev.Get("session"), at(ev.At), ev.Get("why"))
	case ev.Kind == "input.swallowed":
		return violation(PromptDeliveryLands,
			"a prompt delivery's Enter reached backend %s of session %s at %s while its paste was still being absorbed: the Enter was swallowed into the paste and the prompt left in the composer",
			ev.Get("backend"), ev.Get("session"), at(ev.At))
	}
	return nil
}
