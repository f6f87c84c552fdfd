package server

// Fidelity cases of FIDELITY.md §7 (RestartContinuation.test.ts @
// 0f504549, ProviderRuntimeRecoveryService.test.ts @ 0928e05e) that are
// about the projection rather than a story: restart-continuation
// eligibility, shutdown preparation and reconcile. RC-05 and RC-07 are
// scripted stories (scenarios/testdata/fidelity/restart-recovery). The
// registry of cases is scenarios/fidelity_test.go.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// base is the RC-01..RC-05 projection: thread:restart on codex, run:restart
// running on provider thread P with a native ref, session:restart running,
// one running provider turn on the active attempt.
func base() ContinuationCandidate {
	return ContinuationCandidate{ThreadInstance: "codex", RunStatus: store.RunRunning, RunInstance: "codex",
		ProviderThread: "P", NativeRef: true, ProviderThreadActive: true, SessionInstance: "codex",
		SessionStatus: "running", RunningTurns: 1}
}

// TestRC01_EligibilityOfUnfinishedRootRun is RC-01, upstream
// RestartContinuation.test.ts eligibility of an unfinished root run.
func TestRC01_EligibilityOfUnfinishedRootRun(t *testing.T) {
	assert.True(t, RestartContinuationRun(base()), "the base projection continues run:restart")
	for name, mutate := range map[string]func(*ContinuationCandidate){
		"thread archived":             func(c *ContinuationCandidate) { c.ThreadArchived = true },
		"thread deleted":              func(c *ContinuationCandidate) { c.ThreadDeleted = true },
		"thread on another instance":  func(c *ContinuationCandidate) { c.ThreadInstance = "claudeAgent" },
		"no native ref":               func(c *ContinuationCandidate) { c.NativeRef = false },
		"session on another instance": func(c *ContinuationCandidate) { c.SessionInstance = "claudeAgent" },
		"no provider turns":           func(c *ContinuationCandidate) { c.RunningTurns = 0 },
		"compaction attempt":          func(c *ContinuationCandidate) { c.Compaction = true },
	} {
		c := base()
		mutate(&c)
		assert.False(t, RestartContinuationRun(c), name)
	}
	for _, status := range []string{RunQueued, RunPreparing, RunStarting, RunWaiting, store.RunCompleted,
		store.RunCancelled, store.RunFailed, store.RunInterrupted} {
		c := base()
		c.RunStatus = status
		assert.False(t, RestartContinuationRun(c), "run %s", status)
	}
	c := base()
	c.RunStatus, c.ContinuationOf = RunStarting, "run:earlier"
	assert.True(t, RestartContinuationRun(c), "a starting continuation of an earlier run")
}

// TestRC02_SessionStatus is RC-02, upstream session-status eligibility.
func TestRC02_SessionStatus(t *testing.T) {
	for _, s := range []string{"starting", "ready", "running", "waiting"} {
		c := base()
		c.SessionStatus = s
		assert.True(t, RestartContinuationRun(c), "session %s (adapters often stay ready)", s)
	}
	for _, s := range []string{"stopped", "error"} {
		c := base()
		c.SessionStatus = s
		assert.False(t, RestartContinuationRun(c), "session %s", s)
	}
}

// TestRC04_SettledRunWithLostBackgroundWork is RC-04, upstream settled run
// with lost background work.
func TestRC04_SettledRunWithLostBackgroundWork(t *testing.T) {
	settled := func() ContinuationCandidate {
		c := base()
		c.RunStatus, c.ProviderThreadActive, c.SessionStatus, c.RunningTurns = store.RunCompleted, false, "stopped", 0
		return c
	}
	assert.False(t, RestartContinuationRun(settled()), "no lost-work set")
	c := settled()
	c.LostWork = []string{"P"}
	assert.True(t, RestartContinuationRun(c), "P lost work")
	c.LostWork = []string{"P-other"}
	assert.False(t, RestartContinuationRun(c), "only another provider thread lost work")
	for name, mutate := range map[string]func(*ContinuationCandidate){
		"archived":      func(c *ContinuationCandidate) { c.ThreadArchived = true },
		"deleted":       func(c *ContinuationCandidate) { c.ThreadDeleted = true },
		"failed":        func(c *ContinuationCandidate) { c.RunStatus = store.RunFailed },
		"no native ref": func(c *ContinuationCandidate) { c.NativeRef = false },
	} {
		c := settled()
		c.LostWork = []string{"P"}
		mutate(&c)
		assert.False(t, RestartContinuationRun(c), name)
	}
}

