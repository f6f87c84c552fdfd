package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readJSON decodes the JSON file at path into a T.
func readJSON[T any](t *testing.T, path string) T {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var v T
	require.NoError(t, json.Unmarshal(raw, &v))
	return v
}

func readMerged(t *testing.T, path string) mergedSummary { return readJSON[mergedSummary](t, path) }

// fuzzShards runs a campaign unsharded and as n shards (args are fuzz's
// flags but --json and --shard) and returns the summaries' paths.
func fuzzShards(t *testing.T, dir string, n int, args ...string) (whole string, shards []string) {
	t.Helper()
	whole = filepath.Join(dir, "whole.json")
	code, _, errOut := cli(t, append(append([]string{"fuzz"}, args...), "--json", whole)...)
	require.Contains(t, []int{exitOK, exitViolation}, code, errOut)
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		code, _, errOut := cli(t, append(append([]string{"fuzz"}, args...), "--shard", fmt.Sprintf("%d/%d", i, n), "--json", p)...)
		require.Contains(t, []int{exitOK, exitViolation}, code, errOut)
		shards = append(shards, p)
	}
	return whole, shards
}

// assertSameResults checks that a merged summary found what the unsharded
// campaign found: totals, table, probes and stories (signatures, seeds,
// fingerprints, counts and timelines).
func assertSameResults(t *testing.T, w jsonSummary, m mergedSummary) {
	t.Helper()
	assert.Equal(t, w.SeedsRun, m.SeedsRun)
	assert.Equal(t, w.Failures, m.Failures)
	assert.Equal(t, w.FailedSeeds, m.FailedSeeds)
	assert.Equal(t, w.Invariants, m.Invariants)
	assert.Equal(t, w.Probes, m.Probes)
	assert.Equal(t, w.Stories, m.Stories)
	assert.Empty(t, m.ShardsMissing)
}

// Shards of different campaigns (another start, seed count or scenario)
// do not merge into a campaign that looks complete: exit 2, one line.
func TestMergeSummaries_RejectsShardsOfOtherCampaigns(t *testing.T) {
	dir := t.TempDir()
	fuzz := func(name string, args ...string) string {
		p := filepath.Join(dir, name)
		code, _, errOut := cli(t, append(append([]string{"fuzz", "--profile", "fixed"}, args...), "--json", p)...)
		require.Equal(t, exitOK, code, errOut)
		return p
	}
	a := fuzz("a.json", "--scenario", "request-retry", "--seeds", "9", "--shard", "0/3")
	b := fuzz("b.json", "--scenario", "request-retry", "--seeds", "3", "--start", "1000", "--shard", "1/3")
	c := fuzz("c.json", "--scenario", "tab-ownership", "--seeds", "3", "--shard", "2/3")
	code, out, errOut := cliWithMerge(t, "merge-summaries", a, b, c)
	assert.Equal(t, exitUsage, code, out)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line, got %q", errOut)
	assert.Contains(t, errOut, "not the same campaign")
	assert.NotContains(t, out, "3 of 3 shards")

	// Each field that names the campaign, changed alone.
	base := jsonSummary{Scenarios: []string{"chaos"}, HorizonMs: []int64{86400000}, Profile: "fixed", Strategy: "swarm",
		Start: 1, Seeds: 10, ShrinkRuns: 300, ShrinkBudgetMs: 30000, Shard: "0/2", SeedsRun: 5}
	first := summaryFile(t, dir, "first.json", base)
	for name, change := range map[string]func(s *jsonSummary){
		"scenarios":     func(s *jsonSummary) { s.Scenarios = []string{"tab-ownership"} },
		"horizon":       func(s *jsonSummary) { s.HorizonMs = []int64{3600000} },
		"profile":       func(s *jsonSummary) { s.Profile = "reported" },
		"fixes":         func(s *jsonSummary) { s.Profile = "fixed!revoke-by-thread" },
		"strategy":      func(s *jsonSummary) { s.Strategy = "pct" },
		"start":         func(s *jsonSummary) { s.Start = 1000 },
		"seeds":         func(s *jsonSummary) { s.Seeds = 30 },
		"budget":        func(s *jsonSummary) { s.Seeds, s.BudgetMs = 0, 60000 },
		"shrink runs":   func(s *jsonSummary) { s.ShrinkRuns = 0 },
		"shrink budget": func(s *jsonSummary) { s.ShrinkBudgetMs = 1000 },
	} {
		other := base
		other.Shard = "1/2"
		change(&other)
		code, _, errOut := cliWithMerge(t, "merge-summaries", first, summaryFile(t, dir, "other.json", other))
		assert.Equal(t, exitUsage, code, name)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%s: one line, got %q", name, errOut)
		assert.Contains(t, errOut, "not the same campaign", name)
	}
	other := base
	other.Shard = "1/2"
	code, _, errOut = cliWithMerge(t, "merge-summaries", first, summaryFile(t, dir, "other.json", other))
	assert.Equal(t, exitOK, code, errOut)
}

