package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun_FormatMermaid(t *testing.T) {
	seed := firstFailingSeed(t)
	code, out, errOut := cli(t, runTab(seed, "--format", "mermaid")...)
	assert.Equal(t, exitViolation, code)
	assert.True(t, strings.HasPrefix(out, "sequenceDiagram\n"), "stdout is one diagram")
	last := lastLineOf(out)
	require.True(t, strings.HasPrefix(last, "%% "), "the last line of stdout is a Mermaid comment: %q", last)
	assert.Regexp(t, violationLine, strings.TrimPrefix(last, "%% "))
	assert.Regexp(t, violationLine, lastLineOf(errOut), "and the line itself is on stderr")
	assert.Contains(t, out, "rect rgb(")
	assert.Contains(t, out, "VIOLATED thread-keeps-its-tabs")

	_, again, _ := cli(t, runTab(seed, "--format", "mermaid")...)
	assert.Equal(t, out, again, "deterministic")
}

func TestRun_FormatMermaidShrinksLongFailures(t *testing.T) {
	// Seed 5 fails after 86 events: the diagram draws its shrunk story.
	code, out, _ := cli(t, runTab("5", "--format", "mermaid")...)
	require.Equal(t, exitViolation, code)
	assert.Contains(t, out, "%% shrunk from ")
	assert.Contains(t, out, "%% replay: orchsim run --scenario tab-ownership --seed 5 --profile fixed --unfix stable-tab-owner\n")
	assert.Less(t, strings.Count(out, "\n"), 120)
}

// A chaos story is shrunk within a number of runs, not a wall-clock
// budget: the diagram is the same bytes on every run, whatever the load.
func TestRun_FormatMermaidChaosIsTheSameEveryTime(t *testing.T) {
	args := []string{"run", "--scenario", "chaos", "--seed", "3", "--format", "mermaid"}
	code, out, _ := cli(t, args...)
	require.Equal(t, exitViolation, code)
	require.Contains(t, out, "%% shrunk from ")
	assert.NotContains(t, out, "wall-clock", "the run bound ends the shrink, not the clock")
	_, again, _ := cli(t, args...)
	assert.Equal(t, out, again)
}

func TestRun_FormatMermaidOK(t *testing.T) {
	code, out, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "1", "--profile", "fixed",
		"--horizon", "2h", "--format", "mermaid")
	assert.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(out, "sequenceDiagram\n"))
	assert.Regexp(t, okLine, strings.TrimPrefix(lastLineOf(out), "%% "))
	assert.Regexp(t, okLine, lastLineOf(errOut))
	assert.NotContains(t, out, "shrunk from")
}

func TestRun_FormatTextKeepsTheLastLine(t *testing.T) {
	seed := firstFailingSeed(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	code, out, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", seed, "--html", page)
	assert.Equal(t, exitViolation, code)
	assert.Empty(t, errOut)
	assert.Regexp(t, violationLine, lastLineOf(out))
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	html := string(b)
	assert.True(t, strings.HasPrefix(html, "<!DOCTYPE html>"))
	assert.Contains(t, html, `id="violation-marker"`)
	assert.Contains(t, html, "orchsim run --scenario tab-ownership --seed "+seed)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "written atomically: no temporary file left")

	page2 := filepath.Join(dir, "again.html")
	cli(t, "run", "--scenario", "tab-ownership", "--seed", seed, "--html", page2)
	b2, err := os.ReadFile(page2)
	require.NoError(t, err)
	assert.Equal(t, html, string(b2), "deterministic")
}