func newServer(t *testing.T) (*Server, *store.Store) {
	k := sim.NewKernel(false)
	env := &model.Env{Clock: k, Trace: k.Trace(), Source: sim.NewTapeSource(nil, false),
		Profile: model.MustProfile(model.PresetReported, nil, nil), EnvironmentID: "env-1"}
	st := &store.Store{}
	st.Projects = append(st.Projects, &store.Project{ID: "project-1"})
	s := New(env, st, 1, Hooks{})
	st.Threads = append(st.Threads, &store.Thread{ID: "thread:restart", ProjectID: "project-1", Instance: "codex",
		ActiveRunID: "run:restart"})
	st.Runs = append(st.Runs, &store.Run{ID: "run:restart", ThreadID: "thread:restart", Instance: "codex",
		Status: store.RunRunning, ProviderThreadID: "P-new"})
	return s, st
}

// TestRC08_ShutdownPreparationScoping is RC-08, upstream prepareForShutdown
// scoping.
func TestRC08_ShutdownPreparationScoping(t *testing.T) {
	s, st := newServer(t)
	st.Background = append(st.Background, &store.BackgroundWork{ProviderThread: "P-old", Kind: "shell", Description: "sleep 25"})
	assert.Equal(t, 0, s.PrepareForShutdown(), "work of an older, switched-away provider thread: no writes")
	assert.Empty(t, st.Effects)

	st.Background = append(st.Background, &store.BackgroundWork{ProviderThread: "P-new", Kind: "shell", Description: "sleep 25"})
	assert.Equal(t, 1, s.PrepareForShutdown(), "the run's own provider thread: one write")
	require.Len(t, st.Effects, 1)
	assert.Equal(t, EffectContinue, st.Effects[0].Type)
	assert.Equal(t, "run:restart", st.Effects[0].SourceRun)

	// The run completes while the shutdown intent commits.
	st.EndRun("run:restart", store.RunCompleted)
	st.Settings.ContinueThreadsAfterServerUpdate = true
	sum := Reconcile(st, "shutdown", time.Minute)
	for _, e := range sum.Events {
		assert.NotEqual(t, "run", e.Entity, "no run.updated")
	}
	assert.False(t, s.ContinueRestartedRun("thread:restart", "run:restart"), "nothing dispatched")
	assert.Empty(t, st.Messages)
}

// rcStore is the recovery fixture: thread T on codex, run R on provider
// thread P (session S), with the subtree the case adds.
func rcStore(runStatus string) *store.Store {
	st := &store.Store{}
	st.Threads = append(st.Threads, &store.Thread{ID: "thread:recovery", Instance: "codex"})
	st.Runs = append(st.Runs, &store.Run{ID: "run:recovery", ThreadID: "thread:recovery", Instance: "codex", Status: runStatus,
		ProviderThreadID: "P"})
	if runStatus != store.RunCompleted {
		st.Threads[0].ActiveRunID = "run:recovery"
	}
	return st
}

func entities(sum RecoverySummary) []string {
	var out []string
	for _, e := range sum.Events {
		out = append(out, e.Entity+" "+e.Status)
	}
	return out
}

