package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
	assert.ElementsMatch(t, []string{browser.RegainTab, orchestrator.TaskSettles, orchestrator.WaitReturns, server.RunSettles}, names)
}