func TestReplay_FormatMermaidAndHTML(t *testing.T) {
	seed := firstFailingSeed(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "failure.json")
	page := filepath.Join(dir, "failure.html")
	code, runOut, _ := cli(t, "run", "--scenario", "tab-ownership", "--seed", seed, "--out", file)
	require.Equal(t, exitViolation, code)
	code, out, errOut := cli(t, "replay", file, "--format", "mermaid", "--html", page)
	assert.Equal(t, exitViolation, code, errOut)
	assert.True(t, strings.HasPrefix(out, "sequenceDiagram\n"))
	assert.Contains(t, out, "%% fingerprint matches: ")
	assert.Contains(t, out, "%% replay: orchsim replay "+file)
	assert.Equal(t, "%% "+lastLineOf(runOut), lastLineOf(out))
	assert.Equal(t, lastLineOf(runOut), lastLineOf(errOut))
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(b), "orchsim replay "+file)

	code, out, _ = cli(t, "replay", file, "--format", "json")
	assert.Equal(t, exitViolation, code)
	assert.Equal(t, lastLineOf(runOut), lastLineOf(out), "json keeps the last line on stdout")
}

func TestReport_BadInput(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]string{
		"run bad format":       {"run", "--scenario", "tab-ownership", "--seed", "1", "--format", "svg"},
		"run html no dir":      {"run", "--scenario", "tab-ownership", "--seed", "1", "--html", filepath.Join(dir, "no", "such.html")},
		"replay bad format":    {"replay", "x.json", "--format", "dot"},
		"replay html no dir":   {"replay", "x.json", "--html", filepath.Join(dir, "no", "such.html")},
		"merge no files":       {"merge-summaries"},
		"merge missing file":   {"merge-summaries", filepath.Join(dir, "absent.json")},
		"merge not a summary":  {"merge-summaries", writeFile(t, dir, "bad.json", `{"nope": 1}`)},
		"merge malformed json": {"merge-summaries", writeFile(t, dir, "worse.json", `{`)},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := cliWithMerge(t, args...)
			assert.Equal(t, exitUsage, code)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line on stderr, got %q", errOut)
			assert.True(t, strings.HasPrefix(errOut, "orchsim: "), errOut)
		})
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// cliWithMerge is cli with merge-summaries on the command tree, whether or
// not main.go registers it yet.
func cliWithMerge(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if len(args) == 0 || args[0] != "merge-summaries" {
		return cli(t, args...)
	}
	var out, errb bytes.Buffer
	root := withMerge(newRoot(&out, &errb))
	root.SetArgs(args)
	err := root.Execute()
	var ee *exitError
	switch {
	case err == nil:
		code = exitOK
	case errors.As(err, &ee):
		code = ee.code
		if ee.msg != "" {
			fmt.Fprintf(&errb, "orchsim: %s\n", ee.msg)
		}
	default:
		code = exitUsage
		fmt.Fprintf(&errb, "orchsim: %v\n", err)
	}
	return code, out.String(), errb.String()
}

// withMerge adds merge-summaries to root unless it is there already.
func withMerge(root *cobra.Command) *cobra.Command {
	if c, _, err := root.Find([]string{"merge-summaries"}); err != nil || c == root {
		root.AddCommand(newMergeCmd())
	}
	return root
}

func summaryFile(t *testing.T, dir, name string, s jsonSummary) string {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return writeFile(t, dir, name, string(b))
}

