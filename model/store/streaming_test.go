package store

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// StreamingMessages answers what Reconcile's scan of every message did,
// over messages appended streaming or not, their run set afterwards,
// streaming cleared (as reconcile does), questions asked between any two
// steps, rows deleted from the middle, the table truncated and replaced.
func TestStreamingMessages_AnswersAsTheScanDid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := &Store{}
		runs := rapid.SampledFrom([]string{"", "run:1", "run:2"})
		scan := func() []*Message {
			var out []*Message
			for _, m := range s.Messages {
				if m.Streaming {
					out = append(out, m)
				}
			}
			return out
		}
		pick := func(label string) int { return rapid.IntRange(0, len(s.Messages)-1).Draw(t, label) }
		for range rapid.IntRange(0, 60).Draw(t, "steps") {
			switch op := rapid.IntRange(0, 9).Draw(t, "op"); {
			case op <= 3:
				s.Messages = append(s.Messages, NewRow(&s.Rows.Messages, Message{ID: "m", RunID: runs.Draw(t, "run"),
					Streaming: rapid.Bool().Draw(t, "streaming")}))
			case len(s.Messages) == 0:
			case op == 4:
				s.Messages[pick("run set")].RunID = runs.Draw(t, "late run")
			case op == 5:
				s.Messages[pick("cleared")].Streaming = false
			case op == 6:
				i := pick("deleted")
				s.Messages = slices.Delete(s.Messages, i, i+1)
			case op == 7:
				s.Messages = slices.Clone(s.Messages[:pick("kept")])
			case op == 8:
				s.Messages = s.Messages[:pick("truncated")]
			}
			if rapid.Bool().Draw(t, "ask") {
				if got, want := s.StreamingMessages(), scan(); !slices.Equal(got, want) {
					t.Fatalf("StreamingMessages() = %v, the scan finds %v", got, want)
				}
			}
		}
		if got, want := s.StreamingMessages(), scan(); !slices.Equal(got, want) {
			t.Fatalf("StreamingMessages() = %v, the scan finds %v", got, want)
		}
	})
}
