package terminal

// Fidelity cases of FIDELITY.md §8 (agent-code's sessionManager, renderer
// and provider tests) that manager_test.go does not already cover. Each
// test is named after its case id; the registry of cases is
// scenarios/fidelity_test.go (it also maps the cases of manager_test.go
// and the scripted AC-D* stories).

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// TestAC05_ReentrantRecoveryJoins is AC-05, upstream "joins a re-entrant
// recovery initiated during provider construction". Expressed
// differently: the model constructs the backend synchronously inside
// recover, so the re-entrant call is issued at the same instant, after the
// synchronous claim, which is what it joins upstream too.
func TestAC05_ReentrantRecoveryJoins(t *testing.T) {
	f := newFixture(t)
	var results []RecoverResult
	rec := func(r RecoverResult) { results = append(results, r) }
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project", Caller: "outer"}, rec)
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project", Caller: "reentrant"}, rec)
	f.run(time.Second)
	require.Len(t, results, 2)
	for _, r := range results {
		assert.Equal(t, Spawned, r.Disposition)
	}
	assert.Len(t, f.events("spawn"), 1, "one provider")
}

// TestAC08_ConstructionFailureExposesNothing is AC-08, upstream "revokes
// MCP and exposes no provider exception when construction fails".
// Expressed differently: the failure is injected at start (the model has no
// constructor step), and project MCP registration is not modelled, so the
// register/revoke counts are not checked; the fixed start-failed result
// (no provider text), no snapshot and no listing are.
func TestAC08_ConstructionFailureExposesNothing(t *testing.T) {
	f := newFixture(t)
	f.m.cfg.StartFailChance = sim.Per(1, 1)
	var got *RecoverResult
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project"}, func(r RecoverResult) { got = &r })
	f.run(time.Second)
	require.NotNil(t, got)
	assert.Equal(t, RecoverResult{Code: CodeStartFailed, Retryable: true, Message: "Session failed to start. Check provider setup and retry."}, *got)
	assert.Nil(t, f.m.Backend("stable-session"), "not listed")
	assert.Empty(t, f.m.Snapshot("stable-session").Backend, "no snapshot")
}

// TestAC14_CancelledGenerationFencedUntilRollback is AC-14, upstream "keeps
// a cancelled generation fenced until its startup rollback settles".
func TestAC14_CancelledGenerationFencedUntilRollback(t *testing.T) {
	f := newFixture(t)
	var first, joined, fresh *RecoverResult
	req := RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project", Caller: "test"}
	f.m.Recover(req, func(r RecoverResult) { first = &r })
	require.True(t, f.m.KillOwned("stable-session", Claude, "/tmp/project", "close", ""))
	f.m.Recover(req, func(r RecoverResult) { joined = &r })
	assert.Len(t, f.events("spawn"), 1, "the new recover joins the cancelled generation: no new provider")
	f.run(time.Second)
	require.NotNil(t, first)
	require.NotNil(t, joined)
	assert.Equal(t, CodeCancelled, first.Code)
	assert.Equal(t, CodeCancelled, joined.Code, "it resolves cancelled too")
	f.m.Recover(req, func(r RecoverResult) { fresh = &r })
	f.run(time.Second)
	require.NotNil(t, fresh)
	assert.Equal(t, Spawned, fresh.Disposition, "after the rollback a recover spawns fresh")
	assert.Equal(t, Live, fresh.Snapshot.Lifecycle)
	assert.Equal(t, "stable-session#2", f.m.Backend("stable-session").ID, "listed once")
}

