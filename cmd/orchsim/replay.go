package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
)

func newReplayCmd() *cobra.Command {
	var format, htmlPath string
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
     absence) is not how the replay ended: the file is inconsistent, its
     recorded outcome edited; or --html could not be written after the run (the
     last line is printed first)
  2  bad usage or a malformed replay file (nothing run), including a file whose
     scenario, seed, strategy, "off", "compacted" or tape no longer match its
     "tape_hash" ("the tape was edited or damaged"), a version-2 file with a
     tape and no tape_hash, a key given twice or in another case, and a
     "violation" of an unknown invariant (orchsim list names them); --html on
     the replay file's own descriptor, or on one open on the replay file

Profile, fixes, mutants, horizon and event_budget are not covered by the
tape_hash but by the "settings_hash": edit them to test a fix. When they no
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
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if err := checkOutputs(format, outFile{"--html", htmlPath}); err != nil {
				return err
			}
			if err := checkNotInput(outFile{"the replay file", path}, outFile{"--html", htmlPath}); err != nil {
				return err
			}
			f, cfg, err := loadReplay(path)
			if err != nil {
				return err
			}
			cfg.KeepTrace = true
			run := cfg
			var tape *tapeFollower
			if f.Tape != nil {
				tape = newTapeFollower(f.Tape, f.Compacted, compared(f.Events, f.Violation != nil))
				run.Source, run.OnEvent = tape, tape.event
			}
			res, err := scenarios.Run(run)
			if err != nil {
				return usageErr("%v", err)
			}
			out := cmd.OutOrStdout()
			replayCmd := "orchsim replay " + path
			// The story of a long failure is shrunk from cfg, the file's
			// tape, not from the source this run used up.
			if err := printReport(out, cfg, &res, format, replayCmd); err != nil {
				return &exitError{code: exitHarness, msg: err.Error()}
			}
			saveErr := saveOutputsTo(stdStreams{out: out, err: cmd.ErrOrStderr()}, htmlOutput(htmlPath, &res, replayCmd))
			note, verdictErr := verdict(path, f, &res, tape)
			status := statusLines{out: out, err: cmd.ErrOrStderr(), mermaid: format == "mermaid"}
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
	return cmd
}

// verdict compares a replay with its file. It returns the note to print
// before the last line ("" for none) and the exit status as an error (nil
// for 0). tape is nil when the file has no tape (re-drawn from its seed).
func verdict(path string, f *replay.File, res *scenarios.Result, tape *tapeFollower) (string, error) {
	got := replay.FormatFingerprint(res.Fingerprint)
	byOutcome := func() error {
		if res.Failed() {
			return &exitError{code: exitViolation}
		}
		return nil
	}
	notCompared := fmt.Sprintf("not compared: %s is replay format %d, whose fingerprint this build no longer computes (this run gave %s); re-record it with orchsim shrink %s",
		path, f.Version, got, path)
	switch {
	case f.FingerprintComparable() && got == f.Fingerprint && !sameViolation(f.Violation, res.Violation):
		// The trace is the recorded one, byte for byte, so the recorded
		// outcome was edited or damaged: believing either would be a guess.
		return "", &exitError{code: exitHarness, msg: fmt.Sprintf(
			"%s is inconsistent: the fingerprint %s matches, but the file records %s and the replay ended in %s (%s; its violation was edited or damaged; re-record it)",
			path, got, outcomeOf(f.Violation), outcomeOf(res.Violation), violationDiff(f.Violation, res.Violation))}
	case f.SettingsEdited():
		return editedVerdict(path, f, res, got)
	case f.FingerprintComparable() && got == f.Fingerprint:
		// The same trace, byte for byte: it reproduced, whatever draws a
		// shrunk (compacted) tape answered with the default.
		return "fingerprint matches: " + got, byOutcome()
	case !f.FingerprintComparable() && sameOutcome(f.Violation, res.Violation):
		return notCompared, byOutcome()
	}
	if tape != nil {
		if why := tape.departure(f, res); why != "" {
			return "", &exitError{code: exitHarness, msg: fmt.Sprintf(
				"%s: the replay did not follow its tape: %s; fingerprint %s, recorded %s (the tape was cut or edited, or the models changed since it was recorded)",
				path, why, got, f.Fingerprint)}
		}
	}
	switch {
	case f.Violation != nil && res.Violation == nil:
		return fmt.Sprintf("fixed: %s no longer fails (recorded %s; fingerprint now %s, recorded %s: the models changed, or the file was edited); delete it or keep it as a passing regression",
			path, f.Violation.Invariant, got, f.Fingerprint), nil
	case f.Violation == nil && res.Violation != nil:
		return fmt.Sprintf("regressed: %s passed when recorded, now fails with %s (fingerprint now %s, recorded %s: the models changed, or the file was edited)",
			path, res.Violation.Invariant, got, f.Fingerprint), byOutcome()
	case !f.FingerprintComparable():
		return notCompared, byOutcome()
	}
	return "", &exitError{code: exitHarness, msg: fmt.Sprintf(
		"fingerprint mismatch: %s recorded %s, this run gave %s (nondeterminism, or the models changed since it was recorded)",
		path, f.Fingerprint, got)}
}

