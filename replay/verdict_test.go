package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// verdicts is Judge's whole table: every combination of (settings strict
// or edited, fingerprint, outcomes, tape followed or departed), then the
// exit status and the verdict. Reviewed by hand; a change to the rules
// shows up here as a diff.
const verdicts = `
strict  match    both-passed      followed  -> 0 reproduced
strict  match    both-passed      departed  -> 0 reproduced
strict  match    same-violation   followed  -> 1 reproduced
strict  match    same-violation   departed  -> 1 reproduced
strict  match    same-invariant   followed  -> 3 inconsistent
strict  match    same-invariant   departed  -> 3 inconsistent
strict  match    other-invariant  followed  -> 3 inconsistent
strict  match    other-invariant  departed  -> 3 inconsistent
strict  match    now-passes       followed  -> 3 inconsistent
strict  match    now-passes       departed  -> 3 inconsistent
strict  match    now-fails        followed  -> 3 inconsistent
strict  match    now-fails        departed  -> 3 inconsistent
strict  differs  both-passed      followed  -> 3 fingerprint mismatch
strict  differs  both-passed      departed  -> 3 departed from its tape
strict  differs  same-violation   followed  -> 3 fingerprint mismatch
strict  differs  same-violation   departed  -> 3 departed from its tape
strict  differs  same-invariant   followed  -> 3 fingerprint mismatch
strict  differs  same-invariant   departed  -> 3 departed from its tape
strict  differs  other-invariant  followed  -> 3 fingerprint mismatch
strict  differs  other-invariant  departed  -> 3 departed from its tape
strict  differs  now-passes       followed  -> 0 fixed
strict  differs  now-passes       departed  -> 3 departed from its tape
strict  differs  now-fails        followed  -> 1 regressed
strict  differs  now-fails        departed  -> 3 departed from its tape
strict  n/a      both-passed      followed  -> 0 not compared
strict  n/a      both-passed      departed  -> 0 not compared
strict  n/a      same-violation   followed  -> 1 not compared
strict  n/a      same-violation   departed  -> 1 not compared
strict  n/a      same-invariant   followed  -> 1 not compared
strict  n/a      same-invariant   departed  -> 1 not compared
strict  n/a      other-invariant  followed  -> 1 not compared
strict  n/a      other-invariant  departed  -> 3 departed from its tape
strict  n/a      now-passes       followed  -> 0 fixed
strict  n/a      now-passes       departed  -> 3 departed from its tape
strict  n/a      now-fails        followed  -> 1 regressed
strict  n/a      now-fails        departed  -> 3 departed from its tape
edited  match    both-passed      followed  -> 0 still passes
edited  match    both-passed      departed  -> 0 still passes
edited  match    same-violation   followed  -> 1 still fails
edited  match    same-violation   departed  -> 1 still fails
edited  match    same-invariant   followed  -> 3 inconsistent
edited  match    same-invariant   departed  -> 3 inconsistent
edited  match    other-invariant  followed  -> 3 inconsistent
edited  match    other-invariant  departed  -> 3 inconsistent
edited  match    now-passes       followed  -> 3 inconsistent
edited  match    now-passes       departed  -> 3 inconsistent
edited  match    now-fails        followed  -> 3 inconsistent
edited  match    now-fails        departed  -> 3 inconsistent
edited  differs  both-passed      followed  -> 0 still passes
edited  differs  both-passed      departed  -> 0 still passes
edited  differs  same-violation   followed  -> 1 still fails
edited  differs  same-violation   departed  -> 1 still fails
edited  differs  same-invariant   followed  -> 1 still fails
edited  differs  same-invariant   departed  -> 1 still fails
edited  differs  other-invariant  followed  -> 1 still fails
edited  differs  other-invariant  departed  -> 1 still fails
edited  differs  now-passes       followed  -> 0 fixed
edited  differs  now-passes       departed  -> 0 fixed
edited  differs  now-fails        followed  -> 1 regressed
edited  differs  now-fails        departed  -> 1 regressed
edited  n/a      both-passed      followed  -> 0 still passes
edited  n/a      both-passed      departed  -> 0 still passes
edited  n/a      same-violation   followed  -> 1 still fails
edited  n/a      same-violation   departed  -> 1 still fails
edited  n/a      same-invariant   followed  -> 1 still fails
edited  n/a      same-invariant   departed  -> 1 still fails
edited  n/a      other-invariant  followed  -> 1 still fails
edited  n/a      other-invariant  departed  -> 1 still fails
edited  n/a      now-passes       followed  -> 0 fixed
edited  n/a      now-passes       departed  -> 0 fixed
edited  n/a      now-fails        followed  -> 1 regressed
edited  n/a      now-fails        departed  -> 1 regressed
`

func TestJudge_EveryCombination(t *testing.T) {
	edits := map[string]bool{"strict": false, "edited": true}
	prints := map[string]FingerprintCheck{"match": FingerprintMatches, "differs": FingerprintDiffers, "n/a": FingerprintNotComparable}
	outcomes := map[string]Outcomes{"both-passed": BothPassed, "same-violation": SameViolation, "same-invariant": SameInvariant,
		"other-invariant": OtherInvariant, "now-passes": NowPasses, "now-fails": NowFails}
	tapes := map[string]bool{"followed": false, "departed": true}
	seen := map[Evidence]bool{}
	for _, line := range strings.Split(strings.TrimSpace(verdicts), "\n") {
		in, want, ok := strings.Cut(line, " -> ")
		require.True(t, ok, line)
		f := strings.Fields(in)
		require.Len(t, f, 4, line)
		e := Evidence{SettingsEdited: edits[f[0]], Fingerprint: prints[f[1]], Outcomes: outcomes[f[2]], Departed: tapes[f[3]]}
		_, okE := edits[f[0]]
		_, okP := prints[f[1]]
		_, okO := outcomes[f[2]]
		_, okT := tapes[f[3]]
		require.True(t, okE && okP && okO && okT, "unknown word in %q", line)
		require.False(t, seen[e], "twice: %q", line)
		seen[e] = true
		v, code := Judge(e)
		assert.Equal(t, strings.TrimSpace(want), fmt.Sprintf("%d %s", code, v), line)
	}
	assert.Len(t, seen, len(edits)*len(prints)*len(outcomes)*len(tapes), "the table has every combination")
}

func TestCompareOutcomes(t *testing.T) {
	v := &sim.Violation{Invariant: "a", At: 5, Message: "m"}
	later, other := *v, *v
	later.At = 6
	other.Invariant = "b"
	for _, tc := range []struct {
		recorded, replayed *sim.Violation
		want               Outcomes
	}{
		{nil, nil, BothPassed},
		{v, v, SameViolation},
		{v, &later, SameInvariant},
		{v, &other, OtherInvariant},
		{v, nil, NowPasses},
		{nil, v, NowFails},
	} {
		assert.Equal(t, tc.want, CompareOutcomes(tc.recorded, tc.replayed))
	}
	assert.False(t, NowPasses.ReplayFailed())
	assert.True(t, SameInvariant.ReplayFailed())
}
