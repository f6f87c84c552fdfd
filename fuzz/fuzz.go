// Package fuzz runs seed campaigns: many seeds of one or more scenarios in
// parallel workers (each worker owns its runs; every run stays
// single-threaded and deterministic), with sharding across machines,
// deduplication of failures by story, shrinking under a time budget and one
// replay file per distinct failure.
package fuzz

import (
	"context"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/shrink"
	"github.com/orchsim/orchsim/sim"
	"github.com/orchsim/orchsim/triage"
)

// Campaign describes a fuzz campaign.
type Campaign struct {
	Scenarios []string
	Profile   model.Profile
	Strategy  scenarios.Strategy
	// Start is the first seed; Seeds the number of seeds per scenario
	// (before sharding), so a campaign of k scenarios makes k*Seeds runs.
	// With Seeds == 0 the campaign runs until Budget of wall time.
	Start, Seeds uint64
	Budget       time.Duration
	// Shard and Shards split the seed range: this campaign runs the seeds
	// whose offset from Start is Shard modulo Shards.
	Shard, Shards uint64
	Workers       int
	// ShrinkRuns bounds shrinking each distinct failure by candidate runs
	// (0: no shrinking). A bound in runs, not time, makes a campaign's
	// stories and replay files the same on every machine.
	ShrinkRuns int
	// ShrinkBudget is a wall-clock safety cap on each shrink (0: none);
	// when it cuts a shrink short, the result may depend on the machine.
	ShrinkBudget time.Duration
	// Corpus, when set, is the directory replay files are written to.
	Corpus string
	// CheckPercent, 0 to 100, re-runs that percent of the seeds after the
	// campaign (Rechecked chooses them from Start) on another worker, with
	// the other GOMAXPROCS setting, and compares fingerprints: the summary's
	// Determinism (nil when 0). The check sets GOMAXPROCS for the process
	// while it runs and restores it.
	CheckPercent int
	// KeepGoing runs every seed past its first violation
	// (scenarios.Config.KeepGoing), so that one seed can feed several
	// groups: each later violation that does not follow from an earlier
	// one (Failure.Later) is grouped by signature and keyed too.
	KeepGoing bool
	// Baseline, when set, judges the groups (Baseline.Apply): a group it
	// does not list is new. BaselineName names it in the summary.
	Baseline     *Baseline
	BaselineName string
	// Progress is called after every finished seed (from one goroutine at
	// a time).
	Progress func(done uint64, failures int)
}

// Failure is one failing seed.
type Failure struct {
	Scenario string
	Seed     uint64
	// Branch is set when the failing run is a branch of the branch
	// strategy: Seed is the branch's own seed, Branch the run it continues.
	Branch    *scenarios.BranchFrom
	Invariant string
	Message   string
	At        time.Duration
	// Signature groups failures that tell the same story before shrinking
	// (the violation message with ids, times and counts blanked).
	Signature string
	// Later are the violations of other invariants after the first, in
	// a keep-going campaign (Campaign.KeepGoing).
	Later []LaterFailure
}

// LaterFailure is a violation after a seed's first (keep-going).
type LaterFailure struct {
	Invariant, Message string
	At                 time.Duration
	Signature          string
	// Follows names the earlier violation's invariant it follows from
	// (scenarios.FollowsFrom): then it is not grouped on its own.
	Follows string
}

// LaterGroup is the later violations (LaterFailure, not following from
// an earlier one) of one scenario that share a signature: their lowest
// seed, how many, and the triage key of that seed's keep-going run.
type LaterGroup struct {
	Scenario, Invariant, Signature string
	Seed                           uint64
	// Branch is the first seed's branch (Failure.Branch).
	Branch *scenarios.BranchFrom
	Count  int
	Key    triage.Key
	// ReplayFile is the first seed's keep-going run written to the corpus
	// (Campaign.Corpus; "" without one): it records the seed's first
	// violation, of another invariant, and replays on to this one. For the
	// first later group of a root-cause group that has no story (its bug
	// was never a seed's first violation), the run is shrunk toward this
	// invariant first (shrink.Shrink with a later target, ShrinkRuns
	// runs): then the file is that minimal run, a plain one when Alone.
	ReplayFile string
	// Shrunk reports that ReplayFile's run was shrunk toward this
	// invariant; Actions are then its story actions up to its violation.
	Shrunk  bool
	Actions int
	// Alone reports that the shrunk run breaks this invariant first
	// (other bugs' fixes turned on as needed; see its file's fixes).
	Alone bool
}

