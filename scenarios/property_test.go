package scenarios

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
	"github.com/orchsim/orchsim/sim/simtest"
)

// Under the fixed profile no run violates an invariant, whatever rapid
// draws; on failure rapid shrinks the draws and prints them.
func TestProperty_FixedHoldsForEveryDraw(t *testing.T) {
	for _, name := range []string{TabOwnership, RequestRetry} {
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				src := simtest.NewRapidSource(rt)
				res, err := Run(Config{Scenario: name, Profile: model.MustProfile(model.PresetFixed, nil, nil),
					Horizon: 6 * time.Hour, Source: src})
				src.Check()
				if err != nil {
					rt.Fatal(err)
				}
				if v := res.Violation; v != nil {
					rt.Fatalf("%s at %s: %s", v.Invariant, sim.FormatT(v.At), v.Message)
				}
			})
		})
	}
}

// FuzzChaos drives the chaos scenario with the fuzzer's bytes as the choice
// tape (an empty input is the quietest run: no faults). Run it with
//
//	go test ./scenarios -run XXX -fuzz FuzzChaos -fuzztime 60s
//
// Plain `go test` runs the seed corpus below.
func FuzzChaos(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte("a thread resumes after the idle release and acts on its tab"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Run(Config{Scenario: chaosOrTabs(), Profile: model.MustProfile(model.PresetFixed, nil, nil),
			Horizon: 6 * time.Hour, Source: sim.NewBytesSource(data)})
		if err != nil {
			t.Fatal(err)
		}
		if v := res.Violation; v != nil {
			t.Fatalf("%s at %s: %s", v.Invariant, sim.FormatT(v.At), v.Message)
		}
	})
}

// chaosOrTabs names the chaos scenario when it is registered.
func chaosOrTabs() string {
	if _, err := Lookup("chaos"); err == nil {
		return "chaos"
	}
	return TabOwnership
}
