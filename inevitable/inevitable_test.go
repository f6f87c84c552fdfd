package inevitable_test

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/inevitable"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
)

const doomScenario = "test-doom"

// registerDoom registers a scenario whose point of no return is known: a
// tick every minute; at tick 10 a coin is drawn (doomed with probability
// 1/2) before the tick is emitted; at tick 20 a doomed run fails. Noise
// is drawn at every tick on both sides, so replayed and fresh draws both
// matter. The point is the tick-10 event: with it replayed the run always
// fails, with only the ticks before it replayed half the time.
func registerDoom(t *testing.T) {
	t.Helper()
	unregister, err := scenarios.Register(scenarios.Scenario{Name: doomScenario, Doc: "a coin at tick 10 decides a failure at tick 20",
		Horizon: time.Hour, Build: func(env *model.Env) {
			r := env.Rand("doom")
			doomed := false
			for i := 1; i <= 30; i++ {
				env.After(time.Duration(i)*time.Minute, func() {
					noise := r.Below("noise", 1000)
					if i == 10 {
						doomed = r.Below("coin", 2) == 1
					}
					env.Emit("test", "tick", "", sim.A("n", strconv.Itoa(i)), sim.A("noise", strconv.FormatUint(noise, 10)))
					if i == 20 && doomed {
						env.Trace.Fail(sim.Violation{Invariant: "test-doomed", Message: "the coin said so at tick 10"})
					}
				})
			}
		}})
	require.NoError(t, err)
	t.Cleanup(unregister)
}

func failingSeed(t *testing.T) uint64 {
	for seed := uint64(1); seed < 100; seed++ {
		res, err := scenarios.Run(scenarios.Config{Scenario: doomScenario, Seed: seed, Profile: model.MustProfile(model.PresetFixed, nil, nil)})
		require.NoError(t, err)
		if res.Violation != nil {
			return seed
		}
	}
	t.Fatal("no failing seed in 1..99")
	return 0
}

func TestFind_TheKnownPoint(t *testing.T) {
	registerDoom(t)
	seed := failingSeed(t)
	cfg := scenarios.Config{Scenario: doomScenario, Seed: seed, Profile: model.MustProfile(model.PresetFixed, nil, nil)}
	p, err := inevitable.Find(cfg, "test-doomed", inevitable.Options{Tries: 40})
	require.NoError(t, err)
	assert.Equal(t, "tick", p.Event.Kind)
	assert.Equal(t, "10", p.Event.Get("n"), "the coin's tick: %s", p)
	assert.Equal(t, 1.0, p.Doomed)
	assert.InDelta(t, 0.5, p.Before, 0.25, "a fair coin before the point")
	assert.Contains(t, p.String(), "event 9 at T+00:10:00.000 (40/40 reseeded continuations fail;")

	// The same run from its recorded tape (a replay file's) gives the same
	// point, and so does a second search: the suffix seeds are derived.
	rec := cfg
	rec.RecordTape = true
	res, err := scenarios.Run(rec)
	require.NoError(t, err)
	fromTape := cfg
	fromTape.Tape = res.Tape
	q, err := inevitable.Find(fromTape, "test-doomed", inevitable.Options{Tries: 40})
	require.NoError(t, err)
	assert.Equal(t, p, q)
}

func TestFind_RefusesAPassingRun(t *testing.T) {
	registerDoom(t)
	for seed := uint64(1); seed < 100; seed++ {
		cfg := scenarios.Config{Scenario: doomScenario, Seed: seed, Profile: model.MustProfile(model.PresetFixed, nil, nil)}
		res, err := scenarios.Run(cfg)
		require.NoError(t, err)
		if res.Violation == nil {
			_, err := inevitable.Find(cfg, "test-doomed", inevitable.Options{})
			assert.ErrorContains(t, err, "does not violate test-doomed (no violation)")
			return
		}
	}
	t.Fatal("no passing seed")
}

// Every story the corpus keeps has a point of no return, before its
// violation, that a second search finds again.
func TestFind_EveryCorpusStoryHasAPoint(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "corpus", "reported", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := replay.Read(path)
			require.NoError(t, err)
			prof, err := f.Spec().Profile()
			require.NoError(t, err)
			cfg := scenarios.Config{Scenario: f.Scenario, Seed: f.Seed, Profile: prof, Strategy: scenarios.Strategy(f.Strategy),
				Off: f.Off, Horizon: time.Duration(f.Horizon), Tape: f.Tape}
			p, err := inevitable.Find(cfg, f.Violation.Invariant, inevitable.Options{})
			require.NoError(t, err)
			assert.GreaterOrEqual(t, p.Doomed, 0.95, "%s", p)
			assert.Less(t, p.Before, 0.95, "the event before is not doomed: %s", p)
			assert.Less(t, p.Event.At, f.Violation.At+1, "the point precedes the violation")
			q, err := inevitable.Find(cfg, f.Violation.Invariant, inevitable.Options{})
			require.NoError(t, err)
			assert.Equal(t, p, q, "deterministic")
		})
	}
}

// A point's text names the event before it, or the start when the point
// is the first event, and never "event -1".
func TestPoint_RendersTheEventBefore(t *testing.T) {
	p := inevitable.Point{Seq: 41, Doomed: 0.95, Tries: 20, Before: 0.45, BeforeTries: 20}
	assert.Equal(t, "19/20 reseeded continuations fail; 9/20 after event 40", p.Certainty())
	first := inevitable.Point{Seq: 0, Doomed: 1, Tries: 20, Before: 0.15, BeforeTries: 20}
	assert.Equal(t, "20/20 reseeded continuations fail; 3/20 from the start", first.Certainty())
	assert.NotContains(t, first.String(), "event -1")
	assert.Contains(t, first.String(), "3/20 from the start")
	start := inevitable.Point{Seq: -1, Doomed: 1, Tries: 20}
	assert.Equal(t, "before the first event (20/20 reseeded runs fail)", start.String())
}
