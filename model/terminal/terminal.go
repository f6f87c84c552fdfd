// Package terminal models the agent-code desktop app (Juliusolsson05/agent-code)
// around its issue #596: a terminal-mode agent killed 30 s after a pane
// remount (MODEL.md Part C, report 003_9aa3504d0982c1a7).
//
// The app is two processes joined by IPC. The main process (Manager) owns the
// provider backends (Backend: Claude, Codex or OpenCode behind a headless PTY),
// recovers them with the dispositions adopted, spawned or joined, kills them
// only with a kind+cwd ownership proof, publishes their input readiness with a
// global revision, and counts PTY attaches. The renderer (Renderer) owns the
// session runtimes, the single-flight wake (ensureSessionLive) with its 30 s
// readiness wait, and the panes: AgentTerminalLeaf for terminal view mode, a
// feed leaf for feed view mode, laid out in tabs, Spotlight, Reader and
// Settings, plus a debug inline terminal. Every renderer <-> main call crosses
// a FIFO IPC pipe with a drawn latency.
//
// Components are plain structs in the manner of etcd raft's RawNode: inputs
// are method calls made by kernel events, outputs are trace events and
// deliveries scheduled through the kernel. Nothing here starts a goroutine or
// reads the wall clock.
//
// Trace vocabulary (actors, kinds, attributes) is what the checkers in
// orchsim/invariants read; docs/terminal.md lists it.
package terminal

import (
	"fmt"
	"strconv"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
)

