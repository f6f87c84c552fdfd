package fuzz

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// When a shard's lowest seed of a signature shrank to a story that an
// earlier group of that shard tells, while the earlier group's signature
// has a lower seed in another shard, the merged story is told by the
// second group's own seed and timeline, as the unsharded campaign tells it.
func TestGroups_StoryToldByASecondGroup(t *testing.T) {
	story := func(seed uint64, fp string, tl string, groups ...ReportGroup) ReportStory {
		st := ReportStory{Scenario: "s", Invariant: "i", Seed: seed, Actions: 3, Fingerprint: fp, ReplayFile: tl + ".json",
			Timeline: []string{tl}, Groups: groups}
		for _, g := range groups {
			st.Count += g.Count
		}
		return st
	}
	groups := Groups{}
	// Shard 0: A@3 and B@5 both shrank to X.
	groups.Add(story(3, "X", "t3", ReportGroup{Signature: "A", Seed: 3, Count: 2},
		ReportGroup{Signature: "B", Seed: 5, Count: 4, Actions: 7, Timeline: []string{"t5"}}))
	// Shard 1: A@1 shrank to Y; B@8 to X.
	groups.Add(story(1, "Y", "t1", ReportGroup{Signature: "A", Seed: 1, Count: 1}))
	groups.Add(story(8, "X", "t8", ReportGroup{Signature: "B", Seed: 8, Count: 1}))
	got := groups.Stories()
	require.Len(t, got, 2)
	assert.Equal(t, ReportStory{Scenario: "s", Invariant: "i", Seed: 1, Count: 3, Actions: 3, Fingerprint: "Y", ReplayFile: "t1.json",
		Timeline: []string{"t1"}, Groups: []ReportGroup{{Signature: "A", Seed: 1, Count: 3}}}, got[0])
	assert.Equal(t, ReportStory{Scenario: "s", Invariant: "i", Seed: 5, Count: 5, Actions: 7, Fingerprint: "X",
		Timeline: []string{"t5"}, Groups: []ReportGroup{{Signature: "B", Seed: 5, Count: 5}}}, got[1],
		"told by B's lowest seed, 5, with its own timeline; no replay file was written for it")
}

// shard is a parsed one-shard summary of a small campaign.
func shard(t *testing.T, json string) *Merged {
	t.Helper()
	s, err := ParseSummary([]byte(json))
	require.NoError(t, err, json)
	return s
}

const shardFields = `"scenarios":["chaos"],"horizon_ms":[1000],"profile":"fixed","strategy":"swarm","start":1,"seeds":10,` +
	`"budget_ms":0,"shrink_runs":300,"shrink_budget_ms":30000,"keep_going":true,"later_violations":[]`

