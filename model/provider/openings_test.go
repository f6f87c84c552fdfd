package provider

import (
	"testing"

	"pgregory.net/rapid"
)

// openings answers what the list of opens in flight it replaced answered
// (the first open of the session, scanning in start order; a finished
// open removed by identity), over opens started only when none of their
// session is in flight (as open does), finished in any order, finished
// twice, and sessions opened again after their open finished.
func TestOpenings_MatchList(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var os openings
		var list, started []*opening
		sessions := []string{"psess:a", "psess:b", "psess:c"}
		for i := range rapid.IntRange(0, 80).Draw(t, "ops") {
			switch op := rapid.IntRange(0, 2).Draw(t, "op"); {
			case op == 0 || len(started) == 0:
				sid := rapid.SampledFrom(sessions).Draw(t, "session")
				if os.find(sid) == nil {
					o := &opening{sessionID: sid}
					os.add(o)
					list = append(list, o)
					started = append(started, o)
				}
			default:
				o := started[rapid.IntRange(0, len(started)-1).Draw(t, "finished")]
				os.remove(o)
				for j, x := range list {
					if x == o {
						list = append(list[:j], list[j+1:]...)
						break
					}
				}
			}
			for _, sid := range sessions {
				var want *opening
				for _, o := range list {
					if o.sessionID == sid {
						want = o
						break
					}
				}
				if got := os.find(sid); got != want {
					t.Fatalf("op %d: find(%s) = %p, the list has %p", i, sid, got, want)
				}
			}
		}
	})
}
