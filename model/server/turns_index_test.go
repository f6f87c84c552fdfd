package server

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// turnOf by byThread and the threads' chains answers what the scan of
// turns it replaced answered (the first turn of the thread in start
// order), over any sequence of turns started and ended, several per
// thread, ended first, last or in between.
func TestTurnOf_MatchesScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s Server
		threads := []string{"thread-a", "thread-b", "thread-c"}
		scan := func(thread string) *turnRef {
			for _, r := range s.turns {
				if r.threadID == thread {
					return r
				}
			}
			return nil
		}
		for i := range rapid.IntRange(0, 80).Draw(t, "ops") {
			switch op := rapid.IntRange(0, 3).Draw(t, "op"); {
			case op < 2 || len(s.turns) == 0:
				s.addTurn(&turnRef{threadID: rapid.SampledFrom(threads).Draw(t, "thread"), runID: "run"})
			case op == 2:
				s.dropTurn(rapid.IntRange(0, len(s.turns)-1).Draw(t, "at"))
			default: // endTurn's way: the thread's first turn
				ref := s.turnOf(rapid.SampledFrom(threads).Draw(t, "thread"))
				if ref != nil {
					s.dropTurn(slices.Index(s.turns, ref))
				}
			}
			for _, th := range threads {
				if got, want := s.turnOf(th), scan(th); got != want {
					t.Fatalf("op %d: turnOf(%s) = %p, the scan finds %p", i, th, got, want)
				}
				var chain, want []*turnRef
				for r := s.turnOf(th); r != nil; r = r.sameThread {
					chain = append(chain, r)
				}
				for _, r := range s.turns {
					if r.threadID == th {
						want = append(want, r)
					}
				}
				if !slices.Equal(chain, want) {
					t.Fatalf("op %d: %s's chain has %d turns, turns %d", i, th, len(chain), len(want))
				}
			}
		}
	})
}
