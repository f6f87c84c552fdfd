package report

import (
	"fmt"
	"time"

	"orchsim/scenarios"
	"orchsim/shrink"
)

// StoryThreshold is the trace length above which a failing run's diagram
// draws its shrunk story instead of the run itself.
const StoryThreshold = 60

// StoryShrink bounds the shrinking done before drawing. MaxRuns makes the
// result independent of machine speed (the shrinks of the seed bugs reach
// their fixpoint in a few hundred runs); Budget is the wall-clock safety
// net. When the budget stops a shrink first, Story says so in a note,
// because a faster machine may then draw a smaller story.
var StoryShrink = shrink.Options{Budget: 5 * time.Second, MaxRuns: 400}

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
		s.Notes = append(s.Notes, fmt.Sprintf("shrinking stopped at its %s wall-clock budget: a faster machine may draw a smaller story", opt.Budget))
	}
	s.Notes = append(s.Notes, "the replay command below reproduces the original run, not this story (orchsim shrink writes the story's own replay file)")
	return s
}