func TestMerge_Rules(t *testing.T) {
	a := shard(t, `{`+shardFields+`,"shard":"0/3","seeds_run":4,"failures":1,"elapsed_ms":10,"interrupted":true,`+
		`"invariants":[{"scenario":"chaos","invariant":"i","failures":1,"first_seed":3}],"probes":[{"name":"p","hits":1}],`+
		`"failed_seeds":[{"scenario":"chaos","seed":3,"invariant":"i"}]}`)
	b := shard(t, "\ufeff{"+shardFields+`,"shard":"1/3","seeds_run":3,"failures":1,"elapsed_ms":30,`+
		`"invariants":[{"scenario":"chaos","invariant":"i","failures":1,"first_seed":2}],"probes":[{"name":"p","hits":2}],`+
		`"failed_seeds":[{"scenario":"chaos","seed":2,"invariant":"i"}]}`)
	m, err := Merge([]string{"a", "b"}, []*Merged{a, b})
	require.NoError(t, err)
	assert.Equal(t, uint64(7), m.SeedsRun, "seeds add up")
	assert.Equal(t, 2, m.Failures)
	assert.Equal(t, int64(30), m.ElapsedMs, "the longest shard")
	assert.Equal(t, int64(40), m.ElapsedMsTotal)
	assert.Equal(t, []int{0, 1}, m.ShardsMerged)
	assert.Equal(t, []int{2}, m.ShardsMissing)
	assert.Equal(t, "2 of 3 shards", m.Shard)
	assert.Equal(t, []string{"a"}, m.InterruptedIn)
	assert.Equal(t, []ReportRow{{Scenario: "chaos", Invariant: "i", Failures: 2, FirstSeed: 2}}, m.Invariants)
	assert.Equal(t, []ReportProbe{{Name: "p", Hits: 3}}, m.Probes)
	assert.Equal(t, []FailedSeed{{Scenario: "chaos", Seed: 2, Invariant: "i"}, {Scenario: "chaos", Seed: 3, Invariant: "i"}}, m.FailedSeeds)
	assert.Empty(t, m.Unchecked)
	assert.Equal(t, "shrunk story", m.StoryLabel())

	_, err = Merge([]string{"a", "a2"}, []*Merged{a, a})
	assert.EqualError(t, err, "a2: shard 0/3 is also in a")
	other := shard(t, `{`+strings.Replace(shardFields, `"fixed"`, `"reported"`, 1)+`,"shard":"1/3"}`)
	_, err = Merge([]string{"a", "o"}, []*Merged{a, other})
	assert.EqualError(t, err, "o: profile reported, but a has fixed: not the same campaign")
	four := shard(t, `{`+shardFields+`,"shard":"1/4"}`)
	_, err = Merge([]string{"a", "f"}, []*Merged{a, four})
	assert.EqualError(t, err, "f: a campaign of 4 shards, but a has 3")
	old := shard(t, `{"scenarios":["chaos"],"profile":"fixed","shard":"1/3"}`)
	_, err = Merge([]string{"a", "old"}, []*Merged{a, old})
	assert.ErrorContains(t, err, "old has no horizon_ms (written by an older orchsim), but a has horizon_ms [1000]")
	both, err := Merge([]string{"old"}, []*Merged{old})
	require.NoError(t, err)
	assert.Contains(t, both.Unchecked, "shrink_runs")
	assert.Equal(t, "story", both.StoryLabel(), "no summary says whether it shrank")
	unshrunk := shard(t, `{`+strings.Replace(shardFields, `"shrink_runs":300`, `"shrink_runs":0`, 1)+`,"shard":"0/1"}`)
	assert.Equal(t, "story, not shrunk (--shrink-runs 0)", unshrunk.StoryLabel())
}

func TestParseSummary_IsStrict(t *testing.T) {
	for name, tc := range map[string]struct{ json, want string }{
		"key twice":  {`{` + shardFields + `,"shard":"0/1","interrupted":true,"interrupted":false}`, `key "interrupted" appears twice`},
		"wrong case": {`{` + shardFields + `,"shard":"0/1","Failures":1}`, `key "Failures" must be spelled "failures"`},
		"two values": {`{` + shardFields + `,"shard":"0/1"} {}`, "more data after the JSON object"},
		"no shard":   {`{` + shardFields + `}`, "no scenarios, shard or profile"},
		"later null": {strings.Replace(`{`+shardFields+`,"shard":"0/1"}`, `"later_violations":[]`, `"later_violations":null`, 1),
			"keep_going is true but later_violations is null or missing"},
		"later missing": {strings.Replace(`{`+shardFields+`,"shard":"0/1"}`, `,"later_violations":[]`, ``, 1),
			"keep_going is true but later_violations is null or missing"},
		"later unknown switch": {strings.Replace(`{`+shardFields+`,"shard":"0/1"}`, `"later_violations":[]`,
			`"later_violations":[{"scenario":"chaos","invariant":"x","signature":"s","seed":1,"count":1,"switches":["no-such-fix"]}]`, 1),
			`later_violations[0] (chaos / x): unknown switch "no-such-fix"`},
		"later negative count": {strings.Replace(`{`+shardFields+`,"shard":"0/1"}`, `"later_violations":[]`,
			`"later_violations":[{"scenario":"chaos","invariant":"x","signature":"s","seed":1,"count":-2,"switches":[]}]`, 1),
			"later_violations[0] (chaos / x): count -2 is not a positive number of violations"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseSummary([]byte(tc.json))
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
