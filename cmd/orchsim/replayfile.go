package main

import (
	"errors"
	"os"
	"time"

	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
)

// loadReplay reads a replay file and the run configuration it records.
// Errors are usage errors (exit 2) naming the file: a malformed file, a
// tape that does not match its tape_hash, an unknown scenario, profile,
// switch, mutant or strategy, or a violation of an unknown invariant.
func loadReplay(path string) (*replay.File, scenarios.Config, error) {
	f, err := replay.Read(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, scenarios.Config{}, usageErr("cannot read replay file: %v", err)
		}
		return nil, scenarios.Config{}, usageErr("%s: %v", path, err)
	}
	if f.EventBudget == scenarios.DefaultEventBudget {
		f.EventBudget = 0 // the default written out is the default: not an edit
	}
	prof, err := model.NewProfile(f.Profile, f.Fixes, f.Mutants)
	if err != nil {
		return nil, scenarios.Config{}, usageErr("%s: %v", path, err)
	}
	if _, err := scenarios.Lookup(f.Scenario); err != nil {
		return nil, scenarios.Config{}, usageErr("%s: %v", path, err)
	}
	strategy, err := scenarios.ParseStrategy(f.Strategy)
	if err != nil {
		return nil, scenarios.Config{}, usageErr("%s: %v", path, err)
	}
	if v := f.Violation; v != nil && !knownViolation(v.Invariant) {
		return nil, scenarios.Config{}, usageErr("%s: the violation names unknown invariant %q (see orchsim list)", path, v.Invariant)
	}
	cfg := scenarios.Config{Scenario: f.Scenario, Seed: f.Seed, Profile: prof, Strategy: strategy, Off: f.Off,
		Horizon: time.Duration(f.Horizon), EventBudget: f.EventBudget, Tape: f.Tape}
	return f, cfg, nil
}

// knownViolation reports whether a run can end in a violation named name:
// an invariant, a liveness obligation, or one of the harness's own
// (orchsim list names them all).
func knownViolation(name string) bool {
	if _, ok := invariants.Lookup(name); ok {
		return true
	}
	return invariants.IsObligation(name) || name == sim.ModelPanic || name == sim.EventBudgetExceeded
}
