package fuzz

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/scenarios"
)

// allScenarios names every registered scenario, as --scenario all does.
func allScenarios() []string {
	var names []string
	for _, s := range scenarios.All() {
		names = append(names, s.Name)
	}
	return names
}

// groupKeys are the (invariant, switches) keys of groups, in order.
func groupKeys(gs []TriageGroup) []string {
	var out []string
	for _, g := range gs {
		out = append(out, KeyString(g.Invariant, g.Switches))
	}
	return out
}

// The README's campaign (every scenario, the reported profile), on fewer
// seeds: at most one group per (invariant, minimal switch set), none new,
// each naming the reports its switches cite; sharded four ways and merged,
// the same groups.
func TestTriage_ReadmeCampaignGroupsByRootCause(t *testing.T) {
	if testing.Short() {
		t.Skip("a campaign")
	}
	base := Campaign{Scenarios: allScenarios(), Profile: model.MustProfile(model.PresetReported, nil, nil),
		Strategy: scenarios.Swarm, Start: 1, Seeds: 40, Workers: 2, ShrinkRuns: 40, KeepGoing: true}
	sum, err := base.Run(context.Background(), false)
	require.NoError(t, err)
	whole, err := base.Report(sum)
	require.NoError(t, err)
	require.NotEmpty(t, whole.Groups)
	require.NotEmpty(t, sum.StoryKeys())
	assert.Equal(t, sum.StoryKeys(), whole.StoryKeys(), "the report tells the summary's stories")
	seen := map[string]bool{}
	failures := 0
	for _, g := range whole.Groups {
		k := KeyString(g.Invariant, g.Switches)
		assert.False(t, seen[k], "one group per key: %s", k)
		seen[k] = true
		assert.False(t, g.New, "a known bug's failure is explained by its switch: %s", k)
		assert.NotEmpty(t, g.Reports, "%s names the reports it reproduces", k)
		failures += g.Failures
		for _, sw := range g.Switches {
			assert.Contains(t, switchNames(), sw)
		}
	}
	want := len(sum.Failures)
	for _, f := range sum.Failures {
		for _, l := range f.Later {
			if l.Follows == "" {
				want++
			}
		}
	}
	assert.Greater(t, want, len(sum.Failures), "keep-going: seeds feed several groups")
	assert.Equal(t, want, failures, "every failure, first or later, is in one group unless it follows from an earlier one")

	var parts []*Merged
	var paths []string
	for i := uint64(0); i < 4; i++ {
		c := base
		c.Shard, c.Shards = i, 4
		s, err := c.Run(context.Background(), false)
		require.NoError(t, err)
		r, err := c.Report(s)
		require.NoError(t, err)
		parts = append(parts, roundTrip(t, r))
		paths = append(paths, "shard"+string(rune('0'+i)))
	}
	m, err := Merge(paths, parts)
	require.NoError(t, err)
	assert.Equal(t, comparable(whole.Groups), comparable(m.Groups), "4 shards merged have the unsharded groups")
}

func switchNames() []string {
	var out []string
	for _, s := range model.Switches() {
		out = append(out, string(s.Name))
	}
	return out
}

// comparable drops what a merge cannot know the same way (the replay file
// a shard wrote for another seed's story).
func comparable(gs []TriageGroup) []TriageGroup {
	out := append([]TriageGroup{}, gs...)
	for i := range out {
		out[i].ReplayFile = ""
	}
	return out
}

// Under --profile fixed --unfix X, the only candidate fix is X: every group
// a campaign in X's scenario finds is X's, and names X's reports.
func TestTriage_UnfixOneSwitchGroupsExactlyIt(t *testing.T) {
	if testing.Short() {
		t.Skip("a campaign per switch")
	}
	for _, s := range model.Switches() {
		t.Run(string(s.Name), func(t *testing.T) {
			c := Campaign{Scenarios: []string{s.Scenario},
				Profile:  model.MustSpec(model.Spec{Preset: model.PresetFixed, Unfix: []string{string(s.Name)}}),
				Strategy: scenarios.Swarm, Start: 1, Seeds: 200, Workers: 2, ShrinkRuns: 40, KeepGoing: true}
			sum, err := c.Run(context.Background(), false)
			require.NoError(t, err)
			r, err := c.Report(sum)
			require.NoError(t, err)
			require.NotEmpty(t, r.Groups, "the bug is found alone in 200 seeds")
			for _, g := range r.Groups {
				assert.Equal(t, []string{string(s.Name)}, g.Switches, "group %s", KeyString(g.Invariant, g.Switches))
				assert.False(t, g.New)
				for _, rep := range s.Reports {
					assert.Contains(t, g.Reports, string(rep))
				}
			}
		})
	}
}

// A campaign of tab-ownership counts tab-acted-after-rotation, the action
// thread-keeps-its-tabs fails on, as hit (issue 16 item 4).
func TestTriage_TabOwnershipHitsTabActedAfterRotation(t *testing.T) {
	c := Campaign{Scenarios: []string{scenarios.TabOwnership}, Profile: model.MustProfile(model.PresetReported, nil, nil),
		Strategy: scenarios.Swarm, Start: 1, Seeds: 300, Workers: 2, KeepGoing: true}
	sum, err := c.Run(context.Background(), false)
	require.NoError(t, err)
	for i, p := range invariants.Probes {
		if p.Name == "tab-acted-after-rotation" {
			assert.Positive(t, sum.Probes[i])
			return
		}
	}
	t.Fatal("no probe tab-acted-after-rotation")
}

// roundTrip is a shard's report as merge-summaries reads it: written as
// JSON and parsed back.
func roundTrip(t *testing.T, r Report) *Merged {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	m, err := ParseSummary(b)
	require.NoError(t, err)
	return m
}
