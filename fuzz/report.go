package fuzz

import (
	"fmt"
	"sort"

	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/scenarios"
)

// Report is a campaign's machine-readable summary (fuzz --json). Scenarios
// to ShrinkBudgetMs name the campaign (everything its results depend on
// but the shard index): Merge merges only shards that agree on all of
// them (CampaignFields).
type Report struct {
	Scenarios []string `json:"scenarios"`
	// HorizonMs are the scenarios' horizons in virtual ms, in order.
	HorizonMs []int64 `json:"horizon_ms"`
	// Profile is model.Profile.String() (fixed~name for --unfix).
	Profile string `json:"profile"`
	// Unfix lists the fixes --unfix turned off (the profile also names
	// them: fixed~name).
	Unfix    []string `json:"unfix,omitempty"`
	Strategy string   `json:"strategy"`
	// Start is the first seed, Seeds the seeds per scenario before
	// sharding (0 for a --budget campaign, BudgetMs its wall-clock ms).
	Start          uint64 `json:"start"`
	Seeds          uint64 `json:"seeds"`
	BudgetMs       int64  `json:"budget_ms"`
	ShrinkRuns     int    `json:"shrink_runs"`
	ShrinkBudgetMs int64  `json:"shrink_budget_ms"`

	// Shard is "i/n" (a merged report: "k of n shards").
	Shard    string `json:"shard"`
	SeedsRun uint64 `json:"seeds_run"`
	// BranchRuns is how many of SeedsRun were branch continuations
	// (strategy branch); the others were roots.
	BranchRuns  uint64        `json:"branch_runs"`
	Failures    int           `json:"failures"`
	Interrupted bool          `json:"interrupted"`
	ElapsedMs   int64         `json:"elapsed_ms"`
	Invariants  []ReportRow   `json:"invariants"`
	Probes      []ReportProbe `json:"probes"`
	Stories     []ReportStory `json:"stories"`
	FailedSeeds []FailedSeed  `json:"failed_seeds"`
	// Determinism is the determinism check's result (fuzz
	// --check-determinism; absent without it).
	Determinism *Determinism `json:"determinism,omitempty"`
	// KeepGoing: every seed ran past its first violation
	// (Campaign.KeepGoing), and Later lists the signature groups of the
	// later violations that do not follow from an earlier one.
	KeepGoing bool          `json:"keep_going"`
	Later     []ReportLater `json:"later_violations"`
	// Groups are the failures grouped by root cause (TriageGroups): one
	// per (invariant, minimal set of fix switches), new ones first.
	Groups []TriageGroup `json:"groups"`
	// Baseline names the --baseline file the groups were judged against
	// (absent without one); BaselineUnseen lists the groups it has that
	// the campaign did not find.
	Baseline       string          `json:"baseline,omitempty"`
	BaselineUnseen []BaselineGroup `json:"baseline_unseen,omitempty"`
}

// ReportLater is a LaterGroup: the later violations of one signature in
// one scenario, their lowest seed and count, and that seed's triage key.
type ReportLater struct {
	Scenario  string   `json:"scenario"`
	Invariant string   `json:"invariant"`
	Signature string   `json:"signature"`
	Seed      uint64   `json:"seed"`
	Count     int      `json:"count"`
	Switches  []string `json:"switches"`
	// ReplayFile is the first seed's keep-going replay file, with --corpus
	// (LaterGroup.ReplayFile: shrunk toward this invariant when its
	// root-cause group has no story).
	ReplayFile string `json:"replay_file,omitempty"`
	// Shrunk: the file was shrunk toward this invariant; Actions are then
	// its story actions up to its violation (0 is a story with none).
	Shrunk  bool `json:"shrunk,omitempty"`
	Actions int  `json:"actions,omitempty"`
	// Alone reports that the shrunk file breaks this invariant first.
	Alone bool `json:"alone,omitempty"`
}

// ReportRow is one (scenario, invariant) row of a report's table.
type ReportRow struct {
	Scenario  string `json:"scenario"`
	Invariant string `json:"invariant"`
	Kind      string `json:"kind"` // safety or liveness
	Failures  int    `json:"failures"`
	FirstSeed uint64 `json:"first_seed"`
	Stories   int    `json:"stories"`
}

// ReportProbe is a coverage probe's hit count.
type ReportProbe struct {
	Name string `json:"name"`
	Hits int    `json:"hits"`
}

// ReportStory is a Story: a distinct failure, its shrunk timeline and the
// signature groups it tells.
type ReportStory struct {
	Scenario    string   `json:"scenario"`
	Invariant   string   `json:"invariant"`
	Seed        uint64   `json:"seed"`
	Count       int      `json:"count"`
	Actions     int      `json:"actions"`
	Fingerprint string   `json:"story_fingerprint"`
	ReplayFile  string   `json:"replay_file,omitempty"`
	Timeline    []string `json:"timeline"`
	// Groups are the signature groups told by this story (Group).
	Groups []ReportGroup `json:"groups"`
}

// ReportGroup is a Group: the failures of one signature, their lowest
// seed and count, and for a group other than its story's first, the
// shrunk story of its own seed.
type ReportGroup struct {
	Signature string   `json:"signature"`
	Seed      uint64   `json:"seed"`
	Count     int      `json:"count"`
	Actions   int      `json:"actions,omitempty"`
	Timeline  []string `json:"timeline,omitempty"`
	// Switches are the group's triage key: the minimal set of fix switches
	// that makes its first seed's shrunk run pass (Group.Key), empty when
	// none does (a new bug); absent in a summary written before triage.
	Switches []string `json:"switches"`
}

