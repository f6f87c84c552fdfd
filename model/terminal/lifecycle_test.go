package terminal

// Cases of agent-code's sessionManager.{recover,wake,lifecycle}.test.ts
// (@428aed2d) that need lifecycle.go: the built-in MCP host, tmux
// rollback, the two-stop teardown, the fresh-spawn API, the pre-agent
// hook and the lifecycle journal. Each test is named after its case id
// (scenarios/fidelity_upstream_test.go, fidelity_test.go).

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// recoverReq issues req and returns where its result lands: nil until
// recover replies.
func (f *fixture) recoverReq(req RecoverRequest) **RecoverResult {
	got := new(*RecoverResult)
	f.m.Recover(req, func(r RecoverResult) { *got = &r })
	return got
}

// TestAC10_ProjectMCPRegisteredOnceOnColdSpawn is AC-10, upstream
// "registers project-scoped MCP once on cold spawn and never during
// adoption".
func TestAC10_ProjectMCPRegisteredOnceOnColdSpawn(t *testing.T) {
	f := newFixture(t)
	req := RecoverRequest{Session: "mcp-session", Kind: Claude, Cwd: "/tmp/project", Domains: []string{"orchestration"}}
	res := f.recoverReq(req)
	f.run(5 * time.Second)
	spawned := *res
	require.NotNil(t, spawned)
	assert.Equal(t, Spawned, spawned.Disposition)
	assert.Equal(t, []string{"orchestration"}, spawned.Snapshot.Domains)
	changed := req
	changed.Domains = []string{}
	adopted := *f.recoverReq(changed)
	require.NotNil(t, adopted)
	assert.Equal(t, Adopted, adopted.Disposition)
	assert.Equal(t, []string{"orchestration"}, adopted.Snapshot.Domains, "adoption reports the live backend's launch-time scope")
	h := f.m.MCPHost()
	assert.Equal(t, []MCPRegistration{{Session: "mcp-session", Cwd: "/tmp/project", Kind: Claude, Domains: []string{"orchestration"}}}, h.Registered)
	assert.Empty(t, h.Revoked)
	assert.Equal(t, 1, f.m.ProviderCreates())
}

// TestAC11_MCPHostOnlyForNonEmptyRequest is AC-11, upstream "requires an
// MCP host only when the effective request is non-empty".
func TestAC11_MCPHostOnlyForNonEmptyRequest(t *testing.T) {
	f := newFixture(t)
	f.m.SetMCPHost(nil)
	var empty, nonEmpty *RecoverResult
	f.m.Recover(RecoverRequest{Session: "no-host-empty-scope", Kind: Codex, Cwd: "/tmp/project", Domains: []string{}},
		func(r RecoverResult) { empty = &r })
	f.m.Recover(RecoverRequest{Session: "no-host-nonempty-scope", Kind: Codex, Cwd: "/tmp/project", Domains: []string{"orchestration"}},
		func(r RecoverResult) { nonEmpty = &r })
	f.run(5 * time.Second)
	require.NotNil(t, empty)
	require.NotNil(t, nonEmpty)
	assert.True(t, empty.OK)
	assert.Empty(t, empty.Snapshot.Domains)
	assert.False(t, nonEmpty.OK)
	assert.Equal(t, CodeStartFailed, nonEmpty.Code)
	assert.Equal(t, 1, f.m.ProviderCreates(), "the failed one never constructs a provider")
	assert.Nil(t, f.m.Backend("no-host-nonempty-scope"))
}

