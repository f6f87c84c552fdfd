package terminal

import (
	"testing"

	"pgregory.net/rapid"
)

// The renderer finds a runtime through an index and the entry last looked
// up: Runtime returns the runtime it returned before for the session until
// dropRuntime drops it, and a new empty one after (what the scan over a
// slice did), whatever the order of lookups and drops.
func TestRenderer_RuntimeIndexAsTheSliceDid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := &Renderer{}
		ref := map[string]*Runtime{} // what the slice held
		n := rapid.IntRange(0, 200).Draw(t, "ops")
		for i := range n {
			s := rapid.SampledFrom([]string{"s1", "s2", "s3", "s12", "s21", ""}).Draw(t, "session")
			if rapid.IntRange(0, 3).Draw(t, "op") == 0 {
				r.dropRuntime(s)
				delete(ref, s)
				continue
			}
			got := r.Runtime(s)
			want, ok := ref[s]
			switch {
			case ok && got != want:
				t.Fatalf("op %d: Runtime(%q) returned another runtime than before", i, s)
			case !ok:
				if *got != (Runtime{}) {
					t.Fatalf("op %d: Runtime(%q) of a dropped or new session is not empty: %+v", i, s, *got)
				}
				for o, rt := range ref {
					if rt == got {
						t.Fatalf("op %d: Runtime(%q) returned %q's runtime", i, s, o)
					}
				}
				ref[s] = got
			}
			got.Rev = 1 + i // marked: a dropped session's next runtime must be a new, empty one
		}
	})
}
