// Package scenarios holds orchsim's named workloads: each builds a world of
// models on a fresh kernel, draws its workload and fault mix from the run's
// seed, and names the invariants that judge it. Run is the one entry point
// the CLI, the tests and (later) fuzzing use.
package scenarios

import (
	"fmt"
	"sort"
	"time"

	"orchsim/invariants"
	"orchsim/model"
	"orchsim/sim"
)

// Scenario is a named workload and fault plan.
type Scenario struct {
	Name string
	Doc  string
	// Horizon is the default virtual duration of a run.
	Horizon time.Duration
	// Invariants are the checkers that judge the run.
	Invariants []string
	// Build sets the world up on env; the kernel then runs it.
	Build func(env *model.Env)
}

var registry []Scenario

func register(s Scenario) {
	registry = append(registry, s)
	sort.Slice(registry, func(i, j int) bool { return registry[i].Name < registry[j].Name })
}

// All returns every scenario, sorted by name.
func All() []Scenario { return registry }

// Lookup returns the scenario named name.
func Lookup(name string) (Scenario, error) {
	for _, s := range registry {
		if s.Name == name {
			return s, nil
		}
	}
	names := make([]string, len(registry))
	for i, s := range registry {
		names[i] = s.Name
	}
	return Scenario{}, fmt.Errorf("unknown scenario %q (known: %v)", name, names)
}

// DefaultEventBudget bounds a run's events (livelock guard): far above any
// healthy run (a 48 h tab-ownership run takes a few thousand).
const DefaultEventBudget = 5_000_000

// EnvironmentID is the environment every T3 world runs in.
const EnvironmentID = "env-1"

// Config selects one run.
type Config struct {
	Scenario string
	Seed     uint64
	Profile  model.Profile
	// Horizon overrides the scenario's default when > 0.
	Horizon time.Duration
	// Tape replays recorded choices instead of drawing from Seed.
	Tape []sim.Choice
	// RecordTape keeps the choices made, for a replay file.
	RecordTape bool
	// KeepTrace keeps every event, for timelines and trace files.
	KeepTrace bool
	// EventBudget overrides DefaultEventBudget when > 0.
	EventBudget uint64
	// OnEvent, when set, sees every event as it is appended.
	OnEvent func(*sim.Event)
}

// Result is what a run produced.
type Result struct {
	Scenario    string
	Seed        uint64
	Profile     model.Profile
	Horizon     time.Duration
	End         sim.EndReason
	Violation   *sim.Violation
	Events      uint64
	Executed    uint64
	Virtual     time.Duration
	Fingerprint uint64
	Trace       []sim.Event
	Tape        []sim.Choice
}

// Failed reports whether an invariant was violated.
func (r *Result) Failed() bool { return r.Violation != nil }

// Run executes one run. It returns an error only for bad configuration
// (unknown scenario); model failures, panics included, are violations.
func Run(cfg Config) (Result, error) {
	sc, err := Lookup(cfg.Scenario)
	if err != nil {
		return Result{}, err
	}
	horizon := sc.Horizon
	if cfg.Horizon > 0 {
		horizon = cfg.Horizon
	}
	budget := uint64(DefaultEventBudget)
	if cfg.EventBudget > 0 {
		budget = cfg.EventBudget
	}
	k := sim.NewKernel(cfg.KeepTrace)
	var src sim.Source
	var tape func() []sim.Choice
	if cfg.Tape != nil {
		t := sim.NewTapeSource(cfg.Tape, cfg.RecordTape)
		src, tape = t, t.Tape
	} else {
		s := sim.NewSeededSource(cfg.Seed, cfg.RecordTape)
		src, tape = s, s.Tape
	}
	tr := k.Trace()
	if cfg.OnEvent != nil {
		tr.OnEvent(cfg.OnEvent)
	}
	for _, c := range invariants.New(sc.Invariants...) {
		tr.AddChecker(c)
	}
	env := &model.Env{Clock: k, Trace: tr, Source: src, Profile: cfg.Profile, EnvironmentID: EnvironmentID}
	res := Result{Scenario: sc.Name, Seed: cfg.Seed, Profile: cfg.Profile, Horizon: horizon}
	if !buildSafely(sc, env) {
		res.End = sim.EndViolation
	} else {
		res.End = k.Run(sim.Limits{Horizon: horizon, EventBudget: budget})
	}
	res.Violation = tr.Violation()
	res.Events = tr.Len()
	res.Executed = k.Executed()
	res.Virtual = k.Elapsed()
	res.Fingerprint = tr.Fingerprint()
	res.Trace = tr.Events()
	res.Tape = tape()
	return res, nil
}

// buildSafely runs the scenario's set-up, turning a panic into the
// model-panic violation like the kernel does for events.
func buildSafely(sc Scenario, env *model.Env) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			env.Trace.Fail(sim.Violation{Invariant: sim.ModelPanic, Message: fmt.Sprint(r)})
			ok = false
		}
	}()
	sc.Build(env)
	return true
}