func TestMergeSummaries_AddsUpShards(t *testing.T) {
	dir := t.TempDir()
	story := func(seed uint64, fp string, count int) jsonStory {
		return jsonStory{Scenario: "tab-ownership", Invariant: "thread-keeps-its-tabs", Seed: seed, Count: count, Actions: 5,
			Fingerprint: fp, ReplayFile: "corpus/x.json", Timeline: []string{"T+00:00:00.000  a  b"}}
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "shard-1", "corpus"), 0o755))
	writeFile(t, filepath.Join(dir, "shard-1", "corpus"), "x.json", "{}")
	a := summaryFile(t, dir, "a.json", jsonSummary{Scenarios: []string{"tab-ownership"}, Profile: "reported", Strategy: "swarm",
		Shard: "0/3", SeedsRun: 10, Failures: 2, ElapsedMs: 100,
		Invariants:  []jsonRow{{Scenario: "tab-ownership", Invariant: "thread-keeps-its-tabs", Kind: "safety", Failures: 2, FirstSeed: 7, Stories: 1}},
		Probes:      []jsonProbe{{Name: "p", Hits: 1}},
		Stories:     []jsonStory{story(7, "f1", 2)},
		FailedSeeds: []jsonFailed{{Scenario: "tab-ownership", Seed: 9, Invariant: "thread-keeps-its-tabs"}, {Scenario: "tab-ownership", Seed: 7, Invariant: "thread-keeps-its-tabs"}}})
	b := summaryFile(t, filepath.Join(dir, "shard-1"), "summary.json", jsonSummary{Scenarios: []string{"tab-ownership"},
		Profile: "reported", Strategy: "swarm", Shard: "1/3", SeedsRun: 12, Failures: 1, ElapsedMs: 300,
		Invariants:  []jsonRow{{Scenario: "tab-ownership", Invariant: "thread-keeps-its-tabs", Kind: "safety", Failures: 1, FirstSeed: 4, Stories: 1}},
		Probes:      []jsonProbe{{Name: "p", Hits: 2}, {Name: "q", Hits: 1}},
		Stories:     []jsonStory{story(4, "f1", 1)},
		FailedSeeds: []jsonFailed{{Scenario: "tab-ownership", Seed: 4, Invariant: "thread-keeps-its-tabs"}}})
	out := filepath.Join(dir, "merged.json")
	md := filepath.Join(dir, "summary.md")
	code, stdout, errOut := cliWithMerge(t, "merge-summaries", "--out", out, "--markdown", md, a, b)
	assert.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, stdout, "missing shards: 2 of 3")
	var m mergedSummary
	raw, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &m))
	assert.Equal(t, []string{"tab-ownership"}, m.Scenarios)
	assert.Equal(t, uint64(22), m.SeedsRun)
	assert.Equal(t, 3, m.Failures)
	assert.Equal(t, int64(300), m.ElapsedMs)
	assert.Equal(t, int64(400), m.ElapsedMsTotal)
	assert.Equal(t, 3, m.Shards)
	assert.Equal(t, []int{0, 1}, m.ShardsMerged)
	assert.Equal(t, []int{2}, m.ShardsMissing)
	assert.Equal(t, []jsonRow{{Scenario: "tab-ownership", Invariant: "thread-keeps-its-tabs", Kind: "safety", Failures: 3, FirstSeed: 4, Stories: 1}}, m.Invariants)
	assert.Equal(t, []jsonProbe{{Name: "p", Hits: 3}, {Name: "q", Hits: 1}}, m.Probes)
	require.Len(t, m.Stories, 1, "one story told by both shards")
	assert.Equal(t, uint64(4), m.Stories[0].Seed, "the lowest seed tells it")
	assert.Equal(t, 3, m.Stories[0].Count)
	assert.Equal(t, filepath.Join("shard-1", "corpus", "x.json"), m.Stories[0].ReplayFile, "resolved in the artifact, named from --out's directory")
	assert.Equal(t, []uint64{4, 7, 9}, []uint64{m.FailedSeeds[0].Seed, m.FailedSeeds[1].Seed, m.FailedSeeds[2].Seed})
	mdText, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Contains(t, string(mdText), "**Missing shards: 2**")
	assert.Contains(t, string(mdText), "| tab-ownership | `thread-keeps-its-tabs` | 3 | 4 | 1 |")

	// Without failures, a missing shard is a harness failure.
	c := summaryFile(t, dir, "c.json", jsonSummary{Scenarios: []string{"chaos"}, Profile: "fixed", Strategy: "swarm", Shard: "0/2", SeedsRun: 5})
	code, _, errOut = cliWithMerge(t, "merge-summaries", c)
	assert.Equal(t, exitHarness, code)
	assert.Contains(t, errOut, "shards missing: 1 of 2")
	d := summaryFile(t, dir, "d.json", jsonSummary{Scenarios: []string{"chaos"}, Profile: "fixed", Strategy: "swarm", Shard: "1/2", SeedsRun: 5})
	code, stdout, _ = cliWithMerge(t, "merge-summaries", c, d)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "fuzz: 10 seeds, 0 failures")

	// Summaries of different campaigns do not merge.
	for name, args := range map[string][]string{
		"profile":   {c, summaryFile(t, dir, "e.json", jsonSummary{Scenarios: []string{"chaos"}, Profile: "reported", Strategy: "swarm", Shard: "1/2"})},
		"shards":    {c, summaryFile(t, dir, "f.json", jsonSummary{Scenarios: []string{"chaos"}, Profile: "fixed", Strategy: "swarm", Shard: "1/4"})},
		"duplicate": {c, c},
		"bad shard": {summaryFile(t, dir, "g.json", jsonSummary{Scenarios: []string{"chaos"}, Profile: "fixed", Strategy: "swarm", Shard: "2/2"})},
	} {
		code, _, errOut := cliWithMerge(t, append([]string{"merge-summaries"}, args...)...)
		assert.Equal(t, exitUsage, code, name)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%s: one line, got %q", name, errOut)
	}
}

