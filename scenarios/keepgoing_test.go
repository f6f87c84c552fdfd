package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

// A keep-going run is the stopping run up to its first violation, then
// goes on and records the first violation of each other invariant, once
// each; it is deterministic, and a run without violation is unchanged.
func TestKeepGoing_SameRunUpToTheFirstViolationThenEveryInvariant(t *testing.T) {
	for _, sc := range All() {
		for seed := uint64(1); seed <= 4; seed++ {
			cfg := Config{Scenario: sc.Name, Seed: seed, Profile: model.MustProfile(model.PresetReported, nil, nil), KeepTrace: true}
			stop, err := Run(cfg)
			require.NoError(t, err)
			cfg.KeepGoing = true
			kg, err := Run(cfg)
			require.NoError(t, err)
			again, err := Run(cfg)
			require.NoError(t, err)
			assert.Equal(t, kg.Fingerprint, again.Fingerprint, "%s seed %d: deterministic", sc.Name, seed)
			if stop.Violation == nil {
				assert.Equal(t, stop.Fingerprint, kg.Fingerprint)
				continue
			}
			require.NotNil(t, kg.Violation)
			assert.Equal(t, *stop.Violation, *kg.Violation, "%s seed %d: the same first violation", sc.Name, seed)
			n := 0
			for n < len(stop.Trace) && stop.Trace[n].Actor != "invariant" {
				n++
			}
			assert.Equal(t, stop.Trace[:n+1], kg.Trace[:n+1], "%s seed %d: the same events up to it", sc.Name, seed)
			assert.Nil(t, stop.Later)
			seen := map[string]bool{kg.Violation.Invariant: true}
			for _, l := range kg.Later {
				assert.False(t, seen[l.Invariant], "%s seed %d: %s once", sc.Name, seed, l.Invariant)
				seen[l.Invariant] = true
				assert.GreaterOrEqual(t, l.At, kg.Violation.At)
			}
		}
	}
}

// The follows rule: one switch declares both invariants and the two
// messages name a common id (not a time or a count).
func TestFollowsFrom(t *testing.T) {
	var a, b string
	var unpaired string
	for _, s := range model.Switches() {
		if len(s.Invariants) >= 2 && a == "" {
			a, b = s.Invariants[0], s.Invariants[1]
		}
	}
	require.NotEmpty(t, a, "a switch that declares two invariants")
	for _, s := range model.Switches() {
		for _, inv := range s.Invariants {
			paired := false
			for _, o := range model.Switches() {
				for _, x := range o.Invariants {
					paired = paired || x == inv && len(o.Invariants) > 0 && contains(o.Invariants, a)
				}
			}
			if !paired && unpaired == "" {
				unpaired = inv
			}
		}
	}
	require.NotEmpty(t, unpaired)
	first := sim.Violation{Invariant: a, Message: "thread thread-c lost tab tab_1_1f90 at T+01:19:38.033 after 3 calls"}
	assert.True(t, FollowsFrom(first, sim.Violation{Invariant: b, Message: "thread-c/tab_1_1f90 still open"}), "a common id")
	assert.False(t, FollowsFrom(first, sim.Violation{Invariant: b, Message: "thread-a at T+01:19:38.033 after 3 calls"}),
		"a common time or count is not a common id")
	assert.False(t, FollowsFrom(first, sim.Violation{Invariant: unpaired, Message: "thread thread-c lost tab tab_1_1f90"}),
		"no switch declares both")
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Seeds whose keep-going runs under reported once ended in a model panic
// (a nil *Meta dereferenced by a pane whose session was closed while its
// wake ran: Pane.requestAttach), found by writing the baselines again.
// The models must model every state the bugs reach, not crash in it.
func TestKeepGoing_NoModelPanic(t *testing.T) {
	for _, c := range []struct {
		scenario string
		seed     uint64
	}{{"terminal-remount", 328}, {"chaos", 208}} {
		res, err := Run(Config{Scenario: c.scenario, Seed: c.seed, KeepGoing: true,
			Profile: model.MustProfile(model.PresetReported, nil, nil)})
		require.NoError(t, err)
		require.NotNil(t, res.Violation, "%s seed %d still finds its bugs", c.scenario, c.seed)
		assert.NotEqual(t, sim.ModelPanic, res.Violation.Invariant, "%s seed %d: %s", c.scenario, c.seed, res.Violation.Message)
		for _, l := range res.Later {
			assert.NotEqual(t, sim.ModelPanic, l.Invariant, "%s seed %d: %s", c.scenario, c.seed, l.Message)
		}
	}
}
