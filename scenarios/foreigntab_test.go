package scenarios

import (
	"testing"

	"pgregory.net/rapid"
)

// foreignAt picks what foreignTab's list of the other threads' tabs did:
// the k-th tab, in noted order, of a thread other than the asking one.
func TestForeignAt_PicksAsTheListDid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		threads := rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b", "c"}), 0, 30).Draw(t, "tab threads")
		var w T3World
		for i, th := range threads {
			w.noteTab(string(rune('A'+i)), th)
		}
		for _, asker := range []string{"a", "b", "c"} {
			var ids []string
			for _, s := range w.tabs {
				if s.thread != asker {
					ids = append(ids, s.tab)
				}
			}
			own := w.tabsOf[asker]
			if len(w.tabs)-len(own) != len(ids) {
				t.Fatalf("%s: %d others counted, %d listed", asker, len(w.tabs)-len(own), len(ids))
			}
			for k := range ids {
				if got := w.tabs[foreignAt(own, k)].tab; got != ids[k] {
					t.Fatalf("%s, k=%d: picked %s, the list has %s", asker, k, got, ids[k])
				}
			}
		}
	})
}