// TestAC13_KillCancelsBlockedRecoveryTeardown is AC-13, upstream "lets
// kill cancel a blocked recovery and leaves no backend behind", with the
// stop and MCP counts: two stops (the kill's and the post-start one), one
// registration, one revocation.
func TestAC13_KillCancelsBlockedRecoveryTeardown(t *testing.T) {
	f := newFixture(t)
	var got *RecoverResult
	f.m.Recover(RecoverRequest{Session: "cancelled-session", Kind: Claude, Cwd: "/tmp/project", Domains: []string{"workflows"}},
		func(r RecoverResult) { got = &r })
	b := f.m.Backend("cancelled-session")
	require.NotNil(t, b)
	var killed *bool
	f.m.Kill("cancelled-session", func(ok bool) { killed = &ok })
	require.NotNil(t, killed)
	assert.True(t, *killed)
	f.run(5 * time.Second)
	require.NotNil(t, got)
	assert.Equal(t, CodeCancelled, got.Code)
	assert.True(t, got.Retryable)
	assert.Equal(t, 2, b.StopAttempts())
	assert.Len(t, f.m.MCPHost().Registered, 1)
	assert.Equal(t, []string{"cancelled-session"}, f.m.MCPHost().Revoked)
	assert.Nil(t, f.m.Backend("cancelled-session"))
}

// TestACN05_PostStartTeardownWhileFirstStopBlocked is AC-N05, upstream
// "launches post-start teardown even when the first stop attempt is still
// blocked".
func TestACN05_PostStartTeardownWhileFirstStopBlocked(t *testing.T) {
	f := newFixture(t)
	var got *RecoverResult
	req := RecoverRequest{Session: "blocked-stop-session", Kind: Claude, Cwd: "/tmp/project"}
	f.m.Recover(req, func(r RecoverResult) { got = &r })
	b := f.m.Backend("blocked-stop-session")
	require.NotNil(t, b)
	release := b.BlockStop()
	var killed *bool
	f.m.Kill(req.Session, func(ok bool) { killed = &ok })
	assert.Equal(t, 1, b.StopAttempts())
	assert.Nil(t, killed, "kill waits for its blocked stop")
	f.run(5 * time.Second) // start() settles
	assert.Equal(t, 2, b.StopAttempts(), "the post-start stop runs while the first is still blocked")
	assert.Nil(t, got, "the generation fence holds until both stops settle")
	var joined *RecoverResult
	f.m.Recover(req, func(r RecoverResult) { joined = &r })
	assert.Equal(t, 1, f.m.ProviderCreates(), "a retry joins the fenced generation")
	release()
	require.NotNil(t, killed)
	assert.True(t, *killed)
	require.NotNil(t, got)
	assert.Equal(t, CodeCancelled, got.Code)
	require.NotNil(t, joined)
	assert.Equal(t, CodeCancelled, joined.Code)
	assert.Nil(t, f.m.Backend(req.Session), "list is empty")
}

// TestACN03_TmuxRollbackDestroysOnlyCreated is AC-N03, upstream "destroys
// only a newly-created tmux session when terminal startup rolls back".
func TestACN03_TmuxRollbackDestroysOnlyCreated(t *testing.T) {
	for _, tc := range []struct {
		name, session, recover string
		created, killed        []string
	}{
		{"fresh", "fresh-terminal", "", []string{"agent-code-1"}, []string{"agent-code-1"}},
		{"recovered", "recovered-terminal", "durable-tmux-session", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.m.cfg.StartFailChance = sim.Per(1, 1) // terminalControl.startError
			reg := NewTmuxRegistry("durable-tmux-session")
			f.m.SetTmux(reg)
			got := f.recoverReq(RecoverRequest{Session: tc.session, Kind: Shell, Cwd: "/tmp/project", TmuxName: tc.recover})
			f.run(5 * time.Second)
			require.NotNil(t, *got)
			assert.Equal(t, CodeStartFailed, (*got).Code)
			assert.Equal(t, tc.created, reg.Created)
			assert.Equal(t, tc.killed, reg.Killed)
			assert.True(t, reg.Existing["durable-tmux-session"], "the durable session survives")
			assert.Nil(t, f.m.Backend(tc.session), "no snapshot")
			assert.Equal(t, []string{"start-failed"}, f.events("start"))
		})
	}
}

