package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/fuzz"
	"github.com/orchsim/orchsim/model"
)

// groupKeys are the groups' keys and the fields a merge must agree on.
func groupSummary(gs []fuzz.TriageGroup) []string {
	var out []string
	for _, g := range gs {
		out = append(out, fmt.Sprintf("%s new=%v reports=%v failures=%d first=%s/%d", fuzz.KeyString(g.Invariant, g.Switches),
			g.New, g.Reports, g.Failures, g.FirstScenario, g.FirstSeed))
	}
	return out
}

// The README's campaign (every scenario, reported), on a few seeds: a
// baseline written from it makes the same campaign exit 0, and its four
// shards merged with it exit 0 with the same groups; a mutant added makes
// it exit 1 and lists the mutant's failures as new groups, in the table,
// the JSON summary, JUnit and the merge's Markdown.
func TestFuzz_BaselineJudgesTheGroups(t *testing.T) {
	if testing.Short() {
		t.Skip("campaigns")
	}
	dir := t.TempDir()
	campaign := []string{"fuzz", "--scenario", "all", "--seeds", "12", "--shrink-runs", "30"}
	base := filepath.Join(dir, "baseline.json")
	code, out, errOut := cli(t, append(campaign, "--write-baseline", base, "--json", filepath.Join(dir, "first.json"))...)
	require.Equal(t, exitViolation, code, "without a baseline, failures are exit 1: %s", errOut)
	assert.Contains(t, out, "GROUP")
	first := readJSON[fuzz.Report](t, filepath.Join(dir, "first.json"))
	require.NotEmpty(t, first.Groups)
	b, err := os.ReadFile(base)
	require.NoError(t, err)
	bl, err := fuzz.ParseBaseline(b)
	require.NoError(t, err)
	assert.Len(t, bl.Groups, len(first.Groups), "every group is explained by a known fix, so every one is listed")

	js := filepath.Join(dir, "again.json")
	code, out, errOut = cli(t, append(campaign, "--baseline", base, "--json", js)...)
	assert.Equal(t, exitOK, code, "the same campaign against its baseline: %s", errOut)
	assert.Contains(t, out, fmt.Sprintf("baseline %s: %d groups known, 0 new", base, len(first.Groups)))
	again := readJSON[fuzz.Report](t, js)
	assert.Equal(t, base, again.Baseline)
	for _, g := range again.Groups {
		assert.Equal(t, "known", g.Baseline)
		assert.False(t, g.New)
	}

	var shards []string
	for i := 0; i < 4; i++ {
		p := filepath.Join(dir, fmt.Sprintf("shard%d.json", i))
		code, _, errOut := cli(t, append(campaign, "--shard", fmt.Sprintf("%d/4", i), "--json", p)...)
		require.Contains(t, []int{exitOK, exitViolation}, code, errOut)
		shards = append(shards, p)
	}
	merged := filepath.Join(dir, "merged.json")
	md := filepath.Join(dir, "summary.md")
	code, _, errOut = cliWithMerge(t, append([]string{"merge-summaries", "--baseline", base, "--out", merged, "--markdown", md}, shards...)...)
	assert.Equal(t, exitOK, code, "4 shards merged against the baseline: %s", errOut)
	m := readJSON[fuzz.Report](t, merged)
	assert.Equal(t, groupSummary(again.Groups), groupSummary(m.Groups), "4 shards merged have the unsharded groups")

	mutant := string(model.IgnoreTabOwner)
	js = filepath.Join(dir, "mutant.json")
	ju := filepath.Join(dir, "mutant.xml")
	code, out, errOut = cli(t, append(campaign, "--baseline", base, "--mutant", mutant, "--json", js, "--junit", ju)...)
	assert.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, errOut, "new groups (not in the baseline)")
	mu := readJSON[fuzz.Report](t, js)
	require.NotEmpty(t, mu.Groups)
	assert.True(t, mu.Groups[0].New, "new groups are listed first")
	var newInvs []string
	for _, g := range mu.Groups {
		if g.New {
			assert.Equal(t, "new", g.Baseline)
			newInvs = append(newInvs, g.Invariant)
		}
	}
	var mi model.MutantInfo
	for _, x := range model.Mutants() {
		if string(x.Name) == mutant {
			mi = x
		}
	}
	assert.True(t, slices.ContainsFunc(newInvs, func(inv string) bool { return slices.Contains(mi.Invariants, inv) }),
		"the mutant's failures (%v) are a new group: %v", mi.Invariants, newInvs)
	assert.Regexp(t, `(?m)^new\s+`+mi.Invariants[0], out, "the table says new")
	raw, err := os.ReadFile(ju)
	require.NoError(t, err)
	var suites junitSuites
	require.NoError(t, xml.Unmarshal(raw, &suites))
	triage := suites.Suites[len(suites.Suites)-1]
	assert.Equal(t, "orchsim triage", triage.Name)
	assert.Positive(t, triage.Failures, "JUnit fails the new groups")

	code, _, errOut = cliWithMerge(t, "merge-summaries", "--baseline", base, "--markdown", md, js)
	assert.Equal(t, exitViolation, code, errOut)
	mdRaw, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Contains(t, string(mdRaw), "| **new** | `"+newInvs[0]+"`")
	assert.True(t, strings.Contains(string(mdRaw), "new groups."), "the Markdown names the baseline verdict")
}

