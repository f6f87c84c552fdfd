package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/orchsim/orchsim/model"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/orchsim/orchsim/replay"
)

// Merged is the merge of the reports of a sharded campaign's shards: the
// fields of one Report, added up, plus which shards were merged and which
// are missing. It merges again, as the shard set ShardsMerged (so a
// partial merge and the remaining shards merge too).
type Merged struct {
	Report
	// Shards is the campaign's shard count (n of --shard i/n).
	Shards int `json:"shards"`
	// ShardsMerged lists the merged shards' indexes; ShardsMissing the
	// indexes below Shards that no summary covered.
	ShardsMerged  []int `json:"shards_merged"`
	ShardsMissing []int `json:"shards_missing"`
	// ElapsedMsTotal adds the shards' wall-clock times; elapsed_ms is the
	// longest shard (the campaign's wall-clock time when they ran at once).
	ElapsedMsTotal int64 `json:"elapsed_ms_total"`
	// Sources are the merged files, in the order given.
	Sources []string `json:"sources"`

	// Unchecked lists the campaign fields no merged summary had (written
	// by an older orchsim): the merge could not check that the shards agree
	// on them, and MarshalJSON leaves them out, so that merging the output
	// warns again.
	Unchecked []string `json:"-"`
	// InterruptedIn lists the merged sources that say "interrupted".
	InterruptedIn []string `json:"-"`
	// has says which campaign fields a parsed summary had.
	has map[string]bool
}

// ParseSummary decodes a Report or a Merged one (Shards > 0) strictly: a
// leading UTF-8 byte-order mark is skipped (RFC 8259 allows a reader to
// ignore it; PowerShell writes one), and a second value after the object,
// a key given twice ("interrupted": true, then false) or in another case
// ("Profile") is refused, as in replay files, as is a summary without
// scenarios, shard or profile.
func ParseSummary(b []byte) (*Merged, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	var s Merged
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("not a fuzz --json summary: %w", err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("not a fuzz --json summary: more data after the JSON object ends at byte %d", end)
	}
	if len(s.Scenarios) == 0 || s.Shard == "" || s.Profile == "" {
		return nil, errors.New("not a fuzz --json summary (no scenarios, shard or profile)")
	}
	fields, err := replay.ScanKeys(b, reflect.TypeFor[Merged]())
	if err != nil {
		return nil, fmt.Errorf("not a fuzz --json summary: %w", err)
	}
	s.has = map[string]bool{}
	for _, f := range s.CampaignFields() {
		s.has[f.Name] = fields[f.Name]
	}
	if err := checkLater(&s); err != nil {
		return nil, fmt.Errorf("not a fuzz --json summary: %w", err)
	}
	return &s, nil
}

// checkLater refuses later_violations a fuzz run cannot have written: a
// keep-going summary whose list is null or missing (a keep-going campaign
// always writes one, [] when empty), an entry with no scenario, invariant
// or signature, a count below 1, or a switch this orchsim does not know.
func checkLater(s *Merged) error {
	if s.KeepGoing && s.Later == nil {
		return errors.New("keep_going is true but later_violations is null or missing (a keep-going campaign writes a list, [] when empty)")
	}
	known := map[string]bool{}
	for _, sw := range model.Switches() {
		known[string(sw.Name)] = true
	}
	for i, l := range s.Later {
		if l.Scenario == "" || l.Invariant == "" || l.Signature == "" {
			return fmt.Errorf("later_violations[%d] needs a scenario, an invariant and a signature", i)
		}
		if l.Count < 1 {
			return fmt.Errorf("later_violations[%d] (%s / %s): count %d is not a positive number of violations", i, l.Scenario, l.Invariant, l.Count)
		}
		for _, sw := range l.Switches {
			if !known[sw] {
				return fmt.Errorf("later_violations[%d] (%s / %s): unknown switch %q (orchsim list names them)", i, l.Scenario, l.Invariant, sw)
			}
		}
	}
	return nil
}

// CampaignField is one field of a report that names its campaign.
type CampaignField struct{ Name, Value string }

// CampaignFields lists the fields that name a report's campaign:
// everything its results depend on but the shard index (the shard count
// is checked on its own). Two shards of one campaign agree on every one.
func (r *Report) CampaignFields() []CampaignField {
	return []CampaignField{
		{"scenarios", strings.Join(r.Scenarios, ",")},
		{"horizon_ms", fmt.Sprint(r.HorizonMs)},
		{"profile", r.Profile},
		{"strategy", r.Strategy},
		{"start", strconv.FormatUint(r.Start, 10)},
		{"seeds", strconv.FormatUint(r.Seeds, 10)},
		{"budget_ms", strconv.FormatInt(r.BudgetMs, 10)},
		{"shrink_runs", strconv.Itoa(r.ShrinkRuns)},
		{"shrink_budget_ms", strconv.FormatInt(r.ShrinkBudgetMs, 10)},
		{"keep_going", strconv.FormatBool(r.KeepGoing)},
	}
}