// Switches of report 003 (MODEL.md Part 0) and this package's own fix.
const (
	// GuardedWake is PR #597 (391bf113, 4739caac): a pane mount wakes only a
	// session that is not started or has exited; no readiness wait for an
	// adopted live backend; a readiness timeout kills only a backend this
	// wake spawned; the pane attaches first, detaches only what attached, and
	// a late attach releases itself.
	GuardedWake model.Switch = "guarded-wake"
	// KeepPTYSize closes the follow-up #597 left open: a restore size belongs
	// to whoever set it. The spawn default is the size main's headless
	// screen renders at, which only feed mode reads; a session in terminal
	// view mode has its PTY size owned by its AgentTerminalLeaf (attaches say
	// which mode they serve), so a detach never resizes it and the next leaf
	// sets its own on attach.
	KeepPTYSize model.Switch = "keep-pty-size"
	// SpawnOwnsDeadline is orchsim's own fix for the cost #597 accepted
	// (MODEL.md C7): the readiness deadline belongs to the spawn, not to
	// whichever wake adopted it. The main process arms a 30 s deadline when
	// a spawned backend goes live; if by then the backend has painted neither
	// its composer nor a prompt, main kills that generation and tells the
	// renderer it failed to start, so the pane offers Retry. A backend that
	// has reached an interactive screen is never touched by it, so a healthy
	// adopted agent holding a draft or a permission prompt survives.
	SpawnOwnsDeadline model.Switch = "spawn-owns-deadline"
	// AtomicSpawnClaim is the spawn reservation of agent-code PR #353
	// (2523e21d, "reserve before any provider/tmux await") that PR #548 made
	// recover's synchronously published claim: a session id's spawn is owned
	// before anything awaits, and a concurrent compatible request joins it
	// (sessionManager.recover.test.ts, sessionManager.wake.test.ts "refuses
	// to reuse an id while the first backend spawn is still starting").
	// Off is im-ian/acorn#37's backend: a check (no entry, no claim), then
	// provider construction awaits, then the insert, so two requests inside
	// that window both pass the check and fork two PTYs for one session id,
	// the second insert overwriting the first. acorn's merged fix was in its
	// frontend only (disposed guards after each await); BUGS.md's invariant
	// asks for the backend reservation, which is agent-code's own fix, so
	// that is what on models. In this app the two requests are the boot
	// rehydrate and a terminal leaf's attach-first wake (the attach finds no
	// entry yet); a StrictMode double mount is single-flighted by the
	// renderer's wake and never reaches main twice. The window exists only
	// for a session whose construction awaits: one with built-in MCP
	// domains (Meta.MCP, a swarm dimension).
	AtomicSpawnClaim model.Switch = "atomic-spawn-claim"
	// AdoptBeforeSpawn is agent-code PR #548 (f0a7792b, "Make session
	// recovery main-owned and atomic"): a renderer that reloads over a live
	// main process asks main's recover for every restored leaf, so a live
	// backend is adopted and a starting one joined; only main decides to
	// spawn. Off is stablyai/orca#11006's cold restore, which agent-code
	// had too (docs/superpowers/plans/2026-07-16-session-recovery-
	// reconciliation.md: "rehydrateWorkspace() bypasses it and calls
	// spawnSession() directly... A renderer-only reload can therefore
	// create a second provider process... while the first process remains
	// alive"): the reloaded renderer has lost its restored candidates and
	// cold-spawns each visible leaf, beside the backend main still holds.
	// In orca the drop is an SSH transport's and the authority a relay; in
	// agent-code it is a renderer reload (or crash) and main.
	AdoptBeforeSpawn model.Switch = "adopt-before-spawn"
	// HoldInputUntilComposer is the fix of Untrivial-ai/agent-orchestrator#3023
	// (and anthropics/claude-code#22936): "input-ready" is its own event,
	// not "process started". agent-code's AgentTerminalLeaf writes every
	// keystroke to the PTY as soon as its attach has landed
	// (AgentTerminalLeaf.tsx@428aed2d: term.onData -> sendInput once
	// attachedBackfillDone, and the pending queue flushed at attach), and
	// SessionManager.write hands it to the provider whatever its screen
	// shows, so keys typed into a freshly spawned agent before its TUI has
	// painted the composer land in the output area and are lost. With the
	// fix main holds the writes of a backend that has not painted its
	// composer (starting or booting) and delivers them in order when it
	// does; a backend that stops first has them visibly rejected. Upstream
	// has not merged such a gate.
	HoldInputUntilComposer model.Switch = "hold-input-until-composer"
	// DetachOwnReference is the fix of QwenLM/qwen-code#7385 (PR #7386):
	// main keeps its agent PTY attach count as a ledger of attach
	// references, one per (client, attach), and a detach releases only a
	// reference the detaching client holds; any other detach (the same
	// client twice, a client that never attached, one whose attach never
	// landed) is ignored. Off, detachAgentPty(sessionId) is agent-code's
	// (sessionManager.ts@428aed2d): it carries no client and decrements, or
	// at 1 deletes, whatever count it finds, so a detach without a
	// reference takes another consumer's, stops its live bytes and fires
	// the restore resize under it. agent-code's own unmatched detacher is
	// the debug inline terminal (AgentInlineTerminal.tsx@428aed2d: attach
	// once, never retried, and a cleanup that detaches unconditionally);
	// the double detach and the spawn owner's detach of qwen-code's bridge
	// have no counterpart in agent-code, whose wakes never detach.
	DetachOwnReference model.Switch = "detach-own-reference"
	// ReleaseGoneRendererRefs is the fix of NousResearch/hermes-agent#110849's
	// family in agent-code: a consumer that vanishes without its clean-up
	// must not keep its PTY attach references. Off, main is agent-code's
	// (sessionManager.ts@428aed2d): agentPtyAttachCounts is keyed by session
	// alone and nothing resets it when a renderer reloads or crashes (its
	// panes go without running their detaches), so every reference the old
	// renderer held stays counted: the count never returns to 0, the restore
	// resize of the last detach never fires and main keeps forwarding raw
	// bytes to nobody. On, main releases the gone renderer's references (as
	// its editorFsWatch and lsp owners do on 'destroyed' and
	// 'render-process-gone'). Upstream has not merged such a release.
	ReleaseGoneRendererRefs model.Switch = "release-gone-renderer-refs"
	// IdleSparesBackgroundWork is the fix of AgentSystemLabs/nebula#78
	// (PR #80, "The idle reaper spares an agent whose backgrounded tool
	// call is still running, and restarts its idle clock when the job
	// ends"). Off, the detached-idle reaper's only exemptions are a
	// running turn and a prompt (nebula's RUNNING / NEEDS FEEDBACK), so a
	// session detached with a background job running past the 5 min
	// timeout is killed with its whole process tree, job included. The
	// reaper itself is nebula's: agent-code's main has none, so the model
	// runs it only in worlds that ask (Config.DetachedIdleTimeout).
	IdleSparesBackgroundWork model.Switch = "idle-spares-background-work"
	// ExitOwnedByGeneration is agent-code PR #548 (f0a7792b; its commit
	// 99f52138 "harden session recovery reconciliation"): every listener
	// of a backend checks ownsEntry() (sessions.get(id) === this entry)
	// and cleanupSessionState takes the expected entry, because "stable
	// local ids are deliberately reused after a failed provider start. The
	// old wrapper may still emit a late exit/readiness event after its
	// replacement is registered. An id-only delete would let generation A
	// ... erase B from the registry" (sessionManager.ts@428aed2d). Off is
	// sessionManager.ts@99f52138^: the exit listener sets input readiness,
	// emits removed and exit {sessionId, exitCode} (no backend) and
	// deletes whatever entry the id holds, so the late exit of a failed or
	// cancelled start lands on the retry that replaced it: the replacement
	// leaves the registry while its process runs on, and the renderer
	// shows it exited. The same family as crynta/terax-ai#132 (a respawn
	// keeps the old shell's pending exit, so onExit fires on the new one)
	// and RunMaestro/Maestro#1302 (a killed process's exit is attributed
	// to its same-id replacement); Maestro#1339's exit that never arrives
	// is not modelled.
	ExitOwnedByGeneration model.Switch = "exit-owned-by-generation"
)

