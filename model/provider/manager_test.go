package provider

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/mcp"
	"github.com/orchsim/orchsim/sim"
	"github.com/orchsim/orchsim/sim/simtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type psm struct {
	k      *sim.Kernel
	env    *model.Env
	reg    *mcp.Registry
	slots  *mcp.Slots
	m      *Manager
	turns  map[string]*Entry // thread -> entry of its running turn
	thread []string
	inst   map[string]string
}

func newPSM(src sim.Source, p model.Profile) *psm {
	k := sim.NewKernel(true)
	env := &model.Env{Clock: k, Trace: k.Trace(), Source: src, Profile: p, EnvironmentID: "env-1"}
	for _, c := range invariants.New(invariants.StaleCleanupSparesReplacement) {
		k.Trace().AddChecker(c)
	}
	reg := mcp.NewRegistry(env)
	slots := &mcp.Slots{}
	s := &psm{k: k, env: env, reg: reg, slots: slots, m: NewManager(env, reg, slots, 1), turns: map[string]*Entry{},
		thread: []string{"t1", "t2", "t3"}, inst: map[string]string{"t1": "claudeAgent", "t2": "codex", "t3": "codex"}}
	s.m.OnRelease = func(e *Entry, reason string) {
		for th, te := range s.turns {
			if te == e {
				delete(s.turns, th)
			}
		}
	}
	return s
}

// The provider session manager as a rapid state machine: its inputs are
// turns starting and ending, time passing (idle release, pins), provider
// crashes and detaches; the "" action checks I1 (one live entry per
// ProviderSessionId), I2 (an idle release only of an idle entry) and, via
// the trace, I3/I4 (stale clean-up spares the replacement).
func (s *psm) StartTurn(t *rapid.T) {
	th := rapid.SampledFrom(s.thread).Draw(t, "thread")
	if s.turns[th] != nil {
		t.Skip("turn already running")
	}
	s.m.StartTurn(th, s.inst[th], time.Duration(rapid.IntRange(0, 5).Draw(t, "open-s"))*time.Second, func(e *Entry, err error) {
		if err == nil {
			s.turns[th] = e
		}
	})
}

func (s *psm) EndTurn(t *rapid.T) {
	th := rapid.SampledFrom(s.thread).Draw(t, "thread")
	e := s.turns[th]
	if e == nil {
		t.Skip("no turn")
	}
	delete(s.turns, th)
	if rapid.Bool().Draw(t, "background") {
		s.m.SetBackgroundWork(e, s.env.Now()+time.Duration(rapid.IntRange(1, 300).Draw(t, "bg-min"))*time.Minute)
	}
	s.m.TurnTerminal(e, th)
}

func (s *psm) Advance(t *rapid.T) {
	d := time.Duration(rapid.IntRange(1, 7200).Draw(t, "seconds")) * time.Second
	s.k.RunUntil(s.k.Elapsed() + d)
}

func (s *psm) Crash(t *rapid.T) {
	es := s.m.Entries()
	if len(es) == 0 {
		t.Skip("no session")
	}
	s.m.Crash(es[rapid.IntRange(0, len(es)-1).Draw(t, "entry")])
}

func (s *psm) RestartInPlace(t *rapid.T) {
	th := rapid.SampledFrom(s.thread).Draw(t, "thread")
	e := s.m.EntryForThread(th)
	if e == nil || e.Busy() {
		t.Skip("not attached or busy")
	}
	s.m.RestartInPlace(e, "runtime options changed")
}

func (s *psm) Detach(t *rapid.T) {
	th := rapid.SampledFrom(s.thread).Draw(t, "thread")
	e := s.m.EntryForThread(th)
	if e == nil || s.turns[th] != nil {
		t.Skip("not attached or busy")
	}
	s.m.Detach(e, th, rapid.Bool().Draw(t, "terminal"))
}

func (s *psm) Check(t *rapid.T) {
	seen := map[string]bool{}
	for _, e := range s.m.Entries() {
		if seen[e.ID] {
			t.Fatalf("two live entries for %s", e.ID)
		}
		seen[e.ID] = true
	}
	for _, ev := range s.k.Trace().Events() {
		if ev.Kind == "session.release" && ev.Get("reason") == ReasonIdleTimeout {
			for _, e := range s.turns {
				if e.Incarnation == ev.Get("incarnation") {
					t.Fatalf("%s released for idleness during a turn", e.Incarnation)
				}
			}
		}
	}
	if v := s.k.Trace().Violation(); v != nil {
		t.Fatalf("%s: %s", v.Invariant, v.Message)
	}
}

