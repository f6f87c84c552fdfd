package store

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// AnsweredBy answers what Server.answered's scan of RunsOf did, over runs
// started with and without a message (a message answered twice), messages
// cleared afterwards (a lost write-behind), questions asked between any two
// steps, rows deleted from the middle and the table replaced.
func TestAnsweredBy_AnswersAsTheScanDid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := &Store{Threads: []*Thread{{ID: "t1"}, {ID: "t2"}}}
		threads := rapid.SampledFrom([]string{"t1", "t2"})
		messages := rapid.SampledFrom([]string{"", "m1", "m2", "m3"})
		scan := func(thread, message string) *Run {
			for _, r := range s.RunsOf(thread) {
				if r.MessageID == message {
					return r
				}
			}
			return nil
		}
		for range rapid.IntRange(0, 60).Draw(t, "steps") {
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0, 1, 2, 3:
				r := s.StartRun(threads.Draw(t, "thread"))
				r.MessageID = messages.Draw(t, "message")
			case 4:
				if len(s.Runs) > 0 {
					s.Runs[rapid.IntRange(0, len(s.Runs)-1).Draw(t, "cleared")].MessageID = ""
				}
			case 5:
				if len(s.Runs) > 0 {
					i := rapid.IntRange(0, len(s.Runs)-1).Draw(t, "deleted")
					s.Runs = slices.Delete(s.Runs, i, i+1)
				}
			case 6:
				if len(s.Runs) > 0 {
					s.Runs = slices.Clone(s.Runs[:rapid.IntRange(0, len(s.Runs)-1).Draw(t, "kept")])
				}
			default:
			}
			for _, th := range []string{"t1", "t2"} {
				for _, m := range []string{"m1", "m2", "m3"} {
					if got, want := s.AnsweredBy(th, m), scan(th, m); got != want {
						t.Fatalf("AnsweredBy(%s, %s) = %v, the scan finds %v", th, m, got, want)
					}
				}
			}
		}
	})
}
