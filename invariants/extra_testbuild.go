//go:build orchsim_extra_invariant

package invariants

import "github.com/orchsim/orchsim/sim"

// This file exists only in a test build (go test -tags
// orchsim_extra_invariant): it registers one more invariant in every group
// the script languages check, so script.TestScripts_NewInvariantChangesNoGolden
// can show that a new invariant changes no script's expected output.

// ExtraInvariant is the name of the test build's extra invariant.
const ExtraInvariant = "extra-test-invariant"

// ExtraObserved counts the events the extra invariant's checkers observed.
var ExtraObserved int

func init() {
	register(Info{Name: ExtraInvariant, Property: "a test build's extra invariant: it observes every event and never fires",
		Source: "script.TestScripts_NewInvariantChangesNoGolden", New: func() sim.Checker { return extraChecker{} }})
	Terminal = append(Terminal, ExtraInvariant)
	TabOwnership = append(TabOwnership, ExtraInvariant)
	Requests = append(Requests, ExtraInvariant)
}

type extraChecker struct{}

func (extraChecker) Name() string { return ExtraInvariant }

func (extraChecker) Observe(*sim.Event) *sim.Violation {
	ExtraObserved++
	return nil
}
