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