// TestAC17_RevisionsMonotonicPastKnownIDCache is AC-17, upstream "keeps
// readiness revisions monotonic after the bounded known-id cache evicts old
// ids". The model's revision is one global counter and it keeps every id's
// last readiness, so there is no cache to evict: the property holds by
// construction (an eviction bug could not show here).
func TestAC17_RevisionsMonotonicPastKnownIDCache(t *testing.T) {
	f := newFixture(t)
	var first *RecoverResult
	f.m.Recover(RecoverRequest{Session: "id-0", Kind: Claude, Cwd: "/tmp/project"}, func(r RecoverResult) { first = &r })
	f.run(time.Second)
	require.NotNil(t, first)
	f.m.KillOwned("id-0", Claude, "/tmp/project", "test", "")
	for i := 1; i <= 8193; i++ {
		id := fmt.Sprintf("id-%d", i)
		f.m.Recover(RecoverRequest{Session: id, Kind: Claude, Cwd: "/tmp/project"}, func(RecoverResult) {})
		f.m.KillOwned(id, Claude, "/tmp/project", "test", "")
	}
	f.run(5 * time.Second)
	var again *RecoverResult
	f.m.Recover(RecoverRequest{Session: "id-0", Kind: Claude, Cwd: "/tmp/project"}, func(r RecoverResult) { again = &r })
	f.run(time.Second)
	require.NotNil(t, again)
	assert.Greater(t, again.Snapshot.Rev, first.Snapshot.Rev)
}

// TestAC20_SecondWakeJoinsStartingRecovery is AC-20, upstream "joins a
// second wake while the first backend recovery is still starting".
func TestAC20_SecondWakeJoinsStartingRecovery(t *testing.T) {
	f := newFixture(t)
	r := f.app.Renderer
	var errs []*wakeErr
	done := func(err *wakeErr) { errs = append(errs, err) }
	r.ensureSessionLive("stable-session", "wake-1", "", done)
	r.ensureSessionLive("stable-session", "wake-2", "", done)
	f.run(3 * time.Second)
	assert.Equal(t, []*wakeErr{nil, nil}, errs, "both resolve")
	assert.Len(t, f.events("spawn"), 1, "one provider")
	assert.Equal(t, []string{"claimed kind=claude caller=w1"}, f.events("recover"), "the second wake joined the first")
}

// TestAC22_AdoptionAndConflictRecords is AC-22 (post), upstream adoption
// record [BUG-3]. Expressed differently: the lifecycle journal is the
// trace: main's recover event records adopted with the adopted backend's
// readiness, and ownership-conflict with reason live-entry-mismatch.
func TestAC22_AdoptionAndConflictRecords(t *testing.T) {
	f := newFixture(t, string(GuardedWake))
	f.recover(Claude, "/tmp/project")
	f.run(time.Second)
	f.m.Write("stable-session", "p1", []Chunk{{Seq: 1, Key: KeyText}})
	adopted := f.recover(Claude, "/tmp/project")
	require.NotNil(t, adopted)
	assert.Equal(t, Adopted, adopted.Disposition)
	assert.Equal(t, Live, adopted.Snapshot.Lifecycle)
	conflict := f.recover(Codex, "/tmp/project")
	require.NotNil(t, conflict)
	assert.Equal(t, CodeOwnershipConflict, conflict.Code)
	assert.Equal(t, []string{"claimed kind=claude caller=test", "adopted kind=claude caller=test ready=false reason=human-draft",
		"ownership-conflict kind=codex caller=test reason=live-entry-mismatch"}, f.events("recover"))
}

// TestAC23_RejectionAndKillClassification is AC-23 (post), upstream
// rejection and kill classification. Expressed differently: the journal
// reasons are the trace's; the model does not tell an id that was never
// owned from one whose entry was lost after it was owned (both are
// no-entry, before the write), nor a live-entry kill cause from others.
func TestAC23_RejectionAndKillClassification(t *testing.T) {
	f := newFixture(t)
	assert.False(t, f.m.DeliverPrompt("never-owned"))
	f.recover(Claude, "/tmp/project")
	f.run(time.Second)
	assert.True(t, f.m.KillOwned("stable-session", Claude, "/tmp/project", "close", ""), "kill of a live entry")
	assert.False(t, f.m.DeliverPrompt("stable-session"), "owned, then killed")
	assert.False(t, f.m.KillOwned("unknown", Claude, "/tmp/project", "close", ""), "kill of an unknown id")
	assert.Equal(t, []string{"not-ready stage=before-write reason=no-entry", "not-ready stage=before-write reason=no-entry"},
		f.events("send"))
	assert.Equal(t, []string{"killed cause=close", "not-owned cause=close"}, f.events("kill"))
}

