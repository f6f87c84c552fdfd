package fuzz

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/shrink"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestShardsPartitionTheSeedRange(t *testing.T) {
	base := Campaign{Scenarios: []string{scenarios.TabOwnership}, Profile: model.MustProfile(model.PresetFixed, nil, nil),
		Strategy: scenarios.Swarm, Start: 5, Seeds: 37, Workers: 2}
	whole, err := base.Run(context.Background(), true)
	require.NoError(t, err)
	require.Len(t, whole.Seeds, 37)
	var union []string
	for i := uint64(0); i < 4; i++ {
		c := base
		c.Shard, c.Shards = i, 4
		part, err := c.Run(context.Background(), true)
		require.NoError(t, err)
		union = append(union, part.Seeds...)
	}
	sort.Strings(union)
	assert.Equal(t, whole.Seeds, union, "the four shards together run exactly the unsharded seeds, once each")
}

// A --seeds campaign starts no more workers than it has runs: --workers
// 200000 for 3 seeds is 3 goroutines, not 200,000 idle ones.
func TestWorkersAreCappedAtTheRuns(t *testing.T) {
	most := 0
	c := Campaign{Scenarios: []string{scenarios.TabOwnership}, Profile: model.MustProfile(model.PresetFixed, nil, nil),
		Strategy: scenarios.Swarm, Start: 1, Seeds: 3, Workers: 200_000,
		Progress: func(uint64, int) { most = max(most, runtime.NumGoroutine()) }}
	sum, err := c.Run(context.Background(), false)
	require.NoError(t, err)
	assert.Equal(t, uint64(3), sum.SeedsRun)
	assert.Less(t, most, 50, "goroutines while the campaign ran")
}

func TestShardSeeds(t *testing.T) {
	assert.Equal(t, []uint64{11, 14, 17}, ShardSeeds(10, 9, 1, 3))
	assert.Empty(t, ShardSeeds(10, 2, 3, 4))
	for n := uint64(0); n < 20; n++ {
		for shards := uint64(1); shards < 6; shards++ {
			for i := uint64(0); i < shards; i++ {
				assert.Equal(t, uint64(len(ShardSeeds(1, n, i, shards))), ShardCount(n, i, shards), "n=%d %d/%d", n, i, shards)
			}
		}
	}
}

// Failures become shrunk stories with replay files that reproduce.
func TestFailuresAreShrunkDedupedAndWritten(t *testing.T) {
	dir := t.TempDir()
	c := Campaign{Scenarios: []string{scenarios.TabOwnership}, Profile: model.MustProfile(model.PresetReported, nil, nil),
		Strategy: scenarios.Swarm, Start: 1, Seeds: 12, Workers: 2, ShrinkRuns: 300, Corpus: dir}
	sum, err := c.Run(context.Background(), false)
	require.NoError(t, err)
	require.NotEmpty(t, sum.Failures)
	require.NotEmpty(t, sum.Stories)
	total := 0
	for _, st := range sum.Stories {
		total += st.Count
		f, err := replay.Read(st.ReplayFile)
		require.NoError(t, err)
		res, err := scenarios.Run(scenarios.Config{Scenario: f.Scenario, Seed: f.Seed, Profile: c.Profile,
			Strategy: scenarios.Strategy(f.Strategy), Off: f.Off, Tape: f.Tape})
		require.NoError(t, err)
		require.NotNil(t, res.Violation)
		assert.Equal(t, st.Invariant, res.Violation.Invariant)
		assert.Equal(t, f.Fingerprint, replay.FormatFingerprint(res.Fingerprint))
	}
	assert.Equal(t, len(sum.Failures), total, "every failure belongs to one story")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	assert.Len(t, files, len(sum.Stories))
}

// A cancelled campaign stops starting seeds but still reports and writes
// every failure it found.
func TestCancelKeepsFailuresFound(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	c := Campaign{Scenarios: []string{scenarios.TabOwnership}, Profile: model.MustProfile(model.PresetReported, nil, nil),
		Strategy: scenarios.Swarm, Start: 1, Seeds: 1_000_000, Workers: 2, ShrinkRuns: 100, Corpus: dir}
	c.Progress = func(done uint64, failures int) {
		if failures >= 3 {
			cancel()
		}
	}
	sum, err := c.Run(ctx, false)
	require.NoError(t, err)
	assert.True(t, sum.Interrupted)
	assert.Less(t, sum.SeedsRun, uint64(1_000_000))
	assert.GreaterOrEqual(t, len(sum.Failures), 3)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.NotEmpty(t, entries)
}