// Story is a distinct failure: its first seed, how many seeds failed the
// same way, and its shrunk replay.
type Story struct {
	Scenario    string
	Invariant   string
	Seed        uint64
	Count       int
	Fingerprint string // of the shrunk story's actions
	Actions     int
	Timeline    []string
	ReplayFile  string
	Replay      *replay.File
	// Groups are the signature groups whose first seeds shrank to this
	// story, by first seed; Groups[0] is the story's own (its Seed).
	Groups []Group
}

// Group is the failures of one scenario that share a signature: their
// first (lowest) seed, the one shrunk, and how many seeds failed so.
//
// A campaign's stories depend only on its groups, so the shards of a
// campaign can be merged into exactly the unsharded stories: per
// signature keep the lowest seed's group and add the counts, then tell
// each story by its lowest group. For that, a group other than its
// story's first keeps its own shrunk story's Actions and Timeline (in a
// shard, its seed may be the lowest of the whole campaign); no replay file
// is written for it.
type Group struct {
	Signature string
	Seed      uint64
	Count     int
	// Actions and Timeline are the shrunk story of Seed when the group is
	// not its story's first (empty otherwise: the story's own).
	Actions  int
	Timeline []string
	// Key is the group's triage key: its invariant and the minimal set of
	// fix switches that makes its first seed's (shrunk) run pass
	// (triage.MinimalFixes; no switch: a new bug).
	Key triage.Key
}

// Summary is what a campaign found.
type Summary struct {
	SeedsRun uint64
	// BranchRuns counts the runs of SeedsRun that were continuations of
	// the branch strategy (the rest are its roots); 0 for other strategies.
	BranchRuns  uint64
	Failures    []Failure
	Stories     []*Story
	Interrupted bool
	// Exhausted is set when a --budget campaign ran every seed up to the
	// largest, 2^64-1, before its budget was spent.
	Exhausted bool
	Elapsed   time.Duration
	// Probes are the campaign's hit counts of invariants.Probes, in order.
	Probes []int
	// Seeds lists every (scenario, seed) run, sorted, when RecordSeeds is set.
	Seeds []string
	// Determinism is the determinism check's result (Campaign.CheckPercent).
	Determinism *Determinism
	// TriageRuns counts the runs triage.MinimalFixes made to key the
	// signature groups.
	TriageRuns int
	// Later are the signature groups of later violations, by scenario
	// and first seed (keep-going campaigns).
	Later []LaterGroup
	// Baseline and BaselineName are the campaign's (Campaign.Baseline).
	Baseline     *Baseline
	BaselineName string
}

// ShardCount returns how many of n seeds a shard runs.
func ShardCount(n, shard, shards uint64) uint64 {
	if shards == 0 {
		shards = 1
	}
	if shard >= n {
		return 0
	}
	return (n - shard + shards - 1) / shards
}

// ShardSeeds returns the seeds a shard runs out of start..start+n-1 (for
// tests and small ranges; campaigns iterate without building the list).
func ShardSeeds(start, n, shard, shards uint64) []uint64 {
	if shards == 0 {
		shards = 1
	}
	var out []uint64
	for off := shard; off < n; off += shards {
		out = append(out, start+off)
	}
	return out
}

type job struct {
	scenario string
	seed     uint64
	// branch is set for a branch of the branch strategy
	// (scenarios.Brancher): seed is then the branch's own.
	branch *scenarios.BranchFrom
	// index and batchSize place a branch campaign's run in its batch;
	// record keeps its tape (a root, for its branches).
	index, batchSize int
	record           bool
}