// has reports whether s, as parsed, had the campaign field name (a
// Merged not parsed has them all).
func (s *Merged) hasField(name string) bool { return s.has == nil || s.has[name] }

// SameCampaign returns an error naming the first field in which s (read
// from path) differs from first (read from firstPath). A field one of
// them lacks (a summary written before the field was added) is named as
// absent, not read as 0; one both lack cannot be compared.
func SameCampaign(path string, s *Merged, firstPath string, first *Merged) error {
	want := first.CampaignFields()
	for j, got := range s.CampaignFields() {
		switch hasGot, hasWant := s.hasField(got.Name), first.hasField(got.Name); {
		case !hasGot && !hasWant:
		case !hasGot:
			return fmt.Errorf("%s has no %s (written by an older orchsim), but %s has %s %s: cannot tell it is the same campaign",
				path, got.Name, firstPath, got.Name, want[j].Value)
		case !hasWant:
			return fmt.Errorf("%s: %s %s, but %s has no %s (written by an older orchsim): cannot tell it is the same campaign",
				path, got.Name, got.Value, firstPath, got.Name)
		case got.Value != want[j].Value:
			return fmt.Errorf("%s: %s %s, but %s has %s: not the same campaign", path, got.Name, got.Value, firstPath, want[j].Value)
		}
	}
	return nil
}

// ShardsOf returns the shard indexes a summary covers and the shard count:
// "i/n" for a fuzz summary, shards_merged of shards for a merged one.
func ShardsOf(s *Merged) ([]int, int, error) {
	if s.Shards == 0 {
		is, ns, ok := strings.Cut(s.Shard, "/")
		i, err1 := strconv.Atoi(is)
		n, err2 := strconv.Atoi(ns)
		if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
			return nil, 0, fmt.Errorf("shard %q is not i/n", s.Shard)
		}
		return []int{i}, n, nil
	}
	if len(s.ShardsMerged) == 0 {
		return nil, 0, errors.New("a merged summary of no shard")
	}
	for _, i := range s.ShardsMerged {
		if i < 0 || i >= s.Shards {
			return nil, 0, fmt.Errorf("shards_merged has %d, not below shards %d", i, s.Shards)
		}
	}
	return s.ShardsMerged, s.Shards, nil
}

