package scenarios

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/browser"
	"github.com/orchsim/orchsim/model/orchestrator"
	"github.com/orchsim/orchsim/model/server"
	"github.com/orchsim/orchsim/sim"
)

// The chaos workload reaches every coverage probe; a probe that stops being
// hit means the workload stopped reaching a situation.
func TestProbes_ChaosHitsEveryProbe(t *testing.T) {
	hits := make([]int, len(invariants.Probes))
	for seed := uint64(1); seed <= 200; seed++ {
		res := mustRun(t, Config{Scenario: Chaos, Seed: seed, Profile: model.MustProfile(model.PresetFixed, nil, nil)})
		for i, n := range res.Probes {
			hits[i] += n
		}
	}
	for i, p := range invariants.Probes {
		assert.Positive(t, hits[i], "probe %s never hit in 200 chaos seeds", p.Name)
	}
}

func TestObligationsAreListed(t *testing.T) {
	var names []string
	for _, o := range sim.Obligations() {
		names = append(names, o.Name)
	}
	assert.ElementsMatch(t, []string{browser.RegainTab, browser.NativeCloseSettles, orchestrator.TaskSettles, orchestrator.WaitReturns, server.RunSettles}, names)
}

// A probe counts the attempt a violation stops: the violating event of
// #23021 (a thread acting on its own tab under a rotated credential) is
// the tab-acted-after-rotation situation itself.
func TestProbes_CountTheViolatingAttempt(t *testing.T) {
	prof := model.MustSpec(model.Spec{Preset: model.PresetFixed, Unfix: []string{string(model.StableTabOwner)}})
	res := mustRun(t, Config{Scenario: TabOwnership, Seed: 5, Profile: prof, KeepTrace: true})
	require.NotNil(t, res.Violation)
	require.Equal(t, invariants.ThreadKeepsItsTabs, res.Violation.Invariant)
	// Count the probe over the trace up to, but not including, the
	// violating event: the counter must have seen one more.
	before := invariants.NewProbeCounter()
	last := len(res.Trace) - 2 // the violating event, then the invariant's own event
	for i := range res.Trace[:last] {
		before.Observe(&res.Trace[i])
	}
	i := slices.IndexFunc(invariants.Probes, func(p invariants.ProbeInfo) bool { return p.Name == "tab-acted-after-rotation" })
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, before.Hits()[i]+1, res.Probes[i], "the stopped attempt is counted")
}
