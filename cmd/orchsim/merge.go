package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"orchsim/replay"
)

// mergedSummary is the merge of the --json summaries of a sharded fuzz
// campaign: the fields of one summary, added up, plus which shards were
// merged and which are missing.
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
}

// newMergeCmd is `orchsim merge-summaries`: the last job of a nightly
// campaign, which adds up the shards' fuzz --json summaries.
func newMergeCmd() *cobra.Command {
	var out, markdown string
	cmd := &cobra.Command{
		Use:   "merge-summaries SUMMARY.json...",
		Short: "Merge the --json summaries of a sharded fuzz campaign",
		Long: `Merge the fuzz --json summaries of the shards of one campaign (same profile and
strategy, --shard i/n with the same n): seeds and failures are added up, stories
that tell the same story (same invariant and story fingerprint) are merged into one
with the lowest seed, and the shards that no summary covers are listed. A story's
replay file is resolved against its summary's directory when it is there (the
layout of a downloaded artifact).

--out FILE writes the merged summary as JSON (the fields of a fuzz --json summary,
plus shards, shards_merged, shards_missing, elapsed_ms_total and sources); --markdown
FILE appends a Markdown report to FILE (e.g. $GITHUB_STEP_SUMMARY).

Exit status: 0 no failure in any shard; 1 failures found; 2 bad usage or a file
that is not a summary of the same campaign; 3 no failure, but shards are missing
(the campaign did not cover its range).`,
		Example: `  orchsim merge-summaries --out merged.json shards/*/summary.json
  orchsim merge-summaries --markdown "$GITHUB_STEP_SUMMARY" shards/*/summary.json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("merge-summaries needs at least one summary file (written by fuzz --json)")
			}
			m, err := mergeSummaries(args)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			printMerged(w, m)
			if out != "" {
				b, err := json.MarshalIndent(m, "", "  ")
				if err != nil {
					return &exitError{code: exitHarness, msg: err.Error()}
				}
				if err := replay.WriteFileAtomic(out, append(b, '\n')); err != nil {
					return usageErr("--out: %v", err)
				}
			}
			if markdown != "" {
				if err := appendFile(markdown, mergedMarkdown(m)); err != nil {
					return usageErr("--markdown: %v", err)
				}
			}
			switch {
			case m.Failures > 0:
				return &exitError{code: exitViolation}
			case len(m.ShardsMissing) > 0:
				return &exitError{code: exitHarness, msg: fmt.Sprintf("shards missing: %s of %d (the campaign did not cover its range)",
					joinInts(m.ShardsMissing), m.Shards)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write the merged summary as JSON to FILE")
	cmd.Flags().StringVar(&markdown, "markdown", "", "append a Markdown report to FILE (e.g. $GITHUB_STEP_SUMMARY)")
	return cmd
}

// readSummary reads one fuzz --json summary; its errors are usage errors
// naming the file.
func readSummary(path string) (*jsonSummary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("cannot read summary: %v", err)
	}
	var s jsonSummary
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&s); err != nil {
		return nil, usageErr("%s: not a fuzz --json summary: %v", path, err)
	}
	if len(s.Scenarios) == 0 || s.Shard == "" || s.Profile == "" {
		return nil, usageErr("%s: not a fuzz --json summary (no scenarios, shard or profile)", path)
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

// mergeSummaries reads and merges the summaries at paths.
func mergeSummaries(paths []string) (*mergedSummary, error) {
	m := &mergedSummary{jsonSummary: jsonSummary{Invariants: []jsonRow{}, Probes: []jsonProbe{}, Stories: []jsonStory{},
		FailedSeeds: []jsonFailed{}}, ShardsMerged: []int{}, ShardsMissing: []int{}, Sources: paths}
	shardFrom := map[int]string{}
	scenarios := map[string]bool{}
	probeAt := map[string]int{}
	type rowKey struct{ scenario, invariant string }
	rows := map[rowKey]*jsonRow{}
	var rowOrder []rowKey
	type storyKey struct{ scenario, invariant, fingerprint string }
	stories := map[storyKey]*jsonStory{}
	var storyOrder []storyKey
	for k, path := range paths {
		s, err := readSummary(path)
		if err != nil {
			return nil, err
		}
		i, n, err := parseShardField(path, s.Shard)
		if err != nil {
			return nil, err
		}
		if k == 0 {
			m.Profile, m.Strategy, m.Shards = s.Profile, s.Strategy, n
		}
		switch {
		case s.Profile != m.Profile || s.Strategy != m.Strategy:
			return nil, usageErr("%s: profile %s, strategy %s, but %s has profile %s, strategy %s: not one campaign",
				path, s.Profile, s.Strategy, paths[0], m.Profile, m.Strategy)
		case n != m.Shards:
			return nil, usageErr("%s: shard %s of %d shards, but %s has %d", path, s.Shard, n, paths[0], m.Shards)
		case shardFrom[i] != "":
			return nil, usageErr("%s: shard %s is also in %s", path, s.Shard, shardFrom[i])
		}
		shardFrom[i] = path
		for _, sc := range s.Scenarios {
			scenarios[sc] = true
		}
		m.SeedsRun += s.SeedsRun
		m.Failures += s.Failures
		m.Interrupted = m.Interrupted || s.Interrupted
		m.ElapsedMs = max(m.ElapsedMs, s.ElapsedMs)
		m.ElapsedMsTotal += s.ElapsedMs
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
			key := storyKey{st.Scenario, st.Invariant, st.Fingerprint}
			if have := stories[key]; have != nil {
				have.Count += st.Count
				if st.Seed < have.Seed {
					count := have.Count
					*have = st
					have.Count = count
				}
				continue
			}
			st := st
			stories[key] = &st
			storyOrder = append(storyOrder, key)
		}
		m.FailedSeeds = append(m.FailedSeeds, s.FailedSeeds...)
	}
	for sc := range scenarios {
		m.Scenarios = append(m.Scenarios, sc)
	}
	sort.Strings(m.Scenarios)
	for i := 0; i < m.Shards; i++ {
		if shardFrom[i] != "" {
			m.ShardsMerged = append(m.ShardsMerged, i)
		} else {
			m.ShardsMissing = append(m.ShardsMissing, i)
		}
	}
	m.Shard = fmt.Sprintf("%d of %d shards", len(m.ShardsMerged), m.Shards)
	for _, k := range storyOrder {
		m.Stories = append(m.Stories, *stories[k])
	}
	sort.SliceStable(m.Stories, func(i, j int) bool {
		a, b := m.Stories[i], m.Stories[j]
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		if a.Invariant != b.Invariant {
			return a.Invariant < b.Invariant
		}
		return a.Seed < b.Seed
	})
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

// printMerged writes the merged summary as fuzz prints its own.
func printMerged(w io.Writer, m *mergedSummary) {
	fmt.Fprintf(w, "merged %d summaries: %s, scenarios=%s profile=%s strategy=%s\n", len(m.Sources), m.Shard,
		strings.Join(m.Scenarios, ","), m.Profile, m.Strategy)
	fmt.Fprintf(w, "fuzz: %d seeds, %d failures, %d distinct stories", m.SeedsRun, m.Failures, len(m.Stories))
	if m.Interrupted {
		fmt.Fprint(w, " (a shard was interrupted)")
	}
	fmt.Fprintln(w)
	if len(m.ShardsMissing) > 0 {
		fmt.Fprintf(w, "missing shards: %s of %d\n", joinInts(m.ShardsMissing), m.Shards)
	}
	if len(m.Invariants) > 0 {
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SCENARIO\tINVARIANT\tFAILURES\tFIRST SEED\tSTORIES")
		for _, r := range m.Invariants {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", r.Scenario, r.Invariant, r.Failures, r.FirstSeed, r.Stories)
		}
		tw.Flush()
	}
	for _, st := range m.Stories {
		fmt.Fprintf(w, "\nstory %s / %s: seed %d, %d failing seeds, %d actions", st.Scenario, st.Invariant, st.Seed, st.Count, st.Actions)
		if st.ReplayFile != "" {
			fmt.Fprintf(w, ", replay: orchsim replay %s", st.ReplayFile)
		}
		fmt.Fprintln(w)
	}
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
		m.Profile, m.Strategy, m.Shard)
	if len(m.ShardsMissing) > 0 {
		fmt.Fprintf(&b, "\n**Missing shards: %s** (their jobs failed or uploaded nothing).\n", joinInts(m.ShardsMissing))
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
		b.WriteString("<details><summary>shrunk story</summary>\n\n```\n")
		for _, l := range st.Timeline {
			b.WriteString(strings.ReplaceAll(l, "```", "'''") + "\n")
		}
		b.WriteString("```\n\n</details>\n")
	}
	return []byte(b.String())
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