// LateExitIgnoredWhileStarting is a plausible wrong fix of
// ExitOwnedByGeneration: main drops a late exit only while a spawn of the
// id is still starting (a claim in flight), "the replacement's start owns
// the id", so an exit arriving after the replacement settled live still
// removes it.
const LateExitIgnoredWhileStarting model.Mutant = "late-exit-ignored-while-starting"

// DeliverWithoutReadiness is a plausible wrong prompt delivery: the
// Claude and Codex protocols write the prompt without awaiting the
// provider's readiness (Codex's pre-#211 path), so a Send to a TUI that
// shows a permission prompt or has not painted its composer loses its
// bytes.
const DeliverWithoutReadiness model.Mutant = "deliver-without-readiness"

// EnterBeforeAbsorbed is the optimization Claude 2.1.209 invalidated:
// Claude's delivery writes Enter right after the text instead of waiting
// for the composer to show it, so the Enter lands in the paste accumulator
// and is swallowed.
const EnterBeforeAbsorbed model.Mutant = "enter-before-absorbed"

// AdoptSettledOnly is the mutant of AdoptBeforeSpawn: the reloaded
// renderer's restore adopts a settled live backend but cold-spawns when
// none is settled, ignoring a spawn still in flight (a claim), so a reload
// during a start forks a second backend.
const AdoptSettledOnly model.Mutant = "adopt-settled-only"

// ReloadDropsClaims is a wrong fix in main for the same reload (a main
// that cleans up after a renderer that went away): a reload makes main
// forget the spawns still in flight, their claims and registry entries,
// as requests of a renderer that no longer exists, without stopping the
// backends starting under them; the new renderer's recover then finds
// nothing and spawns a second backend beside the first. It needs a reload
// while a spawn is in flight.
const ReloadDropsClaims model.Mutant = "reload-drops-claims"

// NeverKillOnTimeout is the mutant of report 003: a readiness timeout never
// kills, not even a backend the wake spawned (and the spawn deadline, when
// on, never fires), so a spawned backend that never becomes ready is never
// replaced.
const NeverKillOnTimeout model.Mutant = "never-kill-on-timeout"

// HoldUntilStarted is the plausible wrong fix of HoldInputUntilComposer:
// main holds input only until the process has started (start() resolved),
// the "process started" signal claude-code#22936 shows is not readiness, so
// keys still reach a TUI that has not painted its composer.
const HoldUntilStarted model.Mutant = "hold-until-started"

// DetachReleasesOldest is a plausible wrong fix of DetachOwnReference: main
// keeps the ledger and ignores a detach when it is empty, but a detach by a
// client without a reference of its own releases the oldest one, "so the
// count stays equal to the ledger".
const DetachReleasesOldest model.Mutant = "detach-releases-oldest"

