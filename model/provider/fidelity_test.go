package provider

// Fidelity cases of FIDELITY.md §5 (ProviderSessionManager.test.ts @
// 064f6c1f, older 47cd18a0, and [variant] versions), run against the
// manager with a real registry, slots and projection. Each test is named
// after its case id; the registry of cases is scenarios/fidelity_test.go.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/mcp"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// fx is the upstream harness: the manager over a real registry (endpoint
// of the fake HTTP server), the per-thread slots and a projection; a fake
// adapter that opens in 100 ms; a test clock. Every other draw is the
// simplest (scope close 20 ms).
type fx struct {
	t     *testing.T
	k     *sim.Kernel
	reg   *mcp.Registry
	slots *mcp.Slots
	st    *store.Store
	m     *Manager
}

func newFx(t *testing.T, idle time.Duration) *fx {
	k := sim.NewKernel(false)
	env := &model.Env{Clock: k, Trace: k.Trace(), Source: sim.NewTapeSource(nil, false),
		// The upstream file's manager has the idle pin (PR #10689).
		Profile: model.MustProfile(model.PresetReported, []string{string(BackgroundWorkPinsSession)}, nil), EnvironmentID: "env-1"}
	reg := mcp.NewRegistry(env)
	reg.Endpoint = "http://127.0.0.1:43123/mcp"
	slots := &mcp.Slots{}
	st := &store.Store{}
	m := NewManager(env, reg, slots, 1)
	m.Store = st
	m.IdleTimeout = idle
	m.CapsFor = func(string, string) mcp.Caps { return mcp.CapPreview | mcp.CapOrchestration | mcp.CapWorktree }
	return &fx{t: t, k: k, reg: reg, slots: slots, st: st, m: m}
}

const openTime = 100 * time.Millisecond

func (f *fx) run(d time.Duration) { f.k.RunUntil(f.k.Elapsed() + d) }

type opened struct {
	e    *Entry
	err  error
	done bool
}

// open starts open(thread, session) and returns its pending result.
func (f *fx) open(session, thread, instance string) *opened {
	got := &opened{}
	f.m.Open(session, thread, instance, openTime, func(e *Entry, err error) { *got = opened{e, err, true} })
	return got
}

// openNow opens and waits for the adapter.
func (f *fx) openNow(session, thread, instance string) *Entry {
	o := f.open(session, thread, instance)
	f.run(openTime)
	require.True(f.t, o.done)
	require.NoError(f.t, o.err)
	return o.e
}

// cleanup lets a release's scope close and credential clean-up finish.
func (f *fx) cleanup() { f.run(ReleaseScopeCloseTimeout + time.Second) }

func (f *fx) slot(thread string) (mcp.Slot, bool) { return f.slots.Get(thread) }

func (f *fx) resolves(token string) bool { return f.reg.Resolve(token) != nil }

func (f *fx) status(session string) string {
	if r := f.st.ProviderSession(session); r != nil {
		return r.Status
	}
	return ""
}

// TestPSM01_OpensIndependentSessionsConcurrently is PSM-01, upstream "opens
// independent sessions concurrently".
func TestPSM01_OpensIndependentSessionsConcurrently(t *testing.T) {
	f := newFx(t, time.Hour)
	a := f.open("session-a", "thread-a", "claudeAgent")
	b := f.open("session-b", "thread-b", "claudeAgent")
	assert.Equal(t, 2, f.m.Opens(), "both adapter opens started before either finished")
	assert.False(t, a.done || b.done)
	f.run(openTime)
	require.True(t, a.done && b.done)
	assert.NotSame(t, a.e, b.e, "two distinct runtimes")
	assert.Equal(t, 2, f.m.Opens())
}

