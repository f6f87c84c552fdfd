package main

import (
	"errors"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
)

// loaded is a replay file and the run configuration it records.
type loaded struct {
	file *replay.File
	cfg  scenarios.Config
	// unfixed says that the command line's --unfix changed the profile
	// the file records (a settings edit: the replay is judged by outcome).
	unfixed bool
}

// loadReplay reads a replay file and the run configuration it records,
// with the fixes in unfix (--unfix) turned off on top of its profile.
// Errors are usage errors (exit 2) naming the file: a malformed file, a
// tape that does not match its tape_hash, an unknown scenario, profile,
// switch, mutant or strategy, or a violation of an unknown invariant.
func loadReplay(path string, unfix []string) (loaded, error) {
	if err := notDash("a replay file", path); err != nil {
		return loaded{}, err
	}
	f, err := replay.Read(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return loaded{}, usageErr("cannot read replay file: %v", err)
		}
		return loaded{}, usageErr("%s: %v", path, err)
	}
	if f.EventBudget == scenarios.DefaultEventBudget {
		f.EventBudget = 0 // the default written out is the default: not an edit
	}
	spec := f.Spec()
	recorded, err := spec.Profile()
	if err != nil {
		return loaded{}, usageErr("%s: %v", path, err)
	}
	prof := recorded
	if len(unfix) > 0 {
		// --unfix wins over the file's fixes: the file's profile, then off.
		spec.Fix = slices.DeleteFunc(slices.Clone(f.Fixes), func(s string) bool { return slices.Contains(unfix, strings.TrimSpace(s)) })
		spec.Unfix = append(slices.Clone(f.Unfix), unfix...)
		if prof, err = spec.Profile(); err != nil {
			return loaded{}, usageErr("--unfix: %v", err)
		}
		if err := unfixOff(recorded, unfix); err != nil {
			return loaded{}, err
		}
	}
	if _, err := scenarios.Lookup(f.Scenario); err != nil {
		return loaded{}, usageErr("%s: %v", path, err)
	}
	strategy, err := scenarios.ParseStrategy(f.Strategy)
	if err != nil {
		return loaded{}, usageErr("%s: %v", path, err)
	}
	if v := f.Violation; v != nil && !knownViolation(v.Invariant) {
		return loaded{}, usageErr("%s: the violation names unknown invariant %q (see orchsim list)", path, v.Invariant)
	}
	cfg := scenarios.Config{Scenario: f.Scenario, Seed: f.Seed, Profile: prof, Strategy: strategy, Off: f.Off,
		Horizon: time.Duration(f.Horizon), EventBudget: f.EventBudget, Tape: f.Tape, KeepGoing: f.KeepGoing}
	return loaded{file: f, cfg: cfg, unfixed: !slices.Equal(prof.Fixes(), recorded.Fixes())}, nil
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

// notDash refuses "-" as a file name: orchsim does not read stdin or
// write stdout for "-" (a file named "-" was read or written instead);
// /dev/stdin and /dev/stdout name the streams. what names the file.
func notDash(what, path string) error {
	if path == "-" {
		return usageErr("%s \"-\": \"-\" is not stdin or stdout to orchsim (it would be a file named \"-\"); name /dev/stdin or /dev/stdout", what)
	}
	return nil
}