// TestAC25_EnsureSessionLiveRetry is AC-25, upstream ensureSessionLive retry
// (sessionRecovery.renderer.test.tsx) [BUG-3]: from a failed runtime the
// wake recovers and the runtime becomes started, without error or failure
// code, input ready, not exited, the snapshot's equal revision accepted.
// Expressed differently: the disposition comes from main's state, not a
// mock (no backend: spawned, pre; a live ready backend: adopted, post), and
// MCP domains (builtInMcpDomains, the session meta's domains) are not
// modelled.
func TestAC25_EnsureSessionLiveRetry(t *testing.T) {
	failed := func(rt *Runtime, rev int) {
		*rt = Runtime{Status: StatusFailed, Error: "Session failed to start.", FailureCode: CodeStartFailed, Rev: rev, Exited: true}
	}
	want := func(t *testing.T, rt *Runtime) {
		assert.Equal(t, StatusStarted, rt.Status)
		assert.Empty(t, rt.Error)
		assert.Empty(t, rt.FailureCode)
		assert.True(t, rt.InputReady)
		assert.False(t, rt.Exited)
	}
	t.Run("pre: spawned", func(t *testing.T) {
		f := newFixture(t)
		r := f.app.Renderer
		rt := r.Runtime("stable-session")
		failed(rt, 0)
		var err *wakeErr
		r.ensureSessionLive("stable-session", "tile-leaf.send", "", func(e *wakeErr) { err = e })
		f.run(3 * time.Second)
		assert.Nil(t, err)
		want(t, rt)
		assert.Len(t, f.events("recover"), 1, "one recover call")
	})
	t.Run("post: adopted", func(t *testing.T) {
		f := newFixture(t, string(GuardedWake))
		f.recover(Claude, "/tmp/project")
		f.run(time.Second)
		snap := f.m.Snapshot("stable-session")
		r := f.app.Renderer
		rt := r.Runtime("stable-session")
		failed(rt, snap.Rev)
		var err *wakeErr
		r.ensureSessionLive("stable-session", "tile-leaf.send", "", func(e *wakeErr) { err = e })
		f.run(100 * time.Millisecond)
		assert.Nil(t, err)
		want(t, rt)
		assert.Equal(t, snap.Rev, rt.Rev, "an equal revision is accepted: the snapshot is a level fact")
	})
}

// TestAC31_RehydrateKeepsNewerReadiness is AC-31, upstream rehydrate keeps
// newer readiness [BUG-3]: an adopted, live, unready snapshot with an older
// revision leaves a ready runtime ready; the rehydrate path neither waits
// nor kills.
func TestAC31_RehydrateKeepsNewerReadiness(t *testing.T) {
	f := newFixture(t)
	r := f.app.Renderer
	rt := r.Runtime("stable-session")
	*rt = Runtime{Status: StatusStarted, InputReady: true, Rev: 5}
	r.rehydrated("stable-session", RecoverResult{OK: true, Disposition: Adopted, Snapshot: Snapshot{Session: "stable-session",
		Backend: "stable-session#1", Kind: Claude, Cwd: "/tmp/project", Lifecycle: Live, Ready: false, Reason: "replaying-history", Rev: 4}})
	f.run(31 * time.Second)
	assert.True(t, rt.InputReady)
	assert.Equal(t, 5, rt.Rev)
	for _, ev := range f.k.Trace().Events() {
		assert.NotContains(t, []string{"wake", "wake.wait", "kill.request", "kill"}, ev.Kind, "no wait and no kill")
	}
}