// TestPSM02_OpensDuplicateSessionOnce is PSM-02, upstream "opens a duplicate
// session only once".
func TestPSM02_OpensDuplicateSessionOnce(t *testing.T) {
	f := newFx(t, time.Hour)
	a := f.open("session-1", "thread-1", "codex")
	b := f.open("session-1", "thread-1", "codex")
	f.run(openTime)
	require.True(t, a.done && b.done)
	assert.Same(t, a.e, b.e, "both callers get the identical runtime")
	assert.Equal(t, 1, f.m.Opens())
}

// TestPSM04_SubscriptionsEndNormallyOnShutdown is PSM-04, upstream "closes
// event subscriptions normally on server shutdown".
func TestPSM04_SubscriptionsEndNormallyOnShutdown(t *testing.T) {
	f := newFx(t, time.Hour)
	e := f.openNow("session-1", "thread-1", "codex")
	active := f.m.Subscribe(e)
	f.m.Publish(e, "turn.started")
	buffered := f.m.Subscribe(e)
	f.m.Shutdown()
	assert.Equal(t, &Subscription{Items: []string{"turn.started"}, Ended: true}, active, "the event reached the active subscription")
	assert.Equal(t, &Subscription{Ended: true}, buffered, "ends with no items and no error")
	// Any other release fails its subscribers.
	e = f.openNow("session-2", "thread-2", "codex")
	sub := f.m.Subscribe(e)
	require.NoError(t, f.m.Release(e, ReasonRuntimeError, "process exited"))
	assert.Equal(t, "Provider session released: runtime_error.", sub.Err)
}

// TestPSM05_IssuesCredentialBeforeOpenRevokesOnClose is PSM-05, upstream
// "issues MCP credentials before opening and revokes them on close" (idle
// 1000).
func TestPSM05_IssuesCredentialBeforeOpenRevokesOnClose(t *testing.T) {
	f := newFx(t, time.Second)
	o := f.open("session-1", "thread-1", "codex")
	sl, ok := f.slot("thread-1")
	require.True(t, ok, "the slot exists during the adapter open")
	assert.False(t, o.done)
	assert.Equal(t, "thread-1", sl.ThreadID)
	assert.Equal(t, "codex", sl.InstanceID)
	assert.Equal(t, "http://127.0.0.1:43123/mcp", sl.Endpoint)
	c := f.reg.Resolve(sl.Token)
	require.NotNil(t, c)
	assert.Equal(t, "thread-1", c.Scope.Thread.ThreadID)
	assert.Equal(t, "orchestration,worktree,preview", c.Scope.Capabilities.String())
	f.run(openTime)
	require.NoError(t, f.m.Close("session-1"))
	f.cleanup()
	_, ok = f.slot("thread-1")
	assert.False(t, ok, "slot empty after close")
	assert.False(t, f.resolves(sl.Token))
}

// TestPSM07_RevokesWhenReleasePersistenceFails is PSM-07, upstream "revokes
// MCP credentials when release persistence fails".
func TestPSM07_RevokesWhenReleasePersistenceFails(t *testing.T) {
	f := newFx(t, time.Hour)
	f.openNow("session-1", "thread-1", "codex")
	sl, _ := f.slot("thread-1")
	f.m.FailStatusWrite = func(status string) bool { return status == "stopped" || status == "error" }
	assert.ErrorIs(t, f.m.Close("session-1"), ErrClose)
	f.cleanup()
	_, ok := f.slot("thread-1")
	assert.False(t, ok, "the slot is cleared anyway")
	assert.False(t, f.resolves(sl.Token), "and the token is dead")
	assert.Nil(t, f.m.Entry("session-1"))
	assert.Equal(t, 1, f.m.Closes())
}

// TestPSM08_DuplicateDetachPreservesReplacement is PSM-08, upstream
// "duplicate detach preserves replacement MCP credentials" (exclusive
// capabilities: claudeAgent).
func TestPSM08_DuplicateDetachPreservesReplacement(t *testing.T) {
	f := newFx(t, time.Hour)
	old := f.openNow("session-old", "thread-1", "claudeAgent")
	f.m.Detach(old, "thread-1", false)
	f.openNow("session-new", "thread-1", "claudeAgent")
	r, ok := f.slot("thread-1")
	require.True(t, ok)
	f.m.Detach(old, "thread-1", false)
	f.cleanup()
	now, ok := f.slot("thread-1")
	require.True(t, ok)
	assert.Equal(t, r.CredID, now.CredID, "the slot still holds the replacement's credential")
	assert.True(t, f.resolves(r.Token))
}

