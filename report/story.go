package report

import (
	"fmt"
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
	r := FromResult(res, replayCmd)
	if res.Violation == nil || len(res.Trace) <= StoryThreshold {
		return r
	}
	cfg.OnEvent = nil
	_, sres, st, ok := shrink.Shrink(cfg, res.Violation.Invariant, opt)
	if !ok || len(sres.Trace) >= len(res.Trace) {
		r.Notes = append(r.Notes, fmt.Sprintf("not shrunk: %d events (the shrinker found no smaller run)", len(res.Trace)))
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
	return s
}
