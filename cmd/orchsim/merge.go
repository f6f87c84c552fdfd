package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orchsim/orchsim/fuzz"
	"github.com/orchsim/orchsim/replay"
)

// newMergeCmd is `orchsim merge-summaries`: the last job of a nightly
// campaign, which adds up the shards' fuzz --json summaries.
func newMergeCmd() *cobra.Command {
	var out, markdown, baseline string
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
(the layout of a downloaded artifact), else against the working directory; files
found in neither are counted in one warning on stderr.

--out FILE writes the merged summary as JSON (the fields of a fuzz --json summary,
plus shards, shards_merged, shards_missing, elapsed_ms_total and sources), its
replay files named relative to its own directory; it can be merged again, from
anywhere, as the shards it covers. --markdown FILE appends a Markdown report to
FILE (e.g. $GITHUB_STEP_SUMMARY). Both are checked before the merge: a file that
cannot be written, or both naming one file, is bad usage.

--out and --markdown must not name an input summary (by path, link or hard link):
that is bad usage, and nothing is written.

The failures are grouped by root cause across shards exactly as unsharded;
--baseline FILE judges the groups as fuzz --baseline does.

Exit status: 3 a shard's determinism check (fuzz --check-determinism) found a
mismatch; else 0 no failure in any shard (with --baseline: no new group); 1
failures found (with --baseline: a new group) (even when shards are
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
			base, err := readBaseline(baseline)
			if err != nil {
				return err
			}
			m, err := mergeSummaries(args)
			if err != nil {
				return err
			}
			if base != nil {
				m.Baseline, m.BaselineUnseen = baseline, base.Apply(m.Groups)
			}
			if len(m.Unchecked) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "orchsim: warning: no summary has %s (written by an older orchsim): "+
					"cannot check that they are shards of one campaign\n", strings.Join(m.Unchecked, ", "))
			}
			warnMissingReplayFiles(cmd.ErrOrStderr(), m)
			printMerged(cmd.OutOrStdout(), m)
			if base != nil {
				printBaseline(cmd.OutOrStdout(), baseline, m.Groups, m.BaselineUnseen)
			}
			// The files were checked before the merge; a write failing now
			// (a full disk) comes after the report: exit 3.
			if err := saveMerged(m, out, markdown); err != nil {
				return err
			}
			// Failures found are real, whatever else happened: exit 1.
			// Otherwise a missing or interrupted shard means the campaign
			// did not cover its range: exit 3, not a clean 0.
			if d := m.Determinism; d != nil && len(d.Mismatches) > 0 {
				return &exitError{code: exitHarness, msg: fmt.Sprintf("nondeterminism: %d of %d re-run seeds gave another fingerprint; first: %s",
					len(d.Mismatches), d.Checked, d.Mismatches[0])}
			}
			if m.Failures > 0 && (base == nil || baselineVerdict(m.Groups) != nil) {
				return &exitError{code: exitViolation}
			}
			var gaps []string
			if len(m.ShardsMissing) > 0 {
				gaps = append(gaps, fmt.Sprintf("shards missing: %s of %d", joinInts(m.ShardsMissing), m.Shards))
			}
			if len(m.InterruptedIn) > 0 {
				gaps = append(gaps, "interrupted: "+strings.Join(m.InterruptedIn, ", "))
			}
			if len(gaps) > 0 {
				return &exitError{code: exitHarness, msg: strings.Join(gaps, "; ") + " (the campaign did not cover its range)"}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write the merged summary as JSON to FILE")
	cmd.Flags().StringVar(&markdown, "markdown", "", "append a Markdown report to FILE (e.g. $GITHUB_STEP_SUMMARY)")
	cmd.Flags().StringVar(&baseline, "baseline", "", baselineUsage)
	return cmd
}

// readSummary reads one fuzz --json summary, or a merged one (Shards >
// 0), of at most replay.MaxInputBytes (fuzz.ParseSummary); its errors are
// usage errors naming the file. A story's replay file is resolved against
// the summary's directory when it is there (the layout of a downloaded
// artifact).
func readSummary(path string) (*fuzz.Merged, error) {
	if err := notDash("a summary", path); err != nil {
		return nil, err
	}
	b, err := replay.ReadInput(path, replay.MaxInputBytes)
	if err != nil {
		return nil, usageErr("cannot read summary %s: %v", path, err)
	}
	s, err := fuzz.ParseSummary(b)
	if err != nil {
		return nil, usageErr("%s: %v", path, err)
	}
	for i := range s.Stories {
		resolveIn(filepath.Dir(path), &s.Stories[i].ReplayFile)
	}
	for i := range s.Later {
		resolveIn(filepath.Dir(path), &s.Later[i].ReplayFile)
	}
	return s, nil
}

