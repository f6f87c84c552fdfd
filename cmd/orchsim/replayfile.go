package main

import (
	"errors"
	"os"
	"time"

	"orchsim/model"
	"orchsim/replay"
	"orchsim/scenarios"
)

// loadReplay reads a replay file and the run configuration it records.
// Errors are usage errors (exit 2) naming the file.
func loadReplay(path string) (*replay.File, scenarios.Config, error) {
	f, err := replay.Read(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, scenarios.Config{}, usageErr("cannot read replay file: %v", err)
		}
		return nil, scenarios.Config{}, usageErr("%s: %v", path, err)
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
	cfg := scenarios.Config{Scenario: f.Scenario, Seed: f.Seed, Profile: prof, Strategy: strategy, Off: f.Off,
		Horizon: time.Duration(f.Horizon), Tape: f.Tape}
	return f, cfg, nil
}