// TestRC10_RuntimeRequests is RC-10, upstream runtime-request recovery.
func TestRC10_RuntimeRequests(t *testing.T) {
	t.Run("orphaned", func(t *testing.T) {
		st := rcStore(store.RunCompleted)
		q := &store.RuntimeRequest{ID: "request:orphan", RunID: "run:recovery", Status: store.RequestPending,
			Capability: store.CapabilityNotResumable}
		st.RuntimeRequests = append(st.RuntimeRequests, q)
		Reconcile(st, "startup", time.Minute)
		assert.Equal(t, store.RequestExpired, q.Status)
	})
	live := func(runStatus string) (*store.Store, *store.RuntimeRequest, *store.RunPart, *store.RunPart, *store.RunPart) {
		st := rcStore(runStatus)
		q := &store.RuntimeRequest{ID: "request:approval", RunID: "run:recovery", Status: store.RequestPending,
			Capability: store.CapabilityLive}
		node := &store.RunPart{ID: "node:approval", RunID: "run:recovery", Kind: "node", Status: "waiting", RequestID: q.ID}
		item := &store.RunPart{ID: "item:approval", RunID: "run:recovery", Kind: "turn-item", Status: "waiting", RequestID: q.ID}
		done := &store.RunPart{ID: "item:done", RunID: "run:recovery", Kind: "turn-item", Status: "completed", RequestID: q.ID,
			CompletedAt: time.Second}
		st.RuntimeRequests = append(st.RuntimeRequests, q)
		st.Parts = append(st.Parts, node, item, done)
		return st, q, node, item, done
	}
	for _, c := range []struct {
		trigger, status string
		reason          string
	}{{"startup", store.RequestExpired, "restarted"}, {"shutdown", store.RequestCancelled, "shut down"}} {
		st, q, node, item, done := live(store.RunCompleted)
		sum := Reconcile(st, c.trigger, time.Minute)
		assert.Equal(t, c.status, q.Status, c.trigger)
		assert.Equal(t, store.CapabilityNotResumable, q.Capability)
		assert.Contains(t, q.Reason, c.reason)
		assert.Equal(t, store.RunCancelled, node.Status)
		assert.Equal(t, store.RunCancelled, item.Status)
		assert.Equal(t, time.Minute, item.CompletedAt, "with completedAt")
		assert.Equal(t, "completed", done.Status, "an already completed item is untouched")
		assert.Equal(t, 1, sum.ClosedRequests)
		assert.Len(t, sum.Events, 3)
	}
	st, _, _, _, _ := live(store.RunRunning)
	assert.Len(t, Reconcile(st, "startup", time.Minute).Events, 4, "with the run running, the run too")

	t.Run("message capability preserved", func(t *testing.T) {
		st := rcStore(store.RunCompleted)
		q := &store.RuntimeRequest{ID: "request:question", RunID: "run:recovery", Status: store.RequestPending,
			Capability: store.CapabilityMessage}
		st.RuntimeRequests = append(st.RuntimeRequests, q)
		for i := 0; i < 2; i++ {
			sum := Reconcile(st, "startup", time.Minute)
			assert.Equal(t, 0, sum.ClosedRequests)
			assert.Empty(t, sum.Events, "nothing committed")
		}
		assert.Equal(t, store.RequestPending, q.Status)
	})
}

// TestRC11_WaitingRunWithCheckpointCapture is RC-11, upstream waiting run
// with a running checkpoint capture.
func TestRC11_WaitingRunWithCheckpointCapture(t *testing.T) {
	st := rcStore(RunWaiting)
	st.ProviderThreads = append(st.ProviderThreads, &store.ProviderThread{ID: "P", ThreadID: "thread:recovery", Instance: "codex",
		Status: "idle", Roster: []string{"shell-1", "shell-2"}})
	shell1 := &store.RunPart{ID: "item:shell-1", RunID: "run:recovery", Kind: "turn-item", ItemKind: "shell", Status: "running"}
	shell2 := &store.RunPart{ID: "item:shell-2", RunID: "run:recovery", Kind: "turn-item", ItemKind: "shell", Status: "running"}
	st.Parts = append(st.Parts, shell1, shell2)
	st.Effects = append(st.Effects, &store.Effect{ID: "effect:capture", Type: EffectCheckpointCapture, SourceRun: "run:recovery",
		Status: "running"})
	sum := Reconcile(st, "startup", time.Minute)
	assert.Equal(t, RunWaiting, st.Runs[0].Status, "the run stays waiting")
	assert.NotContains(t, entities(sum), "run cancelled", "no run.updated")
	assert.Equal(t, []BackgroundCancelled{{RunID: "run:recovery", Kinds: []string{"shell"}}}, sum.Background, "kinds listed once")
	assert.Equal(t, store.RunCancelled, shell1.Status)
	assert.Empty(t, st.ProviderThreads[0].Roster, "pending background tasks cleared")
	assert.Equal(t, 1, sum.RequeuedEffects)

	st = rcStore(RunWaiting)
	sum = Reconcile(st, "startup", time.Minute)
	assert.Equal(t, store.RunCancelled, st.Runs[0].Status, "without a capture effect")
	assert.Equal(t, 1, sum.TerminalizedRuns)
}