// The merged shards of a campaign tell exactly the unsharded campaign's
// stories: sharding changes which seed of a signature each shard shrinks,
// the merge keeps the lowest.
func TestMergeSummaries_StoriesAreTheUnshardedOnes(t *testing.T) {
	dir := t.TempDir()
	whole, shards := fuzzShards(t, dir, 3, "--scenario", "request-retry", "--seeds", "24", "--shrink-runs", "100", "--workers", "2")
	merged := filepath.Join(dir, "merged.json")
	code, _, errOut := cliWithMerge(t, append([]string{"merge-summaries", "--out", merged}, shards...)...)
	require.Equal(t, exitViolation, code, errOut)
	w, m := readMerged(t, whole), readMerged(t, merged)
	require.NotEmpty(t, w.Stories)
	assertSameResults(t, w.Report, m)
}

// A merged summary merges again, alone or as the shards it covers with
// the rest.
func TestMergeSummaries_MergesItsOwnOut(t *testing.T) {
	dir := t.TempDir()
	whole, shards := fuzzShards(t, dir, 3, "--scenario", "tab-ownership", "--seeds", "12", "--workers", "2")
	w := readMerged(t, whole)
	require.NotEmpty(t, w.Stories)

	all := filepath.Join(dir, "all.json")
	code, _, errOut := cliWithMerge(t, append([]string{"merge-summaries", "--out", all}, shards...)...)
	require.Equal(t, exitViolation, code, errOut)
	again := filepath.Join(dir, "again.json")
	code, out, errOut := cliWithMerge(t, "merge-summaries", "--out", again, all)
	require.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, out, "3 of 3 shards")
	assertSameResults(t, w.Report, readMerged(t, again))

	part := filepath.Join(dir, "part.json")
	code, _, errOut = cliWithMerge(t, "merge-summaries", "--out", part, shards[0], shards[2])
	require.Equal(t, exitViolation, code, errOut)
	rest := filepath.Join(dir, "rest.json")
	code, _, errOut = cliWithMerge(t, "merge-summaries", "--out", rest, part, shards[1])
	require.Equal(t, exitViolation, code, errOut)
	m := readMerged(t, rest)
	assertSameResults(t, w.Report, m)
	assert.Equal(t, []int{0, 1, 2}, m.ShardsMerged)
	assert.Equal(t, readMerged(t, all).ElapsedMsTotal, m.ElapsedMsTotal)

	code, _, errOut = cliWithMerge(t, "merge-summaries", part, shards[2])
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	assert.Contains(t, errOut, "shard 2/3 is also in "+part)
}

