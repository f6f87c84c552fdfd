package fuzz

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/scenarios/scenariotest"
	"github.com/orchsim/orchsim/sim"
)

// A model that ranges over a map is caught, with the first event where
// the traces part.
func TestDeterminismCheck_CatchesAMapRange(t *testing.T) {
	scenariotest.RegisterMapOrder(t)
	c := &Campaign{Scenarios: []string{scenariotest.MapOrder}, Profile: model.MustProfile(model.PresetFixed, nil, nil),
		Start: 1, Seeds: 20, Workers: 2, CheckPercent: 100}
	sum, err := c.Run(context.Background(), false)
	require.NoError(t, err)
	d := sum.Determinism
	require.NotNil(t, d)
	assert.Equal(t, 20, d.Checked)
	require.NotEmpty(t, d.Mismatches, "map order differs between runs")
	parted := 0
	for _, m := range d.Mismatches {
		assert.NotEqual(t, m.Fingerprint, m.Again)
		if m.Event >= 0 {
			parted++
			assert.Contains(t, m.Campaign, "visit")
			assert.Contains(t, m.Rerun, "visit")
			assert.NotEqual(t, m.Campaign, m.Rerun)
		}
	}
	assert.Positive(t, parted, "the first divergent event is named")
}

// The real scenarios re-run identically: 100% of 50 seeds of each.
func TestDeterminismCheck_RealScenariosMatch(t *testing.T) {
	c := &Campaign{Scenarios: []string{"tab-ownership", "request-retry", "terminal-remount", "chaos"},
		Profile: model.MustProfile(model.PresetReported, nil, nil), Start: 1, Seeds: 50, Workers: 2, CheckPercent: 100}
	sum, err := c.Run(context.Background(), false)
	require.NoError(t, err)
	require.NotNil(t, sum.Determinism)
	assert.Equal(t, 200, sum.Determinism.Checked)
	assert.Empty(t, sum.Determinism.Mismatches)
}

func TestRechecked_ChoosesAboutThePercentFromTheCampaignSeed(t *testing.T) {
	n := 0
	for seed := uint64(1); seed <= 10000; seed++ {
		if Rechecked(7, "chaos", seed, 1) {
			n++
		}
		assert.Equal(t, Rechecked(7, "chaos", seed, 1), Rechecked(7, "chaos", seed, 1))
		assert.True(t, Rechecked(7, "chaos", seed, 100))
		assert.False(t, Rechecked(7, "chaos", seed, 0))
	}
	assert.InDelta(t, 100, n, 40, "about 1% of 10,000")
	same := 0
	for seed := uint64(1); seed <= 10000; seed++ {
		if Rechecked(7, "chaos", seed, 50) == Rechecked(8, "chaos", seed, 50) {
			same++
		}
	}
	assert.Less(t, same, 6000, "another campaign seed chooses other seeds")
}

func TestFirstDivergence(t *testing.T) {
	ev := func(kind string) sim.Event { return sim.Event{Actor: "a", Kind: kind} }
	a := []sim.Event{ev("x"), ev("y"), ev("z")}
	assert.Equal(t, -1, FirstDivergence(a, a))
	assert.Equal(t, 1, FirstDivergence(a, []sim.Event{ev("x"), ev("q")}))
	assert.Equal(t, 2, FirstDivergence(a, a[:2]), "a trace that ends first parts at its end")
}
