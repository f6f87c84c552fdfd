package shrink

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/scenarios"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// firstFailing returns the first seed of scenario that fails with inv.
func firstFailing(t *testing.T, scenario, inv string) scenarios.Config {
	t.Helper()
	for seed := uint64(1); seed <= 100; seed++ {
		cfg := scenarios.Config{Scenario: scenario, Seed: seed, Profile: model.MustProfile(model.PresetReported, nil, nil)}
		res, err := scenarios.Run(cfg)
		require.NoError(t, err)
		if res.Violation != nil && res.Violation.Invariant == inv {
			return cfg
		}
	}
	t.Fatalf("no seed of %s fails with %s", scenario, inv)
	return scenarios.Config{}
}

func TestShrink_SeedBugsToShortStories(t *testing.T) {
	for _, tc := range []struct {
		scenario, inv string
		reportSteps   int
	}{
		{scenarios.TabOwnership, "thread-keeps-its-tabs", 6},
		{scenarios.RequestRetry, "one-effect-per-request", 5},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			cfg := firstFailing(t, tc.scenario, tc.inv)
			small, res, st, ok := Shrink(cfg, tc.inv, Options{Budget: time.Minute, MaxRuns: 3000})
			require.True(t, ok)
			require.NotNil(t, res.Violation)
			assert.Equal(t, tc.inv, res.Violation.Invariant)
			t.Logf("seed %d: %d runs, actions %d -> %d, tape %d -> %d, off %v", cfg.Seed, st.Runs, st.Before, st.After, st.TapeBefore, st.TapeAfter, small.Off)
			for i := range res.Trace {
				t.Log(res.Trace[i].Describe())
			}
			assert.LessOrEqual(t, st.After, tc.reportSteps+2)
			// The shrunk configuration replays to the same run.
			again, err := scenarios.Run(scenarios.Config{Scenario: small.Scenario, Seed: small.Seed, Profile: small.Profile,
				Strategy: small.Strategy, Off: small.Off, Tape: small.Tape})
			require.NoError(t, err)
			assert.Equal(t, res.Fingerprint, again.Fingerprint)
		})
	}
}

func TestShrink_TerminalBugToShortStory(t *testing.T) {
	cfg := firstFailing(t, "terminal-remount", "live-agent-survives-remount")
	_, res, st, ok := Shrink(cfg, "live-agent-survives-remount", Options{Budget: time.Minute, MaxRuns: 3000})
	require.True(t, ok)
	assert.Equal(t, "live-agent-survives-remount", res.Violation.Invariant)
	// Report 003's own reproduction has 4 steps.
	assert.LessOrEqual(t, st.After, 4+2)
}

// TestShrink_LaterViolationAlone: an invariant a keep-going run breaks only
// after another's violation (tab-ownership seed 2 under reported breaks
// preview-op-on-owning-host after thread-keeps-its-tabs and others)
// shrinks to a plain run in which it fails first: other bugs' fixes on,
// never one of its own, fewer actions, and the plain config replays to
// the same run.
func TestShrink_LaterViolationAlone(t *testing.T) {
	const inv = "preview-op-on-owning-host"
	cfg := scenarios.Config{Scenario: scenarios.TabOwnership, Seed: 2, Profile: model.MustProfile(model.PresetReported, nil, nil), KeepGoing: true}
	before, err := scenarios.Run(cfg)
	require.NoError(t, err)
	require.NotNil(t, before.Violation)
	require.NotEqual(t, inv, before.Violation.Invariant, "the seed must break %s only later", inv)
	require.True(t, Fails(&before, inv))

	small, res, st, ok := Shrink(cfg, inv, Options{Budget: time.Minute, MaxRuns: 100})
	require.True(t, ok)
	require.NotNil(t, res.Violation)
	assert.Equal(t, inv, res.Violation.Invariant, "the minimal run has it first")
	assert.False(t, small.KeepGoing, "written alone, as a plain run")
	assert.Less(t, st.After, st.Before)
	assert.NotEmpty(t, small.Profile.Fixes(), "another bug's fix is on")
	for _, sw := range model.Switches() {
		if small.Profile.Fixed(sw.Name) {
			assert.NotContains(t, sw.Invariants, inv, "a fix turned on must not be one of %s's own", inv)
		}
	}
	again, err := scenarios.Run(scenarios.Config{Scenario: small.Scenario, Seed: small.Seed, Profile: small.Profile,
		Strategy: small.Strategy, Off: small.Off, Tape: small.Tape})
	require.NoError(t, err)
	assert.Equal(t, res.Fingerprint, again.Fingerprint)
	require.NotNil(t, again.Violation)
	assert.Equal(t, inv, again.Violation.Invariant)
}

// TestShrink_FirstViolationKeepsProfile: shrinking a run's first violation
// never turns a fix on (fixOthers is for later targets only), keep-going or
// not.
func TestShrink_FirstViolationKeepsProfile(t *testing.T) {
	for _, keep := range []bool{false, true} {
		cfg := scenarios.Config{Scenario: scenarios.Chaos, Seed: 1, Profile: model.MustProfile(model.PresetReported, nil, nil), KeepGoing: keep}
		res, err := scenarios.Run(cfg)
		require.NoError(t, err)
		require.NotNil(t, res.Violation)
		small, out, _, ok := Shrink(cfg, res.Violation.Invariant, Options{Budget: time.Minute, MaxRuns: 60})
		require.True(t, ok)
		assert.Empty(t, small.Profile.Fixes(), "keep-going %v", keep)
		assert.Equal(t, keep, small.KeepGoing)
		assert.Equal(t, res.Violation.Invariant, out.Violation.Invariant)
	}
}