func TestManager_StateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := newPSM(simtest.NewRapidSource(t), model.MustProfile(model.PresetFixed, nil, nil))
		t.Repeat(rapid.StateMachineActions(s))
	})
}

// The revoke-by-thread mutant breaks I4: a stale session's clean-up
// revokes the credential minted for the session replacing it.
func TestManager_RevokeByThreadRevokesTheReplacement(t *testing.T) {
	s := newPSM(sim.NewTapeSource(nil, false), model.MustProfile(model.PresetFixed, nil, []string{string(model.RevokeByThread)}))
	s.m.CapsFor = func(string, string) mcp.Caps { return mcp.CapOrchestration }
	s.m.StartTurn("t1", "claudeAgent", time.Second, func(e *Entry, err error) { s.turns["t1"] = e })
	s.k.RunUntil(2 * time.Second)
	e := s.turns["t1"]
	require.NotNil(t, e)
	s.m.TurnTerminal(e, "t1")
	s.m.Detach(e, "t1", false) // single-thread runtime: released; clean-up after the scope closes
	// The replacement opens at once with new capabilities, so it mints a new
	// credential, and takes 10 s to start: the stale clean-up lands meanwhile.
	s.m.CapsFor = func(string, string) mcp.Caps { return mcp.CapOrchestration | mcp.CapPreview }
	s.m.StartTurn("t1", "claudeAgent", 10*time.Second, func(*Entry, error) {})
	s.k.RunUntil(20 * time.Second)
	v := s.k.Trace().Violation()
	require.NotNil(t, v)
	assert.Equal(t, invariants.StaleCleanupSparesReplacement, v.Invariant)
}

// swarajbachu/zuse#463: a session restarted in place keeps its entry; the
// old runtime's clean-up, looking the session's credentials up by its id
// when it finishes closing, revokes the replacement's fresh credential and
// clears its slot. With revoke-by-session-generation it revokes only its
// own generation's (already revoked by the restart's issue), and the new
// token keeps resolving.
func TestManager_InPlaceRestartCleanupSparesReplacement(t *testing.T) {
	for _, fixed := range []bool{false, true} {
		var unfix []string
		if !fixed {
			unfix = []string{string(RevokeBySessionGeneration)}
		}
		s := newPSM(sim.NewTapeSource(nil, false), model.MustSpec(model.Spec{Preset: model.PresetFixed, Unfix: unfix}))
		s.m.StartTurn("t1", "claudeAgent", time.Second, func(e *Entry, err error) { s.turns["t1"] = e })
		s.k.RunUntil(2 * time.Second)
		e := s.turns["t1"]
		require.NotNil(t, e)
		s.m.TurnTerminal(e, "t1")
		old, _ := e.Cred("t1")
		oldInc := e.Incarnation
		require.True(t, s.m.RestartInPlace(e, "model changed"))
		assert.NotEqual(t, oldInc, e.Incarnation, "a new generation")
		assert.Same(t, e, s.m.Entry(e.ID), "the entry lives on")
		repl, _ := e.Cred("t1")
		assert.NotEqual(t, old.CredID, repl.CredID, "the new runtime gets a fresh credential")
		assert.Nil(t, s.reg.Resolve(old.Token), "issuing it revoked the thread's old one")
		s.k.RunUntil(time.Minute) // the old runtime's scope has closed and its clean-up ran
		v := s.k.Trace().Violation()
		if fixed {
			assert.Nil(t, v)
			assert.NotNil(t, s.reg.Resolve(repl.Token), "the replacement's token still resolves")
			sl, ok := s.slots.Get("t1")
			assert.True(t, ok && sl.CredID == repl.CredID)
			continue
		}
		require.NotNil(t, v)
		assert.Equal(t, invariants.StaleCleanupSparesReplacement, v.Invariant)
		assert.Nil(t, s.reg.Resolve(repl.Token), "revoked by the old handle")
	}
	s := newPSM(sim.NewTapeSource(nil, false), model.MustProfile(model.PresetFixed, nil, nil))
	s.m.StartTurn("t1", "claudeAgent", 0, func(e *Entry, err error) { s.turns["t1"] = e })
	s.k.RunUntil(time.Second)
	assert.False(t, s.m.RestartInPlace(s.turns["t1"], "model changed"), "a busy session restarts for its next turn, not now")
}