// Run executes the campaign until its seeds are done, its budget is spent
// or ctx is cancelled (then running seeds finish and no new one starts).
// recordSeeds lists every seed run in the summary (for tests of sharding).
func (c *Campaign) Run(ctx context.Context, recordSeeds bool) (*Summary, error) {
	if c.Workers < 1 {
		c.Workers = 1
	}
	if c.Shards == 0 {
		c.Shards = 1
	}
	if c.Shard >= c.Shards {
		return nil, fmt.Errorf("shard %d/%d: index must be below the count", c.Shard, c.Shards)
	}
	if c.Seeds > 0 && c.Start > ^uint64(0)-(c.Seeds-1) {
		return nil, fmt.Errorf("start %d with %d seeds runs past the largest seed, %d", c.Start, c.Seeds, ^uint64(0))
	}
	for _, s := range c.Scenarios {
		if _, err := scenarios.Lookup(s); err != nil {
			return nil, err
		}
	}
	// No more workers than runs: each idle one would only hold a goroutine.
	workers := c.Workers
	if per := ShardCount(c.Seeds, c.Shard, c.Shards); c.Seeds > 0 && per < uint64(workers) {
		workers = max(1, min(workers, int(per)*len(c.Scenarios)))
	}
	start := time.Now()
	jobs := make(chan job)
	results := make(chan result)
	var exhausted atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r := c.runOne(j)
				r.worker = w
				results <- r
			}
		}()
	}
	// Feed seeds in order; stop on cancel or budget. The branch strategy
	// feeds its campaign's batches instead (feedBranches).
	var batchDone chan []result
	if c.Strategy == scenarios.Branch {
		batchDone = make(chan []result)
	}
	go func() {
		defer close(jobs)
		if batchDone != nil {
			c.feedBranches(ctx, start, jobs, batchDone)
			return
		}
		feed := func(seed uint64) bool {
			for _, s := range c.Scenarios {
				select {
				case <-ctx.Done():
					return false
				case jobs <- job{scenario: s, seed: seed}:
				}
			}
			return true
		}
		// The offsets to run: below Seeds, or for a --budget campaign up
		// to the largest seed (2^64-1), where the campaign ends: seeds do
		// not wrap around to 0.
		end := c.Seeds - 1
		if c.Seeds == 0 {
			end = ^uint64(0) - c.Start
		}
		for off := c.Shard; off <= end; off += c.Shards {
			if c.Seeds == 0 && time.Since(start) >= c.Budget || !feed(c.Start+off) {
				return
			}
			if end-off < c.Shards {
				break // the next offset is past the end (off+Shards may wrap)
			}
		}
		exhausted.Store(c.Seeds == 0)
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	sum := &Summary{}
	var recheck []ran
	var batch []result
	for r := range results {
		if batchDone == nil {
			c.take(sum, r, recordSeeds, &recheck)
			continue
		}
		// A branch campaign's batch is taken whole, in the order it was
		// fed, and handed back before the next one is fed.
		batch = append(batch, r)
		if len(batch) < r.batchSize {
			continue
		}
		sort.Slice(batch, func(i, j int) bool { return batch[i].index < batch[j].index })
		for _, r := range batch {
			c.take(sum, r, recordSeeds, &recheck)
		}
		batchDone <- batch
		batch = nil
	}
	if batchDone != nil {
		// A batch cut short by a cancel.
		sort.Slice(batch, func(i, j int) bool { return batch[i].index < batch[j].index })
		for _, r := range batch {
			c.take(sum, r, recordSeeds, &recheck)
		}
	}
	sum.Interrupted = ctx.Err() != nil
	sum.Exhausted = exhausted.Load()
	sort.Slice(sum.Failures, func(i, j int) bool {
		a, b := sum.Failures[i], sum.Failures[j]
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		return a.Seed < b.Seed
	})
	sort.Strings(sum.Seeds)
	if c.CheckPercent > 0 {
		sort.Slice(recheck, func(i, j int) bool {
			a, b := recheck[i], recheck[j]
			if a.scenario != b.scenario {
				return a.scenario < b.scenario
			}
			return a.seed < b.seed
		})
		sum.Determinism = c.recheck(ctx, recheck, workers)
	}
	sum.Baseline, sum.BaselineName = c.Baseline, c.BaselineName
	if err := c.stories(ctx, sum, start); err != nil {
		return sum, err
	}
	sum.Elapsed = time.Since(start)
	return sum, nil
}

// take adds one finished run to the summary.
func (c *Campaign) take(sum *Summary, r result, recordSeeds bool, recheck *[]ran) {
	sum.SeedsRun++
	if r.branch != nil {
		sum.BranchRuns++
	}
	if Rechecked(c.Start, r.scenario, r.seed, c.CheckPercent) {
		*recheck = append(*recheck, ran{r.job, r.worker, r.fingerprint})
	}
	if recordSeeds {
		sum.Seeds = append(sum.Seeds, fmt.Sprintf("%s/%d", r.scenario, r.seed))
	}
	if r.failure != nil {
		sum.Failures = append(sum.Failures, *r.failure)
	}
	if sum.Probes == nil {
		sum.Probes = make([]int, len(r.probes))
	}
	for i, n := range r.probes {
		sum.Probes[i] += n
	}
	if c.Progress != nil {
		c.Progress(sum.SeedsRun, len(sum.Failures))
	}
}