// TestPSM10_CredentialStableAcrossDetachReattach is PSM-10, upstream "keeps
// a thread's MCP credential stable across detach and re-attach on a shared
// session" [BUG-1] [BUG-2]. The fixes do not change the manager.
func TestPSM10_CredentialStableAcrossDetachReattach(t *testing.T) {
	f := newFx(t, time.Hour)
	e := f.openNow("session-shared", "thread-1", "codex")
	c, _ := f.slot("thread-1")
	f.m.Detach(e, "thread-1", false) // "Workspace changed."
	assert.True(t, f.resolves(c.Token), "after detach the credential still resolves")
	again := f.openNow("session-shared", "thread-1", "codex")
	assert.Same(t, e, again)
	now, _ := f.slot("thread-1")
	assert.Equal(t, c.CredID, now.CredID, "reused, not rotated")
	assert.True(t, f.resolves(c.Token))
	require.NoError(t, f.m.Close("session-shared"))
	f.cleanup()
	assert.False(t, f.resolves(c.Token), "after close")
}

// TestPSM11_RevokesRotatedCredentialDespiteStaleRecord is PSM-11, upstream
// "revokes a rotated credential despite a stale record on another live
// session" [BUG-1] [BUG-2].
func TestPSM11_RevokesRotatedCredentialDespiteStaleRecord(t *testing.T) {
	f := newFx(t, time.Hour)
	s1 := f.openNow("session-1", "thread-1", "codex")
	c1, _ := f.slot("thread-1")
	f.m.Detach(s1, "thread-1", false)
	f.reg.RevokeThread("thread-1", "liveness") // the credential dies externally
	f.openNow("session-2", "thread-1", "codex")
	c2, _ := f.slot("thread-1")
	require.NotEqual(t, c1.CredID, c2.CredID, "rotated: a new providerSessionId")
	assert.True(t, f.resolves(c2.Token))
	require.NoError(t, f.m.Close("session-2"))
	f.cleanup()
	assert.False(t, f.resolves(c2.Token), "although session-1 still records the stale credential")
	require.NoError(t, f.m.Close("session-1"))
	f.cleanup()
}

// TestPSM13_TerminalDetachRevokes is PSM-13, upstream "terminal detach
// revokes the thread's MCP credential".
func TestPSM13_TerminalDetachRevokes(t *testing.T) {
	f := newFx(t, time.Hour)
	e := f.openNow("session-1", "thread-1", "codex")
	c, _ := f.slot("thread-1")
	f.m.Detach(e, "thread-1", true) // "Thread deleted."
	assert.False(t, f.resolves(c.Token))
	_, ok := f.slot("thread-1")
	assert.False(t, ok)
	assert.Same(t, e, f.m.Entry("session-1"), "the provider process keeps running")
}

// TestPSM14_ReleasesIdleSessions is PSM-14, upstream "releases idle
// sessions without sweeping all sessions" (idle 1000).
func TestPSM14_ReleasesIdleSessions(t *testing.T) {
	f := newFx(t, time.Second)
	f.openNow("session-1", "thread-1", "codex")
	f.run(time.Second)
	assert.Nil(t, f.m.Entry("session-1"))
	assert.Equal(t, 1, f.m.Opens())
	assert.Equal(t, 1, f.m.Closes())
	assert.Equal(t, "stopped", f.status("session-1"))
}

