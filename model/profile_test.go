package model_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	_ "github.com/orchsim/orchsim/model/terminal" // registers three more switches
)

// --unfix after the fixed preset is every fix but the named ones; the
// profile still rebuilds from (Preset, Fixes, Mutants) and from its Spec.
func TestSpec_UnfixAfterFixed(t *testing.T) {
	all := len(model.Switches())
	require.Greater(t, all, 1, "the test needs two switches")
	x := string(model.Switches()[0].Name)
	p, err := model.Spec{Preset: model.PresetFixed, Unfix: []string{x, " " + x}}.Profile()
	require.NoError(t, err)
	assert.False(t, p.Fixed(model.Switch(x)))
	assert.Len(t, p.Fixes(), all-1)
	assert.Equal(t, []string{x}, p.Unfixed())
	assert.Equal(t, model.PresetReported, p.Preset(), "not every fix is on")
	assert.Equal(t, "fixed~"+x, p.String())

	again := model.MustProfile(p.Preset(), p.Fixes(), p.MutantNames())
	assert.Equal(t, p.Fixes(), again.Fixes())
	fromSpec := model.MustSpec(p.Spec())
	assert.Equal(t, p.Fixes(), fromSpec.Fixes())
	assert.Equal(t, p.String(), fromSpec.String())
}

func TestSpec_Errors(t *testing.T) {
	x := string(model.Switches()[0].Name)
	for name, tc := range map[string]struct {
		spec model.Spec
		want string
	}{
		"unknown unfix":     {model.Spec{Preset: model.PresetFixed, Unfix: []string{"no-such-fix"}}, `unknown switch "no-such-fix" (see orchsim list)`},
		"fixed and unfixed": {model.Spec{Fix: []string{x}, Unfix: []string{x}}, `switch "` + x + `" is both fixed and unfixed`},
		"unknown preset":    {model.Spec{Preset: "fixd"}, `unknown profile "fixd" (want reported, fixed or upstream)`},
		"unknown mutant":    {model.Spec{Mutants: []string{"m"}}, `unknown mutant "m" (see orchsim list)`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tc.spec.Profile()
			assert.EqualError(t, err, tc.want)
		})
	}
}

// Unfix on top of reported is a no-op on the fixes but is still recorded.
func TestSpec_UnfixOnReported(t *testing.T) {
	x := string(model.Switches()[0].Name)
	p := model.MustSpec(model.Spec{Unfix: []string{x}})
	assert.Empty(t, p.Fixes())
	assert.Equal(t, "reported", p.String())
	assert.Equal(t, []string{x}, p.Unfixed())
}

// The upstream preset turns on exactly the fixes upstream merged; --unfix
// and --fix move from it and the banner says how.
func TestSpec_UpstreamIsTheMergedFixes(t *testing.T) {
	p := model.MustSpec(model.Spec{Preset: model.PresetUpstream})
	var merged []string
	for _, s := range model.Switches() {
		if s.Upstream != "" {
			merged = append(merged, string(s.Name))
		}
		assert.Equal(t, s.Upstream != "", p.Fixed(s.Name), s.Name)
	}
	require.NotEmpty(t, merged, "some fix is merged upstream")
	assert.Equal(t, "upstream", p.String())
	x := merged[0]
	q := model.MustSpec(model.Spec{Preset: model.PresetUpstream, Unfix: []string{x}})
	assert.False(t, q.Fixed(model.Switch(x)))
	assert.Equal(t, "upstream~"+x, q.String())
	again := model.MustSpec(q.Spec())
	assert.Equal(t, q.Fixes(), again.Fixes(), "a replay file rebuilds what ran")
}
