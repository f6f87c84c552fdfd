package invariants

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Probes are sometimes-assertions: named situations a campaign should
// reach at least once ("a tab was acted on after a credential rotation").
// They never fail a run; fuzz counts their hits and lists the probes a
// campaign never hit, so a workload that stopped reaching a situation is
// noticed.

// ProbeInfo declares a probe.
type ProbeInfo struct {
	Name  string
	Group catalog.Group
	Doc   string
}

// Probes lists every declared probe in list order (group, then name);
// Result.Probes and fuzz's hit counts follow this order.
var Probes []ProbeInfo

// declareProbe adds a probe and returns its name, for the counter that
// hits it. It panics on a duplicate or a missing field.
func declareProbe(i ProbeInfo) string {
	if i.Name == "" || i.Doc == "" || !i.Group.Valid() {
		panic("invariants: probe " + i.Name + " needs a name, group and doc")
	}
	for _, p := range Probes {
		if p.Name == i.Name {
			panic("invariants: probe declared twice: " + i.Name)
		}
	}
	Probes = append(Probes, i)
	sort.Slice(Probes, func(a, b int) bool {
		return catalog.Less(Probes[a].Group, Probes[a].Name, Probes[b].Group, Probes[b].Name)
	})
	return i.Name
}

// The probes ProbeCounter counts; Observe below says when each is hit.
var (
	probeCapabilityChangeReissuedCredential = declareProbe(ProbeInfo{Name: "capability-change-reissued-credential", Group: catalog.MCPCredential,
		Doc: "a capability change made prepareMcpSession revoke and re-issue a thread's credential"})
	probeWaitChildOutlivedClient = declareProbe(ProbeInfo{Name: "delegate-wait-child-outlived-client-timeout", Group: catalog.Orchestrator,
		Doc: "the child of a wait-mode delegate_task settled 5 min (a Node MCP client's header timeout) or more after the call"})
	probeKeyReusedForAnotherTarget = declareProbe(ProbeInfo{Name: "key-reused-for-another-target", Group: catalog.Orchestrator,
		Doc: "a call reused an earlier call's clientRequestId for another thread or task"})
	probeDelegateWaitTimedOut = declareProbe(ProbeInfo{Name: "delegate-wait-timed-out", Group: catalog.Orchestrator,
		Doc: "a delegate_task wait ran out of budget and was upgraded (waitTimedOut)"})
	probeHumanTookAgentTab = declareProbe(ProbeInfo{Name: "human-took-agent-tab", Group: catalog.PreviewTab,
		Doc: "a human viewer took control of an agent's tab"})
	probeMessageDeliveredTwice = declareProbe(ProbeInfo{Name: "message-delivered-twice", Group: catalog.ProviderSession,
		Doc: "a user message reached the server a second time after it had started a run"})
	probeIdleReleaseDeferredByPin = declareProbe(ProbeInfo{Name: "idle-release-deferred-by-pin", Group: catalog.ProviderSession,
		Doc: "an idle release was deferred for pending background work"})
	probeIdleReleaseDeferredForChild = declareProbe(ProbeInfo{Name: "idle-timer-fired-with-child-owed", Group: catalog.ProviderSession,
		Doc: "a session's idle timer fired while a thread attached to it was owed a running delegated child's result (the release was deferred)"})
	probeNativeResumed = declareProbe(ProbeInfo{Name: "native-conversation-resumed", Group: catalog.ProviderSession,
		Doc: "a provider session opened after an idle release or a restart resumed the thread's persisted native conversation"})
	probeFirstNativeTurnCut = declareProbe(ProbeInfo{Name: "first-native-turn-cut", Group: catalog.ProviderSession,
		Doc: "a provider process died during the first turn of a new native conversation, before the turn was written"})
	probeHostSleptPastIdle = declareProbe(ProbeInfo{Name: "host-slept-past-idle-threshold", Group: catalog.ProviderSession,
		Doc: "the host slept longer than the 30 min idle threshold while a provider session was live"})
	probeIdleReleaseWithOpenTab = declareProbe(ProbeInfo{Name: "idle-release-with-open-tab", Group: catalog.ProviderSession,
		Doc: "a provider session idled out while its thread had an open agent tab"})
	probeDetachWithoutReference = declareProbe(ProbeInfo{Name: "detach-without-reference", Group: catalog.TerminalSession,
		Doc: "main got an agent PTY detach from a client that held no attach reference (ignored, or unmatched at zero)"})
	probeLateExitOverReplacement = declareProbe(ProbeInfo{Name: "late-exit-over-replacement", Group: catalog.TerminalSession,
		Doc: "the late exit of a start main gave up on arrived while a newer backend held the session's entry (ignored, or applied to it)"})
	probeReapWithBackgroundJob = declareProbe(ProbeInfo{Name: "reap-with-background-job", Group: catalog.TerminalSession,
		Doc: "the detached-idle reaper found a session with a background job running (spared it, or killed it with the job)"})
	probeDeliveryCrossedLifecycle = declareProbe(ProbeInfo{Name: "delivery-crossed-remount-or-exit", Group: catalog.TerminalSession,
		Doc: "a pane of the session mounted, or its backend was killed or exited, while a prompt delivery held main's reservation (agent-code's deliverPromptToAgent)"})
	probeInputBeforeComposer = declareProbe(ProbeInfo{Name: "input-before-composer", Group: catalog.TerminalSession,
		Doc: "keystrokes reached main for a backend that had not painted its composer (held, or misplaced)"})
	probeRemountWithClaudeDraft = declareProbe(ProbeInfo{Name: "remount-with-claude-draft", Group: catalog.TerminalSession,
		Doc: "a pane of a Claude session remounted while the user's draft was in its composer"})
	probeRecoverJoinedSpawn = declareProbe(ProbeInfo{Name: "recover-joined-spawn", Group: catalog.TerminalSession,
		Doc: "a second recover for a session reached main while its first spawn was still starting, and joined it"})
	probeCloseDuringStart = declareProbe(ProbeInfo{Name: "pane-closed-during-start", Group: catalog.TerminalSession,
		Doc: "a pane close killed its session's backend while start() was still in flight (the claim cancelled)"})
	probePostStartStopWhileBlocked = declareProbe(ProbeInfo{Name: "post-start-stop-while-first-blocked", Group: catalog.TerminalSession,
		Doc: "a backend killed while starting settled its start while the kill's first stop was still blocked, and got its post-start stop"})
	probeReloadOverLiveBackend = declareProbe(ProbeInfo{Name: "renderer-reload-over-backend", Group: catalog.TerminalSession,
		Doc: "the desktop app's renderer reloaded while main held a running agent backend"})
	probeExtraInstanceOverRunningRun = declareProbe(ProbeInfo{Name: "extra-instance-over-running-run", Group: catalog.RestartContinuation,
		Doc: "a second app instance launched against the home while the live backend was running a run (refused, or its startup reconcile ran; t3code#12926)"})
	probeRestartFoundRunningRun = declareProbe(ProbeInfo{Name: "restart-found-running-run", Group: catalog.RestartContinuation,
		Doc: "a server started over a run its dead predecessor left running (the startup reconcile settled it)"})
	probeRestartLostIngestion = declareProbe(ProbeInfo{Name: "restart-behind-ingestion-backlog", Group: catalog.RestartContinuation,
		Doc: "a server process died while a provider's turn completion still waited in its ingestion queue (t3code#6560)"})
	probeRestartWhileStopping = declareProbe(ProbeInfo{Name: "restart-while-session-stopping", Group: catalog.RestartContinuation,
		Doc: "a server process died between a session's runtime stop and its stopped projection, with a queued turn (t3code#4561)"})
	probeRestartWithRunningTask = declareProbe(ProbeInfo{Name: "restart-with-running-task", Group: catalog.RestartContinuation,
		Doc: "a server started while a delegated task of its predecessor was still running"})
	probeRestartContinuation = declareProbe(ProbeInfo{Name: "restart-continuation", Group: catalog.RestartContinuation,
		Doc: "a restart continuation resumed a thread (\"Continue where you left off.\")"})
	probeRetryCrossedCredentialReissue = declareProbe(ProbeInfo{Name: "retry-crossed-credential-reissue", Group: catalog.Orchestrator,
		Doc: "an agent retried a call under a different credential than its first attempt"})
	probeDeliverySuccessor = declareProbe(ProbeInfo{Name: "delivery-successor-reserved", Group: catalog.Orchestrator,
		Doc: "a parent run's cohort reserved a later delivery generation (results held while a delivery ran, or a new one after a stale delivery was released)"})
	probeDeliveryAcrossRestart = declareProbe(ProbeInfo{Name: "delivery-reservation-crossed-restart", Group: catalog.Orchestrator,
		Doc: "a server started with a delivery reservation of its predecessor still open (durable cohorts resumed)"})
	probeRetryCrossedServerRestart = declareProbe(ProbeInfo{Name: "retry-crossed-server-restart", Group: catalog.Orchestrator,
		Doc: "an agent retried a call after a server restart"})
	probeStaleCredentialRefused = declareProbe(ProbeInfo{Name: "stale-credential-refused", Group: catalog.MCPCredential,
		Doc: "a call with a revoked or expired credential was refused (401)"})
	probeCleanupAfterInPlaceRestart = declareProbe(ProbeInfo{Name: "cleanup-after-in-place-restart", Group: catalog.MCPCredential,
		Doc: "the credential clean-up of a provider runtime replaced in place (runtime options changed) ran while its session lived on under a new credential"})
	probeIssueAfterAccessWithdrawn = declareProbe(ProbeInfo{Name: "issue-after-browser-access-withdrawn", Group: catalog.MCPCredential,
		Doc: "a prepare issued a thread a credential without preview while the thread's earlier credential carried it (the deny path of PR #7083)"})
	probeQuietLiveCredential = declareProbe(ProbeInfo{Name: "live-session-quiet-past-idle-timeout", Group: catalog.MCPCredential,
		Doc: "a live provider session's agent called an MCP tool after 30 min (the idle era's timeout) without one on that credential"})
	probeTabActedAfterRotation = declareProbe(ProbeInfo{Name: "tab-acted-after-rotation", Group: catalog.PreviewTab,
		Doc: "a thread acted on its tab with a credential other than the one that opened it"})
	probeTabOnAnotherHostThanPin = declareProbe(ProbeInfo{Name: "tab-on-another-host-than-pin", Group: catalog.PreviewTab,
		Doc: "a preview call of a session pinned to one host addressed a tab another host holds (t3code#13051)"})
	probeHostWaitExhausted = declareProbe(ProbeInfo{Name: "host-wait-exhausted", Group: catalog.PreviewTab,
		Doc: "a host's waitFor ran out its whole budget and answered not found (t3code#12407)"})
	probeCallOnLeftThreadTab = declareProbe(ProbeInfo{Name: "call-on-left-thread-tab", Group: catalog.PreviewTab,
		Doc: "an automation call reached a tab whose thread the user had left in that window (t3code#6355)"})
	probeRequestToHalfOpenHost = declareProbe(ProbeInfo{Name: "request-to-half-open-host", Group: catalog.PreviewTab,
		Doc: "the broker sent a request to a host whose socket was half-open (a suspended mobile client, t3code#11167)"})
)

