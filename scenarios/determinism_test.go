package scenarios

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

func mustRun(t testing.TB, cfg Config) Result {
	t.Helper()
	res, err := Run(cfg)
	require.NoError(t, err)
	return res
}

// Every scenario, 200 seeds, twice: the fingerprints must match, under two
// GOMAXPROCS settings. Different seeds must give different runs.
func TestDeterminism_EveryScenarioTwice(t *testing.T) {
	for _, sc := range All() {
		t.Run(sc.Name, func(t *testing.T) {
			for _, preset := range []string{model.PresetReported, model.PresetFixed} {
				prof := model.MustProfile(preset, nil, nil)
				seen := map[uint64]uint64{}
				for seed := uint64(1); seed <= 200; seed++ {
					prev := runtime.GOMAXPROCS(1)
					a := mustRun(t, Config{Scenario: sc.Name, Seed: seed, Profile: prof})
					runtime.GOMAXPROCS(4)
					b := mustRun(t, Config{Scenario: sc.Name, Seed: seed, Profile: prof})
					runtime.GOMAXPROCS(prev)
					require.Equal(t, a.Fingerprint, b.Fingerprint, "%s seed %d (%s) is not deterministic", sc.Name, seed, preset)
					require.Equal(t, a.Events, b.Events)
					if other, dup := seen[a.Fingerprint]; dup {
						t.Fatalf("seeds %d and %d gave the same run", other, seed)
					}
					seen[a.Fingerprint] = seed
				}
			}
		})
	}
}

// A recorded tape replays the same run as its seed, and the kept trace
// hashes to the fingerprint.
func TestDeterminism_TapeReplaysSeed(t *testing.T) {
	for _, sc := range All() {
		for seed := uint64(1); seed <= 20; seed++ {
			prof := model.MustProfile(model.PresetReported, nil, nil)
			rec := mustRun(t, Config{Scenario: sc.Name, Seed: seed, Profile: prof, RecordTape: true, KeepTrace: true})
			require.NotEmpty(t, rec.Tape)
			rep := mustRun(t, Config{Scenario: sc.Name, Seed: seed, Profile: prof, Tape: rec.Tape, KeepTrace: true})
			require.Equal(t, rec.Fingerprint, rep.Fingerprint, "%s seed %d", sc.Name, seed)
			var buf []byte
			for i := range rep.Trace {
				buf = sim.AppendCanonical(buf, &rep.Trace[i])
			}
			want, err := sim.HashCanonical(buf)
			require.NoError(t, err)
			assert.Equal(t, want, rep.Fingerprint)
		}
	}
}

func TestRun_UnknownScenario(t *testing.T) {
	_, err := Run(Config{Scenario: "no-such"})
	assert.ErrorContains(t, err, `unknown scenario "no-such"`)
}

// The other strategies replay too: PCT's same-instant priorities are draws
// like any other (a single run under branch is a commit run; its
// campaign's determinism is TestBranch_CampaignIsDeterministic's).
func TestDeterminism_EveryStrategy(t *testing.T) {
	prof := model.MustProfile(model.PresetReported, nil, nil)
	for _, sc := range All() {
		for _, st := range []Strategy{Random, PCT, Commit, Branch} {
			for seed := uint64(1); seed <= 30; seed++ {
				prev := runtime.GOMAXPROCS(1)
				a := mustRun(t, Config{Scenario: sc.Name, Seed: seed, Profile: prof, Strategy: st, RecordTape: true})
				runtime.GOMAXPROCS(4)
				b := mustRun(t, Config{Scenario: sc.Name, Seed: seed, Profile: prof, Strategy: st})
				runtime.GOMAXPROCS(prev)
				require.Equal(t, a.Fingerprint, b.Fingerprint, "%s %s seed %d, GOMAXPROCS 1 and 4", sc.Name, st, seed)
				c := mustRun(t, Config{Scenario: sc.Name, Seed: seed, Profile: prof, Strategy: st, Tape: a.Tape})
				require.Equal(t, a.Fingerprint, c.Fingerprint, "%s %s seed %d replayed from its tape", sc.Name, st, seed)
			}
		}
	}
}
