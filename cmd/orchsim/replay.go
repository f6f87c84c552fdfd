package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
)

func newReplayCmd() *cobra.Command {
	var format, htmlPath string
	var noRet bool
	var unfix []string
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Re-run a replay file and verify its fingerprint",
		Long: `Re-run a replay file (written by run --out, shrink or fuzz) and print its
timeline. Exit status:
  1  the recorded violation reproduces with the recorded fingerprint; or the run
     was recorded passing and now fails (a "regressed:" note); or the settings
     were edited and it still fails (a "still fails:" note)
  0  a recorded pass passes with its fingerprint; or the recorded violation no
     longer happens (a "fixed:" note); or the settings were edited and it still
     passes (a "still passes:" note)
  3  the fingerprint differs otherwise (nondeterminism, or the models changed);
     or the replay did not follow the file's choice tape (models that now draw
     differently, or an edited file without a tape_hash: the counts and the
     first draw that departed from it go to stderr), which is never reported as
     fixed; or the fingerprint matches but the file's "violation" (or its
     absence), or its "events", is not how the replay ended: the file is
     inconsistent, its recorded outcome edited; or --html could not be written after the run (the
     last line is printed first)
  2  bad usage or a malformed replay file (nothing run), including a file whose
     scenario, seed, strategy, "off", "compacted" or tape no longer match its
     "tape_hash" ("the tape was edited or damaged"), a version-2 file with a
     tape and no tape_hash, a key given twice or in another case, and a
     "violation" of an unknown invariant (orchsim list names them); --html on
     the replay file's own descriptor, or on one open on the replay file

Profile, fixes, unfix, mutants, horizon, event_budget and keep_going are not covered by
the tape_hash but by the "settings_hash": edit them to test a fix, or turn
fixes off with --unfix (a settings edit too). When they no
longer match it, the replay is judged by its outcome only ("still fails:",
"fixed:", "still passes:", "regressed:"), since they change what is drawn.
With the settings as recorded (or a file without a settings_hash), the
fingerprint must match, and "fixed:" and "regressed:" need the replay to follow
the tape up to the last step of the shorter run. A version-1 file without a
tape_hash is read unchecked. A file without "tape" is re-drawn from its seed;
"tape": [] is a tape of no choices. A shrunk file is "compacted": its tape leaves out each
site's trailing zero choices, so a draw with no recorded choice left gets 0 and
is not a departure (a choice recorded for another range still is). The seed in
the last line is the file's; with a tape, the tape decides the draws, so a
shrunk file's fingerprint is not the one run --seed gives.

--format mermaid prints a Mermaid sequence diagram instead of the timeline (a
failing run of more than 60 events is shrunk first and its story drawn); the
lines after it are Mermaid comments, and the last line also goes to stderr.
--html FILE writes a self-contained HTML timeline of the replayed run
(/dev/stdout and other inherited descriptors are written as streams, before
the last line).`,
		Args: oneArg("a replay file (FILE)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if err := noReturnFormat(noRet, format, htmlPath); err != nil {
				return err
			}
			if err := checkOutputs(format, outFile{"--html", htmlPath}); err != nil {
				return err
			}
			if err := checkNotInput(outFile{"the replay file", path}, outFile{"--html", htmlPath}); err != nil {
				return err
			}
			l, err := loadReplay(path, unfix)
			if err != nil {
				return err
			}
			res, note, verdictErr, err := rerun(path, l, true)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			replayCmd := "orchsim replay " + path
			if len(unfix) > 0 {
				replayCmd += " --unfix " + strings.Join(unfix, ",")
			}
			// The story of a long failure is shrunk from cfg, the file's
			// tape, not from the source this run used up.
			nr := findNoReturn(noRet, l.cfg, &res)
			if err := printReport(out, l.cfg, &res, format, replayCmd, nr); err != nil {
				return &exitError{code: exitHarness, msg: err.Error()}
			}
			saveErr := saveOutputsTo(stdStreams{out: out, err: cmd.ErrOrStderr()}, htmlOutput(htmlPath, l.cfg, &res, replayCmd, nr.point))
			status := statusLines{out: out, err: cmd.ErrOrStderr(), mermaid: format == "mermaid"}
			brokenNotes(status, &res)
			if nr.note != "" {
				status.note(nr.note)
			}
			if note != "" {
				status.note(note)
			}
			status.last(lastLine(&res))
			if saveErr != nil {
				if ee, ok := verdictErr.(*exitError); ok && ee.code == exitHarness {
					return &exitError{code: exitHarness, msg: ee.msg + "; and " + saveErr.Error()}
				}
				return saveErr
			}
			return verdictErr
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "timeline format: text, json or mermaid")
	cmd.Flags().StringVar(&htmlPath, "html", "", "also write a self-contained HTML timeline to FILE")
	cmd.Flags().StringSliceVar(&unfix, "unfix", nil, "fixes to turn off on top of the file's profile (a settings edit: judged by outcome)")
	cmd.Flags().BoolVar(&noRet, "no-return", false, noReturnUsage)
	return cmd
}

