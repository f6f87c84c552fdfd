// Package simtest adapts property-testing tools to the kernel's choice
// source, so scenario and model code runs unchanged under them.
package simtest

import (
	"pgregory.net/rapid"

	"github.com/orchsim/orchsim/sim"
)

// RapidSource draws choices from a *rapid.T, so rapid generates and
// shrinks runs: each draw is rapid.Uint64Range(0, n-1) labelled
// actor/label, and rapid's minimal value 0 is the simplest outcome. After
// Limit draws every draw is 0: rapid's input is bounded, and a run that
// asked it for more would abort inside the model.
type RapidSource struct {
	t *rapid.T
	sim.Actors
	drawn int
	// Limit is how many draws come from rapid (DefaultRapidLimit).
	Limit int
	// aborted holds a panic rapid raised inside a draw (its own control
	// flow, e.g. when it replays a shorter input): the kernel would report
	// it as a model panic, so it is kept and re-raised by Check.
	aborted  any
	hasAbort bool
}

// DefaultRapidLimit keeps a run well inside rapid's input budget.
const DefaultRapidLimit = 400

var _ sim.Source = (*RapidSource)(nil)

// NewRapidSource returns a source over t.
func NewRapidSource(t *rapid.T) *RapidSource {
	return &RapidSource{t: t, Limit: DefaultRapidLimit}
}

// Draw implements sim.Source.
func (r *RapidSource) Draw(actor int, label string, n uint64) (v uint64) {
	if r.drawn >= r.Limit || r.hasAbort {
		return 0
	}
	r.drawn++
	defer func() {
		if p := recover(); p != nil {
			r.aborted, r.hasAbort, v = p, true, 0
		}
	}()
	return rapid.Uint64Range(0, n-1).Draw(r.t, r.ActorName(actor)+"/"+label)
}

// Check re-raises, on rapid's goroutine and outside the kernel, a panic
// rapid raised inside a draw. Call it after the run, before judging it.
func (r *RapidSource) Check() {
	if r.hasAbort {
		panic(r.aborted)
	}
}