// SparesOnlyWhileRunning is a plausible wrong fix of
// IdleSparesBackgroundWork: the reaper spares a session while a job runs
// but does not restart the idle clock when it ends, so the next sweep
// reaps at once a session whose TUI has been quiet through the job.
const SparesOnlyWhileRunning model.Mutant = "spares-only-while-running"

func init() {
	model.RegisterSwitch(model.SwitchInfo{Name: GuardedWake, Group: catalog.TerminalSession,
		Reports:    []catalog.Report{"Juliusolsson05/agent-code#596"},
		Source:     "seed report 003_9aa3504d0982c1a7, fix PR #597",
		Scenario:   "terminal-remount",
		Invariants: []string{"live-agent-survives-remount", "remount-attaches-promptly", "pty-attach-balanced"},
		Reported:   "every pane mount wakes the session; readiness wait after any not-ready snapshot; kill on timeout whatever the disposition; attach chained behind the wake; unconditional detach",
		Fixed:      "wake only if not started or exited; no wait for adopted+live; kill only spawned; attach first, detach only what attached, late attach releases itself",
		Upstream:   "agent-code PR #597 (391bf113, 4739caac)",
		Script:     "scenarios/testdata/terminal/report_spotlight_draft.txt",
		Mechanism:  "model/terminal: pane mount wake, readiness wait and attach"})
	model.RegisterSwitch(model.SwitchInfo{Name: KeepPTYSize, Group: catalog.TerminalSession,
		Reports:    []catalog.Report{"Juliusolsson05/agent-code#596"},
		Source:     "seed report 003_9aa3504d0982c1a7 (the 120x40 snap, left open upstream by PR #597)",
		Scenario:   "terminal-remount",
		Invariants: []string{"pty-size-kept"},
		Reported:   "last detach resizes the PTY to the restore size captured at first attach (spawn default 120x40)",
		Fixed:      "a restore size belongs to whoever set it: a detach never resizes the PTY of a session in terminal view mode (its leaf owns the size); the spawn default is restored only for the headless (feed) screen",
		Script:     "scenarios/testdata/terminal/snap_120x40.txt",
		Mechanism:  "model/terminal: restore size on last detach"})
	model.RegisterSwitch(model.SwitchInfo{Name: SpawnOwnsDeadline, Group: catalog.TerminalSession,
		Reports:    []catalog.Report{"Juliusolsson05/agent-code#596"},
		Source:     "seed report 003_9aa3504d0982c1a7 (MODEL.md C7: the cost PR #597 accepted; orchsim's own fix)",
		Scenario:   "terminal-remount",
		Invariants: []string{"wedged-spawn-replaced"},
		Reported:   "a spawned backend that wedges before its composer and is adopted by a later wake is left started and not ready, with no Retry",
		Fixed:      "main arms a 30 s deadline per spawned generation; a backend that painted neither composer nor prompt by then is killed and reported failed, so the pane offers Retry",
		Script:     "scenarios/testdata/terminal/wedged_adopted.txt",
		Mechanism:  "model/terminal: spawned backend readiness deadline"})
	model.RegisterSwitch(model.SwitchInfo{Name: AtomicSpawnClaim, Group: catalog.TerminalSession,
		Reports:    []catalog.Report{"im-ian/acorn#37"},
		Source:     "im-ian/acorn PR #37 (root-cause trace); agent-code src/main/sessionManager.ts@428aed2d recover() and spawnWithId, 2523e21d sessionManager.wake.test.ts",
		Scenario:   "terminal-remount",
		Invariants: []string{"one-agent-process-per-session"},
		Reported:   "recover checks for an entry or claim, awaits provider construction (session-scoped MCP registration, 50 ms-1 s), then publishes its claim and inserts the entry without checking again: two requests in the window fork two backends for one session id",
		Fixed:      "the claim is published before any await; a concurrent compatible request joins it, an entry is adopted",
		Upstream:   "agent-code PR #353 (2523e21d) and PR #548 (f0a7792b); acorn PR #37 (frontend guards)",
		Script:     "scenarios/testdata/terminal/spawn_race.txt",
		Mechanism:  "model/terminal: recover's spawn reservation"})
	model.RegisterSwitch(model.SwitchInfo{Name: HoldInputUntilComposer, Group: catalog.TerminalSession,
		Reports:    []catalog.Report{"Untrivial-ai/agent-orchestrator#3023", "anthropics/claude-code#22936"},
		Source:     "agent-code src/renderer/src/workspace/tile-tree/AgentTerminalLeaf.tsx and src/main/sessionManager.ts write()@428aed2d; agent-orchestrator#3023",
		Scenario:   "terminal-remount",
		Invariants: []string{"input-lands-in-composer"},
		Reported:   "main writes keystrokes to the PTY as soon as they arrive: keys typed before the TUI paints its composer land in the output area and are lost",
		Fixed:      "main holds the writes of a backend that has not painted its composer and delivers them in order when it does; a backend that stops first has them rejected, visibly",
		Script:     "scenarios/testdata/terminal/type_before_composer.txt",
		Mechanism:  "model/terminal: main's PTY write path before the composer paints"})
	model.RegisterSwitch(model.SwitchInfo{Name: DetachOwnReference, Group: catalog.TerminalSession,
		Reports:    []catalog.Report{"QwenLM/qwen-code#7385"},
		Source:     "qwen-code PR #7386; agent-code src/main/sessionManager.ts detachAgentPty and src/renderer/src/features/debug/ui/AgentInlineTerminal.tsx@428aed2d",
		Scenario:   "terminal-remount",
		Invariants: []string{"pty-detach-releases-own-reference", "pty-attach-balanced"},
		Reported:   "detach carries no client: every detach decrements the session's attach count (at 1 deletes it), so the debug inline terminal's unconditional detach releases another consumer's reference",
		Fixed:      "main keeps a ledger of attach references per (client, attach); a detach releases only one the detaching client holds, any other is ignored",
		Script:     "scenarios/testdata/terminal/debug_unmatched_detach.txt",
		Mechanism:  "model/terminal: main's agent PTY attach ledger and detach"})
	model.RegisterSwitch(model.SwitchInfo{Name: ReleaseGoneRendererRefs, Group: catalog.TerminalSession,
		Reports:    []catalog.Report{"NousResearch/hermes-agent#110849"},
		Source:     "agent-code src/main/sessionManager.ts attachAgentPty/detachAgentPty and src/main/ipc/session.ts@428aed2d (no per-sender release), against src/main/ipc/editorFsWatch.ts's release on 'destroyed'; hermes-agent#110849",
		Scenario:   "terminal-remount",
		Invariants: []string{"pty-attach-balanced"},
		Reported:   "a renderer that reloads or crashes takes its panes without their detaches, and main keeps every PTY reference they held: the count never returns to 0 and bytes are forwarded to nobody",
		Fixed:      "main releases a gone renderer's PTY references when it reloads, without a restore resize; the new renderer's panes count afresh",
		Script:     "scenarios/testdata/terminal/reload_keeps_refs.txt",
		Mechanism:  "model/terminal: main's agent PTY attach ledger across a renderer reload"})
	model.RegisterSwitch(model.SwitchInfo{Name: IdleSparesBackgroundWork, Group: catalog.TerminalSession,
		Reports:    []catalog.Report{"AgentSystemLabs/nebula#78"},
		Source:     "nebula PR #80 (reap_idle_sessions, session_idle_timeout 5m); modelled in agent-code's main process",
		Scenario:   "terminal-remount",
		Invariants: []string{"no-reap-of-live-work"},
		Reported:   "the detached-idle reaper spares only a running turn or a prompt: a detached agent whose background job runs past 5 min idle is killed with the job",
		Fixed:      "the reaper spares a session while a background job runs and restarts its idle clock when the last one ends",
		Script:     "scenarios/testdata/terminal/reap_background_job.txt",
		Mechanism:  "model/terminal: main's detached-idle reaper and its idle clock"})
	model.RegisterSwitch(model.SwitchInfo{Name: ExitOwnedByGeneration, Group: catalog.TerminalSession,
		Reports:    []catalog.Report{"crynta/terax-ai#132", "RunMaestro/Maestro#1302"},
		Source:     "agent-code src/main/sessionManager.ts@99f52138^ (id-only exit listener and cleanupSessionState) against @428aed2d (ownsEntry, generation-owned cleanup); terax-ai PR #132; Maestro PR #1302",
		Scenario:   "terminal-remount",
		Invariants: []string{"exit-ends-own-generation"},
		Reported:   "the exit listener of a backend acts on the session id: a failed or cancelled start's late exit removes the retry that replaced it from the registry and tells the renderer the session exited, while the replacement's process runs on",
		Fixed:      "every listener checks that its entry still owns the id (ownsEntry) and clean-up deletes only the expected entry: a superseded backend's late exit changes nothing",
		Upstream:   "agent-code PR #548 (f0a7792b; 99f52138)",
		Mechanism:  "model/terminal: late exits of a failed or cancelled start's wrapper (Config.LateExitMax)"})
	model.RegisterMutant(model.MutantInfo{Name: LateExitIgnoredWhileStarting, Group: catalog.TerminalSession,
		Doc:        "main drops a late exit only while a spawn of the same id is still starting; one arriving after the replacement went live still removes it",
		Scenario:   "terminal-remount",
		Invariants: []string{"exit-ends-own-generation"}})
	model.RegisterMutant(model.MutantInfo{Name: SparesOnlyWhileRunning, Group: catalog.TerminalSession,
		Doc:        "the reaper spares a running background job but does not restart the idle clock when it ends",
		Scenario:   "terminal-remount",
		Invariants: []string{"no-reap-of-live-work"}})
	model.RegisterMutant(model.MutantInfo{Name: DetachReleasesOldest, Group: catalog.TerminalSession,
		Doc:        "a detach by a client without a reference releases the ledger's oldest reference instead of being ignored",
		Scenario:   "terminal-remount",
		Invariants: []string{"pty-detach-releases-own-reference"}})
	model.RegisterMutant(model.MutantInfo{Name: HoldUntilStarted, Group: catalog.TerminalSession,
		Doc:        "main holds input only until start() resolves (process started), not until the composer paints",
		Scenario:   "terminal-remount",
		Invariants: []string{"input-lands-in-composer"}})
	model.RegisterSwitch(model.SwitchInfo{Name: AdoptBeforeSpawn, Group: catalog.TerminalSession,
		Reports:    []catalog.Report{"stablyai/orca#11006"},
		Source:     "stablyai/orca#11006 (runtime incident and source analysis); agent-code rehydrate.ts@f0a7792b^ and docs/superpowers/plans/2026-07-16-session-recovery-reconciliation.md, sessionManager.ts@428aed2d recover()",
		Scenario:   "terminal-remount",
		Invariants: []string{"one-agent-process-per-session"},
		Reported:   "a renderer that reloads over a live main process has no restored candidates and cold-spawns each visible leaf (spawnSession), beside the backend main still holds",
		Fixed:      "the reloaded renderer recovers every leaf through main's recover: a live backend is adopted, a starting one joined, and only main decides to spawn",
		Upstream:   "agent-code PR #548 (f0a7792b)",
		Script:     "scenarios/testdata/terminal/reload_cold_restore.txt",
		Mechanism:  "model/terminal: renderer reload and its restore path"})
	model.RegisterMutant(model.MutantInfo{Name: AdoptSettledOnly, Group: catalog.TerminalSession,
		Doc:        "the reloaded renderer's restore adopts a settled live backend but cold-spawns when none is settled, ignoring a spawn in flight",
		Scenario:   "terminal-remount",
		Invariants: []string{"one-agent-process-per-session"},
		// A reload is the user's habit, a swarm dimension, and the kill needs
		// it while a visible spawn is in flight (first at seed 92 under
		// swarm); the commit strategy reloads at the claim (spawn.claimed),
		// and kills it within 1-2 seeds.
		GateStrategy: "commit"})
	model.RegisterMutant(model.MutantInfo{Name: ReloadDropsClaims, Group: catalog.TerminalSession,
		Doc:        "a renderer reload makes main forget the spawns in flight (claims and registry entries) without stopping their backends, so the new renderer's recover spawns a second one",
		Scenario:   "terminal-remount",
		Invariants: []string{"one-agent-process-per-session"}, GateStrategy: "commit"})
	// Both need worlds where feed Sends run the delivery protocol: the
	// prompt-protocol swarm dimension.
	model.RegisterMutant(model.MutantInfo{Name: DeliverWithoutReadiness, Group: catalog.TerminalSession,
		Doc:        "prompt delivery writes without awaiting the provider's readiness: bytes sent to a TUI showing a prompt, or not yet painted, are lost",
		Scenario:   "terminal-remount",
		Invariants: []string{"prompt-delivery-lands-in-composer"},
		GateSeeds:  200, GateStrategy: "swarm"})
	model.RegisterMutant(model.MutantInfo{Name: EnterBeforeAbsorbed, Group: catalog.TerminalSession,
		Doc:        "Claude's delivery writes Enter right after the text, before the composer shows it: the Enter is swallowed into the paste",
		Scenario:   "terminal-remount",
		Invariants: []string{"prompt-delivery-lands-in-composer"},
		GateSeeds:  200, GateStrategy: "swarm"})
	model.RegisterMutant(model.MutantInfo{Name: NeverKillOnTimeout, Group: catalog.TerminalSession,
		Doc:        "a readiness timeout never kills, not even a spawned backend: a backend that never becomes ready is never replaced",
		Scenario:   "terminal-remount",
		Invariants: []string{"wedged-spawn-replaced"}})
}

