package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/orchsim/orchsim/inevitable"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
	"github.com/orchsim/orchsim/triage"
)

func newExplainCmd() *cobra.Command {
	var unfix []string
	var tries int
	var target string
	cmd := &cobra.Command{
		Use:   "explain FILE",
		Short: "Which fix switches make a failure pass",
		Long: `Replay a failure under each single fix switch added to its profile (is the fix
sufficient: does this invariant stop failing?) and under the fixed preset with
each switch removed (is the fix necessary: does this invariant fail again?), and
print which fixes are necessary and sufficient. Then it names the failure's point
of no return: the earliest event after which at least 95% of the runs that replay
the file up to that event and draw the rest afresh (--tries of them) still violate
the invariant, while after the event before it fewer do. A failure of another invariant
is another bug's, and counts for neither. --unfix turns
fixes off on top of the file's profile first; the candidates are built on that.

--invariant names an invariant a keep-going file (run --keep-going, fuzz's
-later.json) breaks only after another invariant's violation: every candidate then
runs keep-going and counts as failing when it breaks that invariant anywhere, and
the point of no return is that invariant's (see shrink --invariant to shrink it
alone first).

The file is replayed first, as orchsim replay does: a file replay refuses with
exit 3 (its fingerprint does not match, its tape was not followed, its
violation was edited or removed) is refused the same way.

Exit status: 0 explained (the table printed), or the file does not fail
("it does not fail: nothing to explain": unlike shrink, a passing file is not
bad usage, there is simply nothing to explain; so too a keep-going file that does
not break the --invariant named); 2 bad usage or a malformed
replay file (nothing run); 3 the file was refused as replay refuses it.`,
		Args: oneArg("a replay file (FILE)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if tries < 1 || tries > maxTries {
				return usageErr("--tries must be 1 to %d (got %d): each try replays the run once per prefix", maxTries, tries)
			}
			l, err := loadReplay(args[0], unfix)
			if err != nil {
				return err
			}
			if err := checkRecording("explain", args[0], l); err != nil {
				return err
			}
			f, cfg := l.file, l.cfg
			later := target != "" && (f.Violation == nil || target != f.Violation.Invariant)
			if later {
				if !knownViolation(target) {
					return usageErr("--invariant: unknown invariant %q (see orchsim list)", target)
				}
				if !f.KeepGoing {
					return usageErr("--invariant %s: %s is not keep-going, so it records no violation after its first (record one with run --keep-going)", target, args[0])
				}
				return explainLater(cmd.OutOrStdout(), args[0], cfg, target, tries)
			}
			// A recorded event budget was enough for the failing run, not for
			// a candidate the fix lets run to the horizon: unless the budget
			// itself is what failed, candidates get at least the default.
			if f.Violation != nil && f.Violation.Invariant != sim.EventBudgetExceeded && cfg.EventBudget < scenarios.DefaultEventBudget {
				cfg.EventBudget = 0
			}
			fails := func(fixes []string, preset string) (bool, string, error) {
				c := cfg
				c.Profile, err = model.NewProfile(preset, fixes, f.Mutants)
				if err != nil {
					return false, "", err
				}
				res, err := scenarios.Run(c)
				if err != nil {
					return false, "", err
				}
				if res.Violation == nil {
					return false, "ok", nil
				}
				return true, res.Violation.Invariant, nil
			}
			// Candidates start from the fixes the file's profile (after
			// --unfix) has on.
			baseFixes := cfg.Profile.Fixes()
			base, what, err := fails(baseFixes, model.PresetReported)
			if err != nil {
				return usageErr("%v", err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s: scenario %s seed %d under %s: %s\n", args[0], f.Scenario, f.Seed, cfg.Profile, what)
			if !base {
				fmt.Fprintln(w, "it does not fail: nothing to explain")
				return nil
			}
			verdicts, err := triage.Explain(cfg, what)
			if err != nil {
				return usageErr("%v", err)
			}
			printVerdicts(w, cfg, verdicts)
			printNoReturn(w, cfg, what, inevitable.Options{Tries: tries})
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&unfix, "unfix", nil, "fixes to turn off on top of the file's profile before explaining")
	cmd.Flags().StringVar(&target, "invariant", "", "explain this invariant, which a keep-going file breaks only after another's violation (default: the file's violation)")
	cmd.Flags().IntVar(&tries, "tries", 20, "reseeded continuations per prefix when looking for the point of no return (1 to 1000)")
	return cmd
}

// maxTries bounds explain --tries: a search runs tries replays per prefix
// of the file, so 1000 (50 times the default) is already hours for a long
// story; more is a typo, refused before anything runs.
const maxTries = 1000

// printVerdicts prints explain's table of switches and its conclusion.
func printVerdicts(w io.Writer, cfg scenarios.Config, verdicts []triage.Verdict) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SWITCH\tADDED ALONE\tREMOVED FROM FIXED\tVERDICT")
	var sufficient, necessary []string
	for _, v := range verdicts {
		verdict := "irrelevant"
		switch {
		case v.Sufficient && v.Necessary:
			verdict = "necessary and sufficient"
		case v.Sufficient:
			verdict = "sufficient"
		case v.Necessary:
			verdict = "necessary"
		}
		if v.Sufficient {
			sufficient = append(sufficient, v.Switch)
		}
		if v.Necessary {
			necessary = append(necessary, v.Switch)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Switch, v.Alone, v.Without, verdict)
	}
	tw.Flush()
	fmt.Fprintf(w, "sufficient: %v\nnecessary: %v\n", orNone(sufficient), orNone(necessary))
	if len(necessary) == 0 && len(sufficient) == 0 {
		if ms := cfg.Profile.MutantNames(); len(ms) > 0 {
			fmt.Fprintf(w, "with every fix on it still fails: the cause is the mutant %s, not a switch\n", strings.Join(ms, ", "))
		} else {
			fmt.Fprintln(w, "with every fix on it still fails: no modelled bug explains it (a new bug, or a modelling defect)")
		}
	}
}

// printNoReturn prints the point of no return of cfg's failure of inv,
// on the file's own run.
func printNoReturn(w io.Writer, cfg scenarios.Config, inv string, opt inevitable.Options) {
	p, err := inevitable.Find(cfg, inv, opt)
	if err != nil {
		fmt.Fprintf(w, "point of no return: none found: %v\n", err)
		return
	}
	fmt.Fprintf(w, "point of no return: %s\n", p)
	if p.Seq >= 0 {
		fmt.Fprintf(w, "  %s\n  after this event the failure was certain\n", p.Event.Describe())
	}
}

// explainLater is explain --invariant for an invariant the keep-going
// file at path breaks only after another's violation (triage.ExplainLater,
// inevitable.Options.Later).
func explainLater(w io.Writer, path string, cfg scenarios.Config, inv string, tries int) error {
	res, err := scenarios.Run(cfg)
	if err != nil {
		return usageErr("%v", err)
	}
	if !triage.Breaks(&res, inv) {
		// As for a file that does not fail: nothing to explain, not bad usage.
		fmt.Fprintf(w, "%s: scenario %s seed %d under %s: it does not break %s, neither first nor after its first violation: nothing to explain\n",
			path, cfg.Scenario, cfg.Seed, cfg.Profile, inv)
		return nil
	}
	first := "no violation"
	if res.Violation != nil {
		first = res.Violation.Invariant
	}
	fmt.Fprintf(w, "%s: scenario %s seed %d under %s: %s, broken after %s (keep-going: a run fails when it breaks %s anywhere)\n",
		path, cfg.Scenario, cfg.Seed, cfg.Profile, inv, first, inv)
	verdicts, err := triage.ExplainLater(cfg, inv)
	if err != nil {
		return usageErr("%v", err)
	}
	printVerdicts(w, cfg, verdicts)
	printNoReturn(w, cfg, inv, inevitable.Options{Tries: tries, Later: true})
	return nil
}