// TestPSM16_DefersIdleReleaseForBackgroundWork is PSM-16, upstream "defers
// idle release while background work is pending" (idle 1000, default pin
// cap).
func TestPSM16_DefersIdleReleaseForBackgroundWork(t *testing.T) {
	f := newFx(t, time.Second)
	e := f.openNow("session-1", "thread-1", "codex")
	f.m.SetBackgroundWork(e, time.Hour)
	f.run(3 * time.Second)
	assert.NotNil(t, f.m.Entry("session-1"))
	assert.Equal(t, 0, f.m.Closes())
	f.m.SetBackgroundWork(e, 0)
	f.run(time.Second)
	assert.Nil(t, f.m.Entry("session-1"))
	assert.Equal(t, 1, f.m.Closes())
}

// TestPSM17_ReleasesPinnedSessionAtPinCap is PSM-17, upstream "releases
// pinned idle sessions once the pin cap expires" (idle 1000, maxIdlePinMs
// 3000).
func TestPSM17_ReleasesPinnedSessionAtPinCap(t *testing.T) {
	f := newFx(t, time.Second)
	f.m.MaxIdlePin = 3 * time.Second
	e := f.openNow("session-1", "thread-1", "codex")
	f.m.SetBackgroundWork(e, 100*time.Hour)
	f.run(3 * time.Second)
	assert.NotNil(t, f.m.Entry("session-1"))
	f.run(time.Second)
	assert.Nil(t, f.m.Entry("session-1"), "released at 4 s")
	assert.Equal(t, 1, f.m.Closes())
}

// TestPSM19_StalePinNotAppliedToReplacement is PSM-19, upstream "does not
// apply a stale idle pin to a replacement session" (idle 1000, maxIdlePinMs
// 60 000).
func TestPSM19_StalePinNotAppliedToReplacement(t *testing.T) {
	f := newFx(t, time.Second)
	f.m.MaxIdlePin = time.Minute
	var parked func(bool)
	f.m.ProbeBackground = func(e *Entry, answer func(bool)) {
		if parked == nil {
			parked = answer // the old runtime's probe parks; it will say pending
			return
		}
		answer(false)
	}
	f.openNow("session-1", "thread-1", "codex")
	f.run(time.Second)
	require.NotNil(t, parked, "the idle probe parked")
	require.NoError(t, f.m.Close("session-1"))
	f.openNow("session-1", "thread-1", "codex")
	assert.Equal(t, 2, f.m.Opens())
	parked(true)
	assert.NotNil(t, f.m.Entry("session-1"), "the replacement is live")
	assert.Equal(t, 1, f.m.Closes())
	f.run(time.Second)
	assert.Nil(t, f.m.Entry("session-1"), "the old probe's pin was not applied to the replacement")
	assert.Equal(t, 2, f.m.Closes())
}

// TestPSM20_KeepsActiveSessionUntilTurnTerminal is PSM-20, upstream "keeps
// active sessions alive until the provider turn terminates" (idle 1000).
func TestPSM20_KeepsActiveSessionUntilTurnTerminal(t *testing.T) {
	f := newFx(t, time.Second)
	e := f.openNow("session-1", "thread-1", "codex")
	require.NoError(t, f.m.BeginTurn(e, "thread-1"))
	f.run(2 * time.Second)
	assert.Equal(t, 0, f.m.Closes())
	f.m.TurnTerminal(e, "thread-1")
	f.run(time.Second)
	assert.Nil(t, f.m.Entry("session-1"))
	assert.Equal(t, 1, f.m.Closes())
	assert.Equal(t, "stopped", f.status("session-1"))
}

// TestPSM22_KeepsLastErrorAcrossIdleRelease is PSM-22, upstream "keeps a
// projected lastError across idle release".
func TestPSM22_KeepsLastErrorAcrossIdleRelease(t *testing.T) {
	f := newFx(t, time.Hour)
	e := f.openNow("session-1", "thread-1", "codex")
	f.run(time.Second)
	f.m.ReportStatus(e, "error", "rate limited")
	at := f.st.ProviderSession("session-1").LastErrorAt
	require.NoError(t, f.m.Release(e, ReasonIdleTimeout, ""))
	row := f.st.ProviderSession("session-1")
	assert.Equal(t, "stopped", row.Status)
	assert.Equal(t, "rate limited", row.LastError)
	assert.Equal(t, at, row.LastErrorAt)
}

