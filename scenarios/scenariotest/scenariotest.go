// Package scenariotest holds scenarios for tests of the harness itself,
// registered only by the tests that need them (never by orchsim).
package scenariotest

import (
	"testing"
	"time"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
)

// MapOrder is the name of a deliberately nondeterministic scenario: one
// minute in, it emits an event per key of a Go map in the map's range
// order, which the runtime randomizes, so two runs of one seed part at
// the first of those events. It is what a determinism check must catch.
const MapOrder = "test-map-order"

// RegisterMapOrder registers the MapOrder scenario for the rest of test t.
func RegisterMapOrder(t testing.TB) {
	t.Helper()
	unregister, err := scenarios.Register(scenarios.Scenario{Name: MapOrder, Doc: "a map range on the simulated path (a test of the determinism check)",
		Horizon: time.Hour, Build: func(env *model.Env) {
			keys := map[string]int{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8}
			env.After(time.Minute, func() {
				for k := range keys { // the bug: map order on the simulated path
					env.Emit("test", "visit", "", sim.A("key", k))
				}
			})
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unregister)
}