// TestAC32_RehydrateFailureHandling is AC-32, upstream rehydrate failure
// handling: a start-failed recovery ("Claude CLI not found") fails the
// runtime with that message and code and keeps the pane and metadata; no
// tab is added. Expressed differently: the never-settling recover bounded by
// cancelSessionRecovery is not modelled (the model's start always settles).
func TestAC32_RehydrateFailureHandling(t *testing.T) {
	f := newFixture(t)
	f.app.Boot()
	f.run(2 * time.Second)
	r := f.app.Renderer
	panes, tabs := len(r.Panes), r.View.Tabs
	r.rehydrated("stable-session", RecoverResult{Code: CodeStartFailed, Message: "Claude CLI not found"})
	rt := r.Runtime("stable-session")
	assert.Equal(t, StatusFailed, rt.Status)
	assert.Equal(t, "Claude CLI not found", rt.Error)
	assert.Equal(t, CodeStartFailed, rt.FailureCode)
	assert.Len(t, r.Panes, panes, "the pane is retained")
	assert.NotNil(t, f.app.Meta("stable-session"), "and the metadata")
	assert.Equal(t, tabs, r.View.Tabs, "no new tab")
}

// TestAC35_ResumedReplayQuietWindow is the resumed-session part of AC-35,
// upstream claudeSession.promptAcceptance.test.ts [BUG-3]: after the
// composer paints, readiness waits for the replay to be quiet for 250 ms
// (the draws at their simplest: the replay itself takes no time).
func TestAC35_ResumedReplayQuietWindow(t *testing.T) {
	f := newFixture(t)
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project", Resume: true}, func(RecoverResult) {})
	var painted time.Duration
	for f.k.Elapsed() < 3*time.Second && painted == 0 {
		f.run(time.Millisecond)
		if b := f.m.Backend("stable-session"); b != nil && b.composer {
			painted = f.k.Elapsed()
		}
	}
	require.NotZero(t, painted)
	f.k.RunUntil(painted + 249*time.Millisecond)
	ready, reason := f.m.Backend("stable-session").gate()
	assert.False(t, ready, "unresolved at +249 ms")
	assert.Equal(t, "replay-pending", reason)
	f.k.RunUntil(painted + 250*time.Millisecond)
	ready, _ = f.m.Backend("stable-session").gate()
	assert.True(t, ready, "ready at +250 ms")
	assert.Equal(t, []string{"ready=false reason=starting rev=1", "ready=false reason=replaying-history rev=2",
		"ready=true reason=ready rev=3"}, f.events("input-readiness"))
}

// TestACN01_RevisionsMonotonicAcrossReplacementBackend is AC-N01, upstream
// "keeps readiness revisions monotonic when the same local id gets a
// replacement backend" (sessionManager.recover.test.ts @ 428aed2d).
func TestACN01_RevisionsMonotonicAcrossReplacementBackend(t *testing.T) {
	f := newFixture(t)
	f.recover(Codex, "/tmp/project")
	f.run(2 * time.Second)
	first := f.m.Snapshot("stable-session")
	require.True(t, first.Ready)
	require.True(t, f.m.KillOwned("stable-session", Codex, "/tmp/project", "test", ""))
	var again *RecoverResult
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Codex, Cwd: "/tmp/project"}, func(r RecoverResult) { again = &r })
	f.run(2 * time.Second)
	require.NotNil(t, again)
	assert.Equal(t, "stable-session#2", again.Snapshot.Backend, "a replacement backend under the same id")
	assert.Greater(t, again.Snapshot.Rev, first.Rev, "its first published revision is above the old backend's last")
}

