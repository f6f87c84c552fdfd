package terminal

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The main-process cases of FIDELITY.md §8 (agent-code's own
// sessionManager tests), run against Manager with every draw at its
// simplest (start 300 ms, composer 500 ms later, IPC 1 ms).

type fixture struct {
	k   *sim.Kernel
	app *App
	m   *Manager
}

func newFixture(t *testing.T, fixes ...string) *fixture {
	t.Helper()
	return newFixtureProfile(t, model.MustProfile(model.PresetReported, fixes, nil))
}

func newFixtureProfile(t *testing.T, prof model.Profile) *fixture {
	t.Helper()
	k := sim.NewKernel(true)
	env := &model.Env{Clock: k, Trace: k.Trace(), Source: sim.NewTapeSource(nil, false), Profile: prof, EnvironmentID: "env-1"}
	app := NewApp(env, Config{})
	app.AddSession(Meta{ID: "stable-session", Kind: Claude, Cwd: "/tmp/project", Mode: Terminal})
	return &fixture{k: k, app: app, m: app.Main}
}

func (f *fixture) recover(kind Kind, cwd string) *RecoverResult {
	var got *RecoverResult
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: kind, Cwd: cwd, Caller: "test"}, func(r RecoverResult) { got = &r })
	return got
}

func (f *fixture) run(d time.Duration) { f.k.RunUntil(f.k.Elapsed() + d) }

// events returns "kind outcome k=v..." of main's events of kind.
func (f *fixture) events(kind string) []string {
	var out []string
	for _, ev := range f.k.Trace().Events() {
		if ev.Actor == "main" && ev.Kind == kind {
			s := ev.Outcome
			for _, a := range ev.Attrs {
				if a.Key != "session" && a.Key != "backend" {
					s += " " + a.Key + "=" + a.Value
				}
			}
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

// AC-01: a second compatible recover adopts the live backend without
// constructing another provider.
func TestRecover_AdoptsMatchingLiveBackend(t *testing.T) {
	f := newFixture(t)
	first := f.recover(Claude, "/tmp/project")
	assert.Nil(t, first, "a spawn settles when start() does")
	f.run(time.Second)
	second := f.recover(Claude, "/tmp/project")
	require.NotNil(t, second)
	assert.True(t, second.OK)
	assert.Equal(t, Adopted, second.Disposition)
	assert.Equal(t, Snapshot{Session: "stable-session", Backend: "stable-session#1", Kind: Claude, Cwd: "/tmp/project",
		Lifecycle: Live, Ready: true, Reason: "ready", Rev: 3}, second.Snapshot)
	assert.Len(t, f.events("spawn"), 1, "one provider")
}

// AC-02 (with a latching provider, like the fake session upstream): the
// published readiness is exactly [{false,1,starting}, {true,2,ready}].
func TestSetInputReadiness_DropsUnchangedAndStampsRevisions(t *testing.T) {
	f := newFixture(t)
	var got *RecoverResult
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Codex, Cwd: "/tmp/project"}, func(r RecoverResult) { got = &r })
	f.run(400 * time.Millisecond)
	require.NotNil(t, got)
	assert.Equal(t, Spawned, got.Disposition)
	assert.Equal(t, Snapshot{Session: "stable-session", Backend: "stable-session#1", Kind: Codex, Cwd: "/tmp/project",
		Lifecycle: Live, Reason: "starting", Rev: 1}, got.Snapshot)
	f.run(time.Second)
	assert.Equal(t, []string{"ready=false reason=starting rev=1", "ready=true reason=ready rev=2"}, f.events("input-readiness"))
}

// AC-04: concurrent compatible recovers join one claim; the snapshot
// during start is spawning; both resolve spawned; one provider.
func TestRecover_JoinsInFlightClaim(t *testing.T) {
	f := newFixture(t)
	var results []RecoverResult
	for i := 0; i < 2; i++ {
		f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Codex, Cwd: "/tmp/project", Caller: "test"},
			func(r RecoverResult) { results = append(results, r) })
	}
	assert.Equal(t, Spawning, f.m.Snapshot("stable-session").Lifecycle)
	f.run(time.Second)
	require.Len(t, results, 2)
	for _, r := range results {
		assert.Equal(t, Spawned, r.Disposition)
		assert.Equal(t, Live, r.Snapshot.Lifecycle)
	}
	assert.Equal(t, []string{"claimed kind=codex caller=test", "joined kind=codex caller=test"}, f.events("recover"))
	assert.Len(t, f.events("spawn"), 1)
}