// TestACN07_FreshSpawnCannotChooseID is AC-N07, upstream "keeps ordinary
// fresh spawn unable to choose a persisted local id".
func TestACN07_FreshSpawnCannotChooseID(t *testing.T) {
	f := newFixture(t)
	var first, second *SpawnResult
	f.m.Spawn(Codex, "/tmp/project", nil, func(r SpawnResult) { first = &r })
	f.m.Spawn(Codex, "/tmp/project", nil, func(r SpawnResult) { second = &r })
	f.run(5 * time.Second)
	require.NotNil(t, first)
	require.NotNil(t, second)
	assert.NotEqual(t, first.Session, second.Session)
	assert.NotEqual(t, "stable-session", first.Session, "no persisted id")
	assert.NotEqual(t, "stable-session", second.Session)
	assert.Equal(t, 2, f.m.ProviderCreates())
}

// TestAC19_PreAgentReconciliationBoundary is AC-19, upstream "awaits the
// pre-agent reconciliation boundary before creating the provider session"
// and "keeps a rejected pre-agent reconciliation nonfatal to provider
// startup".
func TestAC19_PreAgentReconciliationBoundary(t *testing.T) {
	t.Run("awaits", func(t *testing.T) {
		f := newFixture(t)
		calls := 0
		var release func(error)
		f.m.SetBeforeAgentStart(func(done func(error)) { calls++; release = done })
		var got *SpawnResult
		f.m.Spawn(Claude, "/tmp/project", nil, func(r SpawnResult) { got = &r })
		f.run(5 * time.Second)
		assert.Equal(t, 1, calls)
		assert.Equal(t, 0, f.m.ProviderCreates(), "no provider before the boundary settles")
		assert.Nil(t, got)
		release(nil)
		f.run(5 * time.Second)
		require.NotNil(t, got)
		assert.Empty(t, got.Err)
		assert.Equal(t, 1, f.m.ProviderCreates())
	})
	t.Run("rejected is nonfatal", func(t *testing.T) {
		f := newFixture(t)
		f.m.SetBeforeAgentStart(func(done func(error)) { done(errors.New("conventions storage unavailable")) })
		var got *SpawnResult
		f.m.Spawn(Codex, "/tmp/project", nil, func(r SpawnResult) { got = &r })
		f.run(5 * time.Second)
		require.NotNil(t, got)
		assert.NotEmpty(t, got.Session)
		assert.Empty(t, got.Err)
		assert.Equal(t, 1, f.m.ProviderCreates())
	})
}

func (f *fixture) journal() *Journal {
	j := &Journal{}
	f.m.SetJournal(j)
	return j
}

// TestACN09_ClaimRecordsHasResumeID is AC-N09, upstream "records
// hasResumeId on the claim so cold resume is separable from a fresh pane".
func TestACN09_ClaimRecordsHasResumeID(t *testing.T) {
	f := newFixture(t)
	j := f.journal()
	f.m.Recover(RecoverRequest{Session: "s1", Kind: Claude, Cwd: "/tmp/project", Resume: true}, func(RecoverResult) {})
	f.m.Recover(RecoverRequest{Session: "s2", Kind: Claude, Cwd: "/tmp/project"}, func(RecoverResult) {})
	claims := j.All("recover.claim")
	require.Len(t, claims, 2)
	v, _ := claims[0].Get("hasResumeId")
	assert.Equal(t, "true", v)
	v, _ = claims[1].Get("hasResumeId")
	assert.Equal(t, "false", v)
}

// startedWithJournal recovers s1 with a journal and returns its backend
// once live. It is a Codex backend, which (in the model) emits no gate
// verdict of its own, so the journal holds only what the test emits, as
// with upstream's fake session.
func (f *fixture) startedWithJournal(t *testing.T) (*Journal, *Backend) {
	j := f.journal()
	f.m.Recover(RecoverRequest{Session: "s1", Kind: Codex, Cwd: "/tmp/project"}, func(RecoverResult) {})
	b := f.m.Backend("s1")
	require.NotNil(t, b)
	for !b.Live() {
		f.run(10 * time.Millisecond)
	}
	return j, b
}