// ProbeCounter is a checker that counts probe hits; it never reports a
// violation.
type ProbeCounter struct {
	str sim.Strings // request keys
	// counts[i] and firsts[i] are the hits of probe probeSlots[name] == i
	// and the seq of the event that first hit it; extra and extraFirst
	// those of a probe declared after init (none in the tree).
	counts     []int
	firsts     []uint64
	extra      map[string]int
	extraFirst map[string]uint64
	// OnHit, when set, is told of every hit: the probe and the event's
	// sequence number.
	OnHit      func(probe string, seq uint64)
	tabCred    map[string]string // tab -> credential that opened it
	openTabs   map[string]int    // open agent tabs per thread (by open/close/sweep events); looked up only
	withTabs   int               // threads with openTabs > 0
	tabKeyMax  int               // the longest thread id openTabs ever held
	tabThread  map[string]string
	kb         []byte // a request key's scratch
	starts     int
	live       liveCredentials
	waitStart  map[string]time.Duration // task of a wait-mode delegate_task -> when it was accepted
	lastCall   map[string]time.Duration // credential -> last MCP call or issue
	claude     map[string]bool          // terminal session -> Claude
	draft      map[string]bool          // terminal session -> a draft is in the composer
	stopping   []string                 // threads whose session runtime stopped and is not yet projected stopped
	nested     nestedTasks              // tasks delegated by delegated children (cancel.go)
	suspended  map[string]bool          // preview host client -> suspended (half-open)
	batches    batchReuse               // create_threads answers per request (payload.go)
	schedules  scheduleRestarts         // scheduled fires and restarts (schedule.go)
	replaced   map[string]bool          // incarnations released by an in-place restart
	running    map[string]bool          // terminal backends spawned and not yet stopped
	runs       map[string]bool          // server runs started and not yet settled
	starting   map[string]bool          // terminal backends spawned whose start() has not settled
	backends   int                      // len(running)
	preview    map[string]bool          // thread -> its last issued credential carried preview
	delivering map[string]string        // terminal session -> backend a prompt delivery holds reserved
	page       pageLife                 // pending dialogs and withdrawn pages (pagelife.go)
	profiles   profileLife              // profile catalogues across restarts (profiles.go)
	native     nativeLife               // native desktop pages (nativeroots.go)
	popups     popupLife                // native popups (nativepopups.go)
	surfaces   surfaceLife              // captures past their deadline (surfaces.go)
	hosting    hostingLife              // agent navigations hosting prepares (hosting.go)

	// liveSessions counts provider sessions opened and not yet released.
	liveSessions int

	// tasks counts, per task id, the accepted delegate_task events of
	// delegated tasks not yet settled (an id accepted twice counts twice);
	// openTasks is their sum: what the length of a list of accepted ids,
	// every copy of an id dropped when it settles, would be.
	tasks     map[string]int
	openTasks int

	// firstReq is, per request (thread, tool and clientRequestId), its first
	// call: one map where three (target, credential, starts) were keyed
	// alike.
	firstReq map[string]firstRequest

	seq   uint64        // the event being observed (for hit)
	parts []sim.Checker // Parts, built once
}