// AC-07: a failed start answers start-failed (retryable, fixed message) and
// releases the claim, so a later recover spawns a new provider.
func TestRecover_FailedStartReleasesClaim(t *testing.T) {
	f := newFixture(t)
	f.m.cfg.StartFailChance = sim.Per(1, 1)
	var got *RecoverResult
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project", Caller: "test"}, func(r RecoverResult) { got = &r })
	f.run(time.Second)
	require.NotNil(t, got)
	assert.Equal(t, RecoverResult{Code: CodeStartFailed, Retryable: true, Message: MsgStartFailed}, *got)
	assert.Nil(t, f.m.Backend("stable-session"))
	f.m.cfg.StartFailChance = sim.Ratio{}
	f.recover(Claude, "/tmp/project")
	f.run(time.Second)
	require.NotNil(t, f.m.Backend("stable-session"))
	assert.Equal(t, "stable-session#2", f.m.Backend("stable-session").ID)
}

// AC-13: a kill during a gated start cancels the recovery and leaves no
// backend behind.
func TestKill_CancelsBlockedRecovery(t *testing.T) {
	f := newFixture(t)
	var got *RecoverResult
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project", Caller: "test"}, func(r RecoverResult) { got = &r })
	assert.True(t, f.m.KillOwned("stable-session", Claude, "/tmp/project", "close", ""))
	f.run(time.Second)
	require.NotNil(t, got)
	assert.Equal(t, CodeCancelled, got.Code)
	assert.True(t, got.Retryable)
	assert.Nil(t, f.m.Backend("stable-session"))
}

// AC-16: killOwned needs the exact kind and cwd; the proof cannot tell an
// adopted healthy agent from a wedged spawn.
func TestKillOwned_RequiresKindAndCwd(t *testing.T) {
	f := newFixture(t)
	f.recover(Claude, "/tmp/project")
	f.run(time.Second)
	assert.False(t, f.m.KillOwned("stable-session", Claude, "/tmp/other", "test", ""))
	assert.False(t, f.m.KillOwned("stable-session", Codex, "/tmp/project", "test", ""))
	require.NotNil(t, f.m.Backend("stable-session"))
	assert.True(t, f.m.KillOwned("stable-session", Claude, "/tmp/project", "test", ""))
	assert.Nil(t, f.m.Backend("stable-session"))
	assert.Equal(t, []string{"not-owned cause=test", "not-owned cause=test", "killed cause=test"}, f.events("kill"))
}

// AC-35: Claude's occupied state never expires: a draft keeps it not ready
// for 600 s; clearing it publishes ready again. Codex latches.
func TestReadiness_ClaudeDraftNeverExpiresCodexLatches(t *testing.T) {
	for _, c := range []struct {
		kind Kind
		want []string
	}{
		{Claude, []string{"ready=false reason=starting rev=1", "ready=false reason=provider-not-ready rev=2",
			"ready=true reason=ready rev=3", "ready=false reason=human-draft rev=4", "ready=true reason=ready rev=5"}},
		{Codex, []string{"ready=false reason=starting rev=1", "ready=true reason=ready rev=2"}},
	} {
		f := newFixture(t)
		f.m.Recover(RecoverRequest{Session: "stable-session", Kind: c.kind, Cwd: "/tmp/project"}, func(RecoverResult) {})
		f.run(time.Second)
		f.m.Write("stable-session", "p1", []Chunk{{Seq: 1, Key: KeyText}, {Seq: 2, Key: KeyText}})
		f.run(600 * time.Second)
		ready, _ := f.m.Backend("stable-session").gate()
		assert.Equal(t, c.kind != Claude, ready, "%s after 600 s with a draft", c.kind)
		f.m.Write("stable-session", "p1", []Chunk{{Seq: 3, Key: KeyClear}})
		assert.Equal(t, c.want, f.events("input-readiness"), "%s", c.kind)
	}
}