// TestACN02_TypedConflictsForKindOrCwd is AC-N02, upstream "returns typed
// conflicts for a different kind or normalized cwd". The model compares the
// cwd as given (no path normalization).
func TestACN02_TypedConflictsForKindOrCwd(t *testing.T) {
	f := newFixture(t)
	f.recover(Claude, "/tmp/project")
	f.run(2 * time.Second)
	for _, c := range []struct {
		kind Kind
		cwd  string
	}{{Codex, "/tmp/project"}, {Claude, "/tmp/other"}} {
		got := f.recover(c.kind, c.cwd)
		require.NotNil(t, got, "a conflict answers at once")
		assert.Equal(t, RecoverResult{Code: CodeOwnershipConflict, Message: MsgOwnership,
			Actual: &Owner{Kind: Claude, Cwd: "/tmp/project", Lifecycle: Live}}, *got, "%s %s", c.kind, c.cwd)
		assert.False(t, got.Retryable)
	}
	assert.Equal(t, Live, f.m.Snapshot("stable-session").Lifecycle, "the live backend is untouched")
}

// TestACN04_AdoptsWhileDeliveryInFlight is AC-N04, upstream "adopts
// normally while prompt delivery is in flight on the owned backend": a
// Claude delivery holds main's reservation (its text written, the JSONL
// acceptance pending) when a second recover arrives; it adopts, and the
// delivery still succeeds on the one backend.
func TestACN04_AdoptsWhileDeliveryInFlight(t *testing.T) {
	f := newFixture(t)
	f.recover(Claude, "/tmp/project")
	f.run(2 * time.Second)
	var delivery *DeliveryResult
	f.m.DeliverPromptToAgent("stable-session", "keep working", nil, nil, func(r DeliveryResult) { delivery = &r })
	require.True(t, f.m.DeliveryInFlight("stable-session"), "the delivery is in flight")
	got := f.recover(Claude, "/tmp/project")
	require.NotNil(t, got)
	assert.True(t, got.OK)
	assert.Equal(t, Adopted, got.Disposition)
	f.run(time.Minute)
	require.NotNil(t, delivery)
	assert.True(t, delivery.OK, "%+v", *delivery)
	assert.Equal(t, "user", delivery.Acceptance.Kind)
	assert.Len(t, f.events("spawn"), 1, "no second provider")
}

// TestACN06_RestoresUnderExistingWorkspaceID is AC-N06, upstream "can
// restore a provider backend under an existing workspace SessionId"
// (sessionManager.wake.test.ts): recover spawns under the pane's id.
func TestACN06_RestoresUnderExistingWorkspaceID(t *testing.T) {
	f := newFixture(t)
	var got *RecoverResult
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project", Resume: true, Caller: "wake"},
		func(r RecoverResult) { got = &r })
	f.run(2 * time.Second)
	require.NotNil(t, got)
	assert.Equal(t, Spawned, got.Disposition)
	assert.Equal(t, "stable-session", got.Snapshot.Session)
	assert.NotNil(t, f.m.Backend("stable-session"))
}

// TestACN08_ColdStartLadderInOrder is AC-N08, upstream "records the full
// cold-start ladder in order" (sessionManager.lifecycle.test.ts). The
// lifecycle journal is main's trace: claim, spawn, start, then the
// readiness edges.
func TestACN08_ColdStartLadderInOrder(t *testing.T) {
	f := newFixture(t)
	f.recover(Codex, "/tmp/project")
	f.run(2 * time.Second)
	var ladder []string
	for _, ev := range f.k.Trace().Events() {
		if ev.Actor != "main" {
			continue
		}
		for _, a := range ev.Attrs {
			if a.Key == "session" && a.Value == "stable-session" {
				ladder = append(ladder, ev.Kind+" "+ev.Outcome)
			}
		}
	}
	require.GreaterOrEqual(t, len(ladder), 5)
	assert.Equal(t, []string{"recover claimed", "spawn starting", "input-readiness ", "start live", "input-readiness "}, ladder[:5])
}