// Merge merges the summaries read from paths (paths[i] names
// summaries[i] in errors and Sources): they must be shards of one
// campaign (SameCampaign, one shard count) with no shard twice. Seeds,
// failures, probes, rows and determinism checks add up; elapsed_ms is the longest shard's;
// failures are grouped by signature across shards, each group told by
// its lowest seed, and groups whose stories match are one story (so the
// merge has exactly the unsharded campaign's stories, see Stories). A
// story's replay file is kept as the summary has it (the caller resolves
// it against the summary's directory first, if it wants).
func Merge(paths []string, summaries []*Merged) (*Merged, error) {
	m := &Merged{Report: Report{Invariants: []ReportRow{}, Probes: []ReportProbe{}, Stories: []ReportStory{},
		FailedSeeds: []FailedSeed{}, Groups: []TriageGroup{}, Later: []ReportLater{}}, ShardsMerged: []int{}, ShardsMissing: []int{}, Sources: paths}
	if len(summaries) == 0 || len(paths) != len(summaries) {
		return nil, errors.New("merge needs at least one summary, and a path for each")
	}
	shardFrom := map[int]string{}
	probeAt := map[string]int{}
	type rowKey struct{ scenario, invariant string }
	rows := map[rowKey]*ReportRow{}
	var rowOrder []rowKey
	groups := Groups{}
	later := map[groupKey]ReportLater{}
	first := summaries[0]
	for k, s := range summaries {
		path := paths[k]
		covers, n, err := ShardsOf(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if k == 0 {
			m.Shards = n
			m.Scenarios, m.HorizonMs, m.Profile, m.Unfix, m.Strategy = s.Scenarios, s.HorizonMs, s.Profile, s.Unfix, s.Strategy
			m.Start, m.Seeds, m.BudgetMs, m.ShrinkRuns, m.ShrinkBudgetMs = s.Start, s.Seeds, s.BudgetMs, s.ShrinkRuns, s.ShrinkBudgetMs
			m.KeepGoing = s.KeepGoing
		}
		if err := SameCampaign(path, s, paths[0], first); err != nil {
			return nil, err
		}
		if n != m.Shards {
			return nil, fmt.Errorf("%s: a campaign of %d shards, but %s has %d", path, n, paths[0], m.Shards)
		}
		for _, i := range covers {
			if shardFrom[i] != "" {
				return nil, fmt.Errorf("%s: shard %d/%d is also in %s", path, i, n, shardFrom[i])
			}
			shardFrom[i] = path
		}
		m.SeedsRun += s.SeedsRun
		m.BranchRuns += s.BranchRuns
		m.Failures += s.Failures
		m.Interrupted = m.Interrupted || s.Interrupted
		if s.Interrupted {
			m.InterruptedIn = append(m.InterruptedIn, path)
		}
		m.ElapsedMs = max(m.ElapsedMs, s.ElapsedMs)
		if s.Shards > 0 {
			m.ElapsedMsTotal += s.ElapsedMsTotal
		} else {
			m.ElapsedMsTotal += s.ElapsedMs
		}
		for _, p := range s.Probes {
			if j, ok := probeAt[p.Name]; ok {
				m.Probes[j].Hits += p.Hits
				continue
			}
			probeAt[p.Name] = len(m.Probes)
			m.Probes = append(m.Probes, p)
		}
		for _, r := range s.Invariants {
			key := rowKey{r.Scenario, r.Invariant}
			if have := rows[key]; have != nil {
				have.Failures += r.Failures
				have.FirstSeed = min(have.FirstSeed, r.FirstSeed)
				continue
			}
			r := r
			rows[key] = &r
			rowOrder = append(rowOrder, key)
		}
		for _, st := range s.Stories {
			groups.Add(st)
		}
		for _, l := range s.Later {
			key := groupKey{l.Scenario, l.Signature}
			if have, ok := later[key]; ok {
				count := have.Count + l.Count
				if l.Seed < have.Seed {
					have = l
				}
				have.Count = count
				later[key] = have
				continue
			}
			later[key] = l
		}
		m.FailedSeeds = append(m.FailedSeeds, s.FailedSeeds...)
		if d := s.Determinism; d != nil {
			if m.Determinism == nil {
				m.Determinism = &Determinism{Percent: d.Percent, GOMAXPROCS: d.GOMAXPROCS, CheckGOMAXPROCS: d.CheckGOMAXPROCS,
					Mismatches: []Mismatch{}}
			}
			m.Determinism.Checked += d.Checked
			m.Determinism.Mismatches = append(m.Determinism.Mismatches, d.Mismatches...)
		}
	}
	for i := 0; i < m.Shards; i++ {
		if shardFrom[i] != "" {
			m.ShardsMerged = append(m.ShardsMerged, i)
		} else {
			m.ShardsMissing = append(m.ShardsMissing, i)
		}
	}
	m.Shard = fmt.Sprintf("%d of %d shards", len(m.ShardsMerged), m.Shards)
	for _, f := range first.CampaignFields() {
		if !first.hasField(f.Name) {
			m.Unchecked = append(m.Unchecked, f.Name) // then no summary has it
		}
	}
	m.Stories = groups.Stories()
	m.Later = []ReportLater{}
	for _, l := range later {
		m.Later = append(m.Later, l)
	}
	sort.Slice(m.Later, func(i, j int) bool {
		a, b := m.Later[i], m.Later[j]
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		if a.Seed != b.Seed {
			return a.Seed < b.Seed
		}
		return a.Signature < b.Signature
	})
	m.Groups = TriageGroups(m.Stories, m.Later)
	for _, k := range rowOrder {
		r := rows[k]
		r.Stories = 0
		for _, st := range m.Stories {
			if st.Scenario == r.Scenario && st.Invariant == r.Invariant {
				r.Stories++
			}
		}
		m.Invariants = append(m.Invariants, *r)
	}
	sort.Slice(m.Invariants, func(i, j int) bool {
		a, b := m.Invariants[i], m.Invariants[j]
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		return a.Invariant < b.Invariant
	})
	sort.SliceStable(m.FailedSeeds, func(i, j int) bool {
		a, b := m.FailedSeeds[i], m.FailedSeeds[j]
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		return a.Seed < b.Seed
	})
	return m, nil
}

// groupKey names a signature group of a campaign.
type groupKey struct{ scenario, signature string }

// toldGroup is a signature group and the shrunk story of its first seed.
type toldGroup struct {
	group ReportGroup // without its own story's actions and timeline
	story ReportStory // the story told by group.Seed, without groups
}

// Groups are the signature groups of a campaign's shards, as Merge adds
// them up (Add), and the stories they tell (Stories).
type Groups map[groupKey]*toldGroup

// Add adds the signature groups of a shard's story: per signature the
// counts add up and the lowest seed's group, with the story its seed
// shrank to, is kept. A story from before groups were recorded is one
// group of its own.
func (groups Groups) Add(st ReportStory) {
	gs := st.Groups
	if len(gs) == 0 {
		gs = []ReportGroup{{Signature: "story " + st.Invariant + " " + st.Fingerprint, Seed: st.Seed, Count: st.Count}}
	}
	for j, g := range gs {
		t := toldGroup{group: ReportGroup{Signature: g.Signature, Seed: g.Seed, Count: g.Count, Switches: g.Switches}, story: st}
		t.story.Groups = nil
		if j > 0 {
			// Its seed shrank to the same story as gs[0]'s: told by its own timeline, with no replay file.
			t.story.Seed, t.story.Actions, t.story.Timeline, t.story.ReplayFile = g.Seed, g.Actions, g.Timeline, ""
		}
		key := groupKey{st.Scenario, g.Signature}
		have := groups[key]
		if have == nil {
			groups[key] = &t
			continue
		}
		count := have.group.Count + g.Count
		if g.Seed < have.group.Seed {
			*have = t
		}
		have.group.Count = count
	}
}

// Stories tells the stories of the groups as a campaign does: in order
// of (scenario, first seed), groups whose seeds shrank to the same story
// (scenario, invariant, story fingerprint) are one story, told by the
// lowest seed, with the counts added.
func (groups Groups) Stories() []ReportStory {
	all := make([]*toldGroup, 0, len(groups))
	for _, t := range groups {
		all = append(all, t)
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.story.Scenario != b.story.Scenario {
			return a.story.Scenario < b.story.Scenario
		}
		if a.group.Seed != b.group.Seed {
			return a.group.Seed < b.group.Seed
		}
		return a.group.Signature < b.group.Signature
	})
	type storyKey struct{ scenario, invariant, fingerprint string }
	at := map[storyKey]int{}
	stories := []ReportStory{}
	for _, t := range all {
		key := storyKey{t.story.Scenario, t.story.Invariant, t.story.Fingerprint}
		if i, ok := at[key]; ok {
			g := t.group
			g.Actions, g.Timeline = t.story.Actions, t.story.Timeline
			stories[i].Count += g.Count
			stories[i].Groups = append(stories[i].Groups, g)
			continue
		}
		st := t.story
		st.Count, st.Groups = t.group.Count, []ReportGroup{t.group}
		at[key] = len(stories)
		stories = append(stories, st)
	}
	return stories
}

