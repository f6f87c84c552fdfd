//go:build orchsim_extra_invariant

package invariants

import (
	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// This file exists only in a test build (go test -tags
// orchsim_extra_invariant): it registers one more invariant in every group
// the script languages check, so script.TestScripts_NewInvariantChangesNoGolden
// can show that a new invariant changes no script's expected output.

// ExtraInvariant is the name of the test build's extra invariants (one per
// group, with the group as a suffix).
const ExtraInvariant = "extra-test-invariant"

// ExtraObserved counts the events the extra invariant's checkers observed.
var ExtraObserved int

func init() {
	for _, g := range catalog.Groups {
		name := ExtraInvariant + "-" + string(g)
		register(Info{Name: name, Group: g, Property: "a test build's extra invariant: it observes every event and never fires",
			Source: "script.TestScripts_NewInvariantChangesNoGolden", New: func() sim.Checker { return extraChecker{name} }})
	}
}

type extraChecker struct{ name string }

func (c extraChecker) Name() string { return c.name }

func (extraChecker) Observe(*sim.Event) *sim.Violation {
	ExtraObserved++
	return nil
}
