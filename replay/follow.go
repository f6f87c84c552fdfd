package replay

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orchsim/orchsim/sim"
)

// Compared is how many of a run's first events its replay is held to
// following the tape through: every event of a passing run; of a failing
// run, those before its last step (the triggering event and the
// violation), since a fix or a regression changes that step, draws
// included. After it the replay may draw what the recording never did (a
// fixed run goes on), or leave recorded choices unused (a regressed run
// stops early).
func Compared(events uint64, failed bool) uint64 {
	if !failed {
		return events
	}
	return events - min(events, 2)
}

// TapeFollower replays a file's tape as sim.TapeSource does and notes
// where the replay departed from it: a draw that found no recorded choice
// left for its site (a miss; not one for a compacted tape, whose missing
// choices are the implicit 0) or one recorded for another range (a
// mismatch), with the number of events traced before it. It is the
// sim.Source of a replay; Event is its scenarios.Config.OnEvent.
type TapeFollower struct {
	*sim.TapeSource
	compacted bool   // a miss is the implicit 0 of a left-out trailing zero
	events    uint64 // events traced so far
	// limit is Compared() of the recording: departures after it are not
	// kept, they cannot count.
	limit              uint64
	missAt, mismatchAt []uint64 // events traced before each departure, ascending
	first              string   // the first departure, described
}

// NewTapeFollower follows f's tape (which must not be nil).
func NewTapeFollower(f *File) *TapeFollower {
	return &TapeFollower{TapeSource: sim.NewTapeSource(f.Tape, false), compacted: f.Compacted,
		limit: Compared(f.Events, f.Violation != nil)}
}

// Event counts a traced event.
func (t *TapeFollower) Event(*sim.Event) { t.events++ }

// Draw implements sim.Source.
func (t *TapeFollower) Draw(actor int, label string, n uint64) uint64 {
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

// Departure describes how a replay of f, which traced events and ended
// failed or not, departed from f's tape before the end of the shorter of
// the two runs (see Compared), or returns "" when it followed it that far.
func (t *TapeFollower) Departure(f *File, events uint64, failed bool) string {
	span := min(Compared(f.Events, f.Violation != nil), Compared(events, failed))
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
