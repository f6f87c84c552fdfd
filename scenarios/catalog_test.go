package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/model"
)

// foundAloneSeeds bounds the search for each declared bug: under the
// default strategy every target of this build is found within a few seeds
// (docs/exploration.md), so 200 leaves a wide margin without slowing the
// suite.
const foundAloneSeeds = 200

// judges reports whether a violation named name can end a run of sc: one
// of its invariants, or a declared obligation (every scenario runs the
// heal phase).
func judges(sc Scenario, name string) bool {
	return slices.Contains(sc.Invariants, name) || invariants.IsObligation(name)
}

// Every declaration names things that exist: a switch's and a mutant's
// scenario and invariants, an obligation's group; every scenario is judged
// by at least one invariant.
func TestCatalog_DeclarationsAreConsistent(t *testing.T) {
	c := Catalog()
	require.NotEmpty(t, c.Switches)
	for _, s := range c.Switches {
		sc, err := Lookup(s.Scenario)
		require.NoError(t, err, "switch %s", s.Name)
		require.NotEmpty(t, s.Reports, "switch %s cites no report", s.Name)
		inRecord := false
		for _, r := range s.Reports {
			inRecord = inRecord || slices.ContainsFunc(catalog.Record, func(e catalog.RecordEntry) bool { return e.Report == r })
		}
		assert.True(t, inRecord, "switch %s cites no report of catalog.Record (add the report there)", s.Name)
		for _, inv := range s.Invariants {
			assert.True(t, judges(sc, inv), "switch %s: %s does not judge scenario %s", s.Name, inv, s.Scenario)
		}
	}
	for _, m := range c.Mutants {
		sc, err := Lookup(m.Scenario)
		require.NoError(t, err, "mutant %s", m.Name)
		for _, inv := range m.Invariants {
			assert.True(t, judges(sc, inv), "mutant %s: %s does not judge scenario %s", m.Name, inv, m.Scenario)
		}
	}
	for _, o := range c.Obligations {
		assert.True(t, o.Group.Valid(), "obligation %s: group %q", o.Name, o.Group)
		_, clash := invariants.Lookup(o.Name)
		assert.False(t, clash, "obligation %s is also an invariant", o.Name)
	}
	for _, s := range c.Scenarios {
		assert.NotEmpty(t, s.Invariants, "scenario %s", s.Name)
	}
	// A report a switch models is not also left out.
	for _, r := range c.Record {
		assert.False(t, len(r.Switches) > 0 && r.LeftOut != "", "%s is modelled by %v and left out", r.Report, r.Switches)
	}
	// Every table is in list order.
	for name, keys := range map[string][][2]string{
		"switches":    keysOf(c.Switches, func(s catalog.Switch) (catalog.Group, string) { return s.Group, s.Name }),
		"invariants":  keysOf(c.Invariants, func(s catalog.Invariant) (catalog.Group, string) { return s.Group, s.Name }),
		"obligations": keysOf(c.Obligations, func(s catalog.Obligation) (catalog.Group, string) { return s.Group, s.Name }),
		"mutants":     keysOf(c.Mutants, func(s catalog.Mutant) (catalog.Group, string) { return s.Group, s.Name }),
		"probes":      keysOf(c.Probes, func(s catalog.Probe) (catalog.Group, string) { return s.Group, s.Name }),
	} {
		for i := 1; i < len(keys); i++ {
			a, b := keys[i-1], keys[i]
			assert.True(t, catalog.Less(catalog.Group(a[0]), a[1], catalog.Group(b[0]), b[1]), "%s: %v before %v", name, a, b)
		}
	}
}

func keysOf[T any](rows []T, key func(T) (catalog.Group, string)) [][2]string {
	out := make([][2]string, len(rows))
	for i, r := range rows {
		g, n := key(r)
		out[i] = [2]string{string(g), n}
	}
	return out
}

// firstViolation runs seeds 1..n of scenario under prof and returns the
// first violation's invariant and seed ("" when every seed passed).
func firstViolation(t *testing.T, scenario string, prof model.Profile, n uint64) (string, uint64) {
	t.Helper()
	return firstViolationUnder(t, scenario, prof, n, DefaultStrategy)
}

func firstViolationUnder(t *testing.T, scenario string, prof model.Profile, n uint64, st Strategy) (string, uint64) {
	t.Helper()
	for seed := uint64(1); seed <= n; seed++ {
		res := mustRun(t, Config{Scenario: scenario, Seed: seed, Profile: prof, Strategy: st})
		if res.Violation != nil {
			return res.Violation.Invariant, seed
		}
	}
	return "", 0
}

// Each bug is findable alone: with every other fix on (`--profile fixed
// --unfix NAME`), a seed of the switch's scenario violates one of the
// invariants it declares. A bug that only shows behind another one, or is
// caught by an invariant it does not name, fails here.
func TestSwitches_EachBugIsFoundAlone(t *testing.T) {
	for _, s := range model.Switches() {
		t.Run(string(s.Name), func(t *testing.T) {
			prof := model.MustSpec(model.Spec{Preset: model.PresetFixed, Unfix: []string{string(s.Name)}})
			inv, seed := firstViolation(t, s.Scenario, prof, foundAloneSeeds)
			require.NotEmpty(t, inv, "fixed~%s: %d seeds of %s pass", s.Name, foundAloneSeeds, s.Scenario)
			assert.Contains(t, s.Invariants, inv, "fixed~%s: seed %d of %s violates %s, which the switch does not declare", s.Name, seed, s.Scenario, inv)
		})
	}
}

// Each mutant is killed where it says, by an invariant it names (the
// mutation gate, `orchsim mutants`, runs every scenario; this pins the
// declaration).
func TestMutants_KilledWhereDeclared(t *testing.T) {
	for _, m := range model.Mutants() {
		t.Run(string(m.Name), func(t *testing.T) {
			prof := model.MustProfile(model.PresetFixed, nil, []string{string(m.Name)})
			// The gate's strategy, and at least the gate's seeds (the gate
			// also runs every other scenario).
			n, st := m.Gate()
			n = max(n, foundAloneSeeds)
			inv, seed := firstViolationUnder(t, m.Scenario, prof, n, Strategy(st))
			require.NotEmpty(t, inv, "mutant %s survives %d seeds of %s under %s", m.Name, n, m.Scenario, st)
			assert.Contains(t, m.Invariants, inv, fmt.Sprintf("mutant %s: seed %d of %s violates %s", m.Name, seed, m.Scenario, inv))
		})
	}
}

// A switch's script exists and is a script (script.Discover finds it by its
// "# language:" line), so docs/bugs.md's script column points somewhere.
func TestCatalog_ScriptsExist(t *testing.T) {
	n := 0
	for _, s := range model.Switches() {
		if s.Script == "" {
			continue
		}
		n++
		b, err := os.ReadFile(filepath.Join("..", s.Script))
		require.NoError(t, err, "switch %s", s.Name)
		assert.Regexp(t, `(?m)^# language: \w+$`, string(b), "switch %s: %s", s.Name, s.Script)
	}
	assert.Positive(t, n)
}
