package store

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// ScheduleSlot numbers ids, not rows: rows of one id share a number, two
// ids never do, and a number never changes, as a map keyed by id would
// behave.
func TestScheduleSlot_NumbersIDs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s Store
		slotOf := map[string]int{}
		var rows []*Schedule
		for i := range rapid.IntRange(1, 60).Draw(t, "asks") {
			var r *Schedule
			if len(rows) > 0 && rapid.Bool().Draw(t, "again") {
				r = rows[rapid.IntRange(0, len(rows)-1).Draw(t, "row")]
			} else {
				r = &Schedule{ID: fmt.Sprintf("scheduled-task:%d", rapid.IntRange(0, 9).Draw(t, "id"))}
				rows = append(rows, r)
			}
			got := s.ScheduleSlot(r)
			want, seen := slotOf[r.ID]
			if !seen {
				want = len(slotOf)
				slotOf[r.ID] = want
			}
			if got != want {
				t.Fatalf("ask %d: %s got slot %d, want %d", i, r.ID, got, want)
			}
		}
	})
}
