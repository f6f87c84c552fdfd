// Package scenarios holds orchsim's named workloads: each builds a world of
// models on a fresh kernel, draws its workload and fault mix from the run's
// seed, and names the invariants that judge it. Run is the one entry point
// the CLI, the tests and (later) fuzzing use.
package scenarios

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

// Scenario is a named workload and fault plan.
type Scenario struct {
	Name string
	Doc  string
	// Horizon is the default virtual duration of a run.
	Horizon time.Duration
	// Groups are the components whose invariants judge the run;
	// register sets Invariants to them (invariants.InGroups), so a new
	// invariant of a group judges every scenario of that group.
	Groups []catalog.Group
	// Invariants are the checkers that judge the run (derived from Groups).
	Invariants []string
	// HealWindow is the heal phase after the horizon (DefaultHealWindow
	// when 0): faults stop, actors and timers run on, and every liveness
	// obligation still open at its end is a violation.
	HealWindow time.Duration
	// Build sets the world up on env; the kernel then runs it.
	Build func(env *model.Env)
	// Scalable says that Build honours model.Env.Threads (Config.Threads):
	// a world of that many threads instead of its own draw.
	Scalable bool
}

var registry []Scenario

func register(s Scenario) {
	if len(s.Invariants) > 0 {
		panic("scenarios: " + s.Name + " names its invariant groups, not invariants")
	}
	s.Invariants = invariants.InGroups(s.Groups...)
	registry = append(registry, s)
	sort.Slice(registry, func(i, j int) bool { return registry[i].Name < registry[j].Name })
}

