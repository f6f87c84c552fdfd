package triage

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/scenarios"
)

// A known bug's failure is keyed by its own switch, under fixed~switch
// (the only candidate) and under reported (every switch a candidate, the
// ones declaring the invariant tried first); with the fix on, the
// invariant no longer breaks.
func TestMinimalFixes_FindsTheBugsSwitch(t *testing.T) {
	for _, preset := range []string{model.PresetFixed, model.PresetReported} {
		spec, seed := model.Spec{Preset: preset}, uint64(0)
		if preset == model.PresetFixed {
			spec.Unfix = []string{"stable-request-namespace"}
		}
		cfg := scenarios.Config{Scenario: scenarios.RequestRetry, Profile: model.MustSpec(spec)}
		// The first seed whose keep-going run breaks the invariant (other
		// helpers' switches move which seeds do under reported).
		for s := uint64(1); s <= 100 && seed == 0; s++ {
			res, err := scenarios.Run(scenarios.Config{Scenario: cfg.Scenario, Seed: s, Profile: cfg.Profile, KeepGoing: true})
			require.NoError(t, err)
			if Breaks(&res, "one-effect-per-request") {
				seed = s
			}
		}
		require.NotZero(t, seed, "%s: a seed of 100 breaks one-effect-per-request", preset)
		cfg.Seed = seed
		key, runs, err := MinimalFixes(cfg, "one-effect-per-request")
		require.NoError(t, err)
		assert.Equal(t, []string{"stable-request-namespace"}, key.Switches, preset)
		assert.False(t, key.New())
		assert.Positive(t, runs)
		assert.Equal(t, []string{"t3code#16184"}, Reports(key.Switches))
	}
}

// A mutant's failure is new: no known fix makes it pass.
func TestMinimalFixes_AMutantIsNew(t *testing.T) {
	cfg := scenarios.Config{Scenario: scenarios.TabOwnership, Seed: 1,
		Profile: model.MustProfile(model.PresetFixed, nil, []string{string(model.IgnoreTabOwner)})}
	key, _, err := MinimalFixes(cfg, "no-cross-thread-tab-action")
	require.NoError(t, err)
	assert.True(t, key.New(), "%v", key)
	assert.Equal(t, "no-cross-thread-tab-action (new)", key.String())
}

func TestCandidates_DeclaringSwitchesFirstFromTheRegistry(t *testing.T) {
	p := model.MustProfile(model.PresetReported, nil, nil)
	c := Candidates(p, "thread-keeps-its-tabs")
	assert.Len(t, c, len(model.Switches()), "every switch is off under reported")
	assert.Equal(t, "stable-tab-owner", c[0])
	fixed := model.MustSpec(model.Spec{Preset: model.PresetFixed, Unfix: []string{"stable-tab-owner"}})
	assert.Equal(t, []string{"stable-tab-owner"}, Candidates(fixed, "thread-keeps-its-tabs"))
	back, err := WithFixes(fixed, []string{"stable-tab-owner"})
	require.NoError(t, err)
	assert.True(t, back.Fixed("stable-tab-owner"), "an unfixed switch is turned on again")
}
