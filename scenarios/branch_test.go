package scenarios

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

// branchRun is one run of a branching campaign as the campaign saw it.
type branchRun struct {
	seed        uint64
	branch      BranchFrom
	fingerprint uint64
}

// branchCampaign runs batches batches of a Brancher over tab-ownership
// (fixed), each batch's runs on workers goroutines (1: in order), and
// returns every run in campaign order.
func branchCampaign(t *testing.T, batches, workers int) []branchRun {
	prof := model.MustProfile(model.PresetFixed, nil, nil)
	br := &Brancher{Base: Config{Scenario: TabOwnership, Profile: prof, Strategy: Branch}, Start: 1}
	var out []branchRun
	for i := 0; i < batches; i++ {
		batch := br.Next()
		results := make([]Result, len(batch))
		if workers == 1 {
			for k, cfg := range batch {
				results[k] = mustRun(t, cfg)
			}
		} else {
			var wg sync.WaitGroup
			sem := make(chan struct{}, workers)
			for k := len(batch) - 1; k >= 0; k-- { // started in reverse, finished in any order
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer wg.Done()
					res, err := Run(batch[k])
					if err == nil {
						results[k] = res
					}
					<-sem
				}()
			}
			wg.Wait()
		}
		for k, cfg := range batch {
			r := branchRun{seed: cfg.Seed, fingerprint: results[k].Fingerprint}
			if cfg.Branch != nil {
				r.branch = *cfg.Branch
			}
			out = append(out, r)
		}
		br.Done(batch, results)
	}
	return out
}

// A branching campaign is the same run for run, in the same order, for
// any number of workers and GOMAXPROCS, and it does branch: once it has
// run BranchRarity runs, roots that reach a rare state get BranchWidth
// branches each, which run before the next roots.
func TestBranch_CampaignIsDeterministic(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	a := branchCampaign(t, 12, 1)
	runtime.GOMAXPROCS(4)
	b := branchCampaign(t, 12, 3)
	runtime.GOMAXPROCS(prev)
	require.Equal(t, a, b)
	branches := 0
	for i, r := range a {
		if r.branch.Root == 0 {
			continue
		}
		branches++
		assert.GreaterOrEqual(t, i, BranchRarity, "no branch before the campaign has run BranchRarity runs")
	}
	assert.Positive(t, branches, "%d runs and no branch", len(a))
	assert.Zero(t, branches%BranchWidth, "branches come BranchWidth at a time")
}

// A branch replays its root through the event it branches at, draws
// afresh after it, and replays from its own recorded tape like any run.
func TestBranch_ReplaysItsRootsPrefix(t *testing.T) {
	runs := branchCampaign(t, 12, 1)
	prof := model.MustProfile(model.PresetFixed, nil, nil)
	checked := 0
	for _, r := range runs {
		if r.branch.Root == 0 || checked == 3 {
			continue
		}
		checked++
		from := r.branch
		root := mustRun(t, Config{Scenario: TabOwnership, Seed: from.Root, Profile: prof, Strategy: Branch, KeepTrace: true})
		br := mustRun(t, Config{Scenario: TabOwnership, Seed: r.seed, Branch: &from, Profile: prof, Strategy: Branch,
			KeepTrace: true, RecordTape: true})
		assert.Equal(t, r.fingerprint, br.Fingerprint)
		untaped := from
		untaped.Tape = nil // Run records the root's tape itself
		assert.Equal(t, br.Fingerprint, mustRun(t, Config{Scenario: TabOwnership, Seed: r.seed, Branch: &untaped, Profile: prof,
			Strategy: Branch}).Fingerprint)
		require.Greater(t, len(root.Trace), int(from.At))
		require.Greater(t, len(br.Trace), int(from.At))
		for i := 0; i <= int(from.At); i++ {
			require.Equal(t, canonical(root.Trace[i]), canonical(br.Trace[i]), "event %d of a branch at %d", i, from.At)
		}
		assert.NotEqual(t, root.Fingerprint, br.Fingerprint, "a branch at %d is its root again", from.At)
		again := mustRun(t, Config{Scenario: TabOwnership, Seed: r.seed, Profile: prof, Strategy: Branch, Tape: br.Tape})
		assert.Equal(t, br.Fingerprint, again.Fingerprint, "a branch replayed from its tape")
	}
	assert.Equal(t, 3, checked)
}

func canonical(ev sim.Event) string { return string(sim.AppendCanonical(nil, &ev)) }