// rerun re-runs the loaded replay file l (keeping its trace when
// keep) and judges it (replay.Judge). It returns the run, the note to
// print before the last line ("" for none) and the verdict's exit status
// as verdictErr (nil for 0); err is a run that could not start.
func rerun(path string, l loaded, keep bool) (res scenarios.Result, note string, verdictErr, err error) {
	run := l.cfg
	run.KeepTrace = keep
	var tape *replay.TapeFollower
	if l.file.Tape != nil {
		tape = replay.NewTapeFollower(l.file)
		run.Source, run.OnEvent = tape, tape.Event
	}
	res, err = scenarios.Run(run)
	if err != nil {
		return res, "", nil, usageErr("%v", err)
	}
	note, verdictErr = verdict(path, l, &res, tape)
	return res, note, verdictErr, nil
}

// checkRecording replays l as replay does and returns the verdict's error
// when it is a harness failure (exit 3: a fingerprint that does not
// match, a tape not followed, a recorded outcome the replay contradicts),
// so that shrink and explain refuse the files replay refuses; what names
// the command.
func checkRecording(what, path string, l loaded) error {
	_, _, verdictErr, err := rerun(path, l, false)
	if err != nil {
		return err
	}
	if ee, ok := verdictErr.(*exitError); ok && ee.code == exitHarness {
		return &exitError{code: exitHarness, msg: fmt.Sprintf("%s: %s (orchsim replay %s says so too)", what, ee.msg, path)}
	}
	return nil
}