// mergeable writes two shard summaries of one small campaign (fixed, no
// failure) and returns their paths.
func mergeable(t *testing.T, dir string) (a, b string) {
	t.Helper()
	s := jsonSummary{Scenarios: []string{"chaos"}, HorizonMs: []int64{86400000}, Profile: "fixed", Strategy: "swarm",
		Start: 1, Seeds: 10, ShrinkRuns: 300, ShrinkBudgetMs: 30000, Shard: "0/2", SeedsRun: 5}
	a = summaryFile(t, dir, "a.json", s)
	s.Shard = "1/2"
	return a, summaryFile(t, dir, "b.json", s)
}

// --out and --markdown are checked before the merge, as run and fuzz
// check their outputs: exit 2, one line, nothing printed or written.
func TestMergeSummaries_OutputsAreCheckedBeforeTheMerge(t *testing.T) {
	dir := t.TempDir()
	a, b := mergeable(t, dir)
	x := filepath.Join(dir, "x.md")
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"out in no directory":      {[]string{"--out", filepath.Join(dir, "nodir", "x.json")}, "--out"},
		"out a directory":          {[]string{"--out", dir}, "is a directory"},
		"markdown in no directory": {[]string{"--markdown", filepath.Join(dir, "nodir", "x.md")}, "--markdown"},
		"markdown a directory":     {[]string{"--markdown", dir}, "is a directory"},
		"both one file":            {[]string{"--out", x, "--markdown", x}, "--out and --markdown name the same file " + x},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := cliWithMerge(t, append(append([]string{"merge-summaries"}, tc.args...), a, b)...)
			assertUsage(t, code, out, errOut, tc.want)
			assert.NoFileExists(t, x)
		})
	}
	// An existing file both name is refused too; --markdown appends to an
	// existing file, which is fine alone.
	require.NoError(t, os.WriteFile(x, []byte("# before\n"), 0o644))
	code, out, errOut := cliWithMerge(t, "merge-summaries", "--out", x, "--markdown", x, a, b)
	assertUsage(t, code, out, errOut, "name the same file")
	code, _, errOut = cliWithMerge(t, "merge-summaries", "--markdown", x, a, b)
	require.Equal(t, exitOK, code, errOut)
	md, err := os.ReadFile(x)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(md), "# before\n## orchsim nightly fuzz"), string(md))
}

// A write failing after the merge (a full disk) comes after the report:
// exit 3, one line on stderr; the other file is still written.
func TestMergeSummaries_AWriteFailingAfterTheMergeIsExit3(t *testing.T) {
	needDevFull(t)
	dir := t.TempDir()
	a, b := mergeable(t, dir)
	for name, tc := range map[string]struct{ full, other, otherPath string }{
		"out":      {"--out", "--markdown", filepath.Join(dir, "summary.md")},
		"markdown": {"--markdown", "--out", filepath.Join(dir, "merged.json")},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := cliWithMerge(t, "merge-summaries", tc.full, "/dev/full", tc.other, tc.otherPath, a, b)
			assert.Equal(t, exitHarness, code)
			assert.Contains(t, out, "fuzz: 10 seeds, 0 failures", "the report is printed first")
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line, got %q", errOut)
			assert.Contains(t, errOut, "could not be saved: "+tc.full+" /dev/full")
			assert.FileExists(t, tc.otherPath)
		})
	}
}

// A summary file is one JSON object: two summaries in one file (cat a b)
// or garbage after it is not a summary (exit 2), not the first one.
func TestMergeSummaries_DataAfterTheSummaryIsRejected(t *testing.T) {
	dir := t.TempDir()
	a, b := mergeable(t, dir)
	raw, err := os.ReadFile(a)
	require.NoError(t, err)
	for name, tail := range map[string]string{"a second summary": string(raw), "garbage": "\nmore\n"} {
		t.Run(name, func(t *testing.T) {
			two := writeFile(t, dir, "two.json", string(raw)+tail)
			code, out, errOut := cliWithMerge(t, "merge-summaries", two, b)
			assertUsage(t, code, out, errOut, two, "more data after the JSON object")
		})
	}
	spaced := writeFile(t, dir, "spaced.json", string(raw)+"\n\n  \n")
	code, _, errOut := cliWithMerge(t, "merge-summaries", spaced, b)
	assert.Equal(t, exitOK, code, "trailing white space is fine: %s", errOut)
}