// TestPSM23_RuntimeFailureUsesReleasePath is PSM-23, upstream "uses the same
// release path for runtime failures".
func TestPSM23_RuntimeFailureUsesReleasePath(t *testing.T) {
	f := newFx(t, time.Hour)
	e := f.openNow("session-1", "thread-1", "codex")
	require.NoError(t, f.m.Release(e, ReasonRuntimeError, "process exited"))
	assert.Nil(t, f.m.Entry("session-1"))
	assert.Equal(t, 1, f.m.Closes())
	assert.Equal(t, "error", f.status("session-1"))
	assert.Equal(t, "process exited", f.st.ProviderSession("session-1").LastError)
}

// TestPSM25_PendingRuntimeRequestsNonLiveOnRelease is PSM-25, upstream
// "marks pending runtime requests non-live on release".
func TestPSM25_PendingRuntimeRequestsNonLiveOnRelease(t *testing.T) {
	f := newFx(t, time.Hour)
	e := f.openNow("session-1", "thread-1", "codex")
	req := &store.RuntimeRequest{ID: "request-approval", ThreadID: "thread-1", SessionID: "session-1",
		Status: store.RequestPending, Capability: store.CapabilityLive, NodeStatus: "waiting", ItemStatus: "running"}
	f.st.RuntimeRequests = append(f.st.RuntimeRequests, req)
	require.NoError(t, f.m.Release(e, ReasonRuntimeError, "process exited"))
	assert.Equal(t, store.RequestExpired, req.Status)
	assert.Equal(t, store.CapabilityNotResumable, req.Capability)
	assert.Equal(t, store.RunFailed, req.NodeStatus)
	assert.Equal(t, store.RunFailed, req.ItemStatus)
}

// TestPSM26_MultiThreadSessionAliveUntilAllTurnsFinish is PSM-26, upstream
// "keeps a multi-thread session alive until all turns finish" (idle 1000).
func TestPSM26_MultiThreadSessionAliveUntilAllTurnsFinish(t *testing.T) {
	f := newFx(t, time.Second)
	e := f.openNow("session-shared", "thread-1", "codex")
	require.Same(t, e, f.openNow("session-shared", "thread-2", "codex"))
	require.NoError(t, f.m.BeginTurn(e, "thread-1"))
	require.NoError(t, f.m.BeginTurn(e, "thread-2"))
	f.m.TurnTerminal(e, "thread-1")
	f.run(2 * time.Second)
	assert.Equal(t, 0, f.m.Closes())
	f.m.TurnTerminal(e, "thread-2")
	f.run(time.Second)
	assert.Equal(t, 1, f.m.Closes())
}

// TestPSM28_ExclusiveRuntimeRejectsSecondThread is PSM-28, upstream
// "rejects a second thread when the provider runtime is exclusive".
func TestPSM28_ExclusiveRuntimeRejectsSecondThread(t *testing.T) {
	f := newFx(t, time.Hour)
	f.openNow("session-1", "thread-1", "claudeAgent")
	o := f.open("session-1", "thread-2", "claudeAgent")
	require.True(t, o.done)
	assert.ErrorContains(t, o.err, "ProviderSessionOpenError")
	assert.Equal(t, 1, f.m.Opens())
}