// Register adds a scenario from outside this package (a test build's
// deliberately broken model, say; the built-in scenarios register
// themselves). It refuses a name already taken. unregister removes it
// again, so a test leaves the registry as it found it.
func Register(s Scenario) (unregister func(), err error) {
	if _, err := Lookup(s.Name); err == nil {
		return nil, fmt.Errorf("scenario %q is registered already", s.Name)
	}
	register(s)
	return func() {
		registry = slices.DeleteFunc(registry, func(r Scenario) bool { return r.Name == s.Name })
	}, nil
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

// DefaultHealWindow is the heal phase of a scenario that names none: long
// enough for an idle release (30 min), a delegated child (90 min at most)
// and a wait (60 min cap) to complete.
const DefaultHealWindow = 2 * time.Hour

// DefaultEventBudget bounds a run's events (livelock guard): far above any
// healthy run (a 48 h tab-ownership run takes a few thousand).
const DefaultEventBudget = 5_000_000

// EnvironmentID is the environment every T3 world runs in.
const EnvironmentID = "env-1"

// Strategy is how a run explores: which options the seed draws.
type Strategy string

// Strategies (--strategy).
const (
	// Random runs the scenario's fixed workload and fault mix; every
	// individual decision is drawn from the seed.
	Random Strategy = "random"
	// Swarm also draws, per seed, which fault kinds and actor behaviours
	// are enabled and at what rates (VOPR/FoundationDB style). The default.
	Swarm Strategy = "swarm"
	// PCT is Random plus a priority drawn for every scheduled event:
	// events at the same virtual instant run in priority order instead of
	// scheduling order (PCT-style), and the permutation replays.
	PCT Strategy = "pct"
	// Commit is Swarm plus faults placed at commit points (model.
	// DeclareCommitPoint): where a durable write and its acknowledgement
	// are separated, a crash or a lost reply lands exactly there, drawn
	// from the seed like every other fault, so the run replays, shrinks
	// and explains like any other. FoundationDB's BUGGIFY, placed by the
	// lifecycle edges the models declare rather than by hand-picked lines.
	Commit Strategy = "commit"
	// Branch is Commit plus branching on rare states (branch.go): when a
	// run of the campaign first reaches a state few runs before it reached
	// (a probe, or a fault placed at a commit point), the campaign runs
	// BranchWidth continuations of it: its tape replayed through that
	// event, fresh draws after it. A single run under branch is a commit
	// run; the branching is the campaign's (Brancher), deterministic for
	// its start seed whatever the worker count.
	Branch Strategy = "branch"
)

// DefaultStrategy is what run and fuzz use without --strategy.
const DefaultStrategy = Swarm

// Strategies lists every strategy.
var Strategies = []Strategy{Random, Swarm, PCT, Commit, Branch}

// ParseStrategy returns the strategy named s.
func ParseStrategy(s string) (Strategy, error) {
	for _, st := range Strategies {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("unknown strategy %q (want random, swarm, pct, commit or branch)", s)
}

// Config selects one run.
type Config struct {
	Scenario string
	Seed     uint64
	Profile  model.Profile
	// Strategy defaults to DefaultStrategy when empty.
	Strategy Strategy
	// Off lists actors switched off (see model.Env.Off); the shrinker sets it.
	Off []string
	// Without lists invariants not to check (to show that another one, a
	// liveness obligation say, finds a bug on its own).
	Without []string
	// Horizon overrides the scenario's default when > 0.
	Horizon time.Duration
	// Tape replays recorded choices instead of drawing from Seed.
	Tape []sim.Choice
	// Source, when set, supplies every choice instead (rapid, fuzz bytes);
	// Seed and Tape are then only labels.
	Source sim.Source
	// Threads, when > 0, asks a Scalable scenario for a world of that many
	// T3 threads (agents, users, preview hosts and terminal panes in
	// proportion; model.Env.Threads); 0 is the scenario's own draw. Run
	// refuses it for a scenario that does not scale.
	Threads int
	// RecordTape keeps the choices made, for a replay file.
	RecordTape bool
	// KeepTrace keeps every event, for timelines and trace files.
	KeepTrace bool
	// EventBudget overrides DefaultEventBudget when > 0.
	EventBudget uint64
	// OnEvent, when set, sees every event as it is appended.
	OnEvent func(*sim.Event)
	// Branch, when set, makes the run a branch of another run of the same
	// scenario, profile and strategy (Brancher): that run's draws replayed
	// through its event Branch.At, then fresh draws from Seed. Tape and
	// Source take precedence over it.
	Branch *BranchFrom
	// KeepGoing runs on past the first violation to the horizon and the
	// heal phase, and records the first violation of every other
	// invariant (Result.Later): run --keep-going, and fuzz. The run up to
	// the first violation is the same as without it.
	KeepGoing bool
}

// Result is what a run produced.
type Result struct {
	Scenario string
	Seed     uint64
	Profile  model.Profile
	Strategy Strategy
	// Branch is Config.Branch: the run a branch continues and the event it
	// branched at (nil for a root or any other run).
	Branch  *BranchFrom
	Off     []string
	Horizon time.Duration
	// EventBudget is the most events the run could execute: Config's, or
	// DefaultEventBudget.
	EventBudget uint64
	End         sim.EndReason
	Violation   *sim.Violation
	Events      uint64
	Executed    uint64
	Virtual     time.Duration
	Fingerprint uint64
	Trace       []sim.Event
	Tape        []sim.Choice
	// Probes are the hit counts of invariants.Probes, in that order.
	Probes []int
	// FirstHits are the states the run reached (see states: probes hit,
	// commit points reached and faulted, and how often), each with the
	// event that first reached it, in the order reached. The branch
	// strategy's rarity counts them.
	FirstHits []Hit
	// Later are the first violations of the other invariants the run broke
	// after Violation, in order (Config.KeepGoing; nil otherwise).
	Later []Later
}

// Later is a violation after a keep-going run's first: the first event of
// another invariant it broke, and, when it follows from an earlier
// violation of the run (Follows), that violation's invariant.
type Later struct {
	sim.Violation
	// Follows names the earlier violation's invariant this one follows
	// from, by the rule of FollowsFrom; "" for an independent one.
	Follows string `json:"follows,omitempty"`
}

// idTokens are the ids of a violation message: thread names and words
// with a digit, but times (hh:mm:ss.mmm) and plain numbers (counts).
var (
	idToken   = regexp.MustCompile(`thread-[a-z]+|[A-Za-z0-9_:%.@/#-]*[0-9][A-Za-z0-9_:%.@/#-]*`)
	notAnID   = regexp.MustCompile(`^(\d+:)*\d+(\.\d+)?[.:]?$`)
	trimPunct = ".,:;"
)

func ids(message string) []string {
	var out []string
	for _, t := range idToken.FindAllString(message, -1) {
		t = strings.TrimRight(t, trimPunct)
		if t != "" && !notAnID.MatchString(t) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// FollowsFrom is the rule that marks a later violation b of a keep-going
// run as following from an earlier one a: one registered fix switch
// declares both invariants (a known bug is known to break both: b is the
// same cause showing again, as a thread that lost its tab also fails to
// regain it), and the two messages name a common id (a thread, tab,
// request, credential, pane: a word with a digit that is not a time or a
// count, or a thread name), so they are about the same thing. A later
// violation of an invariant no switch pairs with the first's, or about
// other ids, is independent: possibly another bug.
func FollowsFrom(a, b sim.Violation) bool {
	paired := false
	for _, s := range model.Switches() {
		if slices.Contains(s.Invariants, a.Invariant) && slices.Contains(s.Invariants, b.Invariant) {
			paired = true
			break
		}
	}
	if !paired {
		return false
	}
	bi := ids(b.Message)
	for _, id := range ids(a.Message) {
		if slices.Contains(bi, id) {
			return true
		}
	}
	return false
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
	if cfg.Threads < 0 || cfg.Threads > 0 && !sc.Scalable {
		return Result{}, fmt.Errorf("scenario %q: a world of %d threads (only a scalable scenario takes a size > 0)", sc.Name, cfg.Threads)
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
	switch {
	case cfg.Source != nil:
		src, tape = cfg.Source, func() []sim.Choice { return nil }
	case cfg.Tape != nil:
		t := sim.NewTapeSource(cfg.Tape, cfg.RecordTape)
		src, tape = t, t.Tape
	case cfg.Branch != nil:
		p, err := branchSource(cfg)
		if err != nil {
			return Result{}, err
		}
		src, tape = p, p.Tape
		at := cfg.Branch.At
		prev := cfg.OnEvent
		cfg.OnEvent = func(ev *sim.Event) {
			if ev.Seq == at {
				p.Switch()
			}
			if prev != nil {
				prev(ev)
			}
		}
	default:
		s := sim.NewSeededSource(cfg.Seed, cfg.RecordTape)
		src, tape = s, s.Tape
	}
	tr := k.Trace()
	if cfg.OnEvent != nil {
		tr.OnEvent(cfg.OnEvent)
	}
	var names []string
	for _, n := range sc.Invariants {
		if !slices.Contains(cfg.Without, n) {
			names = append(names, n)
		}
	}
	// The probe counter sees each event before the invariants, so the
	// attempt a violation stops is counted too.
	probes := invariants.NewProbeCounter()
	for _, c := range probes.Parts() { // each part fed only its kinds
		tr.AddChecker(c)
	}
	reached := newStates()
	probes.OnHit = reached.note
	tr.AddChecker(reached)
	for _, c := range invariants.New(names...) {
		tr.AddChecker(c)
	}
	tr.SetKeepGoing(cfg.KeepGoing)
	strategy := cfg.Strategy
	if strategy == "" {
		strategy = DefaultStrategy
	}
	if _, err := ParseStrategy(string(strategy)); err != nil {
		return Result{}, err
	}
	if strategy == PCT {
		r := sim.NewRand(src, "pct")
		k.SetTieBreak(func() uint64 { return r.Below("priority", 1<<16) })
	}
	env := &model.Env{Clock: k, Trace: tr, Source: src, Profile: cfg.Profile, EnvironmentID: EnvironmentID,
		Swarm: strategy == Swarm || strategy == Commit || strategy == Branch, CommitFaults: strategy == Commit || strategy == Branch,
		Off: cfg.Off, Obligations: sim.NewLedger(k), Threads: cfg.Threads}
	env.CommitReached = func(name string) {
		if tr.Len() > 0 {
			reached.note("commit-reached:"+name, tr.Len()-1)
		}
	}
	res := Result{Scenario: sc.Name, Seed: cfg.Seed, Profile: cfg.Profile, Strategy: strategy, Branch: cfg.Branch, Off: cfg.Off, Horizon: horizon,
		EventBudget: budget}
	if !buildSafely(sc, env) {
		res.End = sim.EndViolation
	} else {
		res.End = k.Run(sim.Limits{Horizon: horizon, EventBudget: budget, KeepGoing: cfg.KeepGoing})
		if res.End == sim.EndHorizon || res.End == sim.EndQuiescent {
			res.End = heal(k, env, sc, horizon)
		}
	}
	res.Violation = tr.Violation()
	if res.Violation != nil && cfg.KeepGoing {
		if res.End != sim.EndBudget {
			res.End = sim.EndViolation
		}
		for _, v := range tr.Later() {
			l := Later{Violation: v}
			earlier := append([]sim.Violation{*res.Violation}, tr.Later()...)
			for _, e := range earlier {
				if e.Invariant == v.Invariant {
					break // only the violations before v
				}
				if FollowsFrom(e, v) {
					l.Follows = e.Invariant
					break
				}
			}
			res.Later = append(res.Later, l)
		}
	}
	res.Events = tr.Len()
	res.Executed = k.Executed()
	res.Virtual = k.Elapsed()
	res.Fingerprint = tr.Fingerprint()
	res.Trace = tr.Events()
	res.Tape = tape()
	res.Probes = probes.Hits()
	res.FirstHits = reached.hits
	return res, nil
}

// heal runs the heal phase: no more faults, a bounded stretch of virtual
// time for timers and actors, then every liveness obligation opened before
// the phase and still open is a violation (the oldest is reported).
func heal(k *sim.Kernel, env *model.Env, sc Scenario, horizon time.Duration) sim.EndReason {
	window := sc.HealWindow
	if window <= 0 {
		window = DefaultHealWindow
	}
	env.Healing = true
	env.Emit("harness", "heal", "", sim.A("until", sim.FormatT(horizon+window)))
	if !k.RunUntil(horizon + window) {
		return sim.EndViolation
	}
	if k.Trace().KeepGoing() {
		for _, v := range env.Obligations.Violations(k.Elapsed(), horizon) {
			k.Trace().Fail(v)
		}
		return sim.EndHorizon
	}
	if v := env.Obligations.Violation(k.Elapsed(), horizon); v != nil {
		k.Trace().Fail(*v)
		return sim.EndViolation
	}
	return sim.EndHorizon
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