// editedVerdict judges the replay res of f, whose settings (profile,
// fixes, mutants, horizon, event budget) were edited since it was written,
// by its outcome only: the edit changes what is drawn, so neither the
// recorded fingerprint nor following the tape can be expected.
func editedVerdict(path string, f *replay.File, res *scenarios.Result, got string) (string, error) {
	edited := fmt.Sprintf("the settings of %s were edited since it was recorded", path)
	prints := fmt.Sprintf("fingerprint now %s, recorded %s", got, f.Fingerprint)
	switch {
	case f.Violation != nil && res.Violation != nil:
		return fmt.Sprintf("still fails: %s, and it still fails: recorded %s, now %s (%s)",
			edited, outcomeOf(f.Violation), outcomeOf(res.Violation), prints), &exitError{code: exitViolation}
	case f.Violation != nil:
		return fmt.Sprintf("fixed: %s no longer fails with its edited settings (recorded %s; %s)",
			path, outcomeOf(f.Violation), prints), nil
	case res.Violation != nil:
		return fmt.Sprintf("regressed: %s passed when recorded, now fails with its edited settings: %s (%s)",
			path, outcomeOf(res.Violation), prints), &exitError{code: exitViolation}
	}
	return fmt.Sprintf("still passes: %s, and it still passes (%s)", edited, prints), nil
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

// sameViolation reports whether two runs ended the same way exactly: both
// passed, or both violated the same invariant at the same time with the
// same message.
func sameViolation(a, b *sim.Violation) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// outcomeOf describes how a run ended, for a message.
func outcomeOf(v *sim.Violation) string {
	if v == nil {
		return "no violation"
	}
	return fmt.Sprintf("a violation of %s at %s", v.Invariant, sim.FormatT(v.At))
}

// sameOutcome reports whether two runs ended alike: both passed, or both
// violated the same invariant.
func sameOutcome(a, b *sim.Violation) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Invariant == b.Invariant
}

// compared is how many of a run's first events its replay is held to
// following the tape through: every event of a passing run; of a failing
// run, those before its last step (the triggering event and the
// violation), since a fix or a regression changes that step, draws
// included. After it the replay may draw what the recording never did (a
// fixed run goes on), or leave recorded choices unused (a regressed run
// stops early).
func compared(events uint64, failed bool) uint64 {
	if !failed {
		return events
	}
	return events - min(events, 2)
}

// tapeFollower replays a file's tape as sim.TapeSource does and notes
// where the replay departed from it: a draw that found no recorded choice
// left for its site (a miss; not one for a compacted tape, whose missing
// choices are the implicit 0) or one recorded for another range (a
// mismatch), with the number of events traced before it.
type tapeFollower struct {
	*sim.TapeSource
	compacted bool   // a miss is the implicit 0 of a left-out trailing zero
	events    uint64 // events traced so far
	// limit is compared() of the recording: departures after it are not
	// kept, they cannot count.
	limit              uint64
	missAt, mismatchAt []uint64 // events traced before each departure, ascending
	first              string   // the first departure, described
}

func newTapeFollower(tape []sim.Choice, compacted bool, limit uint64) *tapeFollower {
	return &tapeFollower{TapeSource: sim.NewTapeSource(tape, false), compacted: compacted, limit: limit}
}

// event counts a traced event (scenarios.Config.OnEvent).
func (t *tapeFollower) event(*sim.Event) { t.events++ }

// Draw implements sim.Source.
func (t *tapeFollower) Draw(actor int, label string, n uint64) uint64 {
	misses, mismatches := t.Misses, t.Mismatches
	v := t.TapeSource.Draw(actor, label, n)
	if t.events >= t.limit || t.Misses == misses && t.Mismatches == mismatches ||
		t.compacted && t.Mismatches == mismatches {
		return v
	}
	what := "no recorded choice left"
	if t.Misses != misses {
		t.missAt = append(t.missAt, t.events)
	} else {
		t.mismatchAt = append(t.mismatchAt, t.events)
		what = "its next recorded choice is for another range"
	}
	if t.first == "" {
		t.first = fmt.Sprintf("%s %q drew from %d values after %d events: %s", t.ActorName(actor), label, n, t.events, what)
	}
	return v
}

// departure describes how the replay res of f departed from its tape
// before the end of the shorter of the two runs (see compared), or returns
// "" when it followed it that far.
func (t *tapeFollower) departure(f *replay.File, res *scenarios.Result) string {
	span := min(compared(f.Events, f.Violation != nil), compared(res.Events, res.Failed()))
	before := func(at []uint64) int { return sort.Search(len(at), func(i int) bool { return at[i] >= span }) }
	misses, mismatches := before(t.missAt), before(t.mismatchAt)
	if misses+mismatches == 0 {
		return ""
	}
	parts := []string{
		fmt.Sprintf("%d draws in the first %d events found no recorded choice and %d one for another range", misses, span, mismatches),
		"first: " + t.first,
		fmt.Sprintf("%d recorded choices unused", t.Unused()),
	}
	return strings.Join(parts, "; ")
}