// TestPSMV1_RotatesOnPolicyChangeReusesComplete is PSM-V1 [variant],
// "rotates {missing-owned-grants | excess-device-grant |
// missing-skill-scope} and reuses only the complete native policy" [BUG-1]
// [BUG-2]: the capability sets stand for the policy.
func TestPSMV1_RotatesOnPolicyChangeReusesComplete(t *testing.T) {
	for _, stale := range []mcp.Caps{
		mcp.CapOrchestration | mcp.CapWorktree,                                  // missing an owned grant
		mcp.CapPreview | mcp.CapOrchestration | mcp.CapWorktree | mcp.CapDevice, // an excess device grant
	} {
		f := newFx(t, time.Hour)
		old := f.reg.Issue("thread-1", "codex", stale, "earlier")
		f.slots.Set(mcp.Slot{ThreadID: "thread-1", CredID: old.ID, Token: old.Token, InstanceID: "codex", Caps: stale})
		f.openNow("session-1", "thread-1", "codex")
		c, _ := f.slot("thread-1")
		assert.NotEqual(t, old.Token, c.Token, "a new credential (a different auth header)")
		assert.False(t, f.resolves(old.Token), "the stale one is revoked")
		f.openNow("session-2", "thread-1", "codex")
		again, _ := f.slot("thread-1")
		assert.Equal(t, c.CredID, again.CredID, "the complete one is reused")
		require.NoError(t, f.m.Close("session-1"))
		f.cleanup()
		assert.True(t, f.resolves(c.Token), "session-2 still holds it")
		require.NoError(t, f.m.Close("session-2"))
		f.cleanup()
		assert.False(t, f.resolves(c.Token))
	}
}

// TestPSMV2_WorkspaceMissing is PSM-V2 [variant], workspace checks.
func TestPSMV2_WorkspaceMissing(t *testing.T) {
	f := newFx(t, time.Hour)
	missing := map[string]bool{"thread-gone": true}
	f.m.WorkspaceMissing = func(thread string) bool { return missing[thread] }
	o := f.open("session-gone", "thread-gone", "codex")
	require.True(t, o.done)
	assert.ErrorIs(t, o.err, ErrWorkspaceMissing)
	assert.Contains(t, o.err.Error(), "Restore the folder at this path before retrying.")
	assert.Equal(t, 0, f.m.Opens(), "no adapter open")
	assert.Nil(t, f.st.ProviderSession("session-gone"), "no projected session")

	e := f.openNow("session-1", "thread-1", "codex")
	missing["thread-1"] = true
	writes := f.st.ProviderSession("session-1").Writes
	o = f.open("session-1", "thread-1", "codex")
	assert.ErrorIs(t, o.err, ErrWorkspaceMissing)
	assert.Same(t, e, f.m.Entry("session-1"), "the live runtime is untouched")
	assert.Equal(t, writes, f.st.ProviderSession("session-1").Writes, "and so is the projection")
}

// TestPSMN01_ShutdownReleasesLiveSessions is PSM-N01, upstream
// "ProviderSessionManagerV2 releases live sessions when its layer shuts
// down" (ProviderSessionManager.test.ts @ 064f6c1f).
func TestPSMN01_ShutdownReleasesLiveSessions(t *testing.T) {
	f := newFx(t, time.Minute)
	f.openNow("session-1", "thread-1", "codex")
	assert.Equal(t, 1, f.m.Opens())
	assert.Equal(t, 0, f.m.Closes())
	f.m.Shutdown()
	assert.Equal(t, 1, f.m.Closes())
	assert.Nil(t, f.m.Entry("session-1"))
	assert.Equal(t, "stopped", f.status("session-1"))
}

// TestPSMN02_BrowserAccessOffWithholdsPreview is PSM-N02, upstream
// "ProviderSessionManagerV2 withholds the preview capability when agent
// browser access is off". Browser access is the capability policy
// (CapsFor); the config's browserToolsAvailable flag is not modelled.
func TestPSMN02_BrowserAccessOffWithholdsPreview(t *testing.T) {
	f := newFx(t, time.Second)
	browserAccess := false
	f.m.CapsFor = func(string, string) mcp.Caps {
		if browserAccess {
			return mcp.CapPreview | mcp.CapOrchestration | mcp.CapWorktree
		}
		return mcp.CapOrchestration | mcp.CapWorktree
	}
	f.openNow("session-1", "thread-1", "codex")
	sl, ok := f.slot("thread-1")
	require.True(t, ok)
	c := f.reg.Resolve(sl.Token)
	require.NotNil(t, c)
	assert.Equal(t, "orchestration,worktree", c.Scope.Capabilities.String())
	require.NoError(t, f.m.Close("session-1"))
}