// Constants of agent-code (MODEL.md C2; source files in Juliusolsson05/agent-code).
const (
	// ReadinessTimeout is waitForSessionInputReady's timeout
	// (src/renderer/src/workspace/hook/actions/session.ts).
	ReadinessTimeout = 30 * time.Second
	// ReadinessPoll is waitForSessionInputReady's poll interval (same file).
	ReadinessPoll = 50 * time.Millisecond
	// PendingInputCap is the renderer's cap on keystrokes queued before
	// attach, in chunks; the oldest is dropped
	// (src/renderer/src/workspace/tile-tree/AgentTerminalLeaf.tsx).
	PendingInputCap = 256
	// BacklogCap is the renderer's cap on PTY data chunks queued before
	// attach (same file).
	BacklogCap = 256
	// ReplayBufferCap is AGENT_PTY_BUFFER_CAP, the agent raw PTY replay
	// buffer in string length; the tail is kept (src/main/sessionManager.ts).
	ReplayBufferCap = 512 * 1024
	// ClaudeReplayQuiesce is the Claude transcript replay quiesce timer
	// (src/providers/claude/runtime/claudeSession.ts).
	ClaudeReplayQuiesce = 250 * time.Millisecond
	// SpawnDeadline is how long after going live a spawned backend has to
	// paint its composer or a prompt under SpawnOwnsDeadline; it reuses the
	// readiness wait's 30 s so the fix replaces a wedged spawn exactly when
	// the pre-#597 self-heal did.
	SpawnDeadline = ReadinessTimeout
	// ConstructMin and ConstructMax bound provider construction before the
	// first await of an unreserved spawn (AtomicSpawnClaim off): provider
	// wrapper, session-scoped MCP registration, tmux sessionExists (model
	// choice; agent-code measures it only as session.spawn spans).
	ConstructMin = 50 * time.Millisecond
	ConstructMax = time.Second
)