// mergeSummaries reads and merges the summaries at paths (fuzz.Merge).
func mergeSummaries(paths []string) (*fuzz.Merged, error) {
	var all []*fuzz.Merged
	for _, path := range paths {
		s, err := readSummary(path)
		if err != nil {
			return nil, err
		}
		all = append(all, s)
	}
	m, err := fuzz.Merge(paths, all)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return m, nil
}

// printMerged writes the merged summary as fuzz prints its own.
func printMerged(w io.Writer, m *fuzz.Merged) {
	noun := "summaries"
	if len(m.Sources) == 1 {
		noun = "summary"
	}
	fmt.Fprintf(w, "merged %d %s: %s, scenarios=%s profile=%s strategy=%s\n", len(m.Sources), noun, m.Shard,
		strings.Join(m.Scenarios, ","), m.Profile, m.StrategyName())
	fmt.Fprintf(w, "fuzz: %d seeds, %d failures, %d distinct stories", m.SeedsRun, m.Failures, len(m.Stories))
	if m.Interrupted {
		fmt.Fprint(w, " (a shard was interrupted)")
	}
	fmt.Fprintln(w)
	if len(m.ShardsMissing) > 0 {
		fmt.Fprintf(w, "missing shards: %s of %d\n", joinInts(m.ShardsMissing), m.Shards)
	}
	printResults(w, &m.Report, false)
	if d := m.Determinism; d != nil {
		fmt.Fprintf(w, "determinism: %d seeds re-run: %d mismatches\n", d.Checked, len(d.Mismatches))
		for _, x := range d.Mismatches {
			fmt.Fprintf(w, "determinism: MISMATCH %s\n", x)
		}
	}
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
func saveMerged(m *fuzz.Merged, out, markdown string) error {
	var failed []string
	if out != "" {
		b, err := json.MarshalIndent(m.RelativeTo(filepath.Dir(out)), "", "  ")
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
func mergedMarkdown(m *fuzz.Merged) []byte {
	var b strings.Builder
	verdict := "no failure"
	if m.Failures > 0 {
		verdict = fmt.Sprintf("**%d failures, %d distinct stories**", m.Failures, len(m.Stories))
	}
	fmt.Fprintf(&b, "## orchsim nightly fuzz: %s\n\n", verdict)
	fmt.Fprintf(&b, "%d seeds of %s, profile `%s`, strategy `%s`, %s.\n", m.SeedsRun, strings.Join(m.Scenarios, ", "),
		m.Profile, m.StrategyName(), m.Shard)
	if len(m.ShardsMissing) > 0 {
		fmt.Fprintf(&b, "\n**Missing shards: %s** (their jobs failed or uploaded nothing).\n", joinInts(m.ShardsMissing))
	}
	if m.Interrupted {
		b.WriteString("\n**A shard was interrupted** (SIGINT/SIGTERM): the campaign did not cover its range.\n")
	}
	if d := m.Determinism; d != nil {
		fmt.Fprintf(&b, "\nDeterminism check: %d seeds re-run, %d mismatches.\n", d.Checked, len(d.Mismatches))
	}
	if len(m.Invariants) > 0 {
		b.WriteString("\n| scenario | invariant | failures | first seed | stories |\n| --- | --- | ---: | ---: | ---: |\n")
		for _, r := range m.Invariants {
			fmt.Fprintf(&b, "| %s | `%s` | %d | %d | %d |\n", r.Scenario, r.Invariant, r.Failures, r.FirstSeed, r.Stories)
		}
	}
	if m.Baseline != "" {
		fmt.Fprintf(&b, "\nJudged against the baseline `%s`: %d new groups.\n", m.Baseline, fuzz.NewGroups(m.Groups))
	}
	b.WriteString(fuzz.GroupsMarkdown(m.Groups))
	for _, st := range m.Stories {
		fmt.Fprintf(&b, "\n### %s / `%s` (seed %d, %d failing seeds)\n\n", st.Scenario, st.Invariant, st.Seed, st.Count)
		if st.ReplayFile != "" {
			fmt.Fprintf(&b, "Replay: `orchsim replay %s` (the shard's artifact holds the file and its HTML report).\n\n", st.ReplayFile)
		}
		fmt.Fprintf(&b, "<details><summary>%s</summary>\n\n```\n", m.StoryLabel())
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
