package scenarios

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

// judgement is what a checker made of a trace: every violation it returned
// (event index and message) and its Finish result.
type judgement struct {
	violations []string
	finish     string
}

// judge feeds events to c: all of them, or only those the Trace would
// feed it (sim.Feeds: the kinds and actors c declares, and every event
// once its deadline is due). Events of the "invariant" actor (violations
// the trace appended) are fed to no checker in a run.
func judge(c sim.Checker, events []sim.Event, declaredOnly bool, end time.Duration) judgement {
	var j judgement
	for i := range events {
		ev := &events[i]
		if ev.Actor == "invariant" || declaredOnly && !sim.Feeds(c, ev) {
			continue
		}
		if v := c.Observe(ev); v != nil {
			j.violations = append(j.violations, fmt.Sprintf("#%d %s: %s", i, v.Invariant, v.Message))
		}
	}
	if f, ok := c.(sim.Finisher); ok {
		if v := f.Finish(end); v != nil {
			j.finish = v.Invariant + ": " + v.Message
		}
	}
	return j
}

// kindRuns are the runs TestDeclaredKindsSuffice replays: every scenario
// under the reported and fixed profiles and, for each mutant, its
// scenario under it, a few strategies, in keep-going mode so that a trace
// goes on past its first violation.
func kindRuns(seeds uint64) []Config {
	var out []Config
	for _, sc := range All() {
		for _, preset := range []string{model.PresetReported, model.PresetFixed} {
			p := model.MustProfile(preset, nil, nil)
			for _, st := range []Strategy{Random, Swarm, Commit} {
				for seed := uint64(1); seed <= seeds; seed++ {
					out = append(out, Config{Scenario: sc.Name, Seed: seed, Profile: p, Strategy: st})
				}
			}
		}
	}
	for _, m := range model.Mutants() {
		p := model.MustSpec(model.Spec{Preset: model.PresetFixed, Mutants: []string{string(m.Name)}})
		for seed := uint64(1); seed <= max(2, seeds/4); seed++ {
			out = append(out, Config{Scenario: m.Scenario, Seed: seed, Profile: p, Strategy: Swarm})
		}
	}
	return out
}

// Every checker that declares the kinds it observes (sim.KindObserver)
// judges a trace exactly as it does when fed every event: the same
// violations at the same events, and the same end-of-run verdict. A
// checker that misses a kind it needs fails here. The probe counter's
// parts, fed their kinds, count exactly what the whole counter does.
func TestDeclaredKindsSuffice(t *testing.T) {
	seeds := uint64(8)
	if testing.Short() {
		seeds = 2
	}
	declared := map[string]bool{}
	for _, cfg := range kindRuns(seeds) {
		cfg.KeepTrace, cfg.KeepGoing = true, true
		res := mustRun(t, cfg)
		name := fmt.Sprintf("%s/%v/%s/seed=%d", cfg.Scenario, cfg.Profile, cfg.Strategy, cfg.Seed)
		sc, _ := Lookup(cfg.Scenario)
		for _, inv := range sc.Invariants {
			all := judge(invariants.New(inv)[0], res.Trace, false, res.Virtual)
			only := judge(invariants.New(inv)[0], res.Trace, true, res.Virtual)
			if declares(invariants.New(inv)[0]) {
				declared[inv] = true
			}
			require.Equal(t, all, only, "%s: %s judged differently on its declared kinds", name, inv)
		}
		whole, parts := invariants.NewProbeCounter(), invariants.NewProbeCounter()
		var wholeHits, partHits []string
		whole.OnHit = func(p string, seq uint64) { wholeHits = append(wholeHits, fmt.Sprint(p, seq)) }
		parts.OnHit = func(p string, seq uint64) { partHits = append(partHits, fmt.Sprint(p, seq)) }
		wholeStates, partStates := newStates(), newStates()
		judge(whole, res.Trace, false, res.Virtual)
		judge(wholeStates, res.Trace, false, res.Virtual)
		feedParts(parts.Parts(), res.Trace)
		judge(partStates, res.Trace, true, res.Virtual)
		require.Equal(t, wholeHits, partHits, "%s: the probe counter's parts hit differently", name)
		require.Equal(t, whole.Hits(), parts.Hits(), "%s", name)
		require.Equal(t, wholeStates.hits, partStates.hits, "%s", name)
	}
	assert.NotEmpty(t, declared)
}

// declares reports whether c declares kinds or actors (sim.KindObserver,
// sim.ActorObserver) and so is not fed every event.
func declares(c sim.Checker) bool {
	k, kinds := c.(sim.KindObserver)
	a, actors := c.(sim.ActorObserver)
	return kinds && len(k.ObservedKinds()) > 0 || actors && len(a.ObservedActors()) > 0
}

// feedParts feeds events to checkers as the Trace does: each event, in
// order, to every checker it feeds (sim.Feeds), in registration order.
func feedParts(checkers []sim.Checker, events []sim.Event) {
	for i := range events {
		ev := &events[i]
		if ev.Actor == "invariant" {
			continue
		}
		for _, c := range checkers {
			if sim.Feeds(c, ev) {
				c.Observe(ev)
			}
		}
	}
}