func TestMergeSummaries_ShardsAddUpToTheCampaign(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.json")
	base := []string{"fuzz", "--scenario", "tab-ownership", "--seeds", "24", "--workers", "2", "--shrink-budget", "0"}
	code, _, errOut := cli(t, append(base, "--json", whole)...)
	require.Contains(t, []int{exitOK, exitViolation}, code, errOut)
	var shards []string
	for i := 0; i < 3; i++ {
		p := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		code, _, errOut := cli(t, append(base, "--shard", fmt.Sprintf("%d/3", i), "--json", p)...)
		require.Contains(t, []int{exitOK, exitViolation}, code, errOut)
		shards = append(shards, p)
	}
	merged := filepath.Join(dir, "merged.json")
	_, _, errOut = cliWithMerge(t, append([]string{"merge-summaries", "--out", merged}, shards...)...)
	var w jsonSummary
	var m mergedSummary
	raw, err := os.ReadFile(whole)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &w))
	raw, err = os.ReadFile(merged)
	require.NoError(t, err, errOut)
	require.NoError(t, json.Unmarshal(raw, &m))
	assert.Equal(t, w.SeedsRun, m.SeedsRun)
	assert.Equal(t, w.Failures, m.Failures)
	assert.Equal(t, w.FailedSeeds, m.FailedSeeds)
	assert.Empty(t, m.ShardsMissing)
	for i := range w.Invariants {
		w.Invariants[i].Stories = 0
	}
	for i := range m.Invariants {
		m.Invariants[i].Stories = 0
	}
	assert.Equal(t, w.Invariants, m.Invariants)
}

// The diagram in docs/reading-a-failure.md is the command's real output:
// when a model change moves it, regenerate the block with the command the
// page shows. Comment lines (%% ...: fingerprints, set-up events) may drift,
// as the corpus test lets fingerprints drift.
func TestDocs_ReadingAFailureDiagramIsCurrent(t *testing.T) {
	b, err := os.ReadFile("../../docs/reading-a-failure.md")
	require.NoError(t, err)
	doc := string(b)
	start := strings.Index(doc, "```mermaid\n")
	require.GreaterOrEqual(t, start, 0, "the page shows a diagram")
	block := doc[start+len("```mermaid\n"):]
	block = block[:strings.Index(block, "```\n")]
	files, err := filepath.Glob("../../testdata/corpus/reported/000-*.json")
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Contains(t, doc, "replay testdata/corpus/reported/"+filepath.Base(files[0])+" --format mermaid")
	_, out, _ := cli(t, "replay", files[0], "--format", "mermaid")
	drawn := func(s string) []string {
		var lines []string
		for _, l := range strings.Split(s, "\n") {
			if l != "" && !strings.HasPrefix(strings.TrimSpace(l), "%%") {
				lines = append(lines, l)
			}
		}
		return lines
	}
	assert.Equal(t, drawn(out), drawn(block),
		"docs/reading-a-failure.md shows an old diagram: regenerate it with orchsim replay %s --format mermaid", files[0])
}
