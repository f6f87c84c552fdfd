package scenarios

import (
	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
)

// Target is a bug that exploration must find on its own: a switch turned
// off alone (every other fix on), or a mutant on top of the fixed profile.
// The exploration benchmark (BenchmarkSeedsToFirstFailure) and
// docs/exploration.md list one row per target, derived from the
// declarations, never from a hand-kept list.
type Target struct {
	// Name is "switch/NAME" or "mutant/NAME".
	Name    string
	Reports []catalog.Report
	// Scenario is where the target is found alone; Invariants the
	// violations that count as finding it.
	Scenario   string
	Invariants []string
	// Spec is the profile that leaves only this bug in.
	Spec model.Spec
}

// Targets returns every switch (as fixed~NAME) and every mutant (as
// fixed!NAME), in list order.
func Targets() []Target {
	var out []Target
	for _, s := range model.Switches() {
		out = append(out, Target{Name: "switch/" + string(s.Name), Reports: s.Reports, Scenario: s.Scenario,
			Invariants: s.Invariants, Spec: model.Spec{Preset: model.PresetFixed, Unfix: []string{string(s.Name)}}})
	}
	for _, m := range model.Mutants() {
		out = append(out, Target{Name: "mutant/" + string(m.Name), Scenario: m.Scenario, Invariants: m.Invariants,
			Spec: model.Spec{Preset: model.PresetFixed, Mutants: []string{string(m.Name)}}})
	}
	return out
}