// feedBranches feeds the runs of a branch campaign (scenarios.Brancher):
// one Brancher per scenario, its roots the shard's seeds (Start+Shard,
// step Shards), a batch of every scenario at a time. Each batch's results
// come back on done, in feed order, and are taught to their Brancher
// before the next batch is fed, so the campaign is the same for any
// number of workers. Seeds bounds each scenario's runs, roots and
// branches alike; without it the campaign runs until its budget is spent
// or ctx is cancelled.
func (c *Campaign) feedBranches(ctx context.Context, start time.Time, jobs chan<- job, done <-chan []result) {
	branchers := make([]*scenarios.Brancher, len(c.Scenarios))
	runs := make([]uint64, len(c.Scenarios))
	for i, sc := range c.Scenarios {
		branchers[i] = &scenarios.Brancher{Base: scenarios.Config{Scenario: sc, Profile: c.Profile, Strategy: c.Strategy,
			KeepGoing: c.KeepGoing}, Start: c.Start + c.Shard, Step: c.Shards}
	}
	per := ShardCount(c.Seeds, c.Shard, c.Shards)
	for {
		if c.Seeds == 0 && time.Since(start) >= c.Budget {
			return
		}
		var fed []job
		var from []int
		cfgs := make([][]scenarios.Config, len(branchers))
		for i, b := range branchers {
			if c.Seeds > 0 && runs[i] >= per {
				continue
			}
			batch := b.Next()
			if c.Seeds > 0 && uint64(len(batch)) > per-runs[i] {
				batch = batch[:per-runs[i]]
			}
			runs[i] += uint64(len(batch))
			cfgs[i] = batch
			for _, cfg := range batch {
				fed = append(fed, job{scenario: cfg.Scenario, seed: cfg.Seed, branch: cfg.Branch, record: cfg.RecordTape})
				from = append(from, i)
			}
		}
		if len(fed) == 0 {
			return
		}
		for k, j := range fed {
			j.index, j.batchSize = k, len(fed)
			select {
			case <-ctx.Done():
				return
			case jobs <- j:
			}
		}
		batch := <-done
		for i, b := range branchers {
			if cfgs[i] == nil {
				continue
			}
			var results []scenarios.Result
			for k, r := range batch {
				if from[k] == i {
					results = append(results, r.res)
				}
			}
			b.Done(cfgs[i], results)
		}
	}
}

type result struct {
	job
	failure *Failure
	// res is the run's result (the branch strategy reads its states).
	res         scenarios.Result
	probes      []int
	worker      int
	fingerprint uint64
}

func (c *Campaign) runOne(j job) result {
	res, err := scenarios.Run(c.config(j, false))
	r := result{job: j, probes: res.Probes, fingerprint: res.Fingerprint, res: res}
	if err != nil {
		r.failure = &Failure{Scenario: j.scenario, Seed: j.seed, Branch: j.branch, Invariant: "harness-error", Message: err.Error()}
		return r
	}
	if v := res.Violation; v != nil {
		r.failure = &Failure{Scenario: j.scenario, Seed: j.seed, Branch: j.branch, Invariant: v.Invariant, Message: v.Message, At: v.At,
			Signature: Signature(v.Invariant, v.Message)}
		for _, l := range res.Later {
			r.failure.Later = append(r.failure.Later, LaterFailure{Invariant: l.Invariant, Message: l.Message, At: l.At,
				Signature: Signature(l.Invariant, l.Message), Follows: l.Follows})
		}
	}
	return r
}

var (
	quoted  = regexp.MustCompile(`"[^"]*"`)
	idLike  = regexp.MustCompile(`[A-Za-z0-9_:%.@/#-]*[0-9][A-Za-z0-9_:%.@/#-]*`)
	threads = regexp.MustCompile(`thread-[a-z]`)
)

// Signature blanks the ids, times and keys of a violation message, so that
// failures telling the same story (same invariant, same tool, same
// re-issue path) share it.
func Signature(invariant, message string) string {
	m := quoted.ReplaceAllString(message, `"_"`)
	m = threads.ReplaceAllString(m, "T")
	m = idLike.ReplaceAllString(m, "_")
	return invariant + ": " + m
}

