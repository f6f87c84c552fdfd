package scenarios

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/orchestrator"
)

// The commit strategy places faults at declared commit points, at most
// MaxCommitFaults per run, each traced as fault commit-point NAME; the
// other strategies never do.
func TestCommit_FaultsLandAtCommitPoints(t *testing.T) {
	prof := model.MustProfile(model.PresetFixed, nil, nil)
	placed := 0
	for seed := uint64(1); seed <= 50; seed++ {
		for _, st := range []Strategy{Swarm, Commit} {
			res := mustRun(t, Config{Scenario: RequestRetry, Seed: seed, Profile: prof, Strategy: st, KeepTrace: true})
			n := 0
			for i, ev := range res.Trace {
				if ev.Actor != "fault" || ev.Kind != "commit-point" {
					continue
				}
				n++
				require.Equal(t, Commit, st, "seed %d: a commit-point fault under %s", seed, st)
				assert.True(t, slices.ContainsFunc(model.CommitPoints(), func(c model.CommitPointInfo) bool { return c.Name == ev.Outcome }))
				// The crash follows at the same instant.
				require.Less(t, i+1, len(res.Trace))
				next := res.Trace[i+1]
				assert.Equal(t, "server-restart", next.Kind, "seed %d", seed)
				assert.Equal(t, "crash", next.Outcome)
				assert.Equal(t, ev.At, next.At)
			}
			assert.LessOrEqual(t, n, MaxCommitFaults)
			placed += n
		}
	}
	assert.Positive(t, placed, "50 seeds placed no commit-point fault")
}

// A mutant that needs a crash between a command's effect and its receipt
// (receipt-write-behind) survives 300 seeds of random and swarm
// exploration; the commit strategy kills it at once. The fixed profile
// survives the same faults: a correct receipt outlives the crash.
func TestCommit_FindsTheCoincidence(t *testing.T) {
	mutant := model.MustProfile(model.PresetFixed, nil, []string{string(orchestrator.ReceiptWriteBehind)})
	for _, st := range []Strategy{Random, Swarm} {
		inv, seed := firstViolationUnder(t, RequestRetry, mutant, 300, st)
		assert.Empty(t, inv, "%s found it at seed %d", st, seed)
	}
	inv, seed := firstViolationUnder(t, RequestRetry, mutant, 20, Commit)
	assert.Equal(t, "one-effect-per-request", inv)
	assert.LessOrEqual(t, seed, uint64(5))
	fixed := model.MustProfile(model.PresetFixed, nil, nil)
	for _, sc := range All() {
		inv, seed := firstViolationUnder(t, sc.Name, fixed, 100, Commit)
		assert.Empty(t, inv, "fixed fails %s seed %d under commit", sc.Name, seed)
	}
}
