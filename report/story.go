package report

import (
	"fmt"
	"github.com/orchsim/orchsim/inevitable"
	"time"

	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/shrink"
)

// StoryThreshold is the trace length above which a failing run's diagram
// draws its shrunk story instead of the run itself.
const StoryThreshold = 60

// StoryShrink bounds the shrinking done before drawing. MaxRuns, a number
// of candidate runs, is the bound: the runs are deterministic, so the story
// is the same on every machine (200 runs take the chaos scenario, the
// slowest, about 2 s, and reach the stories of 400 on the seed bugs).
// Budget is only a safety net against a pathologically slow machine; when
// it stops a shrink before MaxRuns, Story says so in a note, because the
// diagram then depends on the machine.
var StoryShrink = shrink.Options{Budget: time.Minute, MaxRuns: 200}

// Story returns what a diagram of the run made from cfg should draw: res
// itself when it is short (at most StoryThreshold events) or passed, else
// its shrunk story (the minimal run that still violates the same
// invariant), marked with ShrunkFrom. replayCmd reproduces the original
// run. cfg must be the configuration res was run from.
func Story(cfg scenarios.Config, res *scenarios.Result, replayCmd string, opt shrink.Options) *Run {
	return StoryMarked(cfg, res, replayCmd, opt, nil)
}

// StoryMarked is Story, and with nro set it also marks the point of no
// return of the run it draws (the story's own run when it shrank one).
func StoryMarked(cfg scenarios.Config, res *scenarios.Result, replayCmd string, opt shrink.Options, nro *inevitable.Options) *Run {
	r := FromResult(res, replayCmd)
	if res.Violation == nil || len(res.Trace) <= StoryThreshold {
		if nro != nil {
			MarkNoReturn(r, cfg, *nro)
		}
		return r
	}
	cfg.OnEvent = nil
	scfg, sres, st, ok := shrink.Shrink(cfg, res.Violation.Invariant, opt)
	if !ok || len(sres.Trace) >= len(res.Trace) {
		r.Notes = append(r.Notes, fmt.Sprintf("not shrunk: %d events (the shrinker found no smaller run)", len(res.Trace)))
		if nro != nil {
			MarkNoReturn(r, cfg, *nro)
		}
		return r
	}
	s := FromResult(&sres, replayCmd)
	s.ShrunkFrom = res.Events
	s.Notes = append(s.Notes, fmt.Sprintf("shrinking: %d candidate runs, story actions %d -> %d", st.Runs, st.Before, st.After))
	if st.Exhausted && (opt.MaxRuns == 0 || st.Runs < opt.MaxRuns) {
		s.Notes = append(s.Notes, fmt.Sprintf("shrinking hit its %s wall-clock safety net after %d of its %d runs: this story depends on the machine's speed",
			opt.Budget, st.Runs, opt.MaxRuns))
	}
	s.Notes = append(s.Notes, "the replay command below reproduces the original run, not this story (orchsim shrink writes the story's own replay file)")
	if nro != nil {
		MarkNoReturn(s, scfg, *nro)
	}
	return s
}

// MarkNoReturn sets r.NoReturn to the point of no return of the run made
// from cfg, which must be the run r draws. A passing run is left as it is;
// a failing one without a point gets a note saying why.
func MarkNoReturn(r *Run, cfg scenarios.Config, opt inevitable.Options) {
	if r.Violation == nil {
		return
	}
	cfg.OnEvent = nil
	p, err := inevitable.Find(cfg, r.Violation.Invariant, opt)
	if err != nil {
		r.Notes = append(r.Notes, err.Error())
		return
	}
	r.NoReturn = &NoReturn{Seq: p.Seq, Text: p.Certainty()}
}
