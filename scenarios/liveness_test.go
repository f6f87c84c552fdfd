package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/browser"
	"github.com/orchsim/orchsim/model/orchestrator"
	"github.com/orchsim/orchsim/model/server"
)

// Report 000 is found by its liveness obligation alone: with the safety
// invariant thread-keeps-its-tabs switched off, the resumed thread never
// regains its tab, and the heal phase says so.
func TestLiveness_TabOwnershipWithoutTheSafetyInvariant(t *testing.T) {
	// The seed report's bug alone, so the bugs added to reported later do
	// not end its runs first.
	prof := model.MustSpec(model.Spec{Preset: model.PresetFixed, Unfix: []string{string(model.StableTabOwner)}})
	found := 0
	// 120 seeds: under reported every other bug is on too, and the densest
	// end most runs first (since the client-hosts dimension, seeds 62 and
	// 65 are the first to reach the heal phase with the tab refused).
	for seed := uint64(1); seed <= 120; seed++ {
		res := mustRun(t, Config{Scenario: TabOwnership, Seed: seed, Profile: prof,
			Without: []string{invariants.ThreadKeepsItsTabs}})
		if res.Violation != nil && res.Violation.Invariant == browser.RegainTab {
			found++
			assert.Contains(t, res.Violation.Message, "still open after the heal phase")
		}
	}
	assert.Positive(t, found)
}

// Under the fixed profile no obligation is left open after the heal phase
// (no false positives): a few hundred seeds per scenario here; nightly
// campaigns run many more.
func TestLiveness_FixedLeavesNoObligationOpen(t *testing.T) {
	prof := model.MustProfile(model.PresetFixed, nil, nil)
	obligations := []string{browser.RegainTab, orchestrator.TaskSettles, orchestrator.WaitReturns, server.RunSettles}
	for _, sc := range All() {
		n := uint64(300)
		if sc.Name == Chaos {
			n = 100
		}
		for seed := uint64(1); seed <= n; seed++ {
			res := mustRun(t, Config{Scenario: sc.Name, Seed: seed, Profile: prof})
			if res.Violation != nil {
				assert.NotContains(t, obligations, res.Violation.Invariant, "%s seed %d: %s", sc.Name, seed, res.Violation.Message)
				assert.Fail(t, "violation under fixed", "%s seed %d: %s", sc.Name, seed, res.Violation.Message)
			}
		}
	}
}
