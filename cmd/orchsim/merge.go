package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orchsim/orchsim/replay"
)

// mergedSummary is the merge of the --json summaries of a sharded fuzz
// campaign: the fields of one summary, added up, plus which shards were
// merged and which are missing. It merges again, as the shard set
// ShardsMerged (so a partial merge and the remaining shards merge too).
type mergedSummary struct {
	jsonSummary
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

	// has says which fields of campaign() a summary read had (older
	// summaries lack some); unchecked lists those no merged summary had
	// (left out of --out, so merging it again warns again).
	has       map[string]bool
	unchecked []string
	// interruptedIn lists the merged files that say "interrupted".
	interruptedIn []string
}

// newMergeCmd is `orchsim merge-summaries`: the last job of a nightly
// campaign, which adds up the shards' fuzz --json summaries.
func newMergeCmd() *cobra.Command {
	var out, markdown string
	cmd := &cobra.Command{
		Use:   "merge-summaries SUMMARY.json...",
		Short: "Merge the --json summaries of a sharded fuzz campaign",
		Long: `Merge the fuzz --json summaries of the shards of one campaign: the summaries must
agree on everything the results depend on but the shard index (scenarios and their
horizons, profile, strategy, --start, --seeds or --budget, --shrink-runs,
--shrink-budget, and n in --shard i/n). Seeds and failures are added up; failures
are grouped by signature across shards, each group told by its lowest seed, and
groups whose shrunk stories match are one story, so the merge has exactly the
stories of the unsharded campaign. The shards that no summary covers are listed. A
story's replay file is resolved against its summary's directory when it is there
(the layout of a downloaded artifact).

--out FILE writes the merged summary as JSON (the fields of a fuzz --json summary,
plus shards, shards_merged, shards_missing, elapsed_ms_total and sources); it can be
merged again, as the shards it covers. --markdown FILE appends a Markdown report to
FILE (e.g. $GITHUB_STEP_SUMMARY). Both are checked before the merge: a file that
cannot be written, or both naming one file, is bad usage.

--out and --markdown must not name an input summary (by path, link or hard link):
that is bad usage, and nothing is written.

Exit status: 0 no failure in any shard; 1 failures found (even when shards are
missing or were interrupted: the failures are real); 2 bad usage or a file that is
not a summary of the same campaign; 3 no failure, but shards are missing or a
shard was interrupted (SIGINT/SIGTERM: the campaign did not cover its range), or
--out or --markdown could not be written after the report was printed.`,
		Example: `  orchsim merge-summaries --out merged.json shards/*/summary.json
  orchsim merge-summaries --markdown "$GITHUB_STEP_SUMMARY" shards/*/summary.json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("merge-summaries needs at least one summary file (written by fuzz --json)")
			}
			if err := checkMergeOutputs(out, markdown, args); err != nil {
				return err
			}
			m, err := mergeSummaries(args)
			if err != nil {
				return err
			}
			if len(m.unchecked) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "orchsim: warning: no summary has %s (written by an older orchsim): "+
					"cannot check that they are shards of one campaign\n", strings.Join(m.unchecked, ", "))
			}
			printMerged(cmd.OutOrStdout(), m)
			// The files were checked before the merge; a write failing now
			// (a full disk) comes after the report: exit 3.
			if err := saveMerged(m, out, markdown); err != nil {
				return err
			}
			// Failures found are real, whatever else happened: exit 1.
			// Otherwise a missing or interrupted shard means the campaign
			// did not cover its range: exit 3, not a clean 0.
			if m.Failures > 0 {
				return &exitError{code: exitViolation}
			}
			var gaps []string
			if len(m.ShardsMissing) > 0 {
				gaps = append(gaps, fmt.Sprintf("shards missing: %s of %d", joinInts(m.ShardsMissing), m.Shards))
			}
			if len(m.interruptedIn) > 0 {
				gaps = append(gaps, "interrupted: "+strings.Join(m.interruptedIn, ", "))
			}
			if len(gaps) > 0 {
				return &exitError{code: exitHarness, msg: strings.Join(gaps, "; ") + " (the campaign did not cover its range)"}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write the merged summary as JSON to FILE")
	cmd.Flags().StringVar(&markdown, "markdown", "", "append a Markdown report to FILE (e.g. $GITHUB_STEP_SUMMARY)")
	return cmd
}

// readSummary reads one fuzz --json summary, or a merged one (Shards > 0);
// its errors are usage errors naming the file.
func readSummary(path string) (*mergedSummary, error) {
	if err := notDash("a summary", path); err != nil {
		return nil, err
	}
	b, err := replay.ReadInput(path, replay.MaxInputBytes)
	if err != nil {
		return nil, usageErr("cannot read summary %s: %v", path, err)
	}
	// A UTF-8 byte-order mark (PowerShell and some editors write one) is
	// not part of the JSON (RFC 8259 allows a reader to ignore it).
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	var s mergedSummary
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&s); err != nil {
		return nil, usageErr("%s: not a fuzz --json summary: %v", path, err)
	}
	// One object, then only white space: two summaries in one file
	// (cat a.json b.json) are not one shard.
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return nil, usageErr("%s: not a fuzz --json summary: more data after the JSON object ends at byte %d", path, end)
	}
	if len(s.Scenarios) == 0 || s.Shard == "" || s.Profile == "" {
		return nil, usageErr("%s: not a fuzz --json summary (no scenarios, shard or profile)", path)
	}
	// A key twice (the last would win: "interrupted": true, then false) or
	// in another case ("Profile") is refused, as in replay files.
	fields, err := replay.ScanKeys(b, reflect.TypeFor[mergedSummary]())
	if err != nil {
		return nil, usageErr("%s: not a fuzz --json summary: %v", path, err)
	}
	s.has = map[string]bool{}
	for _, f := range s.campaign() {
		s.has[f.name] = fields[f.name]
	}
	return &s, nil
}

// parseShardField reads the "i/n" of a summary's shard field.
func parseShardField(path, s string) (int, int, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, usageErr("%s: shard %q is not i/n", path, s)
	}
	return i, n, nil
}

// shardsOf returns the shard indexes a summary covers and the shard count:
// "i/n" for a fuzz summary, shards_merged of shards for a merged one.
func shardsOf(path string, s *mergedSummary) ([]int, int, error) {
	if s.Shards == 0 {
		i, n, err := parseShardField(path, s.Shard)
		return []int{i}, n, err
	}
	if len(s.ShardsMerged) == 0 {
		return nil, 0, usageErr("%s: a merged summary of no shard", path)
	}
	for _, i := range s.ShardsMerged {
		if i < 0 || i >= s.Shards {
			return nil, 0, usageErr("%s: shards_merged has %d, not below shards %d", path, i, s.Shards)
		}
	}
	return s.ShardsMerged, s.Shards, nil
}

// campaignField is one field of a summary that names its campaign.
type campaignField struct{ name, value string }

// campaign lists the fields that name a summary's campaign: everything
// its results depend on but the shard index (the shard count is checked
// on its own). Two shards of one campaign agree on every one.
func (s *jsonSummary) campaign() []campaignField {
	return []campaignField{
		{"scenarios", strings.Join(s.Scenarios, ",")},
		{"horizon_ms", fmt.Sprint(s.HorizonMs)},
		{"profile", s.Profile},
		{"strategy", s.Strategy},
		{"start", strconv.FormatUint(s.Start, 10)},
		{"seeds", strconv.FormatUint(s.Seeds, 10)},
		{"budget_ms", strconv.FormatInt(s.BudgetMs, 10)},
		{"shrink_runs", strconv.Itoa(s.ShrinkRuns)},
		{"shrink_budget_ms", strconv.FormatInt(s.ShrinkBudgetMs, 10)},
	}
}

// sameCampaign returns a usage error naming the first field in which the
// summary at path differs from the first summary's (at first). A field
// one of them lacks (a summary written before the field was added) is
// named as absent, not read as 0; one both lack cannot be compared.
func sameCampaign(path string, s *mergedSummary, first string, f *mergedSummary) error {
	want := f.campaign()
	for j, got := range s.campaign() {
		switch hasGot, hasWant := s.has[got.name], f.has[got.name]; {
		case !hasGot && !hasWant:
		case !hasGot:
			return usageErr("%s has no %s (written by an older orchsim), but %s has %s %s: cannot tell it is the same campaign",
				path, got.name, first, got.name, want[j].value)
		case !hasWant:
			return usageErr("%s: %s %s, but %s has no %s (written by an older orchsim): cannot tell it is the same campaign",
				path, got.name, got.value, first, got.name)
		case got.value != want[j].value:
			return usageErr("%s: %s %s, but %s has %s: not the same campaign", path, got.name, got.value, first, want[j].value)
		}
	}
	return nil
}

// mergeSummaries reads and merges the summaries at paths.
func mergeSummaries(paths []string) (*mergedSummary, error) {
	m := &mergedSummary{jsonSummary: jsonSummary{Invariants: []jsonRow{}, Probes: []jsonProbe{}, Stories: []jsonStory{},
		FailedSeeds: []jsonFailed{}}, ShardsMerged: []int{}, ShardsMissing: []int{}, Sources: paths}
	shardFrom := map[int]string{}
	probeAt := map[string]int{}
	type rowKey struct{ scenario, invariant string }
	rows := map[rowKey]*jsonRow{}
	var rowOrder []rowKey
	groups := map[groupKey]*toldGroup{}
	var first *mergedSummary
	for k, path := range paths {
		s, err := readSummary(path)
		if err != nil {
			return nil, err
		}
		covers, n, err := shardsOf(path, s)
		if err != nil {
			return nil, err
		}
		if k == 0 {
			first = s
			m.Shards = n
			m.Scenarios, m.HorizonMs, m.Profile, m.Strategy = s.Scenarios, s.HorizonMs, s.Profile, s.Strategy
			m.Start, m.Seeds, m.BudgetMs, m.ShrinkRuns, m.ShrinkBudgetMs = s.Start, s.Seeds, s.BudgetMs, s.ShrinkRuns, s.ShrinkBudgetMs
		}
		if err := sameCampaign(path, s, paths[0], first); err != nil {
			return nil, err
		}
		if n != m.Shards {
			return nil, usageErr("%s: a campaign of %d shards, but %s has %d", path, n, paths[0], m.Shards)
		}
		for _, i := range covers {
			if shardFrom[i] != "" {
				return nil, usageErr("%s: shard %d/%d is also in %s", path, i, n, shardFrom[i])
			}
			shardFrom[i] = path
		}
		m.SeedsRun += s.SeedsRun
		m.Failures += s.Failures
		m.Interrupted = m.Interrupted || s.Interrupted
		if s.Interrupted {
			m.interruptedIn = append(m.interruptedIn, path)
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
			if st.ReplayFile != "" && !filepath.IsAbs(st.ReplayFile) {
				if p := filepath.Join(filepath.Dir(path), st.ReplayFile); exists(p) {
					st.ReplayFile = p
				}
			}
			addGroups(groups, st)
		}
		m.FailedSeeds = append(m.FailedSeeds, s.FailedSeeds...)
	}
	for i := 0; i < m.Shards; i++ {
		if shardFrom[i] != "" {
			m.ShardsMerged = append(m.ShardsMerged, i)
		} else {
			m.ShardsMissing = append(m.ShardsMissing, i)
		}
	}
	m.Shard = fmt.Sprintf("%d of %d shards", len(m.ShardsMerged), m.Shards)
	for _, f := range first.campaign() {
		if !first.has[f.name] {
			m.unchecked = append(m.unchecked, f.name) // then no summary has it
		}
	}
	m.Stories = storiesOf(groups)
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
	group jsonGroup // without its own story's actions and timeline
	story jsonStory // the story told by group.Seed, without groups
}

// addGroups adds the signature groups of a shard's story to groups: per
// signature the counts add up and the lowest seed's group, with the story
// its seed shrank to, is kept. A story from before groups were recorded
// is one group of its own.
func addGroups(groups map[groupKey]*toldGroup, st jsonStory) {
	gs := st.Groups
	if len(gs) == 0 {
		gs = []jsonGroup{{Signature: "story " + st.Invariant + " " + st.Fingerprint, Seed: st.Seed, Count: st.Count}}
	}
	for j, g := range gs {
		t := toldGroup{group: jsonGroup{Signature: g.Signature, Seed: g.Seed, Count: g.Count}, story: st}
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

// storiesOf tells the stories of a campaign's signature groups as fuzz
// does: in order of (scenario, first seed), groups whose seeds shrank to
// the same story (scenario, invariant, story fingerprint) are one story,
// told by the lowest seed, with the counts added.
func storiesOf(groups map[groupKey]*toldGroup) []jsonStory {
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
	stories := []jsonStory{}
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
		st.Count, st.Groups = t.group.Count, []jsonGroup{t.group}
		at[key] = len(stories)
		stories = append(stories, st)
	}
	return stories
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// strategy is the campaign's strategy, "unknown" when no summary had one.
func (m *mergedSummary) strategy() string {
	if m.Strategy == "" {
		return "unknown"
	}
	return m.Strategy
}

// MarshalJSON writes the merged summary's fields, but the campaign fields
// no merged summary had (m.unchecked): absent, not made-up zeros, so that
// a merge of the output warns again that it cannot check them.
func (m *mergedSummary) MarshalJSON() ([]byte, error) {
	type plain mergedSummary // without this method
	b, err := json.Marshal((*plain)(m))
	if err != nil || len(m.unchecked) == 0 {
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
		if slices.Contains(m.unchecked, key.(string)) {
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

// printMerged writes the merged summary as fuzz prints its own.
func printMerged(w io.Writer, m *mergedSummary) {
	noun := "summaries"
	if len(m.Sources) == 1 {
		noun = "summary"
	}
	fmt.Fprintf(w, "merged %d %s: %s, scenarios=%s profile=%s strategy=%s\n", len(m.Sources), noun, m.Shard,
		strings.Join(m.Scenarios, ","), m.Profile, m.strategy())
	fmt.Fprintf(w, "fuzz: %d seeds, %d failures, %d distinct stories", m.SeedsRun, m.Failures, len(m.Stories))
	if m.Interrupted {
		fmt.Fprint(w, " (a shard was interrupted)")
	}
	fmt.Fprintln(w)
	if len(m.ShardsMissing) > 0 {
		fmt.Fprintf(w, "missing shards: %s of %d\n", joinInts(m.ShardsMissing), m.Shards)
	}
	printResults(w, &m.jsonSummary, false)
}

// checkMergeOutputs checks --out and --markdown before the merge, as run
// and fuzz check theirs: each writable, not both one file, neither one of
// the input summaries. --markdown
// appends, so an existing file must open for appending (which writes
// nothing).
func checkMergeOutputs(out, markdown string, inputs []string) error {
	if err := checkFiles(outFile{"--out", out}); err != nil {
		return err
	}
	if fi, err := os.Stat(markdown); markdown != "" && err == nil && fi.Mode().IsRegular() {
		f, err := os.OpenFile(markdown, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return usageErr("--markdown %s: %v", markdown, err)
		}
		f.Close()
	} else if err := checkFiles(outFile{"--markdown", markdown}); err != nil {
		return err
	}
	if err := checkDistinct(outFile{"--out", out}, outFile{"--markdown", markdown}); err != nil {
		return err
	}
	// Neither may be an input: --out would replace a shard's summary with
	// the merge, --markdown append Markdown to its JSON. checkNotInput
	// compares cleaned paths, link targets and os.SameFile, and descriptors
	// (/dev/fd/N) open on an input, as replay does.
	for _, in := range inputs {
		if err := checkNotInput(outFile{"the summary " + in, in}, outFile{"--out", out}, outFile{"--markdown", markdown}); err != nil {
			return err
		}
	}
	return nil
}

// saveMerged writes --out and appends --markdown, both even when one
// fails; a failure is exit 3, since the merge was done and printed.
func saveMerged(m *mergedSummary, out, markdown string) error {
	var failed []string
	if out != "" {
		b, err := json.MarshalIndent(m, "", "  ")
		if err == nil {
			err = replay.WriteFileAtomic(out, append(b, '\n'))
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("--out %s: %v", out, err))
		}
	}
	if markdown != "" {
		if err := appendFile(markdown, mergedMarkdown(m)); err != nil {
			failed = append(failed, fmt.Sprintf("--markdown %s: %v", markdown, err))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &exitError{code: exitHarness, msg: "the merge completed but could not be saved: " + strings.Join(failed, "; ")}
}

// mergedMarkdown renders the merged summary for a CI job summary page.
func mergedMarkdown(m *mergedSummary) []byte {
	var b strings.Builder
	verdict := "no failure"
	if m.Failures > 0 {
		verdict = fmt.Sprintf("**%d failures, %d distinct stories**", m.Failures, len(m.Stories))
	}
	fmt.Fprintf(&b, "## orchsim nightly fuzz: %s\n\n", verdict)
	fmt.Fprintf(&b, "%d seeds of %s, profile `%s`, strategy `%s`, %s.\n", m.SeedsRun, strings.Join(m.Scenarios, ", "),
		m.Profile, m.strategy(), m.Shard)
	if len(m.ShardsMissing) > 0 {
		fmt.Fprintf(&b, "\n**Missing shards: %s** (their jobs failed or uploaded nothing).\n", joinInts(m.ShardsMissing))
	}
	if m.Interrupted {
		b.WriteString("\n**A shard was interrupted** (SIGINT/SIGTERM): the campaign did not cover its range.\n")
	}
	if len(m.Invariants) > 0 {
		b.WriteString("\n| scenario | invariant | failures | first seed | stories |\n| --- | --- | ---: | ---: | ---: |\n")
		for _, r := range m.Invariants {
			fmt.Fprintf(&b, "| %s | `%s` | %d | %d | %d |\n", r.Scenario, r.Invariant, r.Failures, r.FirstSeed, r.Stories)
		}
	}
	for _, st := range m.Stories {
		fmt.Fprintf(&b, "\n### %s / `%s` (seed %d, %d failing seeds)\n\n", st.Scenario, st.Invariant, st.Seed, st.Count)
		if st.ReplayFile != "" {
			fmt.Fprintf(&b, "Replay: `orchsim replay %s` (the shard's artifact holds the file and its HTML report).\n\n", st.ReplayFile)
		}
		fmt.Fprintf(&b, "<details><summary>%s</summary>\n\n```\n", storyLabel(m))
		for _, l := range st.Timeline {
			b.WriteString(strings.ReplaceAll(l, "```", "'''") + "\n")
		}
		b.WriteString("```\n\n</details>\n")
	}
	return []byte(b.String())
}

// storyLabel says what a merged story's timeline is: the shrunk story,
// the failing run as it was (the shards ran with --shrink-runs 0), or,
// when no summary recorded shrink_runs, just the story.
func storyLabel(m *mergedSummary) string {
	switch {
	case slices.Contains(m.unchecked, "shrink_runs"):
		return "story"
	case m.ShrinkRuns == 0:
		return "story, not shrunk (--shrink-runs 0)"
	}
	return "shrunk story"
}

// appendFile appends data to path, creating it.
func appendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}