// NewProbeCounter returns a counter with every probe at zero.
func NewProbeCounter() *ProbeCounter {
	return &ProbeCounter{counts: make([]int, len(probeSlots)), firsts: make([]uint64, len(probeSlots)), tabCred: map[string]string{},
		tabThread: map[string]string{}, lastCall: map[string]time.Duration{}, waitStart: map[string]time.Duration{}, firstReq: map[string]firstRequest{},
		claude: map[string]bool{}, draft: map[string]bool{}, running: map[string]bool{}, starting: map[string]bool{}, runs: map[string]bool{}, suspended: map[string]bool{}, replaced: map[string]bool{}, preview: map[string]bool{}, delivering: map[string]string{}}
}

// Name implements sim.Checker.
func (*ProbeCounter) Name() string { return "probes" }

// FirstHits returns, for every probe in Probes order, the sequence number
// of the event that first hit it (-1: never hit).
func (p *ProbeCounter) FirstHits() []int64 {
	out := make([]int64, len(Probes))
	for i, pr := range Probes {
		out[i] = -1
		if n, first := p.count(pr.Name); n > 0 {
			out[i] = int64(first)
		}
	}
	return out
}

// Hits returns the hit count of every probe, in Probes order.
func (p *ProbeCounter) Hits() []int {
	out := make([]int, len(Probes))
	for i, pr := range Probes {
		out[i], _ = p.count(pr.Name)
	}
	return out
}

