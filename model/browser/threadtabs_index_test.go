package browser

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// threadTabs answers what the scan of tabs it replaced answered (the tabs
// of the thread in tabs' order) over any sequence of tabs appended,
// dropped (grouped or not yet grouped, first, last or in between) and
// asked for, as removeAt and the many appends do.
func TestThreadTabs_MatchesScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b ServerBrowser
		threads := []string{"thread-a", "thread-b", "thread-c"}
		for i := range rapid.IntRange(0, 100).Draw(t, "ops") {
			switch op := rapid.IntRange(0, 4).Draw(t, "op"); {
			case op < 2 || len(b.tabs) == 0:
				b.tabs = append(b.tabs, &Tab{ThreadID: rapid.SampledFrom(threads).Draw(t, "thread"), TabID: rapid.SampledFrom([]string{"tab_1", "tab_2"}).Draw(t, "tab")})
			case op == 2:
				b.dropTab(rapid.IntRange(0, len(b.tabs)-1).Draw(t, "at"))
			case op == 3:
				b.tabs, b.byThread, b.grouped = nil, nil, 0 // Kill
			default:
				th := rapid.SampledFrom(threads).Draw(t, "asked")
				var want []*Tab
				for _, x := range b.tabs {
					if x.ThreadID == th {
						want = append(want, x)
					}
				}
				if got := b.threadTabs(th); !slices.Equal(got, want) {
					t.Fatalf("op %d: threadTabs(%s) has %d tabs, the scan %d", i, th, len(got), len(want))
				}
				for _, id := range []string{"tab_1", "tab_2", "tab_3"} {
					var scan *Tab
					for _, x := range b.tabs {
						if x.ThreadID == th && x.TabID == id {
							scan = x
							break
						}
					}
					if got := b.Tab(th, id); got != scan {
						t.Fatalf("op %d: Tab(%s, %s) = %p, the scan finds %p", i, th, id, got, scan)
					}
				}
			}
		}
	})
}