// stories groups failures by signature, shrinks the first seed of each
// group (within ShrinkRuns; not once a --budget campaign is out of time),
// dedups the shrunk stories by (scenario, invariant, story fingerprint) and
// writes one replay file per story.
func (c *Campaign) stories(ctx context.Context, sum *Summary, start time.Time) error {
	type group struct {
		first *Failure
		count int
	}
	var order []string
	groups := map[string]*group{}
	for i := range sum.Failures {
		f := &sum.Failures[i]
		key := f.Scenario + "\x00" + f.Signature
		g := groups[key]
		if g == nil {
			g = &group{first: f}
			groups[key] = g
			order = append(order, key)
		}
		g.count++
	}
	byStory := map[string]*Story{}
	for _, key := range order {
		g := groups[key]
		f := g.first
		cfg := scenarios.Config{Scenario: f.Scenario, Seed: f.Seed, Branch: f.Branch, Profile: c.Profile, Strategy: c.Strategy,
			KeepTrace: true, RecordTape: true}
		var res scenarios.Result
		overBudget := c.Seeds == 0 && c.Budget > 0 && time.Since(start) >= c.Budget
		if c.ShrinkRuns > 0 && ctx.Err() == nil && !overBudget && f.Invariant != "harness-error" {
			budget := c.ShrinkBudget
			if budget <= 0 {
				budget = 24 * time.Hour
			}
			small, r, _, ok := shrink.Shrink(cfg, f.Invariant, shrink.Options{Budget: budget, MaxRuns: c.ShrinkRuns})
			if ok {
				cfg, res = small, r
			}
		}
		if res.Trace == nil {
			var err error
			if res, err = scenarios.Run(cfg); err != nil {
				return err
			}
		}
		key, runs, err := c.triageKey(cfg, f.Invariant)
		if err != nil {
			return err
		}
		sum.TriageRuns += runs
		fp := StoryFingerprint(res.Trace)
		id := f.Scenario + "\x00" + f.Invariant + "\x00" + fp
		if st := byStory[id]; st != nil {
			st.Count += g.count
			st.Groups = append(st.Groups, Group{Signature: f.Signature, Seed: f.Seed, Count: g.count,
				Actions: shrink.Actions(res.Trace), Timeline: timeline(res.Trace), Key: key})
			continue
		}
		st := &Story{Scenario: f.Scenario, Invariant: f.Invariant, Seed: f.Seed, Count: g.count, Fingerprint: fp,
			Actions: shrink.Actions(res.Trace), Timeline: timeline(res.Trace),
			Groups: []Group{{Signature: f.Signature, Seed: f.Seed, Count: g.count, Key: key}}}
		st.Replay = ReplayFile(cfg, &res)
		if c.Corpus != "" {
			st.ReplayFile = filepath.Join(c.Corpus, fmt.Sprintf("%s-%s-seed%d.json", f.Scenario, f.Invariant, f.Seed))
			if err := replay.Write(st.ReplayFile, st.Replay); err != nil {
				return fmt.Errorf("writing %s: %w", st.ReplayFile, err)
			}
		}
		byStory[id] = st
		sum.Stories = append(sum.Stories, st)
	}
	return c.laterGroups(ctx, sum, start)
}

// laterGroups groups the later violations that do not follow from an
// earlier one by (scenario, signature) and keys each group once, by its
// first seed's keep-going run. With a corpus, each group's replay file is
// that run; for the first group of each root-cause key that no story has
// (a bug only ever seen behind another), the run is shrunk toward the
// group's invariant first, so that bug gets a minimal file of its own.
func (c *Campaign) laterGroups(ctx context.Context, sum *Summary, start time.Time) error {
	at := map[string]int{}
	for _, f := range sum.Failures {
		for _, l := range f.Later {
			if l.Follows != "" {
				continue
			}
			k := f.Scenario + "\x00" + l.Signature
			if i, ok := at[k]; ok {
				sum.Later[i].Count++
				continue
			}
			at[k] = len(sum.Later)
			sum.Later = append(sum.Later, LaterGroup{Scenario: f.Scenario, Invariant: l.Invariant, Signature: l.Signature,
				Seed: f.Seed, Branch: f.Branch, Count: 1})
		}
	}
	told := sum.StoryKeys() // and, as they are shrunk, the later groups' keys
	for i := range sum.Later {
		g := &sum.Later[i]
		cfg := c.config(job{scenario: g.Scenario, seed: g.Seed, branch: g.Branch}, false)
		key, runs, err := c.triageKey(cfg, g.Invariant)
		if err != nil {
			return err
		}
		sum.TriageRuns += runs
		g.Key = key
		if c.Corpus == "" {
			continue
		}
		cfg.RecordTape = cfg.Branch != nil // a branch's file carries its tape
		var res scenarios.Result
		shrunk := false
		k := KeyString(g.Invariant, key.Switches)
		overBudget := c.Seeds == 0 && c.Budget > 0 && time.Since(start) >= c.Budget
		if !told[k] && c.ShrinkRuns > 0 && ctx.Err() == nil && !overBudget {
			told[k] = true
			budget := c.ShrinkBudget
			if budget <= 0 {
				budget = 24 * time.Hour
			}
			small, r, _, ok := shrink.Shrink(cfg, g.Invariant, shrink.Options{Budget: budget, MaxRuns: c.ShrinkRuns})
			if ok {
				cfg, res, shrunk = small, r, true
				g.Shrunk = true
				g.Actions = shrink.Actions(shrink.Until(r.Trace, g.Invariant))
				g.Alone = r.Violation.Invariant == g.Invariant
			}
		}
		if !shrunk {
			if res, err = scenarios.Run(cfg); err != nil {
				return err
			}
		}
		f := ReplayFile(cfg, &res)
		g.ReplayFile = filepath.Join(c.Corpus, fmt.Sprintf("%s-%s-seed%d-later.json", g.Scenario, g.Invariant, g.Seed))
		if err := replay.Write(g.ReplayFile, f); err != nil {
			return fmt.Errorf("writing %s: %w", g.ReplayFile, err)
		}
	}
	return nil
}