// count returns probe name's hits and the seq of the event that first hit
// it.
func (p *ProbeCounter) count(name string) (int, uint64) {
	if i, ok := probeSlots[name]; ok {
		return p.counts[i], p.firsts[i]
	}
	return p.extra[name], p.extraFirst[name]
}

// probeSlots numbers the probes declared when the package was initialized
// (Probes' order then), for the counters' slices: one lookup in a map read
// only, where a hit updated two maps of its own. Read only, so counters on
// several goroutines share it.
var probeSlots map[string]int

func init() {
	probeSlots = make(map[string]int, len(Probes))
	for i, pr := range Probes {
		probeSlots[pr.Name] = i
	}
}

// Observe implements sim.Checker; it counts and never fails. It runs every
// part (Parts) on ev, in order.
func (p *ProbeCounter) Observe(ev *sim.Event) *sim.Violation {
	for _, part := range p.Parts() {
		part.Observe(ev)
	}
	return nil
}

// hit counts one hit of probe name at the current event.
func (p *ProbeCounter) hit(name string) {
	if i, ok := probeSlots[name]; ok {
		if p.counts[i] == 0 {
			p.firsts[i] = p.seq
		}
		p.counts[i]++
	} else {
		if p.extra == nil {
			p.extra, p.extraFirst = map[string]int{}, map[string]uint64{}
		}
		if p.extra[name] == 0 {
			p.extraFirst[name] = p.seq
		}
		p.extra[name]++
	}
	if p.OnHit != nil {
		p.OnHit(name, p.seq)
	}
}

// probePart is one of the counter's sub-observers as a checker of its
// own, so that the trace feeds it only the kinds it reads
// (sim.KindObserver). Some sub-observers also read every agent tool call
// whatever its kind: they are split in two parts at the same place, one fed
// its kinds and skipping agent events, one fed every event and reading only
// agent events (the whole sub-observer); an event goes to one of the two.
type probePart struct {
	p     *ProbeCounter
	kinds []string // nil: every kind
	// actors: 0 every actor, 1 only agent/ actors, 2 every other actor.
	actors  int
	observe func(ev *sim.Event)
}

// Name implements sim.Checker.
func (*probePart) Name() string { return "probes" }

// ObservedKinds implements sim.KindObserver.
func (pp *probePart) ObservedKinds() []string { return pp.kinds }

// ObservedActors implements sim.ActorObserver: a part of agents only is
// fed every agent event (and, declaring no kinds, nothing else).
func (pp *probePart) ObservedActors() []string {
	if pp.actors == 1 && pp.kinds == nil {
		return agentActors
	}
	return nil
}

// Observe implements sim.Checker; it counts and never fails.
func (pp *probePart) Observe(ev *sim.Event) *sim.Violation {
	if pp.actors != 0 && isToolEvent(ev) != (pp.actors == 1) {
		return nil
	}
	pp.p.seq = ev.Seq
	pp.observe(ev)
	return nil
}