func gateEvals(j *Journal) []JournalRecord { return j.All("gate.eval") }

func data(r JournalRecord, key string) string { v, _ := r.Get(key); return v }

// TestACN11_RichGateVerdictRecorded is AC-N11, upstream "records the rich
// gate verdict that input-readiness collapses away".
func TestACN11_RichGateVerdictRecorded(t *testing.T) {
	f := newFixture(t)
	j, b := f.startedWithJournal(t)
	b.EmitPromptGate(PromptGate{Kind: "warming", Reason: "composer-unpainted"})
	evals := gateEvals(j)
	require.Len(t, evals, 1)
	assert.Equal(t, "warming", data(evals[0], "gate"))
	assert.Equal(t, "composer-unpainted", data(evals[0], "reason"))
	assert.Equal(t, "0", data(evals[0], "elapsedMs"))
}

// TestACN11_ClaudeBackendEmitsItsOwnGate checks the model's own provider
// side of AC-N11: a booting Claude backend's gate.eval says why it is not
// ready, which readiness.publish collapses to one reason.
func TestACN11_ClaudeBackendEmitsItsOwnGate(t *testing.T) {
	f := newFixture(t)
	j := f.journal()
	f.m.Recover(RecoverRequest{Session: "s1", Kind: Claude, Cwd: "/tmp/project"}, func(RecoverResult) {})
	b := f.m.Backend("s1")
	f.run(10 * time.Second)
	require.True(t, b.composer)
	var gates []string
	for _, r := range gateEvals(j) {
		if data(r, "elapsedMs") == "0" {
			gates = append(gates, data(r, "gate")+"/"+data(r, "reason"))
		}
	}
	assert.Equal(t, []string{"warming/composer-unpainted", "ready/"}, gates)
}

// TestACN12_ChangeOfBlockedConditionRecorded is AC-N12, upstream "records
// a change of WHAT a gate is blocked on".
func TestACN12_ChangeOfBlockedConditionRecorded(t *testing.T) {
	f := newFixture(t)
	j, b := f.startedWithJournal(t)
	before := len(gateEvals(j))
	b.EmitPromptGate(PromptGate{Kind: "blocked", Condition: "trust-dialog", Resolvable: true})
	b.EmitPromptGate(PromptGate{Kind: "blocked", Condition: "permission-prompt", Resolvable: true})
	var conds []string
	for _, r := range gateEvals(j)[before:] {
		conds = append(conds, data(r, "conditionKind"))
	}
	assert.Equal(t, []string{"trust-dialog", "permission-prompt"}, conds)
}

// TestACN13_BlockedGateRecordsCondition is AC-N13, upstream "records what
// a blocked gate is blocked on".
func TestACN13_BlockedGateRecordsCondition(t *testing.T) {
	f := newFixture(t)
	j, b := f.startedWithJournal(t)
	before := len(gateEvals(j))
	b.EmitPromptGate(PromptGate{Kind: "blocked", Condition: "trust-dialog", Resolvable: true})
	evals := gateEvals(j)[before:]
	require.Len(t, evals, 1)
	assert.Equal(t, "blocked", data(evals[0], "gate"))
	assert.Equal(t, "trust-dialog", data(evals[0], "conditionKind"))
	assert.Equal(t, "true", data(evals[0], "resolvable"))
}

