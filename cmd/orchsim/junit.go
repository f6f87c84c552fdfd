package main

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/orchsim/orchsim/fuzz"
	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/report"
	"github.com/orchsim/orchsim/scenarios"
)

// JUnit XML, in the common shape CI systems read: one testsuite per
// scenario, one testcase per (scenario, invariant), a failure element per
// failing invariant carrying the seed, the shrunk story and the replay
// command.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

// junitBytes is the --junit report of a campaign.
func junitBytes(names []string, c *fuzz.Campaign, sum *fuzz.Summary) ([]byte, error) {
	out := junitSuites{Name: "orchsim fuzz"}
	for _, name := range names {
		sc, err := scenarios.Lookup(name)
		if err != nil {
			return nil, err
		}
		suite := junitSuite{Name: name}
		invs := append([]string{}, sc.Invariants...)
		// Failures of pseudo-invariants (model panics, budgets) get a case too.
		// So do obligations, and invariants broken only after another's
		// violation (keep-going).
		for _, f := range sum.Failures {
			if f.Scenario != name {
				continue
			}
			if !contains(invs, f.Invariant) {
				invs = append(invs, f.Invariant)
			}
			for _, l := range f.Later {
				if l.Follows == "" && !contains(invs, l.Invariant) {
					invs = append(invs, l.Invariant)
				}
			}
		}
		for _, inv := range invs {
			tc := junitCase{Name: inv, Classname: "orchsim." + name}
			var seeds, later []string
			lowest := "" // sum.Failures is in seed order: the first failing seed, first or later
			for _, f := range sum.Failures {
				if f.Scenario != name {
					continue
				}
				if f.Invariant == inv {
					seeds = append(seeds, fmt.Sprint(f.Seed))
					lowest = cmp.Or(lowest, seeds[len(seeds)-1])
					continue
				}
				// Broken after the seed's first violation (keep-going),
				// not following from it: a failure of this invariant too.
				for _, l := range f.Later {
					if l.Invariant == inv && l.Follows == "" {
						later = append(later, fmt.Sprint(f.Seed))
						lowest = cmp.Or(lowest, later[len(later)-1])
						break
					}
				}
			}
			if len(seeds)+len(later) > 0 {
				var b strings.Builder
				if len(seeds) > 0 {
					fmt.Fprintf(&b, "failing seeds: %s\n", strings.Join(seeds, " "))
				}
				if len(later) > 0 {
					fmt.Fprintf(&b, "failing after another invariant's violation (keep-going): %s\n", strings.Join(later, " "))
				}
				for _, g := range sum.Later {
					if g.Scenario != name || g.Invariant != inv {
						continue
					}
					fmt.Fprintf(&b, "\nlater violations (first seed %d, %s): %s\n", g.Seed, seedsN(g.Count), g.Signature)
					if g.ReplayFile != "" {
						fmt.Fprintf(&b, "replay: orchsim replay %s\n", g.ReplayFile)
					} else {
						res := scenarios.Result{Scenario: name, Seed: g.Seed, Profile: c.Profile, Strategy: c.Strategy, Horizon: sc.Horizon}
						fmt.Fprintf(&b, "replay: %s --keep-going\n", report.RunCommand(&res))
					}
				}
				for _, st := range sum.Stories {
					if st.Scenario != name || st.Invariant != inv {
						continue
					}
					fmt.Fprintf(&b, "\nstory (seed %d, %d failing seeds):\n", st.Seed, st.Count)
					for _, l := range st.Timeline {
						b.WriteString(l + "\n")
					}
					if st.ReplayFile != "" {
						fmt.Fprintf(&b, "replay: orchsim replay %s\n", st.ReplayFile)
					} else {
						// Every flag that changes the run: the profile with
						// its --fix or --unfix, strategy, horizon.
						res := scenarios.Result{Scenario: name, Seed: st.Seed, Profile: c.Profile, Strategy: c.Strategy, Horizon: sc.Horizon}
						fmt.Fprintf(&b, "replay: %s\n", report.RunCommand(&res))
					}
				}
				info, _ := invariants.Lookup(inv)
				msg := fmt.Sprintf("%s violated in %d seeds (first %s)", inv, len(seeds)+len(later), lowest)
				if len(later) > 0 {
					msg += fmt.Sprintf(", %d of them after another invariant's violation", len(later))
				}
				tc.Failure = &junitFailure{Message: msg,
					Type: "violation", Body: b.String() + info.Property}
				suite.Failures++
			}
			suite.Cases = append(suite.Cases, tc)
			suite.Tests++
		}
		out.Tests += suite.Tests
		out.Failures += suite.Failures
		out.Suites = append(out.Suites, suite)
	}
	if groups := triageSuite(c, sum); len(groups.Cases) > 0 {
		out.Tests += groups.Tests
		out.Failures += groups.Failures
		out.Suites = append(out.Suites, groups)
	}
	b, err := xml.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// triageSuite is the JUnit suite "orchsim triage": a testcase per group of
// failures by root cause (fuzz.TriageGroup), failing when the group is new
// (no known fix explains it, or --baseline does not list it).
func triageSuite(c *fuzz.Campaign, sum *fuzz.Summary) junitSuite {
	r, err := c.Report(sum)
	suite := junitSuite{Name: "orchsim triage"}
	if err != nil {
		return suite
	}
	for _, g := range r.Groups {
		name := g.Invariant + " fixed by " + strings.Join(g.Switches, "+")
		if len(g.Switches) == 0 {
			name = g.Invariant + " (no known fix)"
		}
		tc := junitCase{Name: name, Classname: "orchsim.triage"}
		if g.New {
			why := "no known fix switch makes it pass"
			if g.Baseline == "new" && len(g.Switches) > 0 {
				why = "the baseline does not list it"
			}
			tc.Failure = &junitFailure{Message: fmt.Sprintf("new group: %s, %d failures, first %s seed %d", g.Invariant, g.Failures, g.FirstScenario, g.FirstSeed),
				Type: "new-group", Body: why + "\nreproduces: " + strings.Join(g.Reports, " ") + "\n"}
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, tc)
		suite.Tests++
	}
	return suite
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