// t3code PR #7083's finding: with browser access off, the deny path
// issues the re-attaching thread a credential without revoking its old,
// preview-capable one; the fix revokes first. The on-restart-only mutant
// revokes for an in-place restart but not for a re-attach.
func TestManager_DenyPathRevokesThread(t *testing.T) {
	for _, tc := range []struct {
		name      string
		spec      model.Spec
		oldLives  bool
		onRestart bool
	}{
		{"reported", model.Spec{Preset: model.PresetFixed, Unfix: []string{string(DenyPathRevokesThread)}}, true, false},
		{"fixed", model.Spec{Preset: model.PresetFixed}, false, false},
		{"mutant re-attach", model.Spec{Preset: model.PresetFixed, Mutants: []string{string(DenyPathRevokesOnRestartOnly)}}, true, false},
		{"mutant restart", model.Spec{Preset: model.PresetFixed, Mutants: []string{string(DenyPathRevokesOnRestartOnly)}}, false, true},
	} {
		s := newPSM(sim.NewTapeSource(nil, false), model.MustSpec(tc.spec))
		s.m.CapsFor = func(string, string) mcp.Caps { return mcp.CapOrchestration | mcp.CapPreview }
		s.m.StartTurn("t2", "codex", 0, func(e *Entry, err error) { s.turns["t2"] = e })
		s.k.RunUntil(time.Second)
		e := s.turns["t2"]
		require.NotNil(t, e, tc.name)
		old, _ := e.Cred("t2")
		s.m.TurnTerminal(e, "t2")
		s.m.CapsFor = func(string, string) mcp.Caps { return mcp.CapOrchestration } // browser access withdrawn
		if tc.onRestart {
			require.True(t, s.m.RestartInPlace(e, "options"))
		} else {
			s.m.Detach(e, "t2", false) // the capability change detaches; codex lives on
			s.m.StartTurn("t2", "codex", 0, func(*Entry, error) {})
		}
		now, _ := e.Cred("t2")
		assert.NotEqual(t, old.CredID, now.CredID, tc.name)
		assert.Equal(t, tc.oldLives, s.reg.Resolve(old.Token) != nil, tc.name)
	}
}

func TestManager_IdleReleaseRespectsGenerationAndPin(t *testing.T) {
	s := newPSM(sim.NewTapeSource(nil, false), model.MustProfile(model.PresetReported, []string{string(BackgroundWorkPinsSession)}, nil))
	s.m.StartTurn("t1", "claudeAgent", 0, func(e *Entry, err error) { s.turns["t1"] = e })
	s.k.RunUntil(time.Second)
	e := s.turns["t1"]
	s.m.SetBackgroundWork(e, 5*time.Hour)
	s.m.TurnTerminal(e, "t1")
	s.k.RunUntil(3 * time.Hour)
	assert.False(t, e.Released(), "pinned for pending background work")
	s.k.RunUntil(5 * time.Hour)
	assert.True(t, e.Released(), "the pin is capped at 4 h")
	var deferred, expired int
	for _, ev := range s.k.Trace().Events() {
		switch ev.Kind {
		case "idle-release-deferred":
			deferred++
		case "idle-release-pin-expired":
			expired++
		}
	}
	assert.Positive(t, deferred)
	assert.Equal(t, 1, expired)
}

// t3code#4198: without the pin the idle release looks at idle time only,
// and reaps a session whose background work still runs; a shared session
// keeps the latest end of its threads' work.
func TestManager_ReaperWithoutPinIgnoresBackgroundWork(t *testing.T) {
	s := newPSM(sim.NewTapeSource(nil, false), model.MustProfile(model.PresetReported, nil, nil))
	s.m.StartTurn("t1", "claudeAgent", 0, func(e *Entry, err error) { s.turns["t1"] = e })
	s.k.RunUntil(time.Second)
	e := s.turns["t1"]
	s.m.SetBackgroundWork(e, 5*time.Hour)
	s.m.SetBackgroundWork(e, time.Hour) // a shorter report does not shorten it
	assert.Equal(t, 5*time.Hour, e.background)
	s.m.TurnTerminal(e, "t1")
	s.k.RunUntil(DefaultIdleTimeout + 2*time.Second)
	assert.True(t, e.Released(), "reaped at the idle timeout with work pending")
	for _, ev := range s.k.Trace().Events() {
		assert.NotEqual(t, "idle-release-deferred", ev.Kind)
	}
}