func TestSignatureBlanksIds(t *testing.T) {
	a := Signature("thread-keeps-its-tabs", "thread thread-b lost its own tab tab_1_1f90: preview_navigate with credential 3959f619 refused at T+01:19:38.033")
	b := Signature("thread-keeps-its-tabs", "thread thread-c lost its own tab tab_7_2aa0: preview_navigate with credential 00000000.2 refused at T+00:31:07.604")
	c := Signature("thread-keeps-its-tabs", "thread thread-c lost its own tab tab_7_2aa0: t3_preview_close with credential 00000000.2 refused at T+00:31:07.604")
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, c)
}

// The same campaign gives the same stories and replay files, whatever the
// number of workers: shrinking is bounded by runs, not by time.
func TestCampaignsAreReproducible(t *testing.T) {
	run := func(workers int) (*Summary, map[string][]byte) {
		dir := t.TempDir()
		c := Campaign{Scenarios: []string{scenarios.TabOwnership, "terminal-remount"}, Profile: model.MustProfile(model.PresetReported, nil, nil),
			Strategy: scenarios.Swarm, Start: 1, Seeds: 15, Workers: workers, ShrinkRuns: 150, Corpus: dir}
		sum, err := c.Run(context.Background(), false)
		require.NoError(t, err)
		files := map[string][]byte{}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			files[e.Name()] = b
		}
		return sum, files
	}
	a, fa := run(1)
	b, fb := run(2)
	assert.Equal(t, len(a.Stories), len(b.Stories))
	assert.Equal(t, fa, fb)
	for _, st := range a.Stories {
		n := 0
		for _, f := range a.Failures {
			if f.Scenario == st.Scenario && f.Invariant == st.Invariant {
				n++
			}
		}
		assert.LessOrEqual(t, st.Count, n, "a story counts only its own scenario's failures")
	}
}

// Each story lists the signature groups it tells: every failure is in one
// group, a group's seed is its signature's lowest failing seed, the first
// group is the story's own, and a later group (its seed shrank to the same
// story) carries its own shrunk timeline.
func TestStoriesListTheirGroups(t *testing.T) {
	c := Campaign{Scenarios: []string{"terminal-remount"}, Profile: model.MustProfile(model.PresetReported, nil, nil),
		Strategy: scenarios.Swarm, Start: 11, Seeds: 10, Workers: 2, ShrinkRuns: 100}
	sum, err := c.Run(context.Background(), false)
	require.NoError(t, err)
	lowest, count := map[string]uint64{}, map[string]int{}
	for _, f := range sum.Failures {
		if _, ok := lowest[f.Signature]; !ok || f.Seed < lowest[f.Signature] {
			lowest[f.Signature] = f.Seed
		}
		count[f.Signature]++
	}
	seen := map[string]bool{}
	later := 0
	for _, st := range sum.Stories {
		require.NotEmpty(t, st.Groups)
		assert.Equal(t, st.Seed, st.Groups[0].Seed, "the story's own group comes first")
		assert.Empty(t, st.Groups[0].Timeline, "the story's own timeline is the story's")
		n := 0
		for i, g := range st.Groups {
			assert.False(t, seen[g.Signature], "one group per signature")
			seen[g.Signature] = true
			assert.Equal(t, lowest[g.Signature], g.Seed)
			assert.Equal(t, count[g.Signature], g.Count)
			n += g.Count
			if i > 0 {
				later++
				assert.Greater(t, g.Seed, st.Groups[i-1].Seed)
				assert.NotEmpty(t, g.Timeline)
				// g.Actions may be 0: a boot-time story (acorn#37's spawn
				// race) needs no user action.
			}
		}
		assert.Equal(t, st.Count, n)
	}
	assert.Len(t, seen, len(lowest))
	assert.Positive(t, later, "this campaign has two signatures that shrink to one story")
}