// triageKey keys a signature group by its first seed's run cfg (shrunk,
// when it was): triage.MinimalFixes, once per signature group, so a
// campaign of many failing seeds costs as many keys as it has groups. A
// harness error is new.
func (c *Campaign) triageKey(cfg scenarios.Config, inv string) (triage.Key, int, error) {
	if inv == "harness-error" {
		return triage.Key{Invariant: inv, Switches: []string{}}, 0, nil
	}
	return triage.MinimalFixes(cfg, inv)
}

// timeline describes a trace, one line per event.
func timeline(trace []sim.Event) []string {
	var out []string
	for i := range trace {
		out = append(out, trace[i].Describe())
	}
	return out
}

// ReplayFile builds the replay file of a run made from cfg. A cfg with a
// tape is a shrunk run (shrink.Shrink): its tape leaves out each site's
// trailing zero choices, and the file says so (compacted). Without one, the
// file re-draws the run from its seed. replay.Marshal adds the tape hash.
func ReplayFile(cfg scenarios.Config, res *scenarios.Result) *replay.File {
	var v *sim.Violation
	if res.Violation != nil {
		vv := *res.Violation
		v = &vv
	}
	spec := res.Profile.Spec()
	tape, compacted := cfg.Tape, cfg.Tape != nil
	if tape == nil && cfg.Branch != nil {
		// A branch is not its seed's run: the file carries its whole tape
		// (the root's prefix and the branch's own draws).
		tape = res.Tape
	}
	return &replay.File{Scenario: res.Scenario, Strategy: string(res.Strategy), Off: res.Off,
		Profile: spec.Preset, Fixes: spec.Fix, Unfix: spec.Unfix, Mutants: spec.Mutants,
		Seed: res.Seed, Horizon: replay.Duration(res.Horizon), Violation: v,
		Fingerprint: replay.FormatFingerprint(res.Fingerprint), Events: res.Events, Tape: tape,
		Compacted: compacted, KeepGoing: cfg.KeepGoing}
}

// StoryFingerprint hashes the story's actions (who did what, with what
// outcome), with thread names renamed in order of appearance, so that the
// same story with other ids and times has the same fingerprint.
func StoryFingerprint(trace []sim.Event) string {
	h := fnv.New64a()
	names := map[string]string{}
	norm := func(s string) string {
		return threads.ReplaceAllStringFunc(s, func(t string) string {
			if n, ok := names[t]; ok {
				return n
			}
			n := fmt.Sprintf("T%d", len(names)+1)
			names[t] = n
			return n
		})
	}
	for i := range trace {
		ev := &trace[i]
		if !shrink.IsAction(ev) && ev.Actor != "invariant" {
			continue
		}
		outcome := ev.Outcome
		if ev.Actor == "invariant" {
			outcome = ""
		}
		fmt.Fprintf(h, "%s|%s|%s\n", norm(ev.Actor), ev.Kind, strings.SplitN(outcome, " ", 2)[0])
	}
	return fmt.Sprintf("%016x", h.Sum64())
}
