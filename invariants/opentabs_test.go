package invariants

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The probe counter's open tabs by thread answer the idle-release probe as
// the list walked in first-seen order did: some thread has an open tab and
// the session is the shared Codex one or ends in such a thread's id, over
// opens, closes (counts going to zero and below), resets at server.start,
// ids that end one another and the empty id.
func TestOpenTabs_MatchListWalk(t *testing.T) {
	type threadTabs struct {
		thread string
		n      int
	}
	rapid.Check(t, func(t *rapid.T) {
		p := NewProbeCounter()
		var list []threadTabs
		threads := []string{"", "a", "thread-a", "thread-aa", "read-aa", "thread-b"}
		for i := range rapid.IntRange(0, 120).Draw(t, "ops") {
			switch rapid.IntRange(0, 4).Draw(t, "op") {
			case 0, 1:
				th := rapid.SampledFrom(threads).Draw(t, "thread")
				delta := rapid.SampledFrom([]int{1, 1, -1}).Draw(t, "delta")
				p.addTab(th, delta)
				found := false
				for j := range list {
					if list[j].thread == th {
						list[j].n += delta
						found = true
						break
					}
				}
				if !found {
					list = append(list, threadTabs{th, delta})
				}
			case 2:
				p.resetTabs()
				list = list[:0]
			default:
				session := rapid.SampledFrom([]string{"psess:codex", "psess:thread-a", "psess:thread-aa", "psess:thread-b", "psess:x", "a", ""}).Draw(t, "session")
				want := false
				for _, tt := range list {
					if tt.n > 0 && (strings.HasSuffix(session, tt.thread) || session == "psess:codex") {
						want = true
						break
					}
				}
				if got := p.tabOpenFor(session); got != want {
					t.Fatalf("op %d: tabOpenFor(%q) = %v, the walk %v (%v)", i, session, got, want, list)
				}
			}
		}
	})
}
