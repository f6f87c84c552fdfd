// Package triage asks of a failing run which known fixes make it pass: the
// question `orchsim explain` prints a table for, and the key fuzz groups a
// campaign's failures by (the invariant and the minimal set of fix switches
// that makes the run pass), so that a campaign reports one group per root
// cause, names the reports it reproduces, and a failure no known fix
// explains stands out as new.
//
// Every candidate is a switch of the registry (model.Switches()) that the
// run's profile has off; nothing here names a switch.
package triage

import (
	"slices"
	"sort"
	"strings"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
)

// Breaks reports whether res breaks inv: its first violation is inv, or,
// for a --keep-going run, one of the distinct invariants it broke is.
func Breaks(res *scenarios.Result, inv string) bool {
	if res.Violation == nil {
		return false
	}
	if res.Violation.Invariant == inv {
		return true
	}
	for _, v := range res.Later {
		if v.Invariant == inv {
			return true
		}
	}
	return false
}

// WithFixes returns p with the fixes add turned on as well (a switch p
// turned off with --unfix is turned on again), keeping its preset and
// mutants.
func WithFixes(p model.Profile, add []string) (model.Profile, error) {
	spec := p.Spec()
	spec.Fix = append(slices.Clone(spec.Fix), add...)
	var unfix []string
	for _, u := range spec.Unfix {
		if !slices.Contains(add, u) {
			unfix = append(unfix, u)
		}
	}
	spec.Unfix = unfix
	return spec.Profile()
}

// Judge re-runs one failing run (Base) under other sets of fixes and says
// whether Invariant still breaks. It caches its verdicts by fix set, and
// counts the runs it made.
type Judge struct {
	Base      scenarios.Config
	Invariant string
	// Runs counts the candidate runs made (cache hits are not runs).
	Runs  int
	cache map[string]bool
}

// NewJudge prepares a judge of cfg's failure of inv. Candidates run with
// keep-going (scenarios.Config.KeepGoing), so a fix is judged by whether
// inv breaks anywhere in the run, not by whether another bug now ends it
// first; they do not keep traces or tapes. A recorded event budget below the default was
// enough for the failing run, not for a candidate a fix lets run to the
// horizon, so unless the budget itself is what failed candidates get the
// default.
func NewJudge(cfg scenarios.Config, inv string) *Judge {
	cfg.KeepTrace, cfg.RecordTape, cfg.OnEvent, cfg.KeepGoing = false, false, nil, true
	if inv != sim.EventBudgetExceeded && cfg.EventBudget < scenarios.DefaultEventBudget {
		cfg.EventBudget = 0
	}
	return &Judge{Base: cfg, Invariant: inv, cache: map[string]bool{}}
}

// Breaks reports whether the run, with the fixes add turned on on top of
// its profile, still breaks the invariant. A failure of another invariant
// is another bug's and counts as not breaking it.
func (j *Judge) Breaks(add []string) (bool, error) {
	key := slices.Clone(add)
	sort.Strings(key)
	k := strings.Join(key, ",")
	if v, ok := j.cache[k]; ok {
		return v, nil
	}
	res, err := j.Run(add)
	if err != nil {
		return false, err
	}
	v := Breaks(&res, j.Invariant)
	j.cache[k] = v
	return v, nil
}

// Run makes the run with the fixes add turned on on top of its profile.
func (j *Judge) Run(add []string) (scenarios.Result, error) {
	c := j.Base
	p, err := WithFixes(c.Profile, add)
	if err != nil {
		return scenarios.Result{}, err
	}
	c.Profile = p
	j.Runs++
	return scenarios.Run(c)
}

// Candidates are the switches of the registry that p has off, those that
// declare inv first (each in registry order): the fixes that may explain a
// failure of inv.
func Candidates(p model.Profile, inv string) []string {
	var declaring, others []string
	for _, s := range model.Switches() {
		if p.Fixed(s.Name) {
			continue
		}
		if slices.Contains(s.Invariants, inv) {
			declaring = append(declaring, string(s.Name))
		} else {
			others = append(others, string(s.Name))
		}
	}
	return append(declaring, others...)
}

// Key is what a failure is grouped by: its invariant and the minimal set
// of fix switches that makes it pass (sorted by name). Switches is empty
// when no known switch, alone or together, makes it pass: a new bug.
type Key struct {
	Invariant string
	Switches  []string
}

// New reports whether no known fix explains the failure.
func (k Key) New() bool { return len(k.Switches) == 0 }

// String is the key as the table shows it: invariant, then the switches
// joined by "+", or "new".
func (k Key) String() string {
	if k.New() {
		return k.Invariant + " (new)"
	}
	return k.Invariant + " / " + strings.Join(k.Switches, "+")
}