// A key given twice (the last would win) or spelled in another case is
// refused, as in replay files.
func TestMergeSummaries_AmbiguousKeysAreRejected(t *testing.T) {
	dir := t.TempDir()
	a, b := mergeable(t, dir)
	raw, err := os.ReadFile(a)
	require.NoError(t, err)
	for name, c := range map[string]struct{ edit, want string }{
		"twice":      {`{"interrupted": true, "interrupted": false, `, `key "interrupted" appears twice`},
		"other case": {`{"Interrupted": false, `, `key "Interrupted" must be spelled "interrupted"`},
	} {
		t.Run(name, func(t *testing.T) {
			edited := writeFile(t, dir, "edited.json", strings.Replace(string(raw), "{", c.edit, 1))
			code, out, errOut := cliWithMerge(t, "merge-summaries", edited, b)
			assertUsage(t, code, out, errOut, edited, c.want)
		})
	}
}

// Summaries written before the campaign fields were added: when none has
// them, the merge warns (one line) that it cannot check the campaign; when
// some have them, the others' are named as absent, not as 0.
func TestMergeSummaries_SummariesWithoutTheCampaignFields(t *testing.T) {
	dir := t.TempDir()
	old := func(name, shard string) string {
		return writeFile(t, dir, name, `{"scenarios":["chaos"],"profile":"fixed","strategy":"swarm","shard":"`+shard+
			`","seeds_run":5,"failures":0,"interrupted":false,"elapsed_ms":10,"invariants":[],"probes":[],"stories":[],"failed_seeds":[]}`)
	}
	o0, o1 := old("old0.json", "0/2"), old("old1.json", "1/2")
	code, out, errOut := cliWithMerge(t, "merge-summaries", o0, o1)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "fuzz: 10 seeds, 0 failures")
	assert.Equal(t, "orchsim: warning: no summary has horizon_ms, start, seeds, budget_ms, shrink_runs, shrink_budget_ms, keep_going "+
		"(written by an older orchsim): cannot check that they are shards of one campaign\n", errOut)

	a, _ := mergeable(t, dir)
	code, out, errOut = cliWithMerge(t, "merge-summaries", a, o1)
	assertUsage(t, code, out, errOut, o1+" has no horizon_ms (written by an older orchsim), but "+a+" has horizon_ms [86400000]")
	assert.NotContains(t, errOut, "has 0")
	code, out, errOut = cliWithMerge(t, "merge-summaries", o0, summaryFile(t, dir, "new1.json", jsonSummary{Scenarios: []string{"chaos"},
		Profile: "fixed", Strategy: "swarm", Start: 1, Shard: "1/2"}))
	assertUsage(t, code, out, errOut, "but "+o0+" has no horizon_ms (written by an older orchsim)")
}

// merge-summaries prints fuzz's tables: the merge of one unsharded summary
// shows exactly what fuzz showed (probes, the table per invariant with its
// KIND column, the stories), and says "1 summary".
func TestMergeSummaries_PrintsFuzzsTables(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "summary.json")
	code, fuzzOut, errOut := cli(t, "fuzz", "--scenario", "tab-ownership", "--seeds", "6", "--shrink-runs", "50",
		"--corpus", filepath.Join(dir, "corpus"), "--json", js)
	require.Equal(t, exitViolation, code, errOut)
	code, mergeOut, errOut := cliWithMerge(t, "merge-summaries", js)
	require.Equal(t, exitViolation, code, errOut)
	assert.True(t, strings.HasPrefix(mergeOut, "merged 1 summary: 1 of 1 shards, "), mergeOut)
	tables := func(out string) string {
		_, rest, ok := strings.Cut(out, "\nPROBE ")
		require.True(t, ok, out)
		return rest
	}
	assert.Equal(t, tables(fuzzOut), tables(mergeOut))
	assert.Regexp(t, `\nSCENARIO +INVARIANT +KIND +FAILURES +FIRST SEED +STORIES\n`, mergeOut)
}