// StrategyName is the campaign's strategy, "unknown" when no summary had one.
func (s *Merged) StrategyName() string {
	if s.Strategy == "" {
		return "unknown"
	}
	return s.Strategy
}

// StoryLabel says what a merged story's timeline is: the shrunk story,
// the failing run as it was (the shards ran with --shrink-runs 0), or,
// when no summary recorded shrink_runs, just the story.
func (s *Merged) StoryLabel() string {
	switch {
	case slices.Contains(s.Unchecked, "shrink_runs"):
		return "story"
	case s.ShrinkRuns == 0:
		return "story, not shrunk (--shrink-runs 0)"
	}
	return "shrunk story"
}

// MarshalJSON writes the merged summary's fields, but the campaign fields
// no merged summary had (Unchecked): absent, not made-up zeros, so that a
// merge of the output warns again that it cannot check them.
func (s *Merged) MarshalJSON() ([]byte, error) {
	type plain Merged // without this method
	b, err := json.Marshal((*plain)(s))
	if err != nil || len(s.Unchecked) == 0 {
		return b, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		if slices.Contains(s.Unchecked, key.(string)) {
			continue
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(value)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// ReplayFiles returns the distinct replay files m names (stories, later
// violations, groups), in that order.
func (m *Merged) ReplayFiles() []string {
	var out []string
	seen := map[string]bool{}
	add := func(f string) {
		if f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, st := range m.Stories {
		add(st.ReplayFile)
	}
	for _, l := range m.Later {
		add(l.ReplayFile)
	}
	for _, g := range m.Groups {
		add(g.ReplayFile)
	}
	return out
}

// RelativeTo is m with its replay files' paths made relative to dir (a
// merged summary's own directory), so that it names them from where it is,
// as a shard's summary does, not from where the merge ran; a path that
// cannot be related stays as it is. m is not changed.
func (m *Merged) RelativeTo(dir string) *Merged {
	c := *m
	c.Stories = append([]ReportStory(nil), m.Stories...)
	c.Later = append([]ReportLater(nil), m.Later...)
	c.Groups = append([]TriageGroup(nil), m.Groups...)
	base, err := filepath.Abs(dir)
	rel := func(file *string) {
		if *file == "" || err != nil {
			return
		}
		if abs, err := filepath.Abs(*file); err == nil {
			if r, err := filepath.Rel(base, abs); err == nil {
				*file = r
			}
		}
	}
	for i := range c.Stories {
		rel(&c.Stories[i].ReplayFile)
	}
	for i := range c.Later {
		rel(&c.Later[i].ReplayFile)
	}
	for i := range c.Groups {
		rel(&c.Groups[i].ReplayFile)
	}
	return &c
}