// MinimalFixes returns the key of cfg's failure of inv: the invariant and
// a minimal set of the candidate fixes (Candidates) that makes the run stop
// breaking it. A single switch is tried first, those that declare inv
// first, and the first that suffices is the set; otherwise, when every
// candidate together suffices, candidates are dropped one by one, the
// least preferred first, while the rest still suffices (so the set is
// 1-minimal: no switch of it can be left out). It costs at most
// 2·candidates+1 runs, usually one. runs says how many it made.
func MinimalFixes(cfg scenarios.Config, inv string) (key Key, runs int, err error) {
	j := NewJudge(cfg, inv)
	key = Key{Invariant: inv, Switches: []string{}}
	cands := Candidates(cfg.Profile, inv)
	for _, c := range cands {
		breaks, err := j.Breaks([]string{c})
		if err != nil {
			return key, j.Runs, err
		}
		if !breaks {
			key.Switches = []string{c}
			return key, j.Runs, nil
		}
	}
	if len(cands) < 2 {
		return key, j.Runs, nil
	}
	set := slices.Clone(cands)
	if breaks, err := j.Breaks(set); err != nil || breaks {
		return key, j.Runs, err
	}
	for i := len(cands) - 1; i >= 0 && len(set) > 1; i-- {
		without := slices.DeleteFunc(slices.Clone(set), func(s string) bool { return s == cands[i] })
		breaks, err := j.Breaks(without)
		if err != nil {
			return key, j.Runs, err
		}
		if !breaks {
			set = without
		}
	}
	sort.Strings(set)
	key.Switches = set
	return key, j.Runs, nil
}

// Reports are the public reports the switches cite, in order, each once.
func Reports(switches []string) []string {
	out := []string{}
	for _, name := range switches {
		for _, s := range model.Switches() {
			if string(s.Name) != name {
				continue
			}
			for _, r := range s.Reports {
				if !slices.Contains(out, string(r)) {
					out = append(out, string(r))
				}
			}
		}
	}
	return out
}

// ReportURLs are the public addresses of reports (catalog.Report.URL), ""
// for one without.
func ReportURLs(reports []string) []string {
	out := make([]string, len(reports))
	for i, r := range reports {
		if rep, err := catalog.ParseReport(r); err == nil {
			out[i] = rep.URL()
		}
	}
	return out
}

// Verdict is one switch's row of Explain.
type Verdict struct {
	Switch string
	// Alone is what the run ends in with the switch added to its profile
	// ("ok" or the invariant); Without what it ends in under the fixed
	// preset with the switch removed.
	Alone, Without string
	// Sufficient: added alone, the invariant no longer fails (another bug
	// may then end the run). Necessary: removed from fixed, the invariant
	// fails again (another bug's failure says nothing about this one).
	Sufficient, Necessary bool
}

// Explain judges every registered switch against cfg's failure of inv
// (what ends the run as given): added alone to its profile, is it
// sufficient; removed from the fixed preset, is it necessary. A switch is
// necessary only when the fixed preset (with cfg's mutants) does not fail
// inv: a failure that survives every fix (a mutant's, or a bug no switch
// models) needs no switch off, so none is necessary.
func Explain(cfg scenarios.Config, inv string) ([]Verdict, error) {
	return explain(cfg, inv, false)
}

// ExplainLater is Explain for an invariant that cfg, a keep-going run,
// breaks only after another invariant's violation: each run is a
// keep-going one and ends "in" inv when it breaks inv at all (Breaks),
// else in its first violation or "ok"; so a switch is sufficient when inv
// is no longer broken anywhere in the run, whatever else still is.
func ExplainLater(cfg scenarios.Config, inv string) ([]Verdict, error) {
	return explain(cfg, inv, true)
}

func explain(cfg scenarios.Config, inv string, later bool) ([]Verdict, error) {
	j := NewJudge(cfg, inv)
	ends := func(p model.Profile) (string, error) {
		c := j.Base
		c.Profile, c.KeepGoing = p, later // judged by what ends the run, as explain prints it (later: whether it breaks inv)
		res, err := scenarios.Run(c)
		if err != nil {
			return "", err
		}
		if later && Breaks(&res, inv) {
			return inv, nil
		}
		if res.Violation == nil {
			return "ok", nil
		}
		return res.Violation.Invariant, nil
	}
	var all []string
	for _, s := range model.Switches() {
		all = append(all, string(s.Name))
	}
	p, err := model.NewProfile(model.PresetReported, all, cfg.Profile.MutantNames())
	if err != nil {
		return nil, err
	}
	everyFix, err := ends(p)
	if err != nil {
		return nil, err
	}
	var out []Verdict
	for _, s := range model.Switches() {
		name := string(s.Name)
		p, err := model.NewProfile(model.PresetReported, append(cfg.Profile.Fixes(), name), cfg.Profile.MutantNames())
		if err != nil {
			return nil, err
		}
		alone, err := ends(p)
		if err != nil {
			return nil, err
		}
		var others []string
		for _, o := range model.Switches() {
			if o.Name != s.Name {
				others = append(others, string(o.Name))
			}
		}
		p, err = model.NewProfile(model.PresetReported, others, cfg.Profile.MutantNames())
		if err != nil {
			return nil, err
		}
		without, err := ends(p)
		if err != nil {
			return nil, err
		}
		out = append(out, Verdict{Switch: name, Alone: alone, Without: without,
			Sufficient: alone != inv, Necessary: without == inv && everyFix != inv})
	}
	return out, nil
}