// AC-D4: attach without an entry takes no reference; the restore size is
// captured on 0->1 and applied only by the last detach.
func TestAttachDetach_RefcountAndRestore(t *testing.T) {
	f := newFixture(t)
	assert.False(t, f.m.Attach("stable-session", "p1", true).OK)
	assert.Zero(t, f.m.AttachCount("stable-session"))
	f.recover(Claude, "/tmp/project")
	f.run(time.Second)
	require.True(t, f.m.Attach("stable-session", "p1", true).OK)
	f.m.Resize("stable-session", "p1", Size{Cols: 89, Rows: 48})
	require.True(t, f.m.Attach("stable-session", "p2", false).OK)
	f.m.Detach("stable-session", "p2")
	size, _ := f.m.PTYSize("stable-session")
	assert.Equal(t, Size{Cols: 89, Rows: 48}, size, "not the last detach")
	f.m.Detach("stable-session", "p1")
	size, owner := f.m.PTYSize("stable-session")
	assert.Equal(t, SpawnDefault, size, "the last detach restores the size captured at first attach")
	assert.Equal(t, ownerSpawn, owner)
	_, widths := f.m.ReplayBuffer("stable-session")
	assert.Equal(t, "89,120", widths)
	assert.Equal(t, []string{"decremented pane=p2 count=1", "released pane=p1 count=0"}, f.events("pty.detach"))
}

func TestAttachDetach_KeepPTYSize(t *testing.T) {
	f := newFixture(t, string(KeepPTYSize))
	f.recover(Claude, "/tmp/project")
	f.run(time.Second)
	f.m.Attach("stable-session", "p1", true)
	f.m.Resize("stable-session", "p1", Size{Cols: 89, Rows: 48})
	f.m.Detach("stable-session", "p1")
	size, _ := f.m.PTYSize("stable-session")
	assert.Equal(t, Size{Cols: 89, Rows: 48}, size, "the leaf owns the size")
	assert.Len(t, f.events("pty.restore"), 1)
}

func TestReplayBuffer_CapKeepsTail(t *testing.T) {
	var b replayBuffer
	b.append(80, ReplayBufferCap)
	b.append(120, 1000)
	b.append(120, 24)
	assert.Equal(t, ReplayBufferCap, b.total)
	assert.Equal(t, "80,120", b.widths())
	b.append(200, ReplayBufferCap)
	assert.Equal(t, "200", b.widths())
}

// detachAgentPty with the ledger (DetachOwnReference, qwen-code PR #7386):
// a detach by a client holding no reference, or detaching twice, leaves the
// count alone; without it (agent-code today) any detach decrements.
func TestDetach_OwnReferenceLedger(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fixes []string
		want  []string
	}{
		{"fixed", []string{string(DetachOwnReference)}, []string{"ignored pane=p2 count=1 why=no-reference", "released pane=p1 count=0",
			"ignored pane=p1 count=0 why=no-reference"}},
		{"reported", nil, []string{"released pane=p2 count=0", "unmatched pane=p1 count=0", "unmatched pane=p1 count=0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.fixes...)
			f.recover(Claude, "/tmp/project")
			f.run(time.Second)
			require.True(t, f.m.Attach("stable-session", "p1", true).OK)
			f.m.Detach("stable-session", "p2")
			f.m.Detach("stable-session", "p1")
			f.m.Detach("stable-session", "p1")
			assert.Equal(t, tc.want, f.events("pty.detach"))
			assert.Equal(t, 0, f.m.AttachCount("stable-session"))
		})
	}
}

