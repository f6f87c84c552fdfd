package fuzz

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/orchsim/orchsim/triage"
)

// TriageGroup is a campaign's failures of one root cause: one invariant
// and the minimal set of fix switches that makes them pass
// (triage.MinimalFixes, computed once per signature group from its first
// seed's shrunk run). A group no known switch explains is New: what a
// nightly campaign exists to find.
type TriageGroup struct {
	Invariant string `json:"invariant"`
	// Switches are the fixes, sorted; empty for a new group.
	Switches []string `json:"switches"`
	// Reports are the public reports the switches cite ("reproduces
	// t3code#16184"), with their addresses in ReportURLs.
	Reports    []string `json:"reports"`
	ReportURLs []string `json:"report_urls"`
	// New: no known switch makes it pass, or (fuzz --baseline) the
	// baseline does not list it.
	New bool `json:"new"`
	// Baseline says how the group stands against fuzz --baseline:
	// "known" (the baseline lists it), "new" (it does not), or "" without
	// a baseline.
	Baseline string `json:"baseline,omitempty"`
	// Failures counts the failing (seed, invariant) pairs of the group;
	// FirstSeed and FirstScenario name the lowest (by seed, then scenario).
	Failures      int    `json:"failures"`
	FirstSeed     uint64 `json:"first_seed"`
	FirstScenario string `json:"first_scenario"`
	// Scenarios are the scenarios it failed in, sorted; Signatures how
	// many signature groups it gathers.
	Scenarios  []string `json:"scenarios"`
	Signatures int      `json:"signatures"`
	// ReplayFile is the replay file of the story its first seed tells,
	// when the campaign wrote one.
	ReplayFile string `json:"replay_file,omitempty"`
}

// Key is the group's triage key.
func (g *TriageGroup) Key() triage.Key {
	return triage.Key{Invariant: g.Invariant, Switches: g.Switches}
}

// KeyString names a (invariant, switches) pair as baselines and tables
// compare them: "invariant switch+switch", or "invariant (new)".
func KeyString(invariant string, switches []string) string {
	return triage.Key{Invariant: invariant, Switches: switches}.String()
}

// StoryKeys is the set of root-cause keys (KeyString) that s's stories
// tell: a later violation of one of them is a bug also seen first
// elsewhere, not one hidden behind another.
func (s *Summary) StoryKeys() map[string]bool {
	told := map[string]bool{}
	for _, st := range s.Stories {
		for _, g := range st.Groups {
			told[KeyString(st.Invariant, g.Key.Switches)] = true
		}
	}
	return told
}

// StoryKeys is Summary.StoryKeys for a report read back from JSON.
func (r *Report) StoryKeys() map[string]bool {
	told := map[string]bool{}
	for _, st := range r.Stories {
		for _, g := range st.Groups {
			told[KeyString(st.Invariant, g.Switches)] = true
		}
	}
	return told
}

// TriageGroups groups the signature groups of stories by their triage key
// (invariant, switches): a signature group written before triage (no
// switches recorded) counts as new. The result depends only on the
// signature groups, so a shard merge (which keeps per signature the
// lowest seed's group) gives exactly the unsharded groups. New groups come
// first, then by invariant and switches.
func TriageGroups(stories []ReportStory, later []ReportLater) []TriageGroup {
	at := map[string]int{}
	out := []TriageGroup{}
	type sig struct {
		st    ReportStory
		g     ReportGroup
		first bool
	}
	var sigs []sig
	for _, st := range stories {
		for j, g := range st.Groups {
			sigs = append(sigs, sig{st, g, j == 0})
		}
	}
	for _, l := range later {
		sigs = append(sigs, sig{ReportStory{Scenario: l.Scenario, Invariant: l.Invariant},
			ReportGroup{Signature: l.Signature, Seed: l.Seed, Count: l.Count, Switches: l.Switches}, false})
	}
	{
		for _, s := range sigs {
			st, g := s.st, s.g
			sw := g.Switches
			if sw == nil {
				sw = []string{}
			}
			k := KeyString(st.Invariant, sw)
			i, ok := at[k]
			if !ok {
				i = len(out)
				at[k] = i
				reports := triage.Reports(sw)
				out = append(out, TriageGroup{Invariant: st.Invariant, Switches: sw, Reports: reports,
					ReportURLs: triage.ReportURLs(reports), New: len(sw) == 0,
					FirstSeed: g.Seed, FirstScenario: st.Scenario, Scenarios: []string{}})
			}
			tg := &out[i]
			tg.Failures += g.Count
			tg.Signatures++
			if !slices.Contains(tg.Scenarios, st.Scenario) {
				tg.Scenarios = append(tg.Scenarios, st.Scenario)
				sort.Strings(tg.Scenarios)
			}
			if g.Seed < tg.FirstSeed || g.Seed == tg.FirstSeed && st.Scenario <= tg.FirstScenario || !ok {
				tg.FirstSeed, tg.FirstScenario, tg.ReplayFile = g.Seed, st.Scenario, ""
				if s.first {
					tg.ReplayFile = st.ReplayFile
				}
			}
		}
	}
	SortGroups(out)
	return out
}

// SortGroups orders groups: new first, then by invariant, then switches.
func SortGroups(gs []TriageGroup) {
	sort.SliceStable(gs, func(i, j int) bool {
		a, b := gs[i], gs[j]
		if a.New != b.New {
			return a.New
		}
		if a.Invariant != b.Invariant {
			return a.Invariant < b.Invariant
		}
		return strings.Join(a.Switches, "+") < strings.Join(b.Switches, "+")
	})
}

// GroupsMarkdown renders the failures grouped by root cause as a Markdown
// table (merge-summaries --markdown), new groups first, each known one
// linking the reports it reproduces.
func GroupsMarkdown(groups []TriageGroup) string {
	if len(groups) == 0 {
		return ""
	}
	var b strings.Builder
	news := 0
	for _, g := range groups {
		if g.New {
			news++
		}
	}
	fmt.Fprintf(&b, "\n### Groups by root cause: %d, %d new\n\n", len(groups), news)
	b.WriteString("| group | invariant | fixed by | reproduces | failures | first seed |\n| --- | --- | --- | --- | ---: | --- |\n")
	for _, g := range groups {
		status := "known"
		if g.New {
			status = "**new**"
		}
		fixes, reports := "(no known fix)", "-"
		if len(g.Switches) > 0 {
			var sw, rs []string
			for _, s := range g.Switches {
				sw = append(sw, "`"+s+"`")
			}
			for i, r := range g.Reports {
				if i < len(g.ReportURLs) && g.ReportURLs[i] != "" {
					r = "[" + r + "](" + g.ReportURLs[i] + ")"
				}
				rs = append(rs, r)
			}
			fixes, reports = strings.Join(sw, " + "), strings.Join(rs, ", ")
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %d | %s/%d |\n", status, g.Invariant, fixes, reports, g.Failures, g.FirstScenario, g.FirstSeed)
	}
	return b.String()
}
