package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/orchsim/orchsim/fuzz"
)

// The later lines: one per root-cause group that has no story (a bug only
// seen behind another), naming its shrunk signature's file when one was
// shrunk, whatever the order; the later violations of groups that have a
// story are counted on one line.
func TestPrintResults_LaterLinePerHiddenGroup(t *testing.T) {
	js := &fuzz.Report{
		Invariants: []fuzz.ReportRow{{Scenario: "chaos", Invariant: "a", Failures: 1, FirstSeed: 1, Stories: 1}},
		Stories: []fuzz.ReportStory{{Scenario: "chaos", Invariant: "a", Seed: 1, Count: 1,
			Groups: []fuzz.ReportGroup{{Signature: "a1", Seed: 1, Count: 1, Switches: []string{"fix-a"}}}}},
		Later: []fuzz.ReportLater{
			{Scenario: "chaos", Invariant: "a", Signature: "a2", Seed: 2, Count: 3, Switches: []string{"fix-a"}, ReplayFile: "a2.json"},
			{Scenario: "chaos", Invariant: "b", Signature: "b1", Seed: 1, Count: 2, Switches: []string{"fix-b"}, ReplayFile: "b1.json"},
			{Scenario: "chaos", Invariant: "b", Signature: "b2", Seed: 4, Count: 1, Switches: []string{"fix-b"}, ReplayFile: "b2.json",
				Shrunk: true, Actions: 5, Alone: true},
			{Scenario: "request-retry", Invariant: "c", Signature: "c1", Seed: 7, Count: 1, Switches: []string{}, Shrunk: true},
		},
	}
	var out bytes.Buffer
	printResults(&out, js, false)
	var later []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "later") {
			later = append(later, l)
		}
	}
	assert.Equal(t, []string{
		"later b (fix-b): behind another violation in 3 seeds (2 signatures), first chaos/1; chaos/4 shrunk alone to 5 actions, replay: orchsim replay b2.json",
		"later c (no known fix): behind another violation in 1 seed (1 signature), first request-retry/7; request-retry/7 shrunk to 0 actions, still behind another",
		"later: 1 more signature broken after another invariant's violation in groups that have a story (listed in --json later_violations)",
	}, later)
}