// The committed baselines parse, name registered switches, and the
// upstream one lists only reports upstream has not fixed.
func TestBaselines_Committed(t *testing.T) {
	for _, profile := range []string{model.PresetReported, model.PresetUpstream, model.PresetFixed} {
		path := filepath.Join("..", "..", "baselines", profile+".json")
		raw, err := os.ReadFile(path)
		require.NoError(t, err, profile)
		b, err := fuzz.ParseBaseline(raw)
		require.NoError(t, err, path)
		assert.Equal(t, profile, b.Profile, path)
		for _, g := range b.Groups {
			for _, sw := range g.Switches {
				var info *model.SwitchInfo
				for _, s := range model.Switches() {
					if string(s.Name) == sw {
						info = &s
					}
				}
				require.NotNil(t, info, "%s: switch %s is registered", path, sw)
				if profile == model.PresetUpstream {
					assert.Empty(t, info.Upstream, "%s: %s is still live upstream", path, sw)
				}
			}
		}
		if profile == model.PresetFixed {
			assert.Empty(t, b.Groups, "fixed expects no group")
		}
	}
}

// The HTML report of a failure names its group by root cause and links
// the reports it reproduces; a mutant's failure is a new group.
func TestHTML_NamesTheGroupAndLinksItsReports(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "r.html")
	code, _, errOut := cli(t, "run", "--scenario", "request-retry", "--seed", "5", "--profile", "fixed",
		"--unfix", "stable-request-namespace", "--html", page)
	require.Equal(t, exitViolation, code, errOut)
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(b), `<p class="group">Group: <code>one-effect-per-request</code> fixed by <code>stable-request-namespace</code>; reproduces <a href="https://github.com/pingdotgg/t3code/issues/16184">t3code#16184</a></p>`)

	code, _, errOut = cli(t, "run", "--scenario", "tab-ownership", "--seed", "1", "--profile", "fixed",
		"--mutant", string(model.IgnoreTabOwner), "--html", page)
	require.Equal(t, exitViolation, code, errOut)
	b, err = os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<strong>new</strong>: no known fix switch")
}

// The README's campaign section shows the grouped table of the campaign
// baselines/reported.json was written from: groups of the baseline, each naming
// a registered switch and the reports it cites.
func TestREADME_ShowsTheGroupedTable(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme := string(b)
	i := strings.Index(readme, "GROUP  INVARIANT")
	require.GreaterOrEqual(t, i, 0, "the README shows fuzz's grouped table")
	raw, err := os.ReadFile("../../baselines/reported.json")
	require.NoError(t, err)
	bl, err := fuzz.ParseBaseline(raw)
	require.NoError(t, err)
	var rows []string
	for _, line := range strings.Split(readme[i:], "\n")[1:] {
		if strings.HasPrefix(line, "groups: ") {
			break
		}
		f := strings.Fields(line)
		require.GreaterOrEqual(t, len(f), 5, line)
		assert.Equal(t, "known", f[0], line)
		switches := strings.Split(f[2], "+")
		assert.Equal(t, strings.Join(fuzz.NewBaseline("", nil, []fuzz.TriageGroup{{Invariant: f[1], Switches: switches,
			Reports: reportsOf(switches)}}).Groups[0].Reports, " "), strings.Join(f[3:len(f)-2], " "), "%s names its switches' reports", line)
		rows = append(rows, fuzz.KeyString(f[1], switches))
	}
	var want []string
	for _, g := range bl.Groups {
		want = append(want, fuzz.KeyString(g.Invariant, g.Switches))
	}
	// The baseline also lists the rarer combinations other campaigns met
	// (an unshrunk campaign, the hunts): a superset of the README's one
	// campaign, never missing a group it shows.
	assert.Subset(t, want, rows, "baselines/reported.json has every group of the README's table")
	assert.GreaterOrEqual(t, len(rows), len(want)*4/5, "the README's table shows most of the baseline's groups")
}

func reportsOf(switches []string) []string {
	var out []string
	for _, name := range switches {
		for _, s := range model.Switches() {
			if string(s.Name) == name {
				for _, r := range s.Reports {
					if !slices.Contains(out, string(r)) {
						out = append(out, string(r))
					}
				}
			}
		}
	}
	return out
}