// --out or --markdown naming an input summary (the same path, another
// spelling of it, a symbolic or hard link to it) is bad usage: exit 2,
// one line, nothing printed or written; the input is unchanged.
func TestMergeSummaries_AnOutputNamingAnInputIsRefused(t *testing.T) {
	dir := t.TempDir()
	a, b := mergeable(t, dir)
	before, err := os.ReadFile(a)
	require.NoError(t, err)
	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink(a, link))
	hard := filepath.Join(dir, "hard.json")
	require.NoError(t, os.Link(a, hard))
	respelled := filepath.Join(dir, "sub", "..", filepath.Base(a))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	for _, flag := range []string{"--out", "--markdown"} {
		for name, path := range map[string]string{"same path": a, "respelled": respelled, "symlink": link, "hard link": hard} {
			t.Run(flag+"/"+name, func(t *testing.T) {
				code, out, errOut := cliWithMerge(t, "merge-summaries", flag, path, a, b)
				assertUsage(t, code, out, errOut, "the summary "+a+" and "+flag+" name the same file")
				after, err := os.ReadFile(a)
				require.NoError(t, err)
				assert.Equal(t, string(before), string(after), "the input is unchanged")
			})
		}
	}
	// The other input, too; and a symlink given as the input.
	code, out, errOut := cliWithMerge(t, "merge-summaries", "--out", b, a, b)
	assertUsage(t, code, out, errOut, "the summary "+b+" and --out name the same file")
	code, out, errOut = cliWithMerge(t, "merge-summaries", "--out", a, link, b)
	assertUsage(t, code, out, errOut, "the summary "+link+" and --out name the same file")
	// A descriptor open on an input, as the output or as both.
	f, err := os.OpenFile(a, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	fd := fmt.Sprintf("/dev/fd/%d", f.Fd())
	code, out, errOut = cliWithMerge(t, "merge-summaries", "--out", fd, a, b)
	assertUsage(t, code, out, errOut, "the summary "+a+" and --out name the same file "+fd)
	code, out, errOut = cliWithMerge(t, "merge-summaries", "--markdown", fd, fd, b)
	assertUsage(t, code, out, errOut, "the summary "+fd+" and --markdown name the same file "+fd)
	after, err := os.ReadFile(a)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the input is unchanged")
	// Another file is fine.
	code, _, errOut = cliWithMerge(t, "merge-summaries", "--out", filepath.Join(dir, "merged.json"), a, b)
	assert.Equal(t, exitOK, code, errOut)
}