// TestACN10_ReadinessTransitionsWithRevisions is AC-N10, upstream "records
// every published readiness transition with its monotonic revision": the
// journal is main's trace of input-readiness; an unchanged readiness is not
// published again.
func TestACN10_ReadinessTransitionsWithRevisions(t *testing.T) {
	f := newFixture(t)
	f.recover(Codex, "/tmp/project")
	f.run(2 * time.Second)
	b := f.m.Backend("stable-session")
	f.m.setInputReadiness(b, true, "ready") // unchanged: not published
	f.m.setInputReadiness(b, false, "human-draft")
	assert.Equal(t, []string{"ready=false reason=starting rev=1", "ready=true reason=ready rev=2",
		"ready=false reason=human-draft rev=3"}, f.events("input-readiness"))
}

// TestACN25_RehydrateAdoptsUnderPersistedID is AC-N25, upstream
// "adopts under the persisted local id without calling the fresh-spawn
// API" (rehydrate.renderer.test.ts): rehydrating a pane whose backend is
// live recovers it under the pane's own id and adopts it.
func TestACN25_RehydrateAdoptsUnderPersistedID(t *testing.T) {
	f := newFixture(t)
	f.recover(Claude, "/tmp/project")
	f.run(2 * time.Second)
	r := f.app.Renderer
	r.rehydrate(f.app.Meta("stable-session"))
	f.run(time.Second)
	assert.Contains(t, f.events("recover"), "adopted kind=claude caller=rehydrate ready=true reason=ready")
	assert.Len(t, f.events("spawn"), 1, "no fresh spawn")
	rt := r.Runtime("stable-session")
	assert.Equal(t, StatusStarted, rt.Status)
	assert.Equal(t, "stable-session#1", rt.Backend)
}

// TestACN30_ColdStartOnceAdoptOnReload is AC-N30, upstream "cold-starts
// once, adopts on renderer reload, and preserves identity and readiness"
// (sessionRecovery.integration.test.ts): boot spawns the backend once; a
// renderer reload's rehydrate adopts the same backend with its readiness.
func TestACN30_ColdStartOnceAdoptOnReload(t *testing.T) {
	f := newFixture(t)
	f.app.Boot()
	f.run(3 * time.Second)
	r := f.app.Renderer
	rt := r.Runtime("stable-session")
	require.Equal(t, StatusStarted, rt.Status)
	backend, rev := rt.Backend, rt.Rev
	r.rehydrate(f.app.Meta("stable-session")) // the reload's rehydrate
	f.run(time.Second)
	assert.Len(t, f.events("spawn"), 1, "cold-started once")
	assert.Equal(t, backend, rt.Backend, "the same identity")
	assert.Equal(t, rev, rt.Rev)
	assert.Equal(t, f.m.Snapshot("stable-session").Ready, rt.InputReady, "and readiness")
}

// TestACN31_FailedPaneRetriesSameID is AC-N31, upstream "retains a failed
// pane and allows the same stable id to retry successfully".
func TestACN31_FailedPaneRetriesSameID(t *testing.T) {
	f := newFixture(t)
	f.m.cfg.StartFailChance = sim.Per(1, 1)
	f.app.Boot()
	f.run(3 * time.Second)
	r := f.app.Renderer
	rt := r.Runtime("stable-session")
	require.Equal(t, StatusFailed, rt.Status)
	panes := len(r.Panes)
	assert.NotNil(t, f.app.Meta("stable-session"), "the failed pane's session is retained")
	f.m.cfg.StartFailChance = sim.Per(0, 1)
	var err *wakeErr
	r.ensureSessionLive("stable-session", "retry", "", func(e *wakeErr) { err = e })
	f.run(3 * time.Second)
	assert.Nil(t, err)
	assert.Equal(t, StatusStarted, rt.Status, "the same stable id retries successfully")
	assert.Equal(t, "stable-session#2", rt.Backend)
	assert.Len(t, r.Panes, panes)
}