// im-ian/acorn#37 (AtomicSpawnClaim off): two recovers inside provider
// construction (a session with built-in MCP domains) both pass the check and fork two backends; the first, whose
// entry was overwritten, settles cancelled. With the reservation (upstream
// 2523e21d, "refuses to reuse an id while the first backend spawn is still
// starting") the second joins and one provider starts.
func TestRecover_UnreservedSpawnForksTwoBackends(t *testing.T) {
	f := newFixtureProfile(t, model.MustSpec(model.Spec{Preset: model.PresetFixed, Unfix: []string{string(AtomicSpawnClaim)}}))
	f.app.Meta("stable-session").MCP = true // construction awaits MCP registration
	var a, b *RecoverResult
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project", Caller: "a"}, func(r RecoverResult) { a = &r })
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project", Caller: "b"}, func(r RecoverResult) { b = &r })
	f.run(5 * time.Second)
	assert.Len(t, f.events("spawn"), 2, "two providers for one session id")
	require.NotNil(t, a)
	require.NotNil(t, b)
	assert.Equal(t, CodeCancelled, a.Code, "the overwritten spawn")
	assert.Equal(t, Spawned, b.Disposition)

	f = newFixture(t, string(AtomicSpawnClaim))
	f.app.Meta("stable-session").MCP = true
	a, b = nil, nil
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project", Caller: "a"}, func(r RecoverResult) { a = &r })
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project", Caller: "b"}, func(r RecoverResult) { b = &r })
	f.run(5 * time.Second)
	assert.Len(t, f.events("spawn"), 1)
	require.NotNil(t, a)
	require.NotNil(t, b)
	assert.Equal(t, Spawned, a.Disposition)
	assert.Equal(t, Spawned, b.Disposition, "a joined caller is told spawned")
}

// A renderer reload over a live backend (stablyai/orca#11006, agent-code
// PR #548): with AdoptBeforeSpawn the new renderer's restore adopts the
// backend main kept, and its pane attaches; without it the restore
// cold-spawns a second backend for the session, and the first runs on out
// of the registry's reach.
func TestReload_RestoreAdoptsOrColdSpawns(t *testing.T) {
	for _, adopt := range []bool{true, false} {
		spec := model.Spec{Preset: model.PresetFixed}
		if !adopt {
			spec.Unfix = []string{string(AdoptBeforeSpawn)}
		}
		f := newFixtureProfile(t, model.MustSpec(spec))
		f.app.Boot()
		f.run(2 * time.Second)
		first := f.m.Backend("stable-session")
		require.NotNil(t, first)
		f.app.ReloadRenderer()
		f.run(2 * time.Second)
		now := f.m.Backend("stable-session")
		require.NotNil(t, now)
		if adopt {
			assert.Same(t, first, now, "adopted")
			assert.Len(t, f.events("spawn"), 1)
		} else {
			assert.NotSame(t, first, now)
			assert.True(t, first.Live(), "the first backend runs on, unreachable")
			assert.Len(t, f.events("spawn"), 2)
		}
		p := f.app.Renderer.VisiblePane("stable-session")
		require.NotNil(t, p)
		assert.True(t, p.Attached)
		assert.Equal(t, 1, f.m.AttachCount("stable-session"), "the old renderer's reference is gone")
	}
}

// The widths list kept in step with the runs equals the runs' widths joined,
// after every append (new runs, merged runs, runs dropped by the cap), and
// a list once shown never changes.
func TestReplayBuffer_WidthsFollowRuns(t *testing.T) {
	var b replayBuffer
	r := sim.NewRand(sim.NewSeededSource(7, false), "widths")
	type shown struct{ got, want string }
	var kept []shown
	for i := 0; i < 5000; i++ {
		b.append([]int{29, 44, 80, 100, 120, 200, 1000}[r.IntN("cols", 7)], 1+r.IntN("bytes", ReplayBufferCap/3))
		var want []string
		for _, s := range b.segs {
			want = append(want, strconv.Itoa(s.cols))
		}
		got := b.widths()
		require.Equal(t, strings.Join(want, ","), got, "append %d", i)
		kept = append(kept, shown{got, strings.Clone(got)})
	}
	for _, k := range kept {
		require.Equal(t, k.want, k.got)
	}
}