// TestPSMN03_DetachOfSupersededSessionKeepsReplacement is PSM-N03, upstream
// "ProviderSessionManagerV2 detach of a superseded live session preserves
// replacement MCP credentials" (exclusive capabilities: claudeAgent): the
// replacement opens while the old session is still attached.
func TestPSMN03_DetachOfSupersededSessionKeepsReplacement(t *testing.T) {
	f := newFx(t, time.Hour)
	old := f.openNow("session-old", "thread-1", "claudeAgent")
	f.openNow("session-new", "thread-1", "claudeAgent")
	r, ok := f.slot("thread-1")
	require.True(t, ok)
	f.m.Detach(old, "thread-1", false)
	f.cleanup()
	now, ok := f.slot("thread-1")
	require.True(t, ok, "the first detach of the superseded session keeps the slot")
	assert.Equal(t, r.CredID, now.CredID)
	assert.True(t, f.resolves(r.Token), "and the replacement's credential")
}

// TestPSMN04_PredecessorReleaseDuringOpenKeepsReusedCredential is PSM-N04,
// upstream "ProviderSessionManagerV2 protects a reused credential from a
// predecessor release during open": the release lands while the
// replacement's adapter open is in flight.
func TestPSMN04_PredecessorReleaseDuringOpenKeepsReusedCredential(t *testing.T) {
	f := newFx(t, time.Hour)
	s1 := f.openNow("session-1", "thread-1", "codex")
	original, _ := f.slot("thread-1")
	f.m.Detach(s1, "thread-1", false)
	o := f.open("session-2", "thread-1", "codex")
	require.NoError(t, f.m.Close("session-1"), "the predecessor releases during the open")
	f.cleanup()
	require.True(t, o.done)
	require.NoError(t, o.err)
	slot, ok := f.slot("thread-1")
	require.True(t, ok)
	assert.Equal(t, original.CredID, slot.CredID, "the credential the adapter was configured with stays current")
	assert.True(t, f.resolves(original.Token), "the release does not revoke a credential reserved by an open")
	require.NoError(t, f.m.Close("session-2"))
}

// TestPSMN06_TurnDuringPendingWorkCheckKeepsSession is PSM-N06, upstream
// "ProviderSessionManagerV2 does not idle-release a session that turns busy
// during the pending-work check".
func TestPSMN06_TurnDuringPendingWorkCheckKeepsSession(t *testing.T) {
	f := newFx(t, time.Second)
	var parked func(bool)
	f.m.ProbeBackground = func(e *Entry, answer func(bool)) {
		if parked == nil {
			parked = answer
			return
		}
		answer(false)
	}
	e := f.openNow("session-1", "thread-1", "codex")
	f.run(time.Second)
	require.NotNil(t, parked, "the idle release is parked in the pending-work check")
	require.NoError(t, f.m.BeginTurn(e, "thread-1"))
	parked(false)
	assert.NotNil(t, f.m.Entry("session-1"), "the stale idle decision does not release a busy session")
	assert.Equal(t, 0, f.m.Closes())
	f.m.TurnTerminal(e, "thread-1")
	f.run(time.Second)
	assert.Nil(t, f.m.Entry("session-1"))
	assert.Equal(t, 1, f.m.Closes())
}