// TestACN32_CloseCancelsBlockedStartup is AC-N32, upstream "lets close
// cancel blocked startup without resurrecting an orphan backend": a kill
// during the start cancels the claim and leaves no backend, even once the
// start settles.
func TestACN32_CloseCancelsBlockedStartup(t *testing.T) {
	f := newFixture(t)
	var got *RecoverResult
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project", Caller: "rehydrate"},
		func(r RecoverResult) { got = &r })
	require.True(t, f.m.KillOwned("stable-session", Claude, "/tmp/project", "close", ""))
	f.run(5 * time.Second)
	require.NotNil(t, got)
	assert.Equal(t, CodeCancelled, got.Code)
	assert.Nil(t, f.m.Backend("stable-session"), "no orphan backend")
}

// TestACN26_FailedSiblingsKeptAfterAllLeavesResolve is AC-N26, upstream
// "keeps failed siblings in a split after every leaf has a resolved
// outcome" (rehydrate.renderer.test.ts). Both leaves of the tab fail here
// (one start-failure rate for the app), and both panes and sessions stay.
func TestACN26_FailedSiblingsKeptAfterAllLeavesResolve(t *testing.T) {
	f := newFixture(t)
	f.app.AddSession(Meta{ID: "sibling-session", Kind: Codex, Cwd: "/tmp/project", Mode: Terminal})
	f.m.cfg.StartFailChance = sim.Per(1, 1)
	f.app.Boot()
	panes := len(f.app.Renderer.Panes)
	f.run(5 * time.Second)
	for _, id := range []string{"stable-session", "sibling-session"} {
		assert.Equal(t, StatusFailed, f.app.Renderer.Runtime(id).Status, "%s resolved as failed", id)
		assert.NotNil(t, f.app.Meta(id), "%s is kept", id)
	}
	assert.Len(t, f.app.Renderer.Panes, panes, "no leaf is removed from the split")
}

// TestACN58_OpenCodeReadyOnlyAfterStartup is AC-N58, upstream "becomes
// ready only after headless startup and history publication finish"
// (opencodeSession.readiness.test.ts). History publication is not
// modelled: readiness is published only after the start settles.
func TestACN58_OpenCodeReadyOnlyAfterStartup(t *testing.T) {
	f := newFixture(t)
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: OpenCode, Cwd: "/tmp/project"}, func(RecoverResult) {})
	assert.Equal(t, Spawning, f.m.Snapshot("stable-session").Lifecycle)
	assert.False(t, f.m.Snapshot("stable-session").Ready, "not ready during startup")
	f.run(5 * time.Second)
	assert.Equal(t, []string{"ready=false reason=starting rev=1", "ready=true reason=ready rev=2"}, f.events("input-readiness"))
	var order []string
	for _, ev := range f.k.Trace().Events() {
		if ev.Actor == "main" && (ev.Kind == "start" || ev.Kind == "input-readiness") {
			order = append(order, ev.Kind)
		}
	}
	assert.Equal(t, []string{"input-readiness", "start", "input-readiness"}, order, "ready is published after the start")
}

// TestACN59_OpenCodeExitDuringStartupNeverReady is AC-N59, upstream "never
// emits ready or started when the server exits during startup": the exit
// is a failed start here.
func TestACN59_OpenCodeExitDuringStartupNeverReady(t *testing.T) {
	f := newFixture(t)
	f.m.cfg.StartFailChance = sim.Per(1, 1)
	var got *RecoverResult
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: OpenCode, Cwd: "/tmp/project"}, func(r RecoverResult) { got = &r })
	f.run(5 * time.Second)
	require.NotNil(t, got)
	assert.Equal(t, CodeStartFailed, got.Code)
	assert.Equal(t, []string{"ready=false reason=starting rev=1"}, f.events("input-readiness"), "never ready")
	assert.NotContains(t, f.events("start"), "live", "never started")
}