// A shard interrupted by SIGINT/SIGTERM (its summary says "interrupted")
// did not cover its range: with no failure the merge is exit 3, the last
// line naming the file; failures found still exit 1.
func TestMergeSummaries_AnInterruptedShardIsExit3(t *testing.T) {
	dir := t.TempDir()
	s := jsonSummary{Scenarios: []string{"chaos"}, HorizonMs: []int64{86400000}, Profile: "fixed", Strategy: "swarm",
		Start: 1, Seeds: 10, ShrinkRuns: 300, ShrinkBudgetMs: 30000, Shard: "0/2", SeedsRun: 5}
	a := summaryFile(t, dir, "a.json", s)
	s.Shard, s.SeedsRun, s.Interrupted = "1/2", 2, true
	b := summaryFile(t, dir, "b.json", s)
	md := filepath.Join(dir, "summary.md")
	merged := filepath.Join(dir, "merged.json")
	code, out, errOut := cliWithMerge(t, "merge-summaries", "--markdown", md, "--out", merged, a, b)
	assert.Equal(t, exitHarness, code, out)
	assert.Contains(t, out, "fuzz: 7 seeds, 0 failures, 0 distinct stories (a shard was interrupted)")
	assert.Equal(t, "orchsim: interrupted: "+b+" (the campaign did not cover its range)\n", errOut)
	raw, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Contains(t, string(raw), "**A shard was interrupted**")

	// The merged summary is still interrupted: merging it again is exit 3.
	code, _, errOut = cliWithMerge(t, "merge-summaries", merged)
	assert.Equal(t, exitHarness, code)
	assert.Equal(t, "orchsim: interrupted: "+merged+" (the campaign did not cover its range)\n", errOut)

	// Missing and interrupted: one line names both.
	s.Shard = "1/3"
	c := summaryFile(t, dir, "c.json", s)
	s.Shard, s.Interrupted = "0/3", false
	code, _, errOut = cliWithMerge(t, "merge-summaries", summaryFile(t, dir, "d.json", s), c)
	assert.Equal(t, exitHarness, code)
	assert.Equal(t, "orchsim: shards missing: 2 of 3; interrupted: "+c+" (the campaign did not cover its range)\n", errOut)

	// Failures found before the signal are real: exit 1.
	s.Shard, s.Interrupted, s.Failures = "1/2", true, 1
	s.FailedSeeds = []jsonFailed{{Scenario: "chaos", Seed: 4, Invariant: "x"}}
	code, _, errOut = cliWithMerge(t, "merge-summaries", a, summaryFile(t, dir, "e.json", s))
	assert.Equal(t, exitViolation, code, errOut)
}

// Summaries without the campaign fields: the merged --out leaves them
// out (no made-up "start": 0 or "strategy": ""), so merging it again
// warns again; the header says strategy=unknown when none had one.
func TestMergeSummaries_AbsentCampaignFieldsStayAbsent(t *testing.T) {
	dir := t.TempDir()
	old := func(name, shard string) string {
		return writeFile(t, dir, name, `{"scenarios":["chaos"],"profile":"fixed","shard":"`+shard+
			`","seeds_run":5,"failures":0,"interrupted":false,"elapsed_ms":10,"invariants":[],"probes":[],"stories":[],"failed_seeds":[]}`)
	}
	merged := filepath.Join(dir, "merged.json")
	md := filepath.Join(dir, "summary.md")
	code, out, errOut := cliWithMerge(t, "merge-summaries", "--out", merged, "--markdown", md, old("o0.json", "0/2"), old("o1.json", "1/2"))
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "profile=fixed strategy=unknown\n")
	warning := "orchsim: warning: no summary has horizon_ms, strategy, start, seeds, budget_ms, shrink_runs, shrink_budget_ms, keep_going " +
		"(written by an older orchsim): cannot check that they are shards of one campaign\n"
	assert.Equal(t, warning, errOut)
	raw, err := os.ReadFile(merged)
	require.NoError(t, err)
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &fields))
	for _, f := range []string{"horizon_ms", "strategy", "start", "seeds", "budget_ms", "shrink_runs", "shrink_budget_ms", "keep_going"} {
		assert.NotContains(t, fields, f)
	}
	for _, f := range []string{"scenarios", "profile", "shard", "seeds_run", "shards", "shards_merged", "sources"} {
		assert.Contains(t, fields, f)
	}
	assert.True(t, strings.HasPrefix(string(raw), "{\n  \"scenarios\": [\n    \"chaos\"\n  ],\n  \"profile\": \"fixed\",\n"),
		"indented, in field order: %s", raw)
	mdRaw, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Contains(t, string(mdRaw), "strategy `unknown`")

	code, out, errOut = cliWithMerge(t, "merge-summaries", merged)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "merged 1 summary: 2 of 2 shards, scenarios=chaos profile=fixed strategy=unknown\n")
	assert.Equal(t, warning, errOut, "merging the merge warns again")
}

