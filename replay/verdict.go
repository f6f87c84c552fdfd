package replay

import "github.com/orchsim/orchsim/sim"

// FingerprintCheck is how a replay's fingerprint compares with its file's.
type FingerprintCheck int

const (
	// FingerprintMatches: the replay's trace is the recorded one, byte for byte.
	FingerprintMatches FingerprintCheck = iota
	// FingerprintDiffers: the file's fingerprint is comparable and differs.
	FingerprintDiffers
	// FingerprintNotComparable: the file is of a format version whose
	// fingerprint this build no longer computes (File.FingerprintComparable).
	FingerprintNotComparable
)

// Outcomes relates how the recorded run ended (the file's "violation")
// to how its replay ended.
type Outcomes int

const (
	// BothPassed: neither run violated anything.
	BothPassed Outcomes = iota
	// SameViolation: both violated the same invariant at the same virtual
	// time with the same message.
	SameViolation
	// SameInvariant: both violated the same invariant, at another time or
	// with another message.
	SameInvariant
	// OtherInvariant: both failed, on different invariants.
	OtherInvariant
	// NowPasses: the recorded run failed, the replay passed.
	NowPasses
	// NowFails: the recorded run passed, the replay failed.
	NowFails
)

// CompareOutcomes relates a recorded violation to a replayed one (nil for
// a run that passed).
func CompareOutcomes(recorded, replayed *sim.Violation) Outcomes {
	switch {
	case recorded == nil && replayed == nil:
		return BothPassed
	case replayed == nil:
		return NowPasses
	case recorded == nil:
		return NowFails
	case *recorded == *replayed:
		return SameViolation
	case recorded.Invariant == replayed.Invariant:
		return SameInvariant
	}
	return OtherInvariant
}

// ReplayFailed reports whether the replay ended in a violation.
func (o Outcomes) ReplayFailed() bool { return o != BothPassed && o != NowPasses }

// sameOutcome reports whether both runs ended alike: both passed, or both
// violated the same invariant.
func (o Outcomes) sameOutcome() bool {
	return o == BothPassed || o == SameViolation || o == SameInvariant
}

// Evidence is what a replay found, the inputs of Judge.
type Evidence struct {
	// SettingsEdited: the file's profile, fixes, unfix, mutants, horizon or
	// event budget no longer hash to its settings_hash (File.SettingsEdited),
	// or the command line changed them (replay --unfix).
	SettingsEdited bool
	Fingerprint    FingerprintCheck
	Outcomes       Outcomes
	// Departed: the replay did not follow the file's tape up to the last
	// step of the shorter run (TapeFollower.Departure); false for a file
	// without a tape, which is re-drawn from its seed.
	Departed bool
}

// Verdict is what a replay says about its file.
type Verdict int

const (
	// Reproduced: the fingerprint matches and so does the outcome.
	Reproduced Verdict = iota
	// NotCompared: a file whose fingerprint cannot be compared ended as
	// recorded (or is judged by how it ended).
	NotCompared
	// StillFails: the settings were edited and it fails, as recorded.
	StillFails
	// StillPasses: the settings were edited and it passes, as recorded.
	StillPasses
	// Fixed: a recorded failure no longer fails.
	Fixed
	// Regressed: a recorded pass now fails.
	Regressed
	// Departed: the replay did not follow the file's tape.
	Departed
	// Mismatch: the fingerprint differs and nothing explains it
	// (nondeterminism, or the models changed).
	Mismatch
	// Inconsistent: the fingerprint matches but the recorded outcome is not
	// how the replay ended: the file's violation was edited or damaged.
	Inconsistent
)

var verdictNames = [...]string{"reproduced", "not compared", "still fails", "still passes", "fixed", "regressed",
	"departed from its tape", "fingerprint mismatch", "inconsistent"}

// String names the verdict.
func (v Verdict) String() string { return verdictNames[v] }

// Judge decides a replay's verdict and exit status from what it found:
// 0 it passes (as recorded, or fixed), 1 it fails (as recorded, or
// regressed), 3 the harness failed (the replay cannot be trusted: a
// fingerprint that differs unexplained, a tape not followed, a file
// inconsistent with itself). The rules, in order:
//
//  1. A matching fingerprint with another outcome is Inconsistent: the
//     trace is the recorded one, so the recorded outcome was edited (two
//     passes, or the same violation to the letter, are the same outcome).
//  2. Edited settings change what is drawn: the replay is judged by its
//     outcome only (StillFails, Fixed, Regressed, StillPasses).
//  3. A matching fingerprint is Reproduced.
//  4. A fingerprint that cannot be compared, with the recorded outcome, is
//     NotCompared.
//  5. A tape not followed is Departed, never Fixed or Regressed.
//  6. Otherwise a changed outcome is Fixed or Regressed; an incomparable
//     fingerprint is NotCompared; anything else is a Mismatch.
func Judge(e Evidence) (Verdict, int) {
	byOutcome := 0
	if e.Outcomes.ReplayFailed() {
		byOutcome = 1
	}
	switch {
	case e.Fingerprint == FingerprintMatches && e.Outcomes != SameViolation && e.Outcomes != BothPassed:
		return Inconsistent, 3
	case e.SettingsEdited:
		switch e.Outcomes {
		case NowPasses:
			return Fixed, 0
		case NowFails:
			return Regressed, 1
		case BothPassed:
			return StillPasses, 0
		}
		return StillFails, 1
	case e.Fingerprint == FingerprintMatches:
		return Reproduced, byOutcome
	case e.Fingerprint == FingerprintNotComparable && e.Outcomes.sameOutcome():
		return NotCompared, byOutcome
	case e.Departed:
		return Departed, 3
	case e.Outcomes == NowPasses:
		return Fixed, 0
	case e.Outcomes == NowFails:
		return Regressed, 1
	case e.Fingerprint == FingerprintNotComparable:
		return NotCompared, byOutcome
	}
	return Mismatch, 3
}