// TestRC13_InFlightSubtree is RC-13, upstream in-flight subtree.
func TestRC13_InFlightSubtree(t *testing.T) {
	st := rcStore(RunStarting)
	st.Parts = append(st.Parts,
		&store.RunPart{ID: "attempt:1", RunID: "run:recovery", Kind: "attempt", Status: "running"},
		&store.RunPart{ID: "node:1", RunID: "run:recovery", Kind: "node", Status: "running"},
		&store.RunPart{ID: "turn:1", RunID: "run:recovery", Kind: "provider-turn", Status: "running"},
		&store.RunPart{ID: "item:1", RunID: "run:recovery", Kind: "turn-item", Status: "running", Node: "node:1"})
	st.Messages = append(st.Messages, &store.Message{ID: "message:1", ThreadID: "thread:recovery", RunID: "run:recovery", Streaming: true})
	st.ProviderThreads = append(st.ProviderThreads, &store.ProviderThread{ID: "P", ThreadID: "thread:recovery", Instance: "codex",
		Status: "active", SessionID: "session:1"})
	st.ProviderSessions = append(st.ProviderSessions, &store.ProviderSession{ID: "session:1", Status: "running"})
	st.Effects = append(st.Effects,
		&store.Effect{ID: "effect:start", Type: "provider-turn.start", SourceRun: "run:recovery", Status: "running"},
		&store.Effect{ID: "effect:respond", Type: "runtime-request.respond", SourceRun: "run:recovery", Status: "pending"})
	sum := Reconcile(st, "startup", time.Minute)
	assert.Equal(t, 1, sum.TerminalizedRuns)
	assert.Equal(t, 1, sum.StoppedSessions)
	assert.Equal(t, 2, sum.RetiredEffects)
	assert.Equal(t, []string{"provider-turn.start", "provider-turn.interrupt", "provider-turn.steer", "provider-turn.restart",
		"runtime-request.respond"}, ProcessBoundEffects, "the unsettled effect types cancelled")
	assert.Equal(t, []string{"run cancelled", "attempt cancelled", "node cancelled", "provider-turn cancelled",
		"message streaming=false", "turn-item cancelled", "provider-thread idle", "provider-session stopped"}, entities(sum))
	assert.Equal(t, "stopped", st.ProviderSessions[0].Status, "the session stopped, not reopened")
}

// TestRC14_StaleItemsOnSettledRuns is RC-14, upstream stale items on
// settled runs.
func TestRC14_StaleItemsOnSettledRuns(t *testing.T) {
	st := rcStore(store.RunCompleted)
	st.ProviderThreads = append(st.ProviderThreads,
		&store.ProviderThread{ID: "P", ThreadID: "thread:recovery", Instance: "claudeAgent", Status: "active"},
		&store.ProviderThread{ID: "P-roster", ThreadID: "thread:recovery", Instance: "codex", Status: "idle", Roster: []string{"monitor"}},
		&store.ProviderThread{ID: "P-quiet", ThreadID: "thread:recovery", Instance: "codex", Status: "idle"})
	st.Parts = append(st.Parts,
		&store.RunPart{ID: "node:wait", RunID: "run:recovery", Kind: "node", Status: "running"},
		&store.RunPart{ID: "item:wait", RunID: "run:recovery", Kind: "turn-item", ItemKind: "t3_thread_wait", Status: "running",
			Node: "node:wait", ProviderThread: "P"},
		&store.RunPart{ID: "node:monitor", RunID: "run:recovery", Kind: "node", Status: "running"},
		&store.RunPart{ID: "item:monitor", RunID: "run:recovery", Kind: "turn-item", ItemKind: "monitor", Persistent: true,
			Status: "running", Node: "node:monitor", ProviderThread: "P"})
	sum := Reconcile(st, "startup", time.Minute)
	assert.Equal(t, []string{"turn-item cancelled", "node cancelled", "turn-item cancelled", "node cancelled",
		"provider-thread idle", "provider-thread idle"}, entities(sum))
	for _, e := range sum.Events[:4] {
		assert.Equal(t, "codex", e.Instance, "attributed to the run's instance")
	}
	assert.Equal(t, []string{"P", "P-roster"}, []string{sum.Events[4].ID, sum.Events[5].ID},
		"only provider threads that were active or had rosters are rewritten")

	// Attribution without a run instance: the item's own, else its provider
	// thread's.
	st = rcStore(store.RunCompleted)
	st.Runs[0].Instance = ""
	st.ProviderThreads = append(st.ProviderThreads, &store.ProviderThread{ID: "P", Instance: "claudeAgent", Status: "idle"})
	st.Parts = append(st.Parts,
		&store.RunPart{ID: "item:own", RunID: "run:recovery", Kind: "turn-item", Status: "running", Instance: "acpRegistry_bob", ProviderThread: "P"},
		&store.RunPart{ID: "item:thread", RunID: "run:recovery", Kind: "turn-item", Status: "running", ProviderThread: "P"})
	sum = Reconcile(st, "startup", time.Minute)
	assert.Equal(t, "acpRegistry_bob", sum.Events[0].Instance)
	assert.Equal(t, "claudeAgent", sum.Events[1].Instance)
}