// Parts returns the counter's sub-observers as checkers, each declaring
// the kinds it reads, in the order the counter runs them (which orders the
// hits within an event, so OnHit sees the same sequence): register them
// instead of the counter to feed each only its kinds. Every part reads and
// counts into p.
func (p *ProbeCounter) Parts() []sim.Checker {
	if p.parts != nil {
		return p.parts
	}
	hit := p.hit
	part := func(kinds []string, actors int, f func(ev *sim.Event)) {
		p.parts = append(p.parts, &probePart{p: p, kinds: kinds, actors: actors, observe: f})
	}
	// split adds f's two parts: its kinds for other actors, every event of
	// an agent.
	split := func(kinds []string, f func(ev *sim.Event)) {
		part(kinds, 2, f)
		part(nil, 1, f)
	}
	part(liveCredentialKinds, 0, p.live.observe)
	split([]string{"credential.issue"}, func(ev *sim.Event) { p.quietCredential(ev, hit) })
	part([]string{"delegate_task", "task.settled"}, 0, func(ev *sim.Event) { p.waitChild(ev, hit) })
	part([]string{"task.delegated", "task.settled", "task_cancel"}, 0, func(ev *sim.Event) { p.nested.observe(ev, hit) })
	part([]string{"create_threads"}, 0, func(ev *sim.Event) { p.batches.observe(ev, hit) })
	part([]string{"schedule.fire", "server.start"}, 0, func(ev *sim.Event) { p.schedules.observe(ev, hit) })
	part(nil, 1, func(ev *sim.Event) { toolCallRedelivered(ev, hit) })
	part([]string{"server.start", "page.dialog", "page.dialog-resolved", "tab.swept", "control.take", "tab.withdraw",
		"tab.connect", "page.load-failed", "t3_preview_close"}, 0, func(ev *sim.Event) { p.page.observe(ev, hit) })
	part([]string{"server.start", "browser.profiles", "tab.context", "tab.profile-unknown"}, 0,
		func(ev *sim.Event) { p.profiles.observe(ev, hit) })
	part([]string{"tab.native-unavailable", "tab.connect"}, 0, func(ev *sim.Event) { desktopAway(ev, hit) })
	part([]string{"native.close-canceled", "native.close-lost", "native.discarded", "native.probe"}, 0,
		func(ev *sim.Event) { p.native.observe(ev, hit) })
	part([]string{"native.popup-published", "native.popup-refused", "native.popup-unregistered", "native.close-canceled", "native.close"}, 0,
		func(ev *sim.Event) { p.popups.observe(ev, hit) })
	split([]string{"server.start", "surface.refused", "capture.abandoned", "request.deadline"},
		func(ev *sim.Event) { p.surfaces.observe(ev, hit) })
	part([]string{"server.start", "hosting.navigate", "hosting.navigated", "hosting.exchange", "control.take"}, 0,
		func(ev *sim.Event) { p.hosting.observe(ev, hit) })
	split(probeMainKinds, func(ev *sim.Event) { p.main(ev, hit) })
	part(probeTerminalKinds, 0, func(ev *sim.Event) { p.terminal(ev, hit) })
	return p.parts
}

// probeMainKinds are the kinds main reads from actors other than agents.
var probeMainKinds = []string{"server.start", "session.opened", "session.release", "credential.revoke", "delegate_task.wait",
	"delivery.offer", "delivery.resume", "credential.issue", "credential.cleanup", "control.take", "host.suspend",
	"native.resume", "provider-crash", "idle-release-deferred", "ingest.lost", "session.runtime", "session.projected",
	"message.duplicate", "run.start", "run.end", "ingest.replay", "instance.extra", "reconcile", "restart-continuation",
	"host.resume", "host.control-restore", "host.stall", "host.wait-exhausted", "host.request", "tab.swept"}

// probeTerminalKinds are the kinds terminal reads.
var probeTerminalKinds = []string{"spawn", "type", "send", "submit", "reap", "pty.detach", "exit.late", "recover", "stop",
	"start", "delivery", "kill", "exit", "renderer.reload", "pty.write", "input.misplaced", "pane.mount"}

// main counts the probes of the server, the broker and the provider
// session manager, and the agents' tool calls.
func (p *ProbeCounter) main(ev *sim.Event, hit func(string)) {
	switch ev.Kind {
	case "server.start":
		p.liveSessions = 0 // sessions die with their process
	case "session.opened":
		if ev.Actor == "psm" {
			p.liveSessions++
		}
	case "session.release":
		if ev.Actor == "psm" {
			p.liveSessions = max(0, p.liveSessions-1)
		}
	}
	if p.mainKind(ev, hit) {
		return
	}
	if isToolEvent(ev) {
		if ev.Outcome == "401 unknown_or_expired_token" {
			hit(probeStaleCredentialRefused)
		} else {
			p.toolCall(ev, hit)
		}
	}
}

