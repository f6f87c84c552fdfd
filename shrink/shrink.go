// Package shrink reduces a failing run to a minimal one that still violates
// the same invariant: it switches off whole actors (users, agents, viewer
// habits, fault kinds, the fault injector), then minimises the choice tape
// (deletes choices and lowers them towards the simplest value, which
// shortens gaps and drops optional behaviour). A candidate is kept when the
// same invariant fails, whatever the stack, and the story got smaller.
//
// The invariant may also be one a keep-going run broke only after another
// invariant's violation (scenarios.Result.Later): the shrinker then looks
// for a run in which it fails first, so a bug that a denser one hides in
// every seed still gets a minimal story of its own.
package shrink

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
)

// Options bound a shrink.
type Options struct {
	// Budget is the wall-clock time the shrinker may spend (0: 10 s). The
	// shrinker itself is outside the simulated path; the runs it makes are
	// deterministic, so a larger budget only finds a smaller story.
	Budget time.Duration
	// MaxRuns bounds the candidate runs (0: unbounded within Budget). Tests
	// use it to make a shrink independent of machine speed.
	MaxRuns int
	// Now reads the wall clock (time.Now by default); tests may stub it.
	Now func() time.Time
}

// Stats says what a shrink did.
type Stats struct {
	Runs     int
	Accepted int
	// Before and After are the story sizes (actions and faults).
	Before, After int
	// TapeBefore and TapeAfter are the tape lengths.
	TapeBefore, TapeAfter int
	// Exhausted reports that the budget ran out before a fixpoint.
	Exhausted bool
	// FingerprintBefore is the fingerprint of the run as given, before
	// shrinking (16 hex digits).
	FingerprintBefore string
	// AheadBefore and AheadAfter count the other invariants broken before
	// the target (Score.Behind), as given and in the result: 0 after when
	// it fails first. A later target trades actions for fewer ahead, so
	// Before < After is possible while AheadAfter < AheadBefore.
	AheadBefore, AheadAfter int
}

// Score orders candidates: fewer other invariants broken before the
// invariant (Behind; a run in which it fails first wins), then
// fewer story actions up to its violation, then a shorter tape, then
// smaller choices.
type Score struct {
	// Behind counts the other invariants broken before it: 0 when it is
	// the run's first violation (a keep-going run has later ones), so
	// fixing a bug that comes first counts as progress.
	Behind  int
	Actions int
	Tape    int
	Sum     uint64
}

func (a Score) less(b Score) bool {
	if a.Behind != b.Behind {
		return a.Behind < b.Behind
	}
	if a.Actions != b.Actions {
		return a.Actions < b.Actions
	}
	if a.Tape != b.Tape {
		return a.Tape < b.Tape
	}
	return a.Sum < b.Sum
}

// IsAction reports whether a trace event is an action of the story: a step
// by a user or a viewer, a tool call an agent made (it carries the
// credential it was made with), or a fault; as opposed to what the system
// did in response (panes mounting, a backend painting its screen).
func IsAction(ev *sim.Event) bool {
	a := ev.Actor
	switch {
	case a == "fault" || strings.HasPrefix(a, "user") || strings.HasPrefix(a, "viewer/"):
		return true
	case strings.HasPrefix(a, "agent/"):
		return ev.Has("cred")
	}
	return false
}

// Actions counts the story's actions in a trace.
func Actions(trace []sim.Event) int {
	n := 0
	for i := range trace {
		if IsAction(&trace[i]) {
			n++
		}
	}
	return n
}

type shrinker struct {
	inv string
	// later: inv was not the first violation of the run as given, so the
	// shrinker may also fix other bugs (fixOthers) to let it fail alone.
	later bool
	opt   Options
	start time.Time
	stats Stats
	best  scenarios.Config
	res   scenarios.Result
	score Score
}