// TestRCN01_PreparedContinuationAfterCrashBeforeStart is RC-N01, upstream
// "recovers an admitted continuation after another crash before provider
// start" (RestartContinuation.test.ts @ 0f504549): a starting continuation
// whose provider thread is idle, session stopped and turns none is still
// the run to continue.
func TestRCN01_PreparedContinuationAfterCrashBeforeStart(t *testing.T) {
	c := base()
	c.RunStatus, c.ContinuationOf = RunStarting, "run:previous-crash"
	c.ProviderThreadActive, c.SessionStatus, c.RunningTurns = false, "stopped", 0
	assert.True(t, RestartContinuationRun(c))
	c.ContinuationOf = ""
	assert.False(t, RestartContinuationRun(c), "a starting run that is not a continuation is not")
}

// TestRCN06_NothingToRecoverLeavesEffectsToTheWorker is RC-N06, upstream
// "leaves durable effects for the worker after runtime reconciliation"
// (ProviderRuntimeRecoveryService.test.ts @ 0928e05e): with no thread to
// recover the summary is all zero. The effect worker's recovery loop is
// not modelled, so that it does not run is not checked.
func TestRCN06_NothingToRecoverLeavesEffectsToTheWorker(t *testing.T) {
	st := &store.Store{}
	st.Effects = append(st.Effects, &store.Effect{ID: "effect:durable", Type: "thread.title", Status: "pending"})
	sum := Reconcile(st, "startup", time.Minute)
	assert.Equal(t, RecoverySummary{}, sum)
	assert.Equal(t, "pending", st.Effects[0].Status, "a durable effect is left for the worker")
}

// TestRCN08_LostWorkOnTheProviderThreadThatLostIt is RC-N08, upstream
// "records cancelled work on the provider thread that lost it after a
// provider switch": Claude launched a background subagent and left a task
// on its roster, then the thread switched to Codex; the work is recorded
// under the Claude run, not the later Codex run.
func TestRCN08_LostWorkOnTheProviderThreadThatLostIt(t *testing.T) {
	st := &store.Store{}
	st.Threads = append(st.Threads, &store.Thread{ID: "thread_switch_note", Instance: "codex"})
	st.ProviderThreads = append(st.ProviderThreads,
		&store.ProviderThread{ID: "P-claude", ThreadID: "thread_switch_note", Instance: "claude", Status: "idle", Roster: []string{"task-claude"}},
		&store.ProviderThread{ID: "P-codex", ThreadID: "thread_switch_note", Instance: "codex", Status: "idle"})
	st.Runs = append(st.Runs,
		&store.Run{ID: "run_claude", ThreadID: "thread_switch_note", Instance: "claude", Status: store.RunCompleted, ProviderThreadID: "P-claude"},
		&store.Run{ID: "run_codex", ThreadID: "thread_switch_note", Instance: "codex", Status: store.RunCompleted, ProviderThreadID: "P-codex"})
	st.Parts = append(st.Parts, &store.RunPart{ID: "turn_item_subagent", RunID: "run_claude", Kind: "turn-item", ItemKind: "subagent",
		Status: "running", ProviderThread: "P-claude"})
	sum := Reconcile(st, "startup", time.Minute)
	assert.Equal(t, []BackgroundCancelled{{RunID: "run_claude", Kinds: []string{"subagent", "task"}}}, sum.Background)
}