// mainKind is main's part that depends on the event's kind: it reports
// whether one of its cases took ev (else an agent's event is a tool call).
// Each kind's cases are tried in order, the first that holds taking it.
func (p *ProbeCounter) mainKind(ev *sim.Event, hit func(string)) bool {
	switch ev.Kind {
	case "server.start":
		if p.starts > 0 && p.openTasks > 0 {
			hit(probeRestartWithRunningTask)
		}
		if len(p.stopping) > 0 {
			hit(probeRestartWhileStopping)
			p.stopping = p.stopping[:0]
		}
		p.starts++
		p.resetTabs()
	case "credential.revoke":
		if !strings.HasPrefix(ev.Get("cause"), "prepare:") {
			return false
		}
		hit(probeCapabilityChangeReissuedCredential)
	case "delegate_task.wait":
		if ev.Outcome != "waitTimedOut" {
			return false
		}
		hit(probeDelegateWaitTimedOut)
	case "delivery.offer":
		if ev.Get("generation") == "1" {
			return false
		}
		hit(probeDeliverySuccessor)
	case "delivery.resume":
		hit(probeDeliveryAcrossRestart)
	case "credential.issue":
		thread := ev.Get("thread")
		has := strings.Contains(ev.Get("caps"), "preview")
		if p.preview[thread] && !has {
			hit(probeIssueAfterAccessWithdrawn)
		}
		p.preview[thread] = has
	case "session.release":
		switch ev.Get("reason") {
		case "runtime_restart":
			p.replaced[ev.Get("incarnation")] = true
		case "idle_timeout":
			if p.tabOpenFor(ev.Get("providerSessionId")) {
				hit(probeIdleReleaseWithOpenTab)
			}
		default:
			return false
		}
	case "credential.cleanup":
		if !p.replaced[ev.Get("incarnation")] {
			return false
		}
		hit(probeCleanupAfterInPlaceRestart)
	case "control.take":
		if ev.Outcome != "ok" {
			return false
		}
		hit(probeHumanTookAgentTab)
	case "host.suspend":
		if ev.Actor == "fault" {
			if d, err := time.ParseDuration(ev.Get("for")); err == nil && d > 30*time.Minute && p.liveSessions > 0 {
				hit(probeHostSleptPastIdle)
			}
		} else {
			p.suspended[ev.Get("client")] = true
		}
	case "native.resume":
		if ev.Actor != "psm" || ev.Outcome != "resumed" {
			return false
		}
		hit(probeNativeResumed)
	case "provider-crash":
		if ev.Actor != "fault" || ev.Outcome != "first-turn-crash" {
			return false
		}
		hit(probeFirstNativeTurnCut)
	case "idle-release-deferred":
		if ev.Outcome == "delegated child" {
			hit(probeIdleReleaseDeferredForChild)
		} else {
			hit(probeIdleReleaseDeferredByPin)
		}
	case "ingest.lost":
		if ev.Actor != "server" || ev.Get("completions") == "" {
			return false
		}
		hit(probeRestartLostIngestion)
	case "session.runtime":
		if ev.Actor != "server" || ev.Outcome != "stopped" {
			return false
		}
		p.stopping = append(p.stopping, ev.Get("thread"))
	case "session.projected":
		if ev.Actor != "server" {
			return false
		}
		p.stopping = slices.DeleteFunc(p.stopping, func(t string) bool { return t == ev.Get("thread") })
	case "message.duplicate":
		if ev.Actor != "server" {
			return false
		}
		hit(probeMessageDeliveredTwice)
	case "run.start":
		if ev.Actor != "server" {
			return false
		}
		p.runs[ev.Get("run")] = true
	case "run.end", "ingest.replay":
		if ev.Actor != "server" {
			return false
		}
		delete(p.runs, ev.Get("run"))
	case "instance.extra":
		if ev.Actor != "server" || ev.Outcome == "" {
			return false
		}
		if len(p.runs) > 0 {
			hit(probeExtraInstanceOverRunningRun)
		}
	case "reconcile":
		if ev.Actor != "server" {
			return false
		}
		delete(p.runs, ev.Get("run"))
		if ev.Get("trigger") == "startup" {
			hit(probeRestartFoundRunningRun)
		}
	case "restart-continuation":
		hit(probeRestartContinuation)
	case "host.resume":
		delete(p.suspended, ev.Get("client"))
	case "host.control-restore", "host.stall":
		hit(probeCallOnLeftThreadTab)
	case "host.wait-exhausted":
		hit(probeHostWaitExhausted)
	case "host.request":
		if ev.Actor != "broker" {
			return false
		}
		if pin, holder := ev.Get("pin"), ev.Get("tab-host"); pin != "-" && holder != "-" && pin != holder {
			hit(probeTabOnAnotherHostThanPin)
		}
		if p.suspended[ev.Get("client")] {
			hit(probeRequestToHalfOpenHost)
		}
	case "tab.swept":
		p.closeTab(ev.Get("tab"))
	default:
		return false
	}
	return true
}