// A summary that starts with a UTF-8 byte-order mark (saved by
// PowerShell or an editor) merges as the same summary without it.
func TestMergeSummaries_AByteOrderMarkIsIgnored(t *testing.T) {
	dir := t.TempDir()
	a, b := mergeable(t, dir)
	raw, err := os.ReadFile(a)
	require.NoError(t, err)
	bom := writeFile(t, dir, "bom.json", "\xef\xbb\xbf"+string(raw))
	code, want, errOut := cliWithMerge(t, "merge-summaries", a, b)
	require.Equal(t, exitOK, code, errOut)
	code, got, errOut := cliWithMerge(t, "merge-summaries", bom, b)
	require.Equal(t, exitOK, code, errOut)
	assert.Empty(t, errOut)
	assert.Equal(t, want, got)
}

// A merged summary names its replay files relative to its own directory,
// as a shard's does, so merging it again from anywhere finds them.
func TestMergeSummaries_OutNamesReplayFilesFromItsDirectory(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "shard", "summary.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(js), 0o755))
	code, _, errOut := cli(t, "fuzz", "--scenario", "tab-ownership", "--seeds", "6", "--shrink-runs", "20",
		"--corpus", filepath.Join(dir, "shard", "corpus"), "--json", js)
	require.Equal(t, exitViolation, code, errOut)
	merged := filepath.Join(dir, "m", "merged.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(merged), 0o755))
	code, _, errOut = cliWithMerge(t, "merge-summaries", "--out", merged, js)
	require.Equal(t, exitViolation, code, errOut)
	m := readJSON[mergedSummary](t, merged)
	var files []string
	for _, st := range m.Stories {
		files = append(files, st.ReplayFile)
	}
	for _, l := range m.Later {
		files = append(files, l.ReplayFile)
	}
	for _, g := range m.Groups {
		if g.ReplayFile != "" {
			files = append(files, g.ReplayFile)
		}
	}
	require.NotEmpty(t, files)
	for _, f := range files {
		require.False(t, filepath.IsAbs(f), f)
		assert.FileExists(t, filepath.Join(filepath.Dir(merged), f))
	}
	t.Chdir(t.TempDir()) // merged again from elsewhere
	again := filepath.Join(dir, "again.json")
	code, _, errOut = cliWithMerge(t, "merge-summaries", "--out", again, merged)
	require.Equal(t, exitViolation, code, errOut)
	for _, st := range readJSON[mergedSummary](t, again).Stories {
		assert.FileExists(t, filepath.Join(dir, st.ReplayFile))
	}
}

// A summary whose replay files resolve nowhere (a shard written with paths
// relative to the fuzz's working directory, merged from elsewhere without
// its corpus) is merged with one warning naming the first missing file;
// with the files in place, no warning.
func TestMergeSummaries_WarnsOfReplayFilesFoundNowhere(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, _, errOut := cli(t, "fuzz", "--scenario", "tab-ownership", "--seeds", "3", "--shrink-runs", "10",
		"--corpus", "corpus", "--json", "summary.json")
	require.Equal(t, exitViolation, code, errOut)
	code, _, errOut = cliWithMerge(t, "merge-summaries", "summary.json")
	require.Equal(t, exitViolation, code, errOut)
	assert.NotContains(t, errOut, "warning", "every file is where the summary says")

	elsewhere := t.TempDir()
	require.NoError(t, os.Rename("summary.json", filepath.Join(elsewhere, "summary.json")))
	t.Chdir(t.TempDir())
	code, _, errOut = cliWithMerge(t, "merge-summaries", filepath.Join(elsewhere, "summary.json"))
	require.Equal(t, exitViolation, code, errOut)
	assert.Regexp(t, `orchsim: warning: \d+ replay files? the summaries name found in neither the summary's directory nor the working directory \(first: corpus/`, errOut)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line")
}
