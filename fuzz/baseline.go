package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"

	"github.com/orchsim/orchsim/replay"
)

// BaselineFormat names a known-groups baseline file.
const BaselineFormat = "orchsim-baseline"

// Baseline is a committed list of the groups (TriageGroup keys) a profile's
// campaign is expected to find: fuzz --baseline FILE exits 0 when every
// group it finds is listed, 1 when one is not (a new group), and
// --write-baseline FILE records a campaign's groups. A group no known fix
// explains is never listed: it is new whatever the file says.
type Baseline struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Profile and Scenarios name the campaign it was written from, for
	// the reader (a baseline is matched by its groups alone).
	Profile   string   `json:"profile"`
	Scenarios []string `json:"scenarios"`
	// Groups are the expected groups, sorted by invariant then switches.
	Groups []BaselineGroup `json:"groups"`
}

// BaselineGroup is one expected group: its key, and the reports its
// switches cite (for the reader; the key is what is compared).
type BaselineGroup struct {
	Invariant string   `json:"invariant"`
	Switches  []string `json:"switches"`
	Reports   []string `json:"reports"`
}

// NewBaseline is the baseline of a campaign's groups: every group a known
// fix explains (the new ones are left out: they stay new).
func NewBaseline(profile string, scenarios []string, groups []TriageGroup) *Baseline {
	b := &Baseline{Format: BaselineFormat, Version: 1, Profile: profile, Scenarios: scenarios, Groups: []BaselineGroup{}}
	for _, g := range groups {
		if len(g.Switches) == 0 {
			continue
		}
		b.Groups = append(b.Groups, BaselineGroup{Invariant: g.Invariant, Switches: g.Switches, Reports: g.Reports})
	}
	slices.SortFunc(b.Groups, func(x, y BaselineGroup) int {
		return compareStrings(KeyString(x.Invariant, x.Switches), KeyString(y.Invariant, y.Switches))
	})
	return b
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Marshal encodes the baseline as indented JSON with a final newline.
func (b *Baseline) Marshal() ([]byte, error) {
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// ParseBaseline decodes a baseline strictly, as summaries are read: one
// JSON object, no key twice or in another case, the format and version
// this build writes, every group with an invariant and a switch.
func ParseBaseline(data []byte) (*Baseline, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var b Baseline
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("not a baseline: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a baseline: more data after the JSON object")
	}
	if _, err := replay.ScanKeys(data, reflect.TypeFor[Baseline]()); err != nil {
		return nil, fmt.Errorf("not a baseline: %w", err)
	}
	if b.Format != BaselineFormat || b.Version != 1 {
		return nil, fmt.Errorf("not a baseline: format %q version %d (want %q version 1)", b.Format, b.Version, BaselineFormat)
	}
	for i, g := range b.Groups {
		if g.Invariant == "" || len(g.Switches) == 0 {
			return nil, fmt.Errorf("baseline group %d: needs an invariant and at least one switch (a group no fix explains is always new)", i+1)
		}
	}
	return &b, nil
}

// Has reports whether the baseline lists the group (invariant, switches).
func (b *Baseline) Has(invariant string, switches []string) bool {
	k := KeyString(invariant, switches)
	for _, g := range b.Groups {
		if KeyString(g.Invariant, g.Switches) == k {
			return true
		}
	}
	return false
}

// Covers reports whether the baseline accounts for the group (invariant,
// switches): it lists it, or the invariant fails in a listed group and
// every switch is one a listed group names. A profile with many bugs on
// meets ever new combinations of them, and a later violation (keep-going)
// is keyed on its signature's lowest seed in the campaign's range, so the
// same failure keys differently in another range: a baseline cannot list
// every key. What a nightly must turn red on is a failure no known fix
// explains, a bug the baseline never saw (a switch added since it was
// written), or an invariant it never saw fail; a known bug's known
// invariant, in another combination, is not new.
func (b *Baseline) Covers(invariant string, switches []string) bool {
	if b.Has(invariant, switches) {
		return true
	}
	if len(switches) == 0 {
		return false
	}
	known := map[string]bool{}
	failed := false
	for _, g := range b.Groups {
		failed = failed || g.Invariant == invariant
		for _, s := range g.Switches {
			known[s] = true
		}
	}
	for _, s := range switches {
		if !known[s] {
			return false
		}
	}
	return failed
}

// Apply judges groups against the baseline: a group it covers (Covers) is
// "known", any other "new" (and New); a group no known fix explains stays new. It
// returns the listed groups none of groups has (not found this time: a
// smaller campaign, or a bug fixed).
func (b *Baseline) Apply(groups []TriageGroup) (unseen []BaselineGroup) {
	for i := range groups {
		g := &groups[i]
		if len(g.Switches) > 0 && b.Covers(g.Invariant, g.Switches) {
			g.Baseline, g.New = "known", false
		} else {
			g.Baseline, g.New = "new", true
		}
	}
	SortGroups(groups)
	for _, bg := range b.Groups {
		found := false
		for _, g := range groups {
			found = found || KeyString(g.Invariant, g.Switches) == KeyString(bg.Invariant, bg.Switches)
		}
		if !found {
			unseen = append(unseen, bg)
		}
	}
	return unseen
}

// NewGroups counts the groups marked new.
func NewGroups(groups []TriageGroup) int {
	n := 0
	for _, g := range groups {
		if g.New {
			n++
		}
	}
	return n
}