// quietCredential counts MCP calls on a live session's credential that
// come 30 min or more after its previous call (or its issue): the
// situation in which the idle era's registry (t3code#4463) has already
// expired the token the session still holds.
func (p *ProbeCounter) quietCredential(ev *sim.Event, hit func(string)) {
	switch {
	case ev.Kind == "credential.issue":
		p.lastCall[ev.Get("cred")] = ev.At
	case strings.HasPrefix(ev.Actor, "agent/") && ev.Get("cred") != "":
		cred := ev.Get("cred")
		if last, ok := p.lastCall[cred]; ok && ev.At-last >= idleEraTimeout {
			if _, live := p.live.holder(cred); live {
				hit(probeQuietLiveCredential)
			}
		}
		p.lastCall[cred] = ev.At
	}
}

// waitChild counts the children of wait-mode delegate_task calls that ran
// past a Node MCP client's 300 s header timeout: the situation in which an
// unbounded wait (t3code#11168) leaves its caller without a taskId.
func (p *ProbeCounter) waitChild(ev *sim.Event, hit func(string)) {
	switch {
	case isToolEvent(ev) && ev.Kind == "delegate_task" && ev.Outcome == "accepted":
		if task := resultField(ev.Get("result"), "task"); task != "" {
			if p.tasks == nil {
				p.tasks = map[string]int{}
			}
			p.tasks[task]++
			p.openTasks++
			if ev.Get("mode") == "wait" {
				p.waitStart[task] = ev.At
			}
		}
	case ev.Kind == "task.settled":
		if n, ok := p.tasks[ev.Get("task")]; ok {
			p.openTasks -= n
			delete(p.tasks, ev.Get("task"))
		}
		if start, ok := p.waitStart[ev.Get("task")]; ok {
			if ev.At-start >= nodeHeaderTimeout {
				hit(probeWaitChildOutlivedClient)
			}
			delete(p.waitStart, ev.Get("task"))
		}
	}
}

// firstRequest is what the probe counter keeps of a request's first call:
// the target it addressed, its credential and the server starts seen then.
type firstRequest struct {
	target target
	cred   string
	starts int
}

// nodeHeaderTimeout is a Node MCP client's header timeout, 300 s (undici's
// default; t3code#11168).
const nodeHeaderTimeout = 5 * time.Minute

// idleEraTimeout is the idle era's credential idle timeout, 30 min
// (McpSessionRegistry@96314411).
const idleEraTimeout = 30 * time.Minute

// resetTabs forgets every open tab (a server start: its tabs died).
func (p *ProbeCounter) resetTabs() {
	clear(p.openTabs)
	p.withTabs = 0
}

func (p *ProbeCounter) addTab(thread string, delta int) {
	if p.openTabs == nil {
		p.openTabs = map[string]int{}
	}
	before := p.openTabs[thread]
	p.openTabs[thread] = before + delta
	switch after := before + delta; {
	case before <= 0 && after > 0:
		p.withTabs++
	case before > 0 && after <= 0:
		p.withTabs--
	}
	p.tabKeyMax = max(p.tabKeyMax, len(thread))
}

// tabOpenFor reports whether a thread has an open agent tab and session
// is the shared Codex session or ends in the id of a thread with one: the
// suffixes of session no longer than any thread id held, looked up,
// instead of every thread's count walked.
func (p *ProbeCounter) tabOpenFor(session string) bool {
	if p.withTabs == 0 {
		return false
	}
	if session == "psess:codex" {
		return true
	}
	for i := max(0, len(session)-p.tabKeyMax); i <= len(session); i++ {
		if p.openTabs[session[i:]] > 0 {
			return true
		}
	}
	return false
}

func (p *ProbeCounter) closeTab(tab string) {
	if t, ok := p.tabThread[tab]; ok {
		p.addTab(t, -1)
		delete(p.tabThread, tab)
	}
}

