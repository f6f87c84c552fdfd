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