// Shrink minimises cfg, a run that violates inv. It returns the smallest
// failing configuration found (with its recorded tape and switched-off
// actors), that run's result (trace kept), and what it did. If cfg does
// not fail with inv, it is returned unchanged with ok false.
//
// In a keep-going cfg, inv may be a later violation (Result.Later). A
// candidate then counts when inv fails in it at all, and one in which it
// fails first wins over any in which it does not (Score.Behind). When the
// smallest run has inv first, it is returned as a plain run (KeepGoing
// off: the same events up to the violation, where the run stops), the
// minimal story of that bug alone; otherwise it stays keep-going, and
// Until gives the end of its story.
func Shrink(cfg scenarios.Config, inv string, opt Options) (scenarios.Config, scenarios.Result, Stats, bool) {
	if opt.Budget <= 0 {
		opt.Budget = 10 * time.Second
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	s := &shrinker{inv: inv, opt: opt, start: opt.Now()}
	cfg.KeepTrace, cfg.RecordTape, cfg.OnEvent = true, true, nil
	res, err := scenarios.Run(cfg)
	if err != nil || !Fails(&res, inv) {
		return cfg, res, s.stats, false
	}
	later := res.Violation.Invariant != inv
	s.later = later
	cfg.Tape = res.Tape
	s.stats.FingerprintBefore = fmt.Sprintf("%016x", res.Fingerprint)
	// A candidate may wander into a much busier run; bound its events so one
	// candidate cannot eat the budget (running out is a different failure,
	// so such a candidate is simply not kept).
	cfg.EventBudget = max(200_000, 4*res.Executed)
	s.best, s.res, s.score = cfg, res, score(&res, inv, cfg.KeepGoing)
	s.stats.Before, s.stats.TapeBefore, s.stats.AheadBefore = s.score.Actions, s.score.Tape, s.score.Behind
	for progress := true; progress && !s.out(); {
		progress = false
		progress = s.fixOthers() || progress
		if later && s.score.Behind == 0 && s.best.KeepGoing {
			s.alone() // from here a plain shrink: cheaper runs, stopped at the violation
		}
		progress = s.switchOff() || progress
		progress = s.groups() || progress
		progress = s.deleteChoices() || progress
		progress = s.lowerChoices() || progress
	}
	s.stats.Exhausted = s.out()
	if later && s.score.Behind == 0 && s.best.KeepGoing {
		s.alone()
	}
	s.compact()
	s.stats.After, s.stats.TapeAfter, s.stats.AheadAfter = s.score.Actions, len(s.best.Tape), s.score.Behind
	return s.best, s.res, s.stats, true
}

// Fails reports whether inv is violated in res: its first violation, or
// one of its later ones (a keep-going run).
func Fails(res *scenarios.Result, inv string) bool {
	if res.Violation == nil {
		return false
	}
	if res.Violation.Invariant == inv {
		return true
	}
	for i := range res.Later {
		if res.Later[i].Invariant == inv {
			return true
		}
	}
	return false
}

// Until returns the events of trace up to and including the first
// violation of inv (the whole trace when it has none): a keep-going run's
// story of that invariant.
func Until(trace []sim.Event, inv string) []sim.Event {
	for i := range trace {
		if trace[i].Actor == "invariant" && trace[i].Kind == inv {
			return trace[:i+1]
		}
	}
	return trace
}

// alone turns the best run, a keep-going one in which inv fails first,
// into a plain run: the same events up to its violation, where it stops.
// It is kept only when it fails with inv first, as it must; its tape is
// the draws it made (a replay follows every recorded choice, and the
// keep-going run drew on past the violation).
func (s *shrinker) alone() {
	c := s.best
	c.KeepGoing, c.RecordTape = false, true
	res, err := scenarios.Run(c)
	if err != nil || res.Violation == nil || res.Violation.Invariant != s.inv {
		return
	}
	c.Tape = res.Tape
	s.best, s.res, s.score = c, res, score(&res, s.inv, false)
}

// compact drops the choices a replay does not need: a site's trailing
// zeros (a draw with no recorded choice left gets 0 anyway). The run is
// checked to be identical.
func (s *shrinker) compact() {
	tape := s.best.Tape
	keep := make([]bool, len(tape))
	last := map[string]int{}
	for i, c := range tape {
		k := c.Actor + "\x00" + c.Label
		if c.Value != 0 {
			last[k] = i
		}
	}
	var out []sim.Choice
	for i, c := range tape {
		k := c.Actor + "\x00" + c.Label
		if j, ok := last[k]; ok && i <= j {
			keep[i] = true
		}
		if keep[i] {
			out = append(out, c)
		}
	}
	c := s.best
	c.Tape = out
	c.RecordTape = false
	res, err := scenarios.Run(c)
	if err != nil || res.Fingerprint != s.res.Fingerprint {
		return
	}
	s.best.Tape = out
}

// score scores a run that fails with inv (Fails). In a keep-going run
// (keepGoing) its actions are those up to inv's violation: what the run
// did after it is not the story. A plain run's are all its actions, as
// they always were (a callback may act after the violation it raised).
func score(r *scenarios.Result, inv string, keepGoing bool) Score {
	var sum uint64
	for _, c := range r.Tape {
		sum += c.Value
	}
	behind := 0
	if r.Violation.Invariant != inv {
		behind = 1
		for i := range r.Later {
			if r.Later[i].Invariant == inv {
				break
			}
			behind++
		}
	}
	trace := r.Trace
	if keepGoing {
		trace = Until(trace, inv)
	}
	return Score{Behind: behind, Actions: Actions(trace), Tape: len(r.Tape), Sum: sum}
}

func (s *shrinker) out() bool {
	if s.opt.MaxRuns > 0 && s.stats.Runs >= s.opt.MaxRuns {
		return true
	}
	return s.opt.Now().Sub(s.start) > s.opt.Budget
}

// try runs a candidate and keeps it when it still fails with the same
// invariant and scores lower.
func (s *shrinker) try(c scenarios.Config) bool {
	if s.out() {
		return false
	}
	s.stats.Runs++
	res, err := scenarios.Run(c)
	if err != nil || !Fails(&res, s.inv) {
		return false
	}
	sc := score(&res, s.inv, c.KeepGoing)
	if !sc.less(s.score) {
		return false
	}
	c.Tape = res.Tape // only the draws the run made
	s.best, s.res, s.score = c, res, sc
	s.stats.Accepted++
	return true
}

// fixOthers turns on, one at a time, fix switches for the invariants the
// best run breaks before inv: each switch that is off, is declared to
// catch one of them (model.SwitchInfo.Invariants) and is not declared to
// catch inv. Fixing the bugs whose violations come first lets inv fail
// alone; a fix that reveals another bug in front is followed by that
// one's, until inv is first or no fix helps. Only for a later target (the
// profile of a plain story is the campaign's); a switch that does fix inv
// is simply not kept (inv stops failing).
func (s *shrinker) fixOthers() bool {
	progress := false
	for s.later && s.score.Behind > 0 && !s.out() {
		ahead := map[string]bool{s.res.Violation.Invariant: true}
		for i := range s.res.Later {
			if s.res.Later[i].Invariant == s.inv {
				break
			}
			ahead[s.res.Later[i].Invariant] = true
		}
		step := false
		for _, sw := range model.Switches() {
			if !slices.ContainsFunc(sw.Invariants, func(i string) bool { return ahead[i] }) {
				continue
			}
			p, ok := s.withFix(sw)
			if !ok {
				continue
			}
			c := s.best
			c.Profile = p
			if s.try(c) {
				step = true
				break // the run changed: recompute what is ahead
			}
		}
		if !step {
			break
		}
		progress = true
	}
	// Then any other fix that is not inv's own, kept when the run scores
	// lower: a bug in front may be caught by an invariant its switch does
	// not name, or its fix may be the one that changes the run enough.
	for _, sw := range model.Switches() {
		if !s.later || s.score.Behind == 0 || s.out() {
			break
		}
		if p, ok := s.withFix(sw); ok {
			c := s.best
			c.Profile = p
			progress = s.try(c) || progress
		}
	}
	return progress
}

// withFix returns the best run's profile with sw's fix on, when sw is off
// and is not declared to catch inv.
func (s *shrinker) withFix(sw model.SwitchInfo) (model.Profile, bool) {
	if s.best.Profile.Fixed(sw.Name) || slices.Contains(sw.Invariants, s.inv) {
		return model.Profile{}, false
	}
	spec := s.best.Profile.Spec()
	name := string(sw.Name)
	spec.Unfix = slices.DeleteFunc(slices.Clone(spec.Unfix), func(u string) bool { return u == name })
	if spec.Preset != model.PresetFixed {
		spec.Fix = append(slices.Clone(spec.Fix), name)
	}
	p, err := spec.Profile()
	if err != nil || !p.Fixed(sw.Name) {
		return model.Profile{}, false
	}
	return p, true
}

// switchOff tries switching off, one at a time, the fault injector, each
// fault kind seen, and each actor that acted.
func (s *shrinker) switchOff() bool {
	progress := false
	for _, actor := range s.candidatesOff() {
		c := s.best
		c.Off = append(append([]string{}, c.Off...), actor)
		sort.Strings(c.Off)
		if s.try(c) {
			progress = true
		}
	}
	return progress
}

func (s *shrinker) candidatesOff() []string {
	seen := map[string]bool{}
	for _, a := range s.best.Off {
		seen[a] = true
	}
	var out []string
	add := func(a string) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	for i := range s.res.Trace {
		ev := &s.res.Trace[i]
		if ev.Actor == "fault" {
			add("faults")
		}
	}
	for i := range s.res.Trace {
		ev := &s.res.Trace[i]
		switch {
		case ev.Actor == "fault":
			add("fault:" + ev.Kind)
		case IsAction(ev):
			add(ev.Actor)
		}
	}
	return out
}

// groups tries, for each draw site (actor, label), deleting all its
// recorded choices and zeroing them all: whole behaviours go at once
// ("this user's gaps are minimal", "this agent never picks a second tool").
func (s *shrinker) groups() bool {
	progress := false
	var sites []string
	seen := map[string]bool{}
	for _, c := range s.best.Tape {
		k := c.Actor + "\x00" + c.Label
		if !seen[k] {
			seen[k] = true
			sites = append(sites, k)
		}
	}
	for _, site := range sites {
		for _, op := range []string{"delete", "zero"} {
			var tape []sim.Choice
			changed := false
			for _, c := range s.best.Tape {
				if c.Actor+"\x00"+c.Label != site {
					tape = append(tape, c)
					continue
				}
				changed = true
				if op == "zero" {
					if c.Value == 0 {
						continue
					}
					c.Value = 0
					tape = append(tape, c)
				}
			}
			if !changed {
				continue
			}
			c := s.best
			c.Tape = tape
			if s.try(c) {
				progress = true
				break
			}
		}
	}
	return progress
}

// deleteChoices tries removing runs of recorded choices, largest first
// (halves, quarters, ... single choices), from the end of the tape.
func (s *shrinker) deleteChoices() bool {
	progress := false
	for size := len(s.best.Tape) / 2; size >= 1; size /= 2 {
		for end := len(s.best.Tape); end-size >= 0 && !s.out(); end -= size {
			tape := s.best.Tape
			if end > len(tape) {
				end = len(tape)
			}
			cand := append(append([]sim.Choice{}, tape[:end-size]...), tape[end:]...)
			c := s.best
			c.Tape = cand
			if s.try(c) {
				progress = true
			}
		}
	}
	return progress
}

// lowerChoices lowers each choice to the smallest value that still fails:
// 0 first, then a binary search between the last value that passed and the
// one that fails (a run is not monotone in a choice, so this finds a small
// value, not always the smallest).
func (s *shrinker) lowerChoices() bool {
	progress := false
	for i := 0; i < len(s.best.Tape) && !s.out(); i++ {
		at := func(v uint64) bool {
			tape := append([]sim.Choice{}, s.best.Tape...)
			tape[i].Value = v
			c := s.best
			c.Tape = tape
			return s.try(c)
		}
		v := s.best.Tape[i].Value
		if v == 0 {
			continue
		}
		if at(0) {
			progress = true
			continue
		}
		lo, hi := uint64(0), v // lo passed (or is untried), hi fails
		for hi-lo > 1 && !s.out() && i < len(s.best.Tape) {
			mid := lo + (hi-lo)/2
			if at(mid) {
				hi, progress = mid, true
			} else {
				lo = mid
			}
		}
	}
	return progress
}