// FailedSeed is one failing seed of a report.
type FailedSeed struct {
	Scenario  string `json:"scenario"`
	Seed      uint64 `json:"seed"`
	Invariant string `json:"invariant"`
	// Branch is set for a branch of the branch strategy: the root seed it
	// continues and the event it branched at (orchsim run --strategy
	// branch --branch ROOT:AT --seed SEED reproduces it).
	Branch *scenarios.BranchFrom `json:"branch,omitempty"`
}

// Report is the summary of campaign c's results sum, with the fields that
// name the campaign. It fails only for a scenario c does not know.
func (c *Campaign) Report(sum *Summary) (Report, error) {
	r := Results(c.Scenarios, sum)
	r.HorizonMs, r.Profile, r.Unfix, r.Strategy = []int64{}, c.Profile.String(), c.Profile.Unfixed(), string(c.Strategy)
	r.Start, r.Seeds, r.BudgetMs = c.Start, c.Seeds, c.Budget.Milliseconds()
	r.ShrinkRuns, r.ShrinkBudgetMs = c.ShrinkRuns, c.ShrinkBudget.Milliseconds()
	r.Shard = fmt.Sprintf("%d/%d", c.Shard, c.Shards)
	r.KeepGoing = c.KeepGoing
	for _, name := range c.Scenarios {
		sc, err := scenarios.Lookup(name)
		if err != nil {
			return Report{}, err
		}
		r.HorizonMs = append(r.HorizonMs, sc.Horizon.Milliseconds())
	}
	return r, nil
}

// Results is what a campaign of the scenarios names found, in the shape
// of its Report (the fields that name the campaign left for the caller):
// a row per (scenario, invariant) sorted by both, with its failures, first
// seed and stories; the probes' hits; the stories; the failing seeds.
func Results(names []string, sum *Summary) Report {
	r := Report{Scenarios: names, SeedsRun: sum.SeedsRun, BranchRuns: sum.BranchRuns, Failures: len(sum.Failures),
		Interrupted: sum.Interrupted, ElapsedMs: sum.Elapsed.Milliseconds(),
		Invariants: []ReportRow{}, Stories: []ReportStory{}, FailedSeeds: []FailedSeed{}, Probes: []ReportProbe{},
		Determinism: sum.Determinism}
	for i, p := range invariants.Probes {
		if i < len(sum.Probes) {
			r.Probes = append(r.Probes, ReportProbe{p.Name, sum.Probes[i]})
		}
	}
	r.Invariants = rows(sum)
	for _, st := range sum.Stories {
		rst := ReportStory{st.Scenario, st.Invariant, st.Seed, st.Count, st.Actions, st.Fingerprint, st.ReplayFile, st.Timeline, []ReportGroup{}}
		for _, g := range st.Groups {
			rst.Groups = append(rst.Groups, ReportGroup{g.Signature, g.Seed, g.Count, g.Actions, g.Timeline, g.Key.Switches})
		}
		r.Stories = append(r.Stories, rst)
	}
	for _, f := range sum.Failures {
		r.FailedSeeds = append(r.FailedSeeds, FailedSeed{f.Scenario, f.Seed, f.Invariant, f.Branch})
	}
	r.Later = []ReportLater{}
	for _, g := range sum.Later {
		r.Later = append(r.Later, ReportLater{g.Scenario, g.Invariant, g.Signature, g.Seed, g.Count, g.Key.Switches, g.ReplayFile,
			g.Shrunk, g.Actions, g.Alone})
	}
	sort.Slice(r.Later, func(i, j int) bool {
		a, b := r.Later[i], r.Later[j]
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		if a.Seed != b.Seed {
			return a.Seed < b.Seed
		}
		return a.Signature < b.Signature
	})
	r.Groups = TriageGroups(r.Stories, r.Later)
	if sum.Baseline != nil {
		r.Baseline, r.BaselineUnseen = sum.BaselineName, sum.Baseline.Apply(r.Groups)
	}
	return r
}

// rows is the table of sum: per (scenario, invariant), sorted, the
// failures, the lowest failing seed and the stories.
func rows(sum *Summary) []ReportRow {
	idx := map[string]*ReportRow{}
	var rs []*ReportRow
	for _, f := range sum.Failures {
		k := f.Scenario + "\x00" + f.Invariant
		r := idx[k]
		if r == nil {
			r = &ReportRow{Scenario: f.Scenario, Invariant: f.Invariant, Kind: invariants.KindOf(f.Invariant), FirstSeed: f.Seed}
			idx[k] = r
			rs = append(rs, r)
		}
		r.Failures++
		r.FirstSeed = min(r.FirstSeed, f.Seed)
	}
	for _, st := range sum.Stories {
		if r := idx[st.Scenario+"\x00"+st.Invariant]; r != nil {
			r.Stories++
		}
	}
	out := make([]ReportRow, 0, len(rs))
	for _, r := range rs {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Scenario != out[j].Scenario {
			return out[i].Scenario < out[j].Scenario
		}
		return out[i].Invariant < out[j].Invariant
	})
	return out
}