// TestPSMN07_ReleasedSessionKeepsOrSetsLastError is PSM-N07, upstream
// "releasedProviderSession keeps lastError when the live process is reaped"
// (a pure function upstream; here through the release's status write): an
// idle release keeps the lastError and its time, a runtime_error release
// sets both.
func TestPSMN07_ReleasedSessionKeepsOrSetsLastError(t *testing.T) {
	f := newFx(t, time.Hour)
	e := f.openNow("session-1", "thread-1", "codex")
	f.m.ReportStatus(e, "error", "event stream stalled")
	at := f.st.ProviderSession("session-1").LastErrorAt
	f.run(30 * time.Minute)
	require.NoError(t, f.m.Release(e, ReasonIdleTimeout, ""))
	row := f.st.ProviderSession("session-1")
	assert.Equal(t, "stopped", row.Status)
	assert.Equal(t, "event stream stalled", row.LastError)
	assert.Equal(t, at, row.LastErrorAt)

	e = f.openNow("session-2", "thread-2", "codex")
	f.m.ReportStatus(e, "error", "event stream stalled")
	f.run(30 * time.Minute)
	require.NoError(t, f.m.Release(e, ReasonRuntimeError, "process exited"))
	row = f.st.ProviderSession("session-2")
	assert.Equal(t, "error", row.Status)
	assert.Equal(t, "process exited", row.LastError)
	assert.Equal(t, f.k.Elapsed(), row.LastErrorAt, "the runtime error's own time")
}

// TestPSMN08_FailedEventStreamReleases is PSM-N08, upstream
// "ProviderSessionManagerV2 releases sessions when provider event streams
// fail".
func TestPSMN08_FailedEventStreamReleases(t *testing.T) {
	f := newFx(t, time.Second)
	e := f.openNow("session-1", "thread-1", "codex")
	f.m.Crash(e)
	assert.Nil(t, f.m.Entry("session-1"))
	assert.Equal(t, 1, f.m.Closes())
	assert.Equal(t, "error", f.status("session-1"))
}

// TestPSMN09_SharedRuntimeBroadcastsAndDetachesIndependently is PSM-N09,
// upstream "ProviderSessionManagerV2 opens one shared runtime, broadcasts
// events, and detaches threads independently". The adapter's resumeThread
// dedupe and the interrupt on detach are not modelled.
func TestPSMN09_SharedRuntimeBroadcastsAndDetachesIndependently(t *testing.T) {
	f := newFx(t, time.Second)
	first := f.openNow("session-shared", "thread-1", "codex")
	second := f.openNow("session-shared", "thread-2", "codex")
	assert.Same(t, first, second, "one shared runtime")
	assert.Equal(t, 1, f.m.Opens())
	a, b := f.m.Subscribe(first), f.m.Subscribe(first)
	f.m.Publish(first, "provider_session.updated")
	assert.Equal(t, []string{"provider_session.updated"}, a.Items)
	assert.Equal(t, []string{"provider_session.updated"}, b.Items, "broadcast to every subscription")
	f.m.Detach(first, "thread-2", false)
	assert.Same(t, first, f.openNow("session-shared", "thread-2", "codex"), "re-attach")
	f.m.Detach(first, "thread-1", false)
	assert.NotNil(t, f.m.Entry("session-shared"), "the other thread keeps it")
	assert.Equal(t, 0, f.m.Closes())
	f.m.Detach(first, "thread-2", false)
	f.run(time.Second)
	assert.Equal(t, 1, f.m.Closes(), "released once idle with no thread attached")
}

// TestPSMN05_ReleasePersistsWhateverTheScopeClose is PSM-N05, upstream
// "ProviderSessionManagerV2 persists release when session scope close
// hangs". The model writes the release's status before it closes the
// session's scope, so a hung close cannot hold it back; a hang cannot be
// forced here (it is a seeded draw), and the close count is taken at the
// release, not when the scope's finalizer runs.
func TestPSMN05_ReleasePersistsWhateverTheScopeClose(t *testing.T) {
	f := newFx(t, time.Second)
	f.openNow("session-1", "thread-1", "codex")
	f.run(time.Second)
	assert.Nil(t, f.m.Entry("session-1"), "released at the idle timeout")
	assert.Equal(t, "stopped", f.status("session-1"), "persisted at once, before the scope close")
	f.run(ReleaseScopeCloseTimeout)
	assert.Equal(t, "stopped", f.status("session-1"))
}