// SpawnDefault is the PTY size a backend spawns with; no renderer caller
// passes cols/rows (MODEL.md C2).
var SpawnDefault = Size{Cols: 120, Rows: 40}

// Pane sizes of the model's window (model choices, not upstream constants):
// the editor's tile area is split evenly between a tab's leaves; Spotlight
// and the debug inline terminal have fixed sizes.
var (
	EditorArea    = Size{Cols: 180, Rows: 48}
	SpotlightArea = Size{Cols: 200, Rows: 50}
	DebugArea     = Size{Cols: 100, Rows: 16}
)

// Kind is a provider kind (SessionMeta.kind).
type Kind string

// Provider kinds. Codex and OpenCode latch readiness at the first ready
// composer; Claude's readiness drops whenever a draft or prompt is on screen.
const (
	Codex    Kind = "codex"
	Claude   Kind = "claude"
	OpenCode Kind = "opencode"
)

// Kinds lists the provider kinds, simplest (a latch) first.
var Kinds = []Kind{Codex, Claude, OpenCode}

// ViewMode is agentViewMode: how the renderer shows an agent session.
type ViewMode string

// View modes: a feed leaf (no PTY, Send button) or an AgentTerminalLeaf.
const (
	Feed     ViewMode = "feed"
	Terminal ViewMode = "terminal"
)

