package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchsim/orchsim/fuzz"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/shrink"
	"github.com/orchsim/orchsim/sim"
)

func newShrinkCmd() *cobra.Command {
	var budget time.Duration
	var runs int
	var target string
	cmd := &cobra.Command{
		Use:   "shrink FILE",
		Short: "Minimise a failing replay file; writes FILE with .min.json",
		Long: `Shrink a failing run to a minimal one that still violates the same invariant:
switch off whole actors and fault kinds, then delete and lower recorded choices.
Writes the result next to FILE as <name>.min.json and prints its story (the timeline
of the minimal run). The shrink is bounded by --runs candidate runs, so the same
file shrinks to the same story on every machine; --budget is a wall-clock safety
net, and the output says when it, not --runs, ended the shrink. Shrinking a
<name>.min.json again improves it in place; a <name>.min.json that is a link to
the file being shrunk is refused. The file records that its tape is compacted
(each site's trailing zero choices left out) and a hash of its tape.

--invariant names the invariant to keep failing (default: the file's
violation). In a keep-going file (run --keep-going, fuzz's -later.json) it may
be one the run broke only after another invariant's violation: the shrink then
looks for a run in which it fails first and writes that run alone, as a plain
file (a bug that a denser one hides gets its own minimal story); when no
candidate has it first, the file stays keep-going and the story printed ends
at its violation. Fewer invariants broken ahead of it count before fewer actions,
so such a file may tell a longer story than the one given (the behind: line
says how many are still ahead).

Exit 0 when a minimal file was written, 2 when FILE does not fail or
<name>.min.json cannot be written (checked before shrinking), 3 when the write
fails anyway (the story and the last line are printed first).`,
		Args: oneArg("a replay file (FILE)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := loadReplay(args[0], nil)
			if err != nil {
				return err
			}
			f, cfg := l.file, l.cfg
			if f.Violation == nil {
				return usageErr("%s records no violation: nothing to shrink", args[0])
			}
			inv := f.Violation.Invariant
			if target != "" && target != inv {
				if !knownViolation(target) {
					return usageErr("--invariant: unknown invariant %q (see orchsim list)", target)
				}
				if !f.KeepGoing {
					return usageErr("--invariant %s: %s records %s as its violation and is not keep-going, so no other invariant's violation is in it (record one with run --keep-going)",
						target, args[0], inv)
				}
				inv = target
			}
			if budget <= 0 {
				return usageErr("--budget must be positive")
			}
			if runs <= 0 {
				return usageErr("--runs must be positive")
			}
			// f.json -> f.min.json; shrinking f.min.json again improves it in place.
			out := strings.TrimSuffix(strings.TrimSuffix(args[0], ".json"), ".min") + ".min.json"
			if err := checkOutputFile(out); err != nil {
				return usageErr("cannot write %s: %v", out, err)
			}
			if target, through := linkOver(out, args[0]); through {
				return usageErr("%s is a link to %s, the file being shrunk: writing it would replace that file (remove the link, or copy the file to shrink)",
					out, target)
			}
			// A file replay refuses (its fingerprint does not match, its
			// violation was edited) is not shrunk: the shrink would start
			// from a run that is not the one recorded.
			if err := checkRecording("shrink", args[0], l); err != nil {
				return err
			}
			small, res, st, ok := shrink.Shrink(cfg, inv, shrink.Options{Budget: budget, MaxRuns: runs})
			if !ok && inv != f.Violation.Invariant {
				return usageErr("%s does not break %s, neither first nor after its first violation: nothing to shrink", args[0], inv)
			}
			if !ok {
				return usageErr("%s no longer fails with %s: nothing to shrink", args[0], inv)
			}
			if small.Tape == nil {
				small.Tape = []sim.Choice{} // every choice was a trailing zero: a tape of none, not the seed's draws
			}
			w := cmd.OutOrStdout()
			if st.FingerprintBefore != f.Fingerprint {
				fmt.Fprintf(w, "note: %s recorded fingerprint %s; this build ran %s (the models changed since it was recorded): shrinking this build's run\n",
					args[0], f.Fingerprint, st.FingerprintBefore)
			}
			story := res
			if small.KeepGoing {
				story.Trace = shrink.Until(res.Trace, inv) // the rest of a keep-going run is not this story
			}
			if err := printRun(w, &story, "text", nil); err != nil {
				return &exitError{code: exitHarness, msg: err.Error()}
			}
			if inv != f.Violation.Invariant {
				var added []string
				for _, x := range small.Profile.Fixes() {
					if !cfg.Profile.Fixed(model.Switch(x)) {
						added = append(added, x)
					}
				}
				if res.Violation.Invariant == inv {
					fmt.Fprintf(w, "alone: %s fails first in the minimal run (the file records %s first), with other bugs' fixes turned on: %s; written as a plain file\n",
						inv, f.Violation.Invariant, strings.Join(orNone(added), ","))
				} else {
					fmt.Fprintf(w, "behind: no candidate had %s fail first; it still fails only after %s (%d other invariants broken ahead of it, %d as given), with other bugs' fixes turned on: %s; the file stays keep-going, the story above ends at its violation\n",
						inv, res.Violation.Invariant, st.AheadAfter, st.AheadBefore, strings.Join(orNone(added), ","))
				}
			}
			// The file's own tape is where the user starts from (a re-shrunk
			// .min.json); a file without one was re-drawn from its seed.
			tapeBefore, drawn := st.TapeBefore, " (drawn from the seed)"
			if f.Tape != nil {
				tapeBefore, drawn = len(f.Tape), ""
			}
			fmt.Fprintf(w, "shrunk: %d runs, actions %d -> %d, tape %d%s -> %d choices, switched off: %s\n",
				st.Runs, st.Before, st.After, tapeBefore, drawn, st.TapeAfter, strings.Join(orNone(small.Off), ","))
			if st.Exhausted && st.Runs < runs {
				fmt.Fprintf(w, "note: the %s wall-clock budget ended the shrink after %d of %d runs: another machine may shrink further (raise --budget)\n",
					budget, st.Runs, runs)
			}
			file := fuzz.ReplayFile(small, &res)
			file.EventBudget = f.EventBudget // the file's own (the shrinker bounds its candidates' budget itself)
			if err := replay.Write(out, file); err != nil {
				// Checked before shrinking: failing now (a full disk) is the
				// harness failing to save a finished shrink. The story and the
				// last line come first, as for run and replay.
				fmt.Fprintln(w, lastLine(&res))
				return &exitError{code: exitHarness, msg: fmt.Sprintf("shrunk, but could not write %s: %v", out, err)}
			}
			fmt.Fprintf(w, "wrote %s (replay: orchsim replay %s)\n", out, out)
			fmt.Fprintln(w, lastLine(&res))
			return nil
		},
	}
	cmd.Flags().IntVar(&runs, "runs", 1000, "candidate runs to spend shrinking (the deterministic bound)")
	cmd.Flags().DurationVar(&budget, "budget", 5*time.Minute, "wall-clock safety net for the shrink")
	cmd.Flags().StringVar(&target, "invariant", "", "the invariant to keep failing (default: the file's violation; in a keep-going file, any invariant it broke)")
	return cmd
}

// linkOver reports whether out is a symbolic link whose write target is
// the file in (a shrunk X.min.json linked to X.json, or X.min.json itself a
// link to X.json): writing out would replace the failure being shrunk. A
// regular X.min.json shrunk again is improved in place, as documented.
func linkOver(out, in string) (string, bool) {
	fi, err := os.Lstat(out)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return "", false
	}
	target, err := replay.WriteTarget(out)
	if err != nil {
		return "", false
	}
	a, errA := os.Stat(target)
	b, errB := os.Stat(in)
	return target, errA == nil && errB == nil && os.SameFile(a, b)
}

func orNone(xs []string) []string {
	if len(xs) == 0 {
		return []string{"nothing"}
	}
	return xs
}