// TestRCN09_QueuedWorkHeldWithItsExecutionState is RC-N09, upstream "holds
// accepted queued work without cancelling its execution state after
// restart".
func TestRCN09_QueuedWorkHeldWithItsExecutionState(t *testing.T) {
	st := rcStore(RunQueued)
	attempt := &store.RunPart{ID: "attempt_queued", RunID: "run:recovery", Kind: "attempt", Status: "pending"}
	node := &store.RunPart{ID: "node_queued", RunID: "run:recovery", Kind: "node", Status: "pending"}
	st.Parts = append(st.Parts, attempt, node)
	sum := Reconcile(st, "startup", time.Minute)
	assert.Equal(t, 0, sum.TerminalizedRuns)
	assert.Equal(t, []string{"run queued"}, entities(sum), "one run.updated, no attempt or node update")
	assert.Equal(t, RunQueued, st.Runs[0].Status)
	assert.True(t, st.Runs[0].QueueHeld)
	assert.Equal(t, "pending", attempt.Status)
	assert.Equal(t, "pending", node.Status)
}

// TestRCN10_StaleSubagentItemTerminalizesItsSubagentAndNode is RC-N10,
// upstream "terminalizes the linked subagent and node for a stale subagent
// item on a settled run"; a completed subagent and its node are untouched.
func TestRCN10_StaleSubagentItemTerminalizesItsSubagentAndNode(t *testing.T) {
	st := rcStore(store.RunCompleted)
	st.Runs[0].Instance = "claude"
	stale := &store.RunPart{ID: "node_stale", RunID: "run:recovery", Kind: "subagent", Status: "running"}
	done := &store.RunPart{ID: "node_done", RunID: "run:recovery", Kind: "subagent", Status: "completed"}
	st.Parts = append(st.Parts,
		&store.RunPart{ID: "node_stale", RunID: "run:recovery", Kind: "node", Status: "running"},
		&store.RunPart{ID: "node_done", RunID: "run:recovery", Kind: "node", Status: "completed"},
		stale, done,
		&store.RunPart{ID: "item_stale", RunID: "run:recovery", Kind: "turn-item", ItemKind: "subagent", Status: "running",
			Node: "node_stale", Subagent: "node_stale"},
		&store.RunPart{ID: "item_done", RunID: "run:recovery", Kind: "turn-item", ItemKind: "subagent", Status: "completed",
			Node: "node_done", Subagent: "node_done"})
	sum := Reconcile(st, "startup", time.Minute)
	assert.Equal(t, []string{"turn-item cancelled", "node cancelled", "subagent cancelled"}, entities(sum))
	assert.Equal(t, []string{"item_stale", "node_stale", "node_stale"}, []string{sum.Events[0].ID, sum.Events[1].ID, sum.Events[2].ID})
	assert.Equal(t, store.RunCancelled, stale.Status)
	assert.Equal(t, "completed", done.Status, "a finished subagent is never overwritten")
}

// TestRCN02_RestartIntentFollowsOptInAndProjectOverride is RC-N02, RC-N03,
// RC-N04 and RC-N05, upstream "atomically records restart intent with
// cancellation when opt-in is %s and project override is %s", one row each:
// a startup reconcile cancels the running run and it is continued only
// when the project's override, else the environment's opt-in, is on.
// Expressed differently: the model continues at once instead of recording a
// provider-runtime.continue effect in the same commit.
func TestRCN02_RestartIntentFollowsOptInAndProjectOverride(t *testing.T) {
	on, off := true, false
	for _, c := range []struct {
		id       string
		enabled  bool
		override *bool
		want     bool
	}{{"RC-N02", false, nil, false}, {"RC-N03", true, nil, true}, {"RC-N04", false, &on, true}, {"RC-N05", true, &off, false}} {
		s, st := newServer(t)
		st.Settings.ContinueThreadsAfterServerUpdate = c.enabled
		st.Project("project-1").ContinueThreadsAfterServerUpdate = c.override
		s.reconcile("startup")
		assert.Equal(t, store.RunCancelled, st.Run("run:restart").Status, "%s: the run is cancelled", c.id)
		s.continueRestartedRuns()
		continued := st.Message("message:restart-continuation:run:restart") != nil
		assert.Equal(t, c.want, continued, "%s: opt-in %v, override %v", c.id, c.enabled, c.override)
	}
}
