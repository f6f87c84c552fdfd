package scenarios

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/orchestrator"
	"github.com/orchsim/orchsim/sim"
)

// The commit strategy places faults at declared commit points, at most
// MaxCommitFaults per point and run, each traced as fault commit-point
// NAME and followed, at the same instant, by the fault the point declares
// (a server crash, a renderer reload); the other strategies never do.
// Every declared point is reached and faulted in these seeds.
func TestCommit_FaultsLandAtCommitPoints(t *testing.T) {
	prof := model.MustProfile(model.PresetFixed, nil, nil)
	declared := map[string]model.CommitPointInfo{}
	for _, c := range model.CommitPoints() {
		declared[c.Name] = c
	}
	placed := map[string]int{}
	for _, sc := range []string{RequestRetry, TabOwnership, TerminalRemount} {
		for seed := uint64(1); seed <= 40; seed++ {
			for _, st := range []Strategy{Swarm, Commit} {
				res := mustRun(t, Config{Scenario: sc, Seed: seed, Profile: prof, Strategy: st, KeepTrace: true})
				n := map[string]int{}
				for i, ev := range res.Trace {
					if ev.Actor != "fault" || ev.Kind != "commit-point" {
						continue
					}
					require.Equal(t, Commit, st, "%s seed %d: a commit-point fault under %s", sc, seed, st)
					c, ok := declared[ev.Outcome]
					require.True(t, ok, "undeclared commit point %q", ev.Outcome)
					n[c.Name]++
					placed[c.Name]++
					j := slices.IndexFunc(res.Trace[i+1:], func(e sim.Event) bool { return e.Kind == c.Fault })
					require.GreaterOrEqual(t, j, 0, "%s seed %d: no %s after commit point %s", sc, seed, c.Fault, c.Name)
					next := res.Trace[i+1+j]
					assert.Equal(t, ev.At, next.At, "%s seed %d: %s at another instant than %s", sc, seed, c.Fault, c.Name)
					if c.Fault == "server-restart" {
						assert.Equal(t, "crash", next.Outcome)
					}
				}
				for name, k := range n {
					assert.LessOrEqual(t, k, MaxCommitFaults, "%s seed %d: point %s", sc, seed, name)
				}
			}
		}
	}
	for name := range declared {
		assert.Positive(t, placed[name], "no fault placed at commit point %s in 40 seeds of request-retry, tab-ownership and terminal-remount", name)
	}
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