func (p *ProbeCounter) toolCall(ev *sim.Event, hit func(string)) {
	switch {
	case ev.Kind == "preview_open" && ev.Outcome == "ok":
		if tab := ev.Get("tab"); !mapHas(p.tabCred, tab) {
			p.tabCred[tab] = ev.Get("cred")
			p.tabThread[tab] = ev.Get("thread")
			p.addTab(ev.Get("thread"), 1)
		}
	case acting(ev.Kind) && ev.Get("tab-thread") == ev.Get("thread"):
		// Its own tab resolved: the attempt counts whether it was allowed
		// (fixed) or refused as agentMismatch (reported).
		tab := ev.Get("tab")
		if opened, ok := p.tabCred[tab]; ok && opened != ev.Get("cred") {
			hit(probeTabActedAfterRotation)
		}
		if ev.Kind == "t3_preview_close" && ev.Outcome == "ok" {
			p.closeTab(tab)
		}
	}
	if kb, ok := appendRequestKey(p.kb[:0], ev); ok {
		cred := ev.Get("cred")
		p.kb = kb
		// Looked up as string(kb), which does not allocate; the key string
		// is built only for a request seen first.
		first, seen := p.firstReq[string(kb)]
		if !seen {
			p.firstReq[p.str.Bytes(kb)] = firstRequest{target: targetIn(ev), cred: cred, starts: p.starts}
			return
		}
		if !first.target.of(ev) {
			hit(probeKeyReusedForAnotherTarget)
		}
		if ev.Get("retry") == "true" {
			if first.cred != cred {
				hit(probeRetryCrossedCredentialReissue)
			}
			if first.starts != p.starts {
				hit(probeRetryCrossedServerRestart)
			}
		}
	}
}

func mapHas[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// terminal follows the desktop app's sessions: which are Claude, whether a
// draft sits in the composer, and pane remounts.
func (p *ProbeCounter) terminal(ev *sim.Event, hit func(string)) {
	switch ev.Actor {
	case "main":
		p.terminalMain(ev, hit)
	case "user":
		switch ev.Kind {
		case "type":
			if session := ev.Get("session"); session != "" {
				p.draft[session] = ev.Get("key") == "text"
			}
		case "send", "submit":
			if session := ev.Get("session"); session != "" {
				p.draft[session] = false
			}
		case "renderer.reload":
			if p.backends > 0 {
				hit(probeReloadOverLiveBackend)
			}
		}
	default:
		switch {
		case ev.Kind == "input.misplaced" && isToolEvent(ev):
			hit(probeInputBeforeComposer)
		case ev.Kind == "pane.mount" && strings.HasPrefix(ev.Actor, "pane/"):
			session := ev.Get("session")
			if p.delivering[session] != "" {
				hit(probeDeliveryCrossedLifecycle)
			}
			if p.claude[session] && p.draft[session] {
				hit(probeRemountWithClaudeDraft)
			}
		}
	}
}

// terminalMain is terminal for the events of main.
func (p *ProbeCounter) terminalMain(ev *sim.Event, hit func(string)) {
	switch ev.Kind {
	case "spawn":
		p.claude[ev.Get("session")] = ev.Get("kind") == "claude"
		if b := ev.Get("backend"); !p.running[b] {
			p.running[b] = true
			p.starting[b] = true
			p.backends++
		}
	case "reap":
		if ev.Outcome == "spared" || ev.Get("jobs") != "0" {
			hit(probeReapWithBackgroundJob)
		}
	case "pty.detach":
		if ev.Outcome == "ignored" || ev.Outcome == "unmatched" {
			hit(probeDetachWithoutReference)
		}
	case "exit.late":
		if e := ev.Get("entry"); e != "-" && e != ev.Get("backend") {
			hit(probeLateExitOverReplacement)
		}
	case "recover":
		if ev.Outcome == "joined" {
			hit(probeRecoverJoinedSpawn)
		}
	case "stop":
		if ev.Outcome == "post-start" {
			hit(probePostStartStopWhileBlocked)
		}
	case "delivery":
		switch ev.Outcome {
		case "reserved":
			p.delivering[ev.Get("session")] = ev.Get("backend")
		case "delivered", "failed":
			delete(p.delivering, ev.Get("session"))
		}
	case "start":
		if ev.Outcome == "live" {
			delete(p.starting, ev.Get("backend"))
			return
		}
		p.backendGone(ev, hit)
	case "kill":
		if ev.Outcome == "killed" {
			p.backendGone(ev, hit)
		}
	case "exit":
		p.backendGone(ev, hit)
	case "pty.write":
		if ev.Outcome == "held" {
			hit(probeInputBeforeComposer)
		}
	}
}

// backendGone is terminal for a backend that failed to start, was killed
// or exited.
func (p *ProbeCounter) backendGone(ev *sim.Event, hit func(string)) {
	backend := ev.Get("backend")
	if ev.Kind == "kill" && ev.Get("cause") == "close" && p.starting[backend] {
		hit(probeCloseDuringStart)
	}
	if ev.Kind != "kill" {
		delete(p.starting, backend)
	}
	if b := p.delivering[ev.Get("session")]; b != "" && b == backend {
		hit(probeDeliveryCrossedLifecycle)
	}
	if p.running[backend] {
		delete(p.running, backend)
		p.backends--
	}
}
