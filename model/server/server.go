// Package server is the composition root of one T3 server process: it builds
// the in-memory components (credential registry and slots, provider session
// manager, preview host) over the durable store, serves the MCP tools with
// their caller checks, and dies as a whole on a restart.
package server

import (
	"fmt"
	"slices"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/browser"
	"github.com/orchsim/orchsim/model/mcp"
	"github.com/orchsim/orchsim/model/orchestrator"
	"github.com/orchsim/orchsim/model/provider"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// Hooks connect a server process to the world around it (agents, users).
type Hooks struct {
	// TurnStarted: a provider turn of thread began on entry, with the
	// credential the adapter injected for the thread.
	TurnStarted func(threadID string, e *provider.Entry, cred provider.ThreadCred)
	// TurnAborted: the turn of thread ended without the agent (session
	// released, open failed, server died).
	TurnAborted func(threadID, why string)
	// DesktopFor: see browser.ServerBrowser.DesktopFor.
	DesktopFor func(threadID string) (bool, time.Duration)
	// OpenLatency draws how long an adapter takes to start a session.
	OpenLatency func(instance string) time.Duration
}

// Server is one T3 server process.
type Server struct {
	env      *model.Env
	Store    *store.Store
	Registry *mcp.Registry
	Slots    *mcp.Slots
	PSM      *provider.Manager
	Browser  *browser.ServerBrowser
	// Broker routes the client-host preview tools to the desktop and
	// mobile apps registered with this process.
	Broker      *browser.Broker
	Orch        *orchestrator.Orchestrator
	Incarnation int
	// messages counts the messages SendPrompt named.
	messages int
	// seen lists the thread and message of every run this process started
	// (what the DedupeInMemory mutant checks).
	seen  []string
	hooks Hooks
	dead  bool
	// turns are the running turns in start order: thread -> the entry its
	// turn is on. byThread finds a thread's first turn among them (a world
	// of 1,000 threads runs hundreds at once); each turn links the next
	// turn of its thread (sameThread), in the same order.
	turns    []*turnRef
	byThread sim.Chains[turnRef]
	turnSlab sim.Slab[turnRef] // turns' records
	// pendingDetach lists threads whose capability changed during a turn.
	pendingDetach []string
	// ingest is the runtime ingestion worker's in-memory queue (ingestion.go);
	// ingestBusy says the worker is on its head, done at ingestHeadEnd.
	ingest        []ingestItem
	ingestBusy    bool
	ingestHeadEnd time.Duration
	// finalizer draws the session shutdown finalizer's timing (its own
	// stream, so worlds without steering draw as before).
	finalizer *sim.Rand
	// unflushed are the writes a write-behind mutant has not flushed
	// (writebehind.go): lost if the process dies.
	unflushed []*writeBehind
}

type turnRef struct {
	threadID string
	runID    string
	entry    *provider.Entry
	// completing: the provider completed the turn and its completion waits
	// in the ingestion queue.
	completing bool
	// sameThread is the next of turns with this threadID (nil: none).
	sameThread *turnRef
}

// addTurn appends a turn to turns and to its thread's chain.
func (s *Server) addTurn(t *turnRef) {
	s.turns = append(s.turns, t)
	s.byThread.Append(t.threadID, t, sameThread)
}

// dropTurn removes turns[i] from turns and from its thread's chain.
func (s *Server) dropTurn(i int) {
	t := s.turns[i]
	s.turns = append(s.turns[:i], s.turns[i+1:]...)
	s.byThread.Remove(t.threadID, t, sameThread)
}

// sameThread is a turn's link in Server.byThread.
func sameThread(t *turnRef) **turnRef { return &t.sameThread }

const actor = "server"

// New starts a server process over st. Startup reconciles the store: runs
// left running by a dead process are cancelled.
func New(env *model.Env, st *store.Store, incarnation int, hooks Hooks) *Server {
	s := &Server{env: env, Store: st, Incarnation: incarnation, hooks: hooks, finalizer: env.Rand("finalizer")}
	s.Registry = mcp.NewRegistry(env)
	s.Slots = &mcp.Slots{}
	s.PSM = provider.NewManager(env, s.Registry, s.Slots, incarnation)
	s.PSM.CapsFor = s.capsFor
	s.PSM.OnRelease = s.onRelease
	s.PSM.OwesChild = func(threadID string) bool {
		for _, t := range st.TasksDelegatedBy(threadID) {
			if t.Status == store.TaskRunning {
				return true
			}
		}
		return false
	}
	s.PSM.OpenFailure = sim.Per(1, 50)
	s.PSM.Store = st
	s.Browser = browser.NewServerBrowser(env, incarnation)
	s.Browser.DesktopFor = hooks.DesktopFor
	s.Broker = browser.NewBroker(env)
	s.Orch = orchestrator.New(env, st)
	s.Orch.Interrupt = s.interrupt
	s.Orch.StartRun = s.startIdle
	env.Emit(actor, "server.start", "", sim.A("incarnation", fmt.Sprint(incarnation)))
	// Startup order: ingestion resumes from its inbox, reconcile (and the
	// reaper's sweep of stopped sessions), delegated-task recovery, then
	// the effect worker (restart continuation).
	if env.Profile.Fixed(JournalRuntimeEvents) {
		s.replayInbox()
	}
	if env.Profile.Fixed(ReconcileStoppedSessions) {
		s.reconcileStoppedSessions()
	}
	if env.Profile.Fixed(StartupReconcile) {
		s.reconcile("startup")
	}
	if env.Profile.Fixed(RecoverDelegatedTasks) {
		s.Orch.Recover()
	}
	if st.Settings.ContinueThreadsAfterServerUpdate {
		env.After(ContinuationDelay, s.continueRestartedRuns)
	}
	s.Orch.StartScheduler()
	return s
}

// Sizes are a server process's table sizes that its successor starts from
// (Server.Sizes, Server.Reserve): its broker's, its credential
// registry's, its MCP slots' and its provider session manager's.
type Sizes struct {
	Broker   browser.BrokerSizes
	Registry mcp.RegistrySizes
	Slots    int // threads with an MCP slot
	Sessions provider.ManagerSizes
}

// Sizes returns s's table sizes now (take them before Kill or Shutdown).
func (s *Server) Sizes() Sizes {
	return Sizes{Broker: s.Broker.Sizes(), Registry: s.Registry.Sizes(), Slots: s.Slots.Len(), Sessions: s.PSM.Sizes()}
}

// Reserve sizes a new process's empty tables for sz, a dead predecessor's
// Sizes (browser.Broker.Reserve, mcp.Registry.Reserve): capacity only, so
// nothing a run does changes.
func (s *Server) Reserve(sz Sizes) {
	s.Broker.Reserve(sz.Broker)
	s.Registry.Reserve(sz.Registry)
	s.Slots.Reserve(sz.Slots)
	s.PSM.Reserve(sz.Sessions)
}

// StartupReconcile is ProviderRuntimeRecoveryService's startup pass (the
// fix of t3code#4584's family; PRs #9167 and #9360 continue active turns
// across a restart): before the new process takes a command, every run a
// dead process left running is cancelled with its subtree, never recorded
// completed. Off is the state #4584 reports: only a graceful shutdown
// settles runs, so after a crash or a kill the projection still says
// running with no provider process behind it, the thread shows Working,
// and its next message queues behind a turn whose end will never come.
const StartupReconcile model.Switch = "startup-reconcile"

// RecoverDelegatedTasks is the startup's delegated-task recovery (after
// reconcile, before the effect worker; the startup order of @eac52f00):
// a task whose child was still running when the server died is followed
// again, so it settles and its parent hears of it. Off is t3code#7314: a
// server killed while a subagent runs comes back with the child's task
// "running" for good, no terminal event ever arriving.
const RecoverDelegatedTasks model.Switch = "recover-delegated-tasks"

// DedupePromptByMessageID is the command receipt of a user message's
// thread.turn.start (its commandId is the client's message id): a message
// delivered twice, by a client retry or a duplicating transport, starts
// one run. Off is anomalyco/opencode#27928: the server processes one
// prompt submission twice, and the duplicate reply is stored in history.
const DedupePromptByMessageID model.Switch = "dedupe-prompt-by-message-id"

// DedupeInMemory is a wrong fix: the duplicate check remembers messages in
// the server process only (an in-memory seen set instead of the durable
// receipt), so a message redelivered after a restart runs again.
const DedupeInMemory model.Mutant = "dedupe-in-memory"

// ReconcileCompletesOrphans is a wrong fix of t3code#4584: the startup
// pass settles a dead process's runs, but as completed (what #4584 saw
// when a new message replaced the zombie turn), inventing a completion
// nothing made.
const ReconcileCompletesOrphans model.Mutant = "reconcile-completes-orphans"

func init() {
	model.RegisterSwitch(model.SwitchInfo{Name: RecoverDelegatedTasks, Group: catalog.RestartContinuation,
		Reports:    []catalog.Report{"t3code#7314"},
		Source:     "startup order: reconcile, delegated-task recovery, effect worker (trace @eac52f00; MODEL.md §8)",
		Scenario:   "request-retry",
		Invariants: []string{"delegated-task-settles"},
		Reported:   "after a restart nothing follows the delegated tasks whose children were running: they stay running",
		Fixed:      "startup re-arms every running delegated task, so its child's end settles it",
		Upstream:   "t3code startup order @eac52f00 (delegated-task recovery)",
		Mechanism:  "model/server: startup recovery of delegated tasks"})
	model.RegisterSwitch(model.SwitchInfo{Name: DedupePromptByMessageID, Group: catalog.ProviderSession,
		Reports:    []catalog.Report{"anomalyco/opencode#27928"},
		Source:     "OrchestrationEngine command receipts for thread.turn.start (commandId from the client)",
		Scenario:   "tab-ownership",
		Invariants: []string{"one-run-per-message"},
		Reported:   "a user message delivered twice starts a second run once the thread is idle",
		Fixed:      "a message that already started a run is acknowledged again and starts nothing",
		Upstream:   "t3code OrchestrationEngine receipts (thread.turn.start)",
		Mechanism:  "model/server: thread.turn.start command receipts (message delivery)"})
	model.RegisterMutant(model.MutantInfo{Name: DedupeInMemory, Group: catalog.ProviderSession,
		Doc:        "the duplicate check remembers messages in the server process only, so one redelivered after a restart runs again",
		Scenario:   "chaos",
		Invariants: []string{"one-run-per-message"}})
	model.RegisterMutant(model.MutantInfo{Name: ReconcileCompletesOrphans, Group: catalog.RestartContinuation,
		Doc:        "the startup reconcile records a dead process's running runs as completed instead of cancelled",
		Scenario:   "request-retry",
		Invariants: []string{"no-run-outlives-its-process"}})
	model.RegisterSwitch(model.SwitchInfo{Name: StartupReconcile, Group: catalog.RestartContinuation,
		Reports:    []catalog.Report{"t3code#4584"},
		Source:     "ProviderRuntimeRecoveryService.ts@0928e05e reconcile(startup); MODEL.md §8",
		Scenario:   "request-retry",
		Invariants: []string{"no-run-outlives-its-process", "running-thread-settles"},
		Reported:   "runs left running by a killed or crashed server stay running after the restart; only a graceful shutdown settles them",
		Fixed:      "startup reconciles the store before the server takes a command: a dead process's running runs are cancelled with their subtrees",
		Upstream:   "ProviderRuntimeRecoveryService.ts@0928e05e reconcile(startup)",
		Script:     "scenarios/testdata/restart/zombie_run",
		Mechanism:  "model/server: startup reconcile of the store against live processes"})
}

// RunSettles is the liveness obligation of a running run: it gets a live
// provider turn, or it is settled (completed, failed, interrupted, or
// cancelled after a restart). A run left running with no live provider
// is the violation.
const RunSettles = "running-thread-settles"

func init() {
	sim.DeclareObligation(sim.ObligationInfo{Name: RunSettles, Group: string(catalog.RestartContinuation),
		Property: "a running run gets a live provider turn or is settled (also after a restart)",
		Source:   "MODEL.md §8 (reconcile)"})
}

// ContinuationDelay is how long after startup the effect worker runs the
// restart continuations (a modelling choice: the worker starts last).
const ContinuationDelay = 500 * time.Millisecond

// reconcile cancels runs a dead process left running; they become restart
// continuation sources.
func (s *Server) reconcile(trigger string) {
	sum := Reconcile(s.Store, trigger, s.env.Now())
	for _, r := range sum.CancelledRuns {
		s.env.Obligations.Discharge(RunSettles, r.ID+" of "+r.ThreadID)
		s.Store.MarkCancelledByRestart(r)
		status := store.RunCancelled
		if s.env.Profile.Has(ReconcileCompletesOrphans) {
			status, r.Status = store.RunCompleted, store.RunCompleted
		}
		s.env.Emit(actor, "reconcile", status, sim.A("trigger", trigger), sim.A("thread", r.ThreadID), sim.A("run", r.ID))
	}
}

// Shutdown is a graceful stop: every session is released with
// server_shutdown, then reconcile("shutdown"); the process then dies.
func (s *Server) Shutdown() {
	if s.dead {
		return
	}
	s.PrepareForShutdown()
	if s.env.Profile.Fixed(JournalRuntimeEvents) {
		s.replayInbox() // the journaled completions first: reconcile must not cancel them
	}
	s.PSM.Shutdown()
	s.reconcile("shutdown")
	s.Kill()
}

// Dead reports whether the process has died.
func (s *Server) Dead() bool { return s.dead }

// Kill ends the process without a shutdown path: in-memory state is gone,
// provider processes die with it, tabs die with the browser host.
func (s *Server) Kill() {
	if s.dead {
		return
	}
	s.dead = true
	s.loseUnflushed()
	s.loseIngestion()
	s.PSM.Kill()
	s.Browser.Kill()
	s.Broker.Kill()
	s.Orch.Kill()
	for _, t := range s.turns {
		if s.hooks.TurnAborted != nil {
			s.hooks.TurnAborted(t.threadID, "server died")
		}
	}
	s.turns = nil
	s.byThread = sim.Chains[turnRef]{}
}

func (s *Server) capsFor(threadID, instance string) mcp.Caps {
	caps := mcp.CapOrchestration | mcp.CapWorktree | mcp.CapPullRequests
	if t := s.Store.Thread(threadID); t != nil {
		if p := s.Store.Project(t.ProjectID); p != nil && p.BrowserAccess {
			caps |= mcp.CapPreview
		}
	}
	return caps
}

// turnOf returns the first of turns with threadID, or nil.
func (s *Server) turnOf(threadID string) *turnRef { return s.byThread.First(threadID) }

// SendPrompt is a user message on thread: a new run starts and a provider
// turn runs on the thread's instance. It reports false when the thread
// already has an active run (the message would queue; users wait instead).
func (s *Server) SendPrompt(threadID string) bool {
	s.messages++
	return s.SendMessage(threadID, fmt.Sprintf("message:%s:s%d.%d", threadID, s.Incarnation, s.messages))
}

// SendMessage is SendPrompt for the user message messageID (the client's
// id, which a duplicate delivery repeats). With DedupePromptByMessageID a
// message that already started a run is acknowledged again and starts
// nothing (the command receipt of its thread.turn.start); without it, a
// duplicate that arrives once the thread is idle starts a second run.
func (s *Server) SendMessage(threadID, messageID string) bool {
	t := s.Store.Thread(threadID)
	if s.dead || t == nil || t.Archived {
		return false
	}
	if s.env.Profile.Fixed(DedupePromptByMessageID) && s.answered(threadID, messageID) {
		s.env.Emit(actor, "message.duplicate", "", sim.A("thread", threadID), sim.A("message", messageID))
		return true
	}
	if t.ActiveRunID != "" {
		return false
	}
	s.startRunFor(threadID, "", messageID)
	return true
}

// answered reports whether a run of thread answers messageID (with the
// DedupeInMemory mutant, a run this process started).
func (s *Server) answered(threadID, messageID string) bool {
	if s.env.Profile.Has(DedupeInMemory) {
		for _, k := range s.seen {
			if k == threadID+" "+messageID {
				return true
			}
		}
		return false
	}
	// Runs of threadID whose MessageID is messageID: by the store's index
	// (a scan of the thread's runs when messageID is "", as before).
	if messageID != "" {
		return s.Store.AnsweredBy(threadID, messageID) != nil
	}
	for _, r := range s.Store.RunsOf(threadID) {
		if r.MessageID == messageID {
			return true
		}
	}
	return false
}

// startRun starts a run of thread (a continuation when continuationOf is
// set) and its provider turn.
func (s *Server) startRun(threadID, continuationOf string) {
	s.startRunFor(threadID, continuationOf, "")
}

// startRunFor is startRun for the user message messageID ("" for none).
func (s *Server) startRunFor(threadID, continuationOf, messageID string) {
	run := s.Store.StartRun(threadID)
	run.ContinuationOf, run.MessageID = continuationOf, messageID
	if t := s.Store.Thread(threadID); t != nil {
		t.SessionStatus, t.RuntimeStatus = SessionRunning, SessionRunning
	}
	var kb [128]byte // keys built here and kept by env.Str: one chunk, not an allocation each
	if messageID != "" {
		s.seen = append(s.seen, s.env.Str().Bytes(append(append(append(kb[:0], threadID...), ' '), messageID...)))
	}
	s.env.Obligations.Open(RunSettles, s.env.Str().Bytes(append(append(append(kb[:0], run.ID...), " of "...), threadID...)), "run.start")
	var ab [5]sim.Attr
	attrs := append(ab[:0], sim.A("thread", threadID), sim.A("run", run.ID), sim.A("instance", run.Instance))
	if continuationOf != "" {
		attrs = append(attrs, sim.A("continuation-of", continuationOf))
	}
	if messageID != "" {
		attrs = append(attrs, sim.A("message", messageID))
	}
	s.env.Emit(actor, "run.start", "", attrs...)
	s.runStarted(run)
	t := s.turnSlab.New()
	t.threadID, t.runID = threadID, run.ID
	s.addTurn(t)
	latency := time.Second
	if s.hooks.OpenLatency != nil {
		latency = s.hooks.OpenLatency(run.Instance)
	}
	s.PSM.StartTurn(threadID, run.Instance, latency, func(e *provider.Entry, err error) {
		if s.dead {
			return
		}
		ref := s.turnOf(threadID)
		if ref == nil || ref.runID != run.ID {
			return
		}
		if err != nil {
			s.endTurn(threadID, store.RunFailed, err.Error())
			return
		}
		ref.entry = e
		s.env.Obligations.Discharge(RunSettles, run.ID+" of "+threadID)
		tc, _ := e.Cred(threadID)
		if s.hooks.TurnStarted != nil {
			s.hooks.TurnStarted(threadID, e, tc)
		}
	})
}

// interrupt ends the active turn of thread as interrupted (t3_thread_interrupt
// or the user's stop button); it reports whether there was one.
func (s *Server) interrupt(threadID string) bool {
	if s.dead {
		return false
	}
	ref := s.turnOf(threadID)
	if ref == nil || ref.completing {
		return false // a completed turn waiting for ingestion: nothing to stop
	}
	if ref.entry != nil {
		s.PSM.TurnTerminal(ref.entry, threadID)
	}
	s.endTurn(threadID, store.RunInterrupted, "interrupted")
	if s.Store.PendingQueuedTurn(threadID) != nil {
		s.stopSession(threadID)
	}
	return true
}

// startIdle starts a run of an idle, live thread (a message dispatched to
// start immediately); it returns the run's id, or "".
func (s *Server) startIdle(threadID string) string {
	t := s.Store.Thread(threadID)
	if s.dead || t == nil || t.Archived || t.ActiveRunID != "" {
		return ""
	}
	s.startRun(threadID, "")
	return t.ActiveRunID
}

// Interrupt is the user stopping the thread's running turn.
func (s *Server) Interrupt(threadID string) bool { return s.interrupt(threadID) }

// TurnFinished is the agent finishing its turn: turn.terminal, run completed.
// backgroundFor > 0 reports pending background work for that long.
func (s *Server) TurnFinished(threadID string, backgroundFor time.Duration) {
	if s.dead {
		return
	}
	ref := s.turnOf(threadID)
	if ref == nil || ref.entry == nil || ref.completing {
		return
	}
	e := ref.entry
	if backgroundFor > 0 {
		s.PSM.SetBackgroundWork(e, s.env.Now()+backgroundFor)
	} else if s.env.Profile.Has(provider.BackgroundClearedByNextTurn) {
		s.PSM.SetBackgroundWork(e, 0)
	}
	s.PSM.TurnTerminal(e, threadID)
	s.finishTurn(threadID, ref)
}

// Activity is a provider event other than turn.terminal during a turn.
func (s *Server) Activity(threadID string) {
	if ref := s.turnOf(threadID); ref != nil && ref.entry != nil && !s.dead {
		s.PSM.Activity(ref.entry)
	}
}

func (s *Server) endTurn(threadID, status, why string) {
	ref := s.turnOf(threadID)
	if ref == nil {
		return
	}
	s.Store.EndRun(ref.runID, status)
	s.env.Obligations.Discharge(RunSettles, ref.runID+" of "+threadID)
	s.env.Emit(actor, "run.end", status, sim.A("thread", threadID), sim.A("run", ref.runID))
	s.dropTurn(slices.Index(s.turns, ref))
	if status == store.RunFailed {
		s.abandonQueued(threadID) // an error session-set abandons the pending start
	}
	if status != store.RunCompleted && s.hooks.TurnAborted != nil {
		s.hooks.TurnAborted(threadID, why)
	}
}

func (s *Server) onRelease(e *provider.Entry, reason string) {
	if reason == provider.ReasonServerShutdown {
		// A graceful shutdown leaves runs to reconcile("shutdown"), which
		// cancels them as restart-continuation sources.
		return
	}
	for i := 0; i < len(s.turns); {
		if s.turns[i].entry == e && !s.turns[i].completing {
			s.endTurn(s.turns[i].threadID, store.RunFailed, "Provider session released: "+reason+".")
			continue
		}
		i++
	}
}

// Crash kills the provider process of thread's live session, if any.
func (s *Server) Crash(threadID string) bool {
	if s.dead {
		return false
	}
	e := s.PSM.EntryForThread(threadID)
	if e == nil {
		return false
	}
	s.PSM.Crash(e)
	return true
}

// SetBrowserAccess changes a project's browser access (a capability
// change). Live sessions of the project's threads are detached (at once if
// idle, after the running turn otherwise), so the next turn prepares a
// credential with the new capability set: the capability-equality reuse
// rule then mints a new one. Modelling choice; see docs/architecture.md.
func (s *Server) SetBrowserAccess(projectID string, on bool) {
	p := s.Store.Project(projectID)
	if p == nil || p.BrowserAccess == on {
		return
	}
	p.BrowserAccess = on
	s.env.Emit("user", "settings.browser-access", fmt.Sprint(on), sim.A("project", projectID))
	if s.dead {
		return
	}
	for _, t := range s.Store.Threads {
		if t.ProjectID != projectID {
			continue
		}
		if ref := s.turnOf(t.ID); ref != nil {
			s.pendingDetach = append(s.pendingDetach, t.ID)
			continue
		}
		if e := s.PSM.EntryForThread(t.ID); e != nil {
			s.PSM.Detach(e, t.ID, false)
		}
	}
}

func (s *Server) applyPendingDetach(threadID string) {
	for i, t := range s.pendingDetach {
		if t == threadID {
			s.pendingDetach = append(s.pendingDetach[:i], s.pendingDetach[i+1:]...)
			if e := s.PSM.EntryForThread(threadID); e != nil {
				s.PSM.Detach(e, threadID, false)
			}
			return
		}
	}
}

// ChangeRuntimeOptions is the user changing an idle thread's runtime
// options (model, runtime mode): its live provider session restarts in
// place (provider.Manager.RestartInPlace). It reports whether a session
// restarted.
func (s *Server) ChangeRuntimeOptions(threadID string) bool {
	if s.dead {
		return false
	}
	if ref := s.turnOf(threadID); ref != nil {
		return false
	}
	e := s.PSM.EntryForThread(threadID)
	if e == nil || e.Busy() {
		return false
	}
	s.env.Emit("user", "thread.runtime-options", "", sim.A("thread", threadID), sim.A("providerSessionId", e.ID))
	return s.PSM.RestartInPlace(e, "runtime options of "+threadID+" changed")
}

// SwitchProvider moves an idle thread to another provider instance (the
// user picks another provider for the thread's next turn).
func (s *Server) SwitchProvider(threadID, instance string) bool {
	t := s.Store.Thread(threadID)
	if t == nil || t.ActiveRunID != "" || t.Instance == instance {
		return false
	}
	from := t.Instance
	t.Instance = instance
	s.env.Emit("user", "thread.switch-provider", "", sim.A("thread", threadID), sim.A("from", from), sim.A("to", instance))
	return true
}

// CallTool serves an MCP tools/call sent with token by the agent of
// caller (the agent's own thread, used only to label the trace: the server
// takes the thread from the credential). reply gets the result when it is
// decided; the outcome is traced then.
func (s *Server) CallTool(caller, token, credID string, call model.ToolCall, reply func(model.ToolResult)) {
	s.CallToolTo(caller, token, credID, call, orchestrator.Extra{}, model.ReplyFunc(reply))
}

// CallToolExt is CallTool with the orchestrator arguments model.ToolCall
// does not carry (the fidelity cases' task texts, create_threads entries,
// target instances).
func (s *Server) CallToolExt(caller, token, credID string, call model.ToolCall, extra orchestrator.Extra, reply func(model.ToolResult)) {
	s.CallToolTo(caller, token, credID, call, extra, model.ReplyFunc(reply))
}

// CallToolTo is CallToolExt answering to a Replier (the network's call
// object, which needs no closure to be answered).
func (s *Server) CallToolTo(caller, token, credID string, call model.ToolCall, extra orchestrator.Extra, r model.Replier) {
	s.CallToolIn(new(CallSlot), caller, token, credID, call, extra, r)
}

// CallSlot is room for the server's record of one tool call in flight
// (what its trace and answer need), for a caller with a record of its own
// per call to embed it in (the network's call object): the call then
// costs the server no allocation. A slot serves one call: CallToolIn
// takes it zero (new) but for its Call, and it must not be reused while
// the server may still answer through it.
type CallSlot struct{ t toolCall }

// Call is where the slot keeps its call: a caller may hold the call there
// before CallToolIn (passing *slot.Call() as its call), rather than in a
// copy of its own. The server does not change it.
func (c *CallSlot) Call() *model.ToolCall { return &c.t.call }

// CallToolIn is CallToolTo with the call's record kept in slot, which must
// be zero (a new CallSlot) but for its Call.
func (s *Server) CallToolIn(slot *CallSlot, caller, token, credID string, call model.ToolCall, extra orchestrator.Extra, r model.Replier) {
	t := &slot.t
	// Fields set one by one on the zero record, rather than a whole
	// toolCall (about 1 kB) copied over it.
	t.s, t.caller, t.credID, t.call, t.reply = s, caller, credID, call, r
	t.threadID = caller // the caller's claim until its credential says
	trace := t.trace
	if s.dead {
		trace(model.OutcomeServerDown)
		r.Reply(model.ToolResult{Outcome: model.OutcomeServerDown})
		return
	}
	cred := s.Registry.Resolve(token)
	if cred == nil {
		trace(model.OutcomeUnauthorized)
		r.Reply(model.ToolResult{Outcome: model.OutcomeUnauthorized})
		return
	}
	scope := cred.Scope
	if scope.Thread == nil {
		trace(model.OutcomeThreadCredential)
		r.Reply(model.ToolResult{Outcome: model.OutcomeThreadCredential})
		return
	}
	// The credential, not the caller's claim, says which thread calls.
	threadID := scope.Thread.ThreadID
	t.threadID = threadID
	if model.IsOrchestratorTool(call.Tool) || orchestrator.Serves(call.Tool) {
		s.callOrchestrator(scope, t, extra)
		return
	}
	if scope.Capabilities&mcp.CapPreview == 0 {
		trace(model.OutcomePreviewDisabled)
		r.Reply(model.ToolResult{Outcome: model.OutcomePreviewDisabled})
		return
	}
	if call.Tool != model.ToolPreviewSnapshot && !s.liveCaller(scope) {
		trace(model.OutcomeParentNotActive)
		r.Reply(model.ToolResult{Outcome: model.OutcomeParentNotActive})
		return
	}
	if call.Tool == model.ToolPreviewEvaluate || call.Tool == model.ToolPreviewWaitFor {
		s.callHost(scope, t)
		return
	}
	key := browser.OwnerKey(s.env.Profile, scope.EnvironmentID, scope.Thread.ProviderSessionID, threadID)
	t.key = key
	req := browser.Request{ThreadID: threadID, TabID: call.TabID, AgentSessionID: key, URL: call.URL,
		ReuseExistingTab: !call.NewTab}
	switch call.Tool {
	case model.ToolPreviewOpen:
		req.Op = browser.OpOpen
	case model.ToolPreviewNavigate:
		req.Op = browser.OpNavigate
	case model.ToolPreviewClick:
		req.Op = browser.OpClick
	case model.ToolPreviewSnapshot:
		req.Op = browser.OpSnapshot
	case model.ToolPreviewClose:
		req.Op = browser.OpClose
	default:
		trace("invalid_request")
		r.Reply(model.ToolResult{Outcome: "invalid_request"})
		return
	}
	t.showKey, t.authorized, t.op = showKey(s.env.Str(), key), s.env.Now(), req.Op
	s.Browser.HandleTo(req, t)
}

// toolCall is one CallToolExt in flight: its trace attributes and what its
// answer needs, in one allocation (closures over CallToolExt's parameters
// took five).
type toolCall struct {
	s              *Server
	caller, credID string
	actor          string // an orchestrator call's actor
	call           model.ToolCall
	reply          model.Replier
	// threadID is the calling thread (the caller's claim until its
	// credential is resolved), key a preview call's owner key and showKey
	// its trace form (an attribute once keyed).
	key, threadID string
	showKey       string
	// op is a preview call's browser.Request Op (Handled), set with
	// showKey when the call is keyed (never "" then): keyed reads it.
	op         string
	authorized time.Duration
}

// keyed reports whether the call has its owner key (the key attribute).
func (t *toolCall) keyed() bool { return t.op != "" }

// baseAttrs appends the attributes every event of the call starts with:
// thread, cred and an explicit tab. The call's attributes are built on
// the stack when it emits, from its fields, rather than kept in the
// record (a buffer of them was a quarter of a network call's bytes).
func (t *toolCall) baseAttrs(b []sim.Attr) []sim.Attr {
	b = append(b, sim.A("thread", t.threadID), sim.A("cred", t.credID))
	if t.call.TabID != "" {
		b = append(b, sim.A("tab", t.call.TabID))
	}
	return b
}

// trace emits the call's event with outcome and extra attributes.
func (t *toolCall) trace(outcome string, extra ...sim.Attr) {
	s := t.s
	var ab [12]sim.Attr
	attrs := t.baseAttrs(ab[:0])
	if t.keyed() {
		attrs = append(attrs, sim.A("key", t.showKey))
	}
	s.env.Emit(s.env.Str().Concat("agent/", t.caller), t.call.Tool, outcome, append(attrs, extra...)...)
}

// Handled traces and answers a preview tool the browser served (the call
// is its own browser.Handler).
func (t *toolCall) Handled(r browser.Result) {
	s, call, key, threadID, op, credID, reply, authorized := t.s, &t.call, t.key, t.threadID, t.op, t.credID, t.reply, t.authorized
	{
		var xb [4]sim.Attr
		extra := xb[:0]
		if now := s.env.Now(); now != authorized {
			// Queued behind another action on the tab: say when the
			// call was authorized, which is what credential checks judge.
			extra = append(extra, sim.A("authorized", s.env.Str().T(authorized)))
		}
		if call.TabID == "" && r.TabID != "" {
			extra = append(extra, sim.A("tab", r.TabID))
		}
		if r.TabThread != "" {
			extra = append(extra, sim.A("tab-thread", r.TabThread))
		}
		if r.Owner != "" && r.Owner != key {
			extra = append(extra, sim.A("owner", showKey(s.env.Str(), r.Owner)))
		}
		t.trace(r.Outcome, extra...)
		if r.TabThread == threadID && r.Owner != "" {
			entity := browser.TabEntity(threadID, r.TabID)
			switch {
			case r.Outcome == browser.ReasonAgentMismatch:
				s.env.Obligations.Open(browser.RegainTab, entity, call.Tool+" refused agentMismatch with credential "+credID)
			case r.Outcome == browser.OK && op != browser.OpSnapshot && op != browser.OpOpen:
				s.env.Obligations.Discharge(browser.RegainTab, entity)
			}
		}
		reply.Reply(model.ToolResult{Outcome: r.Outcome, TabID: r.TabID})
	}
}

// callHost serves a client-host preview tool through the broker and traces
// its outcome with the host that ran it (client), the request id, and
// deadline=missed when the broker's deadline passed unanswered.
func (s *Server) callHost(scope mcp.Scope, t *toolCall) {
	call := &t.call
	op := browser.OpEvaluate
	if call.Tool == model.ToolPreviewWaitFor {
		op = browser.OpWaitFor
	}
	bs := browser.BrokerScope{EnvironmentID: scope.EnvironmentID, ThreadID: scope.Thread.ThreadID,
		ProviderSessionID: scope.Thread.ProviderSessionID, ProviderInstanceID: scope.Thread.ProviderInstanceID}
	authorized := s.env.Now()
	s.Broker.Invoke(bs, op, browser.BrokerInput{}, call.TabID, call.Timeout, func(r browser.BrokerResult, e *browser.BrokerError) {
		reply := t.reply
		var ab [6]sim.Attr
		attrs := ab[:0]
		if now := s.env.Now(); now != authorized {
			// Answered later: say when the call was authorized, which is
			// what credential checks judge.
			attrs = append(attrs, sim.A("authorized", s.env.Str().T(authorized)))
		}
		if e != nil {
			attrs = append(attrs, sim.A("client", orNone(e.ClientID)), sim.A("request", orNone(e.RequestID)))
			if e.Outcome == "unknown" {
				attrs = append(attrs, sim.A("deadline", "missed"))
			}
			t.trace(e.Tag, attrs...)
			reply.Reply(model.ToolResult{Outcome: e.Tag, TabID: e.TabID})
			return
		}
		t.trace(browser.OK, append(attrs, sim.A("client", r.ClientID), sim.A("tab", orNone(r.TabID)), sim.A("value", r.Value))...)
		reply.Reply(model.ToolResult{Outcome: browser.OK, TabID: r.TabID})
	})
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// liveCaller is assertLiveCaller: the calling thread exists, is not
// archived, has an active run, and that run's instance is the caller's.
func (s *Server) liveCaller(scope mcp.Scope) bool {
	t := s.Store.Thread(scope.Thread.ThreadID)
	if t == nil || t.Archived {
		return false
	}
	r := s.Store.ActiveRun(t.ID)
	return r != nil && r.Instance == scope.Thread.ProviderInstanceID
}

// callOrchestrator serves an orchestrator tool after its caller checks
// (orchestration capability; a live run of the caller's instance) and
// traces the dispatch: its outcome, command id and result ids.
func (s *Server) callOrchestrator(scope mcp.Scope, t *toolCall, extra orchestrator.Extra) {
	call := &t.call
	t.actor = s.env.Str().Concat("agent/", scope.Thread.ThreadID)
	refuse := func(code string) {
		var ab [orchAttrsMax]sim.Attr
		s.env.Emit(t.actor, call.Tool, code, t.orchAttrs(ab[:0])...)
		t.reply.Reply(model.ToolResult{Outcome: code})
	}
	if scope.Capabilities&mcp.CapOrchestration == 0 {
		refuse("capability_denied")
		return
	}
	if !orchestrator.IsRead(call.Tool) && !s.liveCaller(scope) {
		refuse(model.OutcomeParentNotActive)
		return
	}
	s.Orch.DispatchTo(orchestrator.Call{Scope: scope, ToolCall: t.call, Extra: extra}, t)
}

// orchAttrsMax bounds an orchestrator call's attributes: the base three,
// eight from the call, three from its answer.
const orchAttrsMax = 16

// orchAttrs appends an orchestrator call's attributes before its answer:
// the base ones, then what the call carries.
func (t *toolCall) orchAttrs(b []sim.Attr) []sim.Attr {
	call := &t.call
	b = t.baseAttrs(b)
	key := call.ClientRequestID
	if key == "" {
		key = "-"
	}
	b = append(b, sim.A("clientRequestId", key))
	if call.Target != "" {
		b = append(b, sim.A("target", call.Target))
	}
	if call.Action != "" {
		b = append(b, sim.A("action", call.Action))
	}
	if call.TaskID != "" {
		b = append(b, sim.A("task", call.TaskID))
	}
	if call.Mode == "wait" {
		b = append(b, sim.A("mode", "wait"))
	}
	if call.Retry {
		b = append(b, sim.A("retry", "true"))
	}
	if call.RedispatchOf != "" {
		b = append(b, sim.A("redispatch-of", call.RedispatchOf))
	}
	if call.Redelivered {
		b = append(b, sim.A("redelivered", "true"), sim.A("tool-call", call.CallID))
	}
	return b
}

// Dispatched traces an orchestrator call's dispatch (the call is its own
// orchestrator.DispatchReplier).
func (t *toolCall) Dispatched(a orchestrator.Answer) {
	s := t.s
	var ab [orchAttrsMax]sim.Attr
	attrs := t.orchAttrs(ab[:0])
	if a.CommandID != "" {
		attrs = append(attrs, sim.A("command", a.CommandID))
	}
	{ // the result is built on the stack
		var rb [128]byte
		if res := appendResult(rb[:0], a.Result); len(res) > 0 {
			attrs = append(attrs, sim.A("result", s.env.Str().Bytes(res)))
		}
	}
	if a.Effect != "" {
		attrs = append(attrs, sim.A("effect", a.Effect))
	}
	s.env.Emit(t.actor, t.call.Tool, a.Outcome, attrs...)
}

// Done answers an orchestrator call, unless the server died meanwhile.
func (t *toolCall) Done(_ orchestrator.Answer, r model.ToolResult) {
	if !t.s.dead {
		t.reply.Reply(r)
	}
}

// DescribeResult renders the durable result ids for traces, e.g.
// "task=node:... child=thread:...". Only ids are shown, not statuses that
// change over time, so a replay's result compares equal to the original's.
func DescribeResult(r store.Result) string { return string(appendResult(nil, r)) }

// appendResult appends DescribeResult(r) to buf.
func appendResult(buf []byte, r store.Result) []byte {
	start := len(buf)
	add := func(k, v string) {
		if v == "" {
			return
		}
		if len(buf) > start {
			buf = append(buf, ' ')
		}
		buf = append(append(append(buf, k...), '='), v...)
	}
	add("task", r.TaskID)
	add("child", r.ChildThreadID)
	if len(r.ThreadIDs) > 1 || len(r.ThreadIDs) == 1 && r.ThreadIDs[0] != "" {
		if len(buf) > start {
			buf = append(buf, ' ')
		}
		buf = append(buf, "threads="...)
		for i, id := range r.ThreadIDs {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, id...)
		}
	}
	add("message", r.MessageID)
	add("schedule", r.ScheduleID)
	add("run", r.RunID)
	return buf
}

// showKey is browser.ShowKey(k) built by str (no allocation of its own).
func showKey(str *sim.Strings, k string) string {
	if !containsNUL(k) {
		return k
	}
	var buf [128]byte
	b := append(buf[:0], k...)
	for i, c := range b {
		if c == 0 {
			b[i] = '/'
		}
	}
	return str.Bytes(b)
}

func containsNUL(k string) bool {
	for i := 0; i < len(k); i++ {
		if k[i] == 0 {
			return true
		}
	}
	return false
}