// verdict compares a replay with its file (replay.Judge) and words the
// verdict. It returns the note to print before the last line ("" for
// none) and the exit status as an error (nil for 0). tape is nil when the
// file has no tape (re-drawn from its seed).
func verdict(path string, l loaded, res *scenarios.Result, tape *replay.TapeFollower) (string, error) {
	f := l.file
	got := replay.FormatFingerprint(res.Fingerprint)
	e := replay.Evidence{SettingsEdited: f.SettingsEdited() || l.unfixed, Fingerprint: replay.FingerprintDiffers,
		Outcomes: replay.CompareOutcomes(f.Violation, res.Violation)}
	switch {
	case !f.FingerprintComparable():
		e.Fingerprint = replay.FingerprintNotComparable
	case got == f.Fingerprint:
		e.Fingerprint = replay.FingerprintMatches
	}
	var departure string
	if tape != nil {
		departure = tape.Departure(f, res.Events, res.Failed())
		e.Departed = departure != ""
	}
	v, code := replay.Judge(e)
	var status error
	switch code {
	case exitViolation:
		status = &exitError{code: exitViolation}
	case exitHarness:
		status = &exitError{code: exitHarness}
	}
	edited := fmt.Sprintf("the settings of %s were edited since it was recorded", path)
	if l.unfixed {
		edited = fmt.Sprintf("%s was replayed with --unfix", path)
	}
	prints := fmt.Sprintf("fingerprint now %s, recorded %s", got, f.Fingerprint)
	harness := func(msg string) (string, error) { return "", &exitError{code: exitHarness, msg: msg} }
	if v == replay.Reproduced && f.Events != res.Events {
		// The same trace, byte for byte, but another length recorded: the
		// count was edited or damaged.
		return harness(fmt.Sprintf(
			"%s is inconsistent: the fingerprint %s matches, but the file records %d events and the replay ran %d (its \"events\" was edited or damaged; re-record it)",
			path, got, f.Events, res.Events))
	}
	switch v {
	case replay.Inconsistent:
		// The trace is the recorded one, byte for byte, so the recorded
		// outcome was edited or damaged: believing either would be a guess.
		return harness(fmt.Sprintf(
			"%s is inconsistent: the fingerprint %s matches, but the file records %s and the replay ended in %s (%s; its violation was edited or damaged; re-record it)",
			path, got, outcomeOf(f.Violation), outcomeOf(res.Violation), violationDiff(f.Violation, res.Violation)))
	case replay.Departed:
		return harness(fmt.Sprintf(
			"%s: the replay did not follow its tape: %s; fingerprint %s, recorded %s (the tape was cut or edited, or the models changed since it was recorded)",
			path, departure, got, f.Fingerprint))
	case replay.Mismatch:
		return harness(fmt.Sprintf(
			"fingerprint mismatch: %s recorded %s, this run gave %s (nondeterminism, or the models changed since it was recorded)",
			path, f.Fingerprint, got))
	case replay.Reproduced:
		// The same trace, byte for byte: it reproduced, whatever draws a
		// shrunk (compacted) tape answered with the default.
		return "fingerprint matches: " + got, status
	case replay.NotCompared:
		return fmt.Sprintf("not compared: %s is replay format %d, whose fingerprint this build no longer computes (this run gave %s); re-record it with orchsim shrink %s",
			path, f.Version, got, path), status
	case replay.StillFails:
		return fmt.Sprintf("still fails: %s, and it still fails: recorded %s, now %s (%s)",
			edited, outcomeOf(f.Violation), outcomeOf(res.Violation), prints), status
	case replay.StillPasses:
		return fmt.Sprintf("still passes: %s, and it still passes (%s)", edited, prints), status
	case replay.Fixed:
		if e.SettingsEdited {
			return fmt.Sprintf("fixed: %s no longer fails with its edited settings (recorded %s; %s)",
				path, outcomeOf(f.Violation), prints), status
		}
		return fmt.Sprintf("fixed: %s no longer fails (recorded %s; %s: the models changed, or the file was edited); delete it or keep it as a passing regression",
			path, f.Violation.Invariant, prints), status
	case replay.Regressed:
		if e.SettingsEdited {
			return fmt.Sprintf("regressed: %s passed when recorded, now fails with its edited settings: %s (%s)",
				path, outcomeOf(res.Violation), prints), status
		}
		return fmt.Sprintf("regressed: %s passed when recorded, now fails with %s (%s: the models changed, or the file was edited)",
			path, res.Violation.Invariant, prints), status
	}
	return harness(fmt.Sprintf("%s: unknown verdict %s", path, v))
}

// violationDiff names what differs between two recorded outcomes.
func violationDiff(a, b *sim.Violation) string {
	switch {
	case a == nil || b == nil:
		return "one passed, the other failed"
	case a.Invariant != b.Invariant:
		return fmt.Sprintf("the invariant differs: %s, not %s", a.Invariant, b.Invariant)
	case a.At != b.At:
		return fmt.Sprintf("the violation's \"at\" differs: %d, not %d", a.At, b.At)
	case a.Message != b.Message:
		return fmt.Sprintf("the violation's \"message\" differs: %q, not %q", a.Message, b.Message)
	}
	return "they are the same"
}

// outcomeOf describes how a run ended, for a message.
func outcomeOf(v *sim.Violation) string {
	if v == nil {
		return "no violation"
	}
	return fmt.Sprintf("a violation of %s at %s", v.Invariant, sim.FormatT(v.At))
}
