package fuzz

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
)

// The committed baselines (baselines/PROFILE.json, what the nightly
// campaign is judged against) know every switch the profile leaves off:
// a switch added without writing the baselines again makes the nightly
// report its bug as new every night. A switch whose bug a campaign never
// finds under that profile would fail here too, and is then a finding of
// its own (a bug no exploration reaches).
func TestBaselines_KnowEverySwitchLeftOff(t *testing.T) {
	for _, preset := range []string{model.PresetReported, model.PresetUpstream} {
		data, err := os.ReadFile(filepath.Join("..", "baselines", preset+".json"))
		require.NoError(t, err)
		b, err := ParseBaseline(data)
		require.NoError(t, err, preset)
		assert.Equal(t, preset, b.Profile)
		assert.Equal(t, allScenarios(), b.Scenarios, "%s: written from --scenario all", preset)
		known := map[string]bool{}
		for _, g := range b.Groups {
			for _, s := range g.Switches {
				known[s] = true
			}
		}
		p := model.MustSpec(model.Spec{Preset: preset})
		for _, sw := range model.Switches() {
			if p.Fixed(sw.Name) {
				continue
			}
			assert.True(t, known[string(sw.Name)],
				"baselines/%s.json has no group fixed by %s (left off under %s): write it again (README, fuzz --write-baseline) and review the diff", preset, sw.Name, preset)
		}
	}
}

// A baseline covers a group it lists, and any group of an invariant it
// saw fail whose switches it all knows; a switch it never saw, an
// invariant it never saw fail, or a group with no known fix stays new.
func TestBaseline_CoversCombinationsOfKnownBugs(t *testing.T) {
	b := NewBaseline("reported", nil, []TriageGroup{
		{Invariant: "inv-a", Switches: []string{"s1"}},
		{Invariant: "inv-a", Switches: []string{"s2", "s3"}},
		{Invariant: "inv-b", Switches: []string{"s4"}},
	})
	for _, c := range []struct {
		inv      string
		switches []string
		covered  bool
	}{
		{"inv-a", []string{"s1"}, true},        // listed
		{"inv-a", []string{"s1", "s2"}, true},  // a new combination of known bugs
		{"inv-b", []string{"s1"}, true},        // a known bug, a known failure
		{"inv-a", []string{"s1", "s5"}, false}, // s5 never seen
		{"inv-c", []string{"s1"}, false},       // an invariant never seen failing
		{"inv-a", nil, false},                  // no known fix
	} {
		assert.Equal(t, c.covered, b.Covers(c.inv, c.switches), "%s %v", c.inv, c.switches)
	}
	groups := []TriageGroup{{Invariant: "inv-a", Switches: []string{"s2", "s1"}}, {Invariant: "inv-c", Switches: []string{"s1"}}}
	b.Apply(groups)
	assert.Equal(t, 1, NewGroups(groups))
	for _, g := range groups {
		assert.Equal(t, g.Invariant == "inv-c", g.New, "%s", g.Invariant)
	}
}