// TestACN14_StalledGateResampled is AC-N14, upstream "re-samples a stalled
// gate so the stall has a measured duration".
func TestACN14_StalledGateResampled(t *testing.T) {
	f := newFixture(t)
	f.m.WedgeNextSpawn("s1") // the composer never paints: a real stall
	j, b := f.startedWithJournal(t)
	before := len(gateEvals(j))
	b.EmitPromptGate(PromptGate{Kind: "warming", Reason: "composer-unpainted"})
	f.run(11 * time.Second)
	var samples []JournalRecord
	for _, r := range gateEvals(j)[before:] {
		if data(r, "elapsedMs") != "0" {
			samples = append(samples, r)
		}
	}
	require.GreaterOrEqual(t, len(samples), 2)
	last := samples[len(samples)-1]
	assert.Equal(t, "warming", data(last, "gate"))
	assert.Equal(t, "composer-unpainted", data(last, "reason"))
	elapsed, err := strconv.Atoi(data(last, "elapsedMs"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, elapsed, 10_000)
}

// TestACN15_SamplingStopsWhenNothingStalled is AC-N15, upstream "stops
// sampling once nothing is stalled, so an idle workspace writes nothing".
func TestACN15_SamplingStopsWhenNothingStalled(t *testing.T) {
	f := newFixture(t)
	j, b := f.startedWithJournal(t)
	b.EmitPromptGate(PromptGate{Kind: "warming", Reason: "replay-pending"})
	b.EmitPromptGate(PromptGate{Kind: "ready"})
	f.run(30 * time.Second)
	for _, r := range gateEvals(j) {
		assert.Equal(t, "0", data(r, "elapsedMs"), "no sample of a ready gate")
	}
	assert.False(t, f.m.sampling, "the sampler stopped")
}

// TestACN16_NoJournalNoRecords is AC-N16, upstream "emits nothing when
// constructed without a journal": recover works and nothing is recorded
// or sampled.
func TestACN16_NoJournalNoRecords(t *testing.T) {
	f := newFixture(t)
	got := f.recoverReq(RecoverRequest{Session: "s1", Kind: Claude, Cwd: "/tmp/project"})
	f.run(10 * time.Second)
	require.NotNil(t, *got)
	assert.True(t, (*got).OK)
	assert.NotNil(t, f.m.Backend("s1"))
	assert.Nil(t, f.m.journal)
	assert.False(t, f.m.sampling)
	assert.Empty(t, f.m.gateNotes)
}

// TestAC23_JournalClassifiesRejectionsAndKills is AC-23, upstream
// "classifies a delivery rejection against an id main has never owned",
// "distinguishes a delivery rejection for a session main owned and lost"
// and "classifies kill by what it actually terminated".
func TestAC23_JournalClassifiesRejectionsAndKills(t *testing.T) {
	f := newFixture(t)
	j := f.journal()
	assert.False(t, f.m.DeliverPrompt("ghost-id"))
	f.recoverReq(RecoverRequest{Session: "s1", Kind: Claude, Cwd: "/tmp/project"})
	f.run(5 * time.Second)
	f.m.Kill("s1", nil)
	assert.False(t, f.m.DeliverPrompt("s1"))
	f.m.Kill("never-existed", nil)
	rejects := j.All("delivery.reject")
	require.Len(t, rejects, 2)
	for i, want := range []string{"never-owned", "entry-lost-after-owned"} {
		assert.Equal(t, "not-ready", data(rejects[i], "code"))
		assert.Equal(t, "before-write", data(rejects[i], "stage"))
		assert.Equal(t, "false", data(rejects[i], "registryHit"))
		assert.Equal(t, want, data(rejects[i], "reason"))
	}
	var causes []string
	for _, k := range j.All("kill.request") {
		causes = append(causes, data(k, "cause"))
	}
	assert.Equal(t, []string{"live-entry", "no-owner"}, causes)
}

// TestClosePane_CancelsStartWithOwnedKill checks App.ClosePane, the
// worlds' close: during the boot spawn it sends killOwned with the pane's
// owner tuple (the start is cancelled, no backend is left), drops the
// session from the workspace and unmounts its leaf, reporting the
// keystrokes the pane held as dropped.
func TestClosePane_CancelsStartWithOwnedKill(t *testing.T) {
	f := newFixture(t)
	f.app.Boot()
	p := f.app.Renderer.VisiblePane("stable-session")
	require.NotNil(t, p)
	f.app.Type("stable-session", KeyText, 3)
	require.Equal(t, 3, p.Pending(), "typed before the attach landed")
	f.run(30 * time.Millisecond) // the rehydrate's recover has reached main
	require.NotNil(t, f.m.Backend("stable-session"))
	require.False(t, f.m.Backend("stable-session").Live(), "still starting")
	f.app.ClosePane("stable-session")
	assert.Nil(t, f.app.Meta("stable-session"))
	assert.Nil(t, f.app.Renderer.VisiblePane("stable-session"))
	f.run(5 * time.Second)
	assert.Equal(t, []string{"killed cause=close"}, f.events("kill"))
	assert.Equal(t, []string{"cancelled"}, f.events("start"))
	assert.Nil(t, f.m.Backend("stable-session"), "no orphan backend")
	var drops []string
	for _, ev := range f.k.Trace().Events() {
		if ev.Kind == "input.drop" {
			drops = append(drops, ev.Get("seq")+" "+ev.Get("cause"))
		}
	}
	assert.Equal(t, []string{"1-3 close"}, drops)
}

// TestSlowStop_FencesCancelledGenerationUntilItSettles checks
// Config.SlowStopChance: a kill's first stop that blocks is traced, the
// start settling meanwhile launches the post-start stop at once, and the
// cancelled generation's fence holds (a retry joins it) until the blocked
// stop settles; then a recover spawns afresh.
func TestSlowStop_FencesCancelledGenerationUntilItSettles(t *testing.T) {
	f := newFixture(t)
	f.m.cfg.SlowStopChance = sim.Per(1, 1)
	req := RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project", Caller: "test"}
	first := f.recoverReq(req)
	b := f.m.Backend("stable-session")
	require.True(t, f.m.KillOwned("stable-session", Claude, "/tmp/project", "close", ""))
	require.Len(t, f.events("stop"), 1)
	assert.Contains(t, f.events("stop")[0], "blocked for=")
	// The test's tape draws every duration at its minimum: start() settles
	// at 300 ms, the blocked stop at SlowStopMin.
	f.run(500 * time.Millisecond)
	assert.Empty(t, f.events("start"), "the cancelled start is reported once its teardown has settled")
	assert.Equal(t, 2, b.StopAttempts(), "the post-start stop ran while the first blocks")
	assert.Contains(t, f.events("stop"), "post-start")
	assert.Nil(t, *first, "fenced until the blocked stop settles")
	joined := f.recoverReq(req)
	assert.Equal(t, 1, f.m.ProviderCreates(), "a retry joins the fence")
	f.run(SlowStopMin)
	require.NotNil(t, *joined)
	assert.Equal(t, CodeCancelled, (*joined).Code)
	assert.Equal(t, []string{"blocked for=1s", "post-start", "settled"}, f.events("stop"))
	assert.Equal(t, []string{"cancelled"}, f.events("start"))
	f.run(SlowStopMax)
	require.NotNil(t, *first)
	assert.Equal(t, CodeCancelled, (*first).Code)
	assert.Equal(t, 2, b.StopAttempts())
	fresh := f.recoverReq(req)
	f.run(5 * time.Second)
	require.NotNil(t, *fresh)
	assert.Equal(t, Spawned, (*fresh).Disposition)
}

// TestAC16_KillOrCancelOnlyMatchingOwner is AC-16, upstream "kills or
// cancels only a matching provider-and-cwd owner", cancelRecovery
// included: claim-only cancellation refuses a live backend.
func TestAC16_KillOrCancelOnlyMatchingOwner(t *testing.T) {
	f := newFixture(t)
	f.recoverReq(RecoverRequest{Session: "owned-session", Kind: Claude, Cwd: "/tmp/project"})
	f.run(5 * time.Second)
	assert.False(t, f.m.KillOwned("owned-session", Claude, "/tmp/other-project", "close", ""))
	assert.False(t, f.m.KillOwned("owned-session", Codex, "/tmp/project", "close", ""))
	assert.False(t, f.m.CancelRecovery("owned-session", Claude, "/tmp/project"), "no claim in flight: nothing to cancel")
	s := f.m.Snapshot("owned-session")
	assert.Equal(t, Claude, s.Kind)
	assert.Equal(t, "/tmp/project", s.Cwd)
	assert.Equal(t, Live, s.Lifecycle)
	assert.True(t, f.m.KillOwned("owned-session", Claude, "/tmp/project", "close", ""))
	assert.Nil(t, f.m.Backend("owned-session"))
}

// TestCancelRecovery_CancelsOnlyAMatchingClaim checks the other side of
// cancelRecovery: a matching in-flight claim is cancelled (its start
// resolves cancelled, no backend is left), a mismatched one is not.
func TestCancelRecovery_CancelsOnlyAMatchingClaim(t *testing.T) {
	f := newFixture(t)
	got := f.recoverReq(RecoverRequest{Session: "s1", Kind: Claude, Cwd: "/tmp/project"})
	assert.False(t, f.m.CancelRecovery("s1", Codex, "/tmp/project"))
	assert.False(t, f.m.CancelRecovery("s1", Claude, "/tmp/other"))
	assert.True(t, f.m.CancelRecovery("s1", Claude, "/tmp/project"))
	f.run(5 * time.Second)
	require.NotNil(t, *got)
	assert.Equal(t, CodeCancelled, (*got).Code)
	assert.Nil(t, f.m.Backend("s1"))
}

// TestACN08_JournalColdStartLadder is AC-N08, upstream "records the full
// cold-start ladder in order", in main's lifecycle journal. The backend is
// a Codex one: a Claude backend in the model publishes its own
// provider-not-ready readiness on start, which upstream's fake session does
// not, adding a rung.
func TestACN08_JournalColdStartLadder(t *testing.T) {
	f := newFixture(t)
	j := f.journal()
	f.recoverReq(RecoverRequest{Session: "s1", Kind: Codex, Cwd: "/tmp/project"})
	f.run(time.Second)
	assert.Equal(t, []string{"recover.claim", "spawn.begin", "readiness.publish", "provider.start.begin",
		"provider.start.end", "recover.spawned"}, j.Names()[:6])
	assert.Equal(t, "s1", j.Find("recover.claim").Session)
	sp := j.Find("recover.spawned")
	assert.Equal(t, "codex", data(*sp, "kind"))
	assert.Equal(t, Spawned, data(*sp, "disposition"))
	assert.Equal(t, Live, data(*sp, "lifecycle"))
	_, err := strconv.Atoi(data(*j.Find("provider.start.end"), "durationMs"))
	assert.NoError(t, err, "the start has a duration")
}

// TestACN10_JournalReadinessPublishes is AC-N10, upstream "records every
// published readiness transition with its monotonic revision".
func TestACN10_JournalReadinessPublishes(t *testing.T) {
	f := newFixture(t)
	j := f.journal()
	f.recoverReq(RecoverRequest{Session: "s1", Kind: Claude, Cwd: "/tmp/project"})
	f.run(10 * time.Second) // the composer paints: ready
	pubs := j.All("readiness.publish")
	require.GreaterOrEqual(t, len(pubs), 2)
	assert.Equal(t, "false", data(pubs[0], "ready"))
	assert.Equal(t, "starting", data(pubs[0], "reason"))
	assert.Equal(t, "true", data(pubs[len(pubs)-1], "ready"))
	assert.Equal(t, "ready", data(pubs[len(pubs)-1], "reason"))
	last := 0
	for _, p := range pubs {
		rev, err := strconv.Atoi(data(p, "revision"))
		require.NoError(t, err)
		assert.Greater(t, rev, last, "monotonic")
		last = rev
	}
}

// TestAC01_AdoptsNormalizedCwd is AC-01, upstream "adopts a matching live
// backend without constructing another provider": the second recover's cwd
// /tmp/project/. resolves to the owner's, its resume id is ignored, and the
// snapshot reports the owner's cwd.
func TestAC01_AdoptsNormalizedCwd(t *testing.T) {
	f := newFixture(t)
	first := f.recoverReq(RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project", Resume: true})
	f.run(5 * time.Second)
	require.NotNil(t, *first)
	assert.Equal(t, Spawned, (*first).Disposition)
	adopted := *f.recoverReq(RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project/.", Resume: true})
	require.NotNil(t, adopted)
	assert.True(t, adopted.OK)
	assert.Equal(t, Adopted, adopted.Disposition)
	assert.Equal(t, "stable-session", adopted.Snapshot.Session)
	assert.Equal(t, Claude, adopted.Snapshot.Kind)
	assert.Equal(t, "/tmp/project", adopted.Snapshot.Cwd)
	assert.Equal(t, Live, adopted.Snapshot.Lifecycle)
	assert.Equal(t, 1, f.m.ProviderCreates())
}

// TestAC22_JournalAdoptionAndConflict is AC-22, upstream "records adoption
// with the adopted backend readiness, not just the disposition" and
// "records an ownership conflict with the reason that produced it".
func TestAC22_JournalAdoptionAndConflict(t *testing.T) {
	f := newFixture(t)
	j := f.journal()
	f.recoverReq(RecoverRequest{Session: "s1", Kind: Claude, Cwd: "/tmp/project"})
	f.run(5 * time.Second)
	f.recoverReq(RecoverRequest{Session: "s1", Kind: Claude, Cwd: "/tmp/project/."})
	a := j.Find("recover.adopted")
	require.NotNil(t, a)
	assert.Equal(t, Adopted, data(*a, "disposition"))
	assert.Equal(t, Live, data(*a, "lifecycle"))
	_, has := a.Get("ready")
	assert.True(t, has, "the adopted backend's readiness is recorded")
	assert.Equal(t, 1, f.m.ProviderCreates())
	conflict := *f.recoverReq(RecoverRequest{Session: "s1", Kind: Codex, Cwd: "/tmp/project"})
	require.NotNil(t, conflict)
	assert.Equal(t, CodeOwnershipConflict, conflict.Code)
	c := j.Find("recover.conflict")
	require.NotNil(t, c)
	assert.Equal(t, CodeOwnershipConflict, data(*c, "code"))
	assert.Equal(t, "live-entry-mismatch", data(*c, "reason"))
}

// TestAC08_ConstructionFailureRevokesMCP is AC-08, upstream "revokes MCP
// and exposes no provider exception when construction fails": the
// constructor throws after MCP registration; the result is the fixed
// start-failed text, the registration is revoked, and nothing is listed.
func TestAC08_ConstructionFailureRevokesMCP(t *testing.T) {
	f := newFixture(t)
	f.m.FailNextConstruction("constructor-failure")
	got := f.recoverReq(RecoverRequest{Session: "constructor-failure", Kind: Claude, Cwd: "/tmp/project", Domains: []string{"workflows"}})
	f.run(time.Second)
	require.NotNil(t, *got)
	assert.Equal(t, RecoverResult{Code: CodeStartFailed, Retryable: true, Message: "Session failed to start. Check provider setup and retry."}, **got)
	assert.Len(t, f.m.MCPHost().Registered, 1)
	assert.Equal(t, []string{"constructor-failure"}, f.m.MCPHost().Revoked)
	assert.Nil(t, f.m.Backend("constructor-failure"))
	assert.Empty(t, f.m.Snapshot("constructor-failure").Backend)
	assert.Equal(t, 1, f.m.ProviderCreates(), "createSession was called once")
	assert.Empty(t, f.events("spawn"), "no provider exists to start")
}