// Size is a PTY or pane size in character cells.
type Size struct{ Cols, Rows int }

// String renders the size as COLSxROWS.
func (s Size) String() string { return fmt.Sprintf("%dx%d", s.Cols, s.Rows) }

// sizeStr is s.String(), built by the run's sim.Strings.
func sizeStr(e *model.Env, s Size) string {
	var buf [48]byte
	b := strconv.AppendInt(buf[:0], int64(s.Cols), 10)
	return e.Str().Bytes(strconv.AppendInt(append(b, 'x'), int64(s.Rows), 10))
}

// Meta is a session's durable metadata (SessionMeta in workspace.json) plus
// where the workspace shows it.
type Meta struct {
	ID     string
	Kind   Kind
	Cwd    string
	Mode   ViewMode
	Tab    int
	Resume bool
	// MCP: the session has built-in MCP domains (builtInMcpDomains), so
	// main registers its session-scoped MCP server while constructing the
	// provider, before start(): the await an unreserved spawn
	// (AtomicSpawnClaim off) checks across. Without it construction has
	// nothing to await and the check and insert are one step.
	MCP bool
	// editorKey is the key of the session's editor leaf ("editor/TAB/ID",
	// Renderer.appendSlots) for editorKeyTab and editorKeyID, built once
	// instead of on every render.
	editorKey    string
	editorKeyTab int
	editorKeyID  string
}