// A --budget campaign ends at the largest seed, 2^64-1: seeds do not wrap
// around to 0, and the summary says the seed space is exhausted.
func TestBudgetCampaignEndsAtTheLargestSeed(t *testing.T) {
	const top = ^uint64(0)
	for _, tc := range []struct {
		shard, shards uint64
		want          []string
	}{
		{0, 1, []string{"request-retry/18446744073709551610", "request-retry/18446744073709551611", "request-retry/18446744073709551612",
			"request-retry/18446744073709551613", "request-retry/18446744073709551614", "request-retry/18446744073709551615"}},
		{1, 4, []string{"request-retry/18446744073709551611", "request-retry/18446744073709551615"}},
		{2, 4, []string{"request-retry/18446744073709551612"}},
	} {
		c := Campaign{Scenarios: []string{scenarios.RequestRetry}, Profile: model.MustProfile(model.PresetFixed, nil, nil),
			Strategy: scenarios.Swarm, Start: top - 5, Budget: 5 * time.Second, Shard: tc.shard, Shards: tc.shards, Workers: 2}
		sum, err := c.Run(context.Background(), true)
		require.NoError(t, err)
		assert.Equal(t, tc.want, sum.Seeds, "shard %d/%d", tc.shard, tc.shards)
		assert.True(t, sum.Exhausted, "shard %d/%d", tc.shard, tc.shards)
		assert.Less(t, sum.Elapsed, 5*time.Second, "ended with the seeds, not the budget")
	}
	// A shard whose first seed is past the largest runs nothing.
	c := Campaign{Scenarios: []string{scenarios.RequestRetry}, Profile: model.MustProfile(model.PresetFixed, nil, nil),
		Strategy: scenarios.Swarm, Start: top, Budget: 5 * time.Second, Shard: 1, Shards: 2}
	sum, err := c.Run(context.Background(), true)
	require.NoError(t, err)
	assert.Zero(t, sum.SeedsRun)
	assert.True(t, sum.Exhausted)
}

// A --seeds campaign may end exactly at the largest seed, not past it.
func TestSeedsCampaignUpToTheLargestSeed(t *testing.T) {
	const top = ^uint64(0)
	c := Campaign{Scenarios: []string{scenarios.RequestRetry}, Profile: model.MustProfile(model.PresetFixed, nil, nil),
		Strategy: scenarios.Swarm, Start: top - 1, Seeds: 2}
	sum, err := c.Run(context.Background(), true)
	require.NoError(t, err)
	assert.Equal(t, []string{"request-retry/18446744073709551614", "request-retry/18446744073709551615"}, sum.Seeds)
	assert.False(t, sum.Exhausted, "a --seeds campaign ends with its seeds")
	c.Seeds = 3
	_, err = c.Run(context.Background(), true)
	assert.ErrorContains(t, err, "runs past the largest seed")
}

// A branch campaign runs the same runs and writes the same replay files
// for any number of workers; a failing branch's replay file carries its
// whole tape (the root's prefix and its own draws) and replays it.
func TestBranchCampaignsAreReproducible(t *testing.T) {
	run := func(workers int) (*Summary, map[string][]byte) {
		dir := t.TempDir()
		c := Campaign{Scenarios: []string{scenarios.TabOwnership}, Profile: model.MustProfile(model.PresetFixed, nil, []string{"cleanup-by-issue-time"}),
			Strategy: scenarios.Branch, Start: 1, Seeds: 120, Workers: workers, ShrinkRuns: 40, Corpus: dir}
		sum, err := c.Run(context.Background(), true)
		require.NoError(t, err)
		files := map[string][]byte{}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			files[e.Name()] = b
		}
		return sum, files
	}
	a, fa := run(1)
	b, fb := run(3)
	assert.Equal(t, uint64(120), a.SeedsRun)
	assert.Equal(t, a.Seeds, b.Seeds)
	assert.Equal(t, a.Failures, b.Failures)
	assert.Equal(t, fa, fb)
	// Both roots and continuations ran, and the split is the same for any worker count.
	assert.Equal(t, a.BranchRuns, b.BranchRuns)
	assert.Greater(t, a.BranchRuns, uint64(0))
	assert.Less(t, a.BranchRuns, a.SeedsRun)
	require.NotEmpty(t, a.Stories)
	for _, st := range a.Stories {
		f, err := replay.Read(st.ReplayFile)
		require.NoError(t, err)
		require.NotEmpty(t, f.Tape)
		res, err := scenarios.Run(scenarios.Config{Scenario: f.Scenario, Seed: f.Seed, Profile: model.MustProfile(model.PresetFixed, nil, []string{"cleanup-by-issue-time"}),
			Strategy: scenarios.Strategy(f.Strategy), Off: f.Off, Tape: f.Tape})
		require.NoError(t, err)
		require.NotNil(t, res.Violation)
		assert.Equal(t, st.Invariant, res.Violation.Invariant)
		assert.Equal(t, f.Fingerprint, replay.FormatFingerprint(res.Fingerprint))
	}
}

