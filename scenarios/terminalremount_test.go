package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/terminal"
	"github.com/orchsim/orchsim/sim"
)

// The acceptance bars of the terminal-sessions issue (issue 4), found by the
// randomized workload; the scripted reproductions live in testdata/terminal.

var (
	terminalReported = model.MustProfile(model.PresetReported, nil, nil)
	terminalGuarded  = model.MustProfile(model.PresetReported, []string{string(terminal.GuardedWake)}, nil)
	terminalFixed    = model.MustProfile(model.PresetFixed, nil, nil)
)

// runTerminalWorld runs one seed of the terminal world with opts, judged by
// only the named invariants, to the scenario's horizon: a property that the
// first violation of another invariant would hide is still judged.
func runTerminalWorld(t testing.TB, seed uint64, prof model.Profile, opts TerminalOptions, names ...string) *sim.Violation {
	t.Helper()
	sc, err := Lookup(TerminalRemount)
	require.NoError(t, err)
	k := sim.NewKernel(false)
	tr := k.Trace()
	for _, c := range invariants.New(names...) {
		tr.AddChecker(c)
	}
	env := &model.Env{Clock: k, Trace: tr, Source: sim.NewSeededSource(seed, false), Profile: prof, EnvironmentID: EnvironmentID}
	BuildTerminalWorld(env, opts)
	k.Run(sim.Limits{Horizon: sc.Horizon, EventBudget: DefaultEventBudget})
	return tr.Violation()
}

func TestTerminalRemount_ReportedKillsLiveAgents(t *testing.T) {
	got := outcomes(t, TerminalRemount, terminalReported, 1, 100)
	assert.GreaterOrEqual(t, got[invariants.LiveAgentSurvivesRemount], 10, "outcomes: %v", got)
}

// PR #597 alone removes the kill but leaves the 120x40 snap and the
// wedged-then-adopted backend.
func TestTerminalRemount_GuardedWakeAlone(t *testing.T) {
	got := outcomes(t, TerminalRemount, terminalGuarded, 1, 300)
	assert.Zero(t, got[invariants.LiveAgentSurvivesRemount], "outcomes: %v", got)
	assert.Positive(t, got[invariants.PTYSizeKept], "outcomes: %v", got)
	assert.Positive(t, got[invariants.WedgedSpawnReplaced], "outcomes: %v", got)
}

// The first violation ends a run, so judge live-agent-survives-remount alone
// over whole runs too: with guarded-wake no adopted live agent is ever killed.
func TestTerminalRemount_GuardedWakeNeverKillsAdopted(t *testing.T) {
	opts := DefaultTerminalOptions()
	for seed := uint64(1); seed <= 300; seed++ {
		v := runTerminalWorld(t, seed, terminalGuarded, opts, invariants.LiveAgentSurvivesRemount)
		require.Nil(t, v, "seed %d", seed)
	}
}

func TestTerminalRemount_FixedPasses(t *testing.T) {
	got := outcomes(t, TerminalRemount, terminalFixed, 1, 300)
	assert.Equal(t, map[string]int{"ok": 300}, got)
}

func TestTerminalRemount_NeverKillOnTimeoutIsCaught(t *testing.T) {
	prof := model.MustProfile(model.PresetFixed, nil, []string{string(terminal.NeverKillOnTimeout)})
	got := outcomes(t, TerminalRemount, prof, 1, 200)
	assert.Positive(t, got[invariants.WedgedSpawnReplaced], "outcomes: %v", got)
}

// Each fix switch is needed: fixed minus any one of them fails some seed.
func TestTerminalRemount_EveryFixIsNeeded(t *testing.T) {
	all := []model.Switch{terminal.GuardedWake, terminal.KeepPTYSize, terminal.SpawnOwnsDeadline}
	for _, off := range all {
		var on []string
		for _, s := range model.Switches() {
			if s.Name != off {
				on = append(on, string(s.Name))
			}
		}
		prof := model.MustProfile(model.PresetReported, on, nil)
		got := outcomes(t, TerminalRemount, prof, 1, 100)
		assert.Less(t, got["ok"], 100, "without %s: %v", off, got)
	}
}

// Codex latches readiness at its first ready composer, so a remount never
// waits on a warmed Codex agent and never kills it, even as reported; the
// same runs with Claude agents do.
func TestTerminalRemount_CodexIsNeverKilled(t *testing.T) {
	codex := DefaultTerminalOptions()
	codex.KindWeights = []uint64{1, 0, 0}
	for seed := uint64(1); seed <= 200; seed++ {
		v := runTerminalWorld(t, seed, terminalReported, codex, invariants.LiveAgentSurvivesRemount)
		require.Nil(t, v, "seed %d", seed)
	}
	killed := 0
	for seed := uint64(1); seed <= 100; seed++ {
		if runTerminalWorld(t, seed, terminalReported, DefaultTerminalOptions(), invariants.LiveAgentSurvivesRemount) != nil {
			killed++
		}
	}
	assert.GreaterOrEqual(t, killed, 10, "the control (Claude in the mix) must find the kill")
}