// Failure texts the renderer shows (pane toast, processError).
const (
	MsgTimedOut      = "Timed out waiting for agent to become ready for input"
	MsgExitedEarly   = "Agent exited before it became ready for input"
	MsgFailedToStart = "Agent failed to start"
	MsgStartFailed   = "Session failed to start. Check provider setup and retry."
	MsgNotAvailable  = "Agent backend is not available to attach"
	MsgSpawnDeadline = "Agent did not reach its composer within 30s and was stopped; Retry starts a fresh one"
	MsgExited        = "Agent exited"
	MsgUnsupported   = "Unsupported agent kind"
	MsgOwnership     = "Session is owned by another backend"
	MsgCancelled     = "Session start was cancelled"
)

// Recovery result codes (SessionRecoverResult.code).
const (
	CodeStartFailed       = "start-failed"
	CodeOwnershipConflict = "ownership-conflict"
	CodeCancelled         = "cancelled"
)

// Dispositions of a successful recover. A joined caller is told spawned
// (sessionManager.recover.test.ts: both concurrent callers resolve spawned);
// main traces the join itself.
const (
	Adopted = "adopted"
	Spawned = "spawned"
	Joined  = "joined"
)

// Lifecycles of a backend snapshot: live if a registry entry exists, else
// spawning. The entry is inserted before start() resolves, so live does not
// mean healthy.
const (
	Live     = "live"
	Spawning = "spawning"
)

// sameID is a == b for the ids and keys the model scans for ("s3",
// "editor/0/s3"): those of a workspace differ mostly in their last byte, so
// it is compared before the bytes are (a mismatch of equal length costs a
// call otherwise, and the renderer scans on every poll, act and attach).
func sameID(a, b string) bool {
	n := len(a)
	return n == len(b) && (n == 0 || a[n-1] == b[n-1]) && a == b
}

func b2s(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// fmtBytes renders n bytes as "512B" or "3.4KB" (tenths truncated).
func fmtBytes(e *model.Env, n int) string {
	var buf [32]byte
	var b []byte
	if n >= 1024 {
		b = strconv.AppendInt(buf[:0], int64(n/1024), 10)
		b = append(b, '.')
		b = strconv.AppendInt(b, int64(n%1024*10/1024), 10)
		b = append(b, "KB"...)
	} else {
		b = append(strconv.AppendInt(buf[:0], int64(n), 10), 'B')
	}
	return e.Str().Bytes(b)
}