// The replay file of a failing branch (not shrunk) carries the branch's
// whole tape, not just its seed, and replays the branch.
func TestBranchReplayFileCarriesItsTape(t *testing.T) {
	prof := model.MustProfile(model.PresetReported, nil, nil)
	br := &scenarios.Brancher{Base: scenarios.Config{Scenario: scenarios.TabOwnership, Profile: prof, Strategy: scenarios.Branch}, Start: 1}
	for i := 0; i < 20; i++ {
		batch := br.Next()
		var results []scenarios.Result
		for _, cfg := range batch {
			res, err := scenarios.Run(cfg)
			require.NoError(t, err)
			results = append(results, res)
			if cfg.Branch == nil || res.Violation == nil {
				continue
			}
			cfg.RecordTape = true
			res, err = scenarios.Run(cfg)
			require.NoError(t, err)
			f := ReplayFile(cfg, &res)
			require.NotEmpty(t, f.Tape)
			assert.False(t, f.Compacted)
			again, err := scenarios.Run(scenarios.Config{Scenario: f.Scenario, Seed: f.Seed, Profile: prof,
				Strategy: scenarios.Strategy(f.Strategy), Tape: f.Tape})
			require.NoError(t, err)
			assert.Equal(t, f.Fingerprint, replay.FormatFingerprint(again.Fingerprint))
			require.NotNil(t, again.Violation)
			assert.Equal(t, res.Violation.Invariant, again.Violation.Invariant)
			return
		}
		br.Done(batch, results)
	}
	t.Fatal("20 batches of reported tab-ownership and no failing branch")
}

// A bug only ever seen behind another (a later violation whose root-cause
// group has no story) gets its file shrunk toward it: tab-ownership seed
// 2 breaks preview-op-on-owning-host only after other invariants, and its
// group gets a plain file in which it fails first, with far fewer
// actions than the keep-going run; the groups that have a story keep
// their seed's keep-going run, and at most one later group per root-cause
// key is shrunk.
func TestLaterGroupBehindAnotherShrinksAlone(t *testing.T) {
	dir := t.TempDir()
	c := Campaign{Scenarios: []string{scenarios.TabOwnership}, Profile: model.MustProfile(model.PresetReported, nil, nil),
		Strategy: scenarios.Swarm, Start: 2, Seeds: 1, Workers: 1, ShrinkRuns: 30, KeepGoing: true, Corpus: dir}
	sum, err := c.Run(context.Background(), false)
	require.NoError(t, err)
	told := sum.StoryKeys()
	shrunk := map[string]int{}
	var found *LaterGroup
	for i := range sum.Later {
		g := &sum.Later[i]
		k := KeyString(g.Invariant, g.Key.Switches)
		f, err := replay.Read(g.ReplayFile)
		require.NoError(t, err)
		if told[k] || !g.Shrunk {
			assert.False(t, g.Alone)
			assert.True(t, f.KeepGoing, "%s: an unshrunk later group's file is its seed's keep-going run", g.ReplayFile)
			continue
		}
		shrunk[k]++
		if g.Invariant == "preview-op-on-owning-host" {
			found = g
		}
		if g.Alone {
			assert.False(t, f.KeepGoing, "%s: shrunk alone, a plain file", g.ReplayFile)
			require.NotNil(t, f.Violation)
			assert.Equal(t, g.Invariant, f.Violation.Invariant)
		}
	}
	for k, n := range shrunk {
		assert.Equal(t, 1, n, "%s: one shrunk later group per root-cause key", k)
		assert.False(t, told[k], "%s has a story: its later groups are not shrunk", k)
	}
	require.NotNil(t, found, "preview-op-on-owning-host's group (no story in seed 2) is shrunk")
	assert.True(t, found.Alone)
	assert.Equal(t, uint64(2), found.Seed)
	kg, err := scenarios.Run(scenarios.Config{Scenario: scenarios.TabOwnership, Seed: 2, Profile: c.Profile, Strategy: c.Strategy,
		KeepGoing: true, KeepTrace: true})
	require.NoError(t, err)
	assert.Less(t, found.Actions, shrink.Actions(shrink.Until(kg.Trace, found.Invariant)), "fewer actions than the seed's keep-going run")
}
