package invariants

import (
	"testing"

	"github.com/orchsim/orchsim/sim"
	"pgregory.net/rapid"
)

// keysScoped's appended key is the key its slow path (key, over
// requestKey) builds, for tool and non-tool events, with and without a
// clientRequestId, t3_thread_update's target and action included.
func TestKeysScoped_AppendKeyMatchesKey(t *testing.T) {
	kinds := append([]string{"preview_open"}, orchestratorToolKinds...)
	rapid.Check(t, func(t *rapid.T) {
		word := rapid.SampledFrom([]string{"", "-", "a", "thread-b", "k 1", "x\x00y"})
		ev := &sim.Event{
			Actor: rapid.SampledFrom([]string{"agent/thread-a", "server"}).Draw(t, "actor"),
			Kind:  rapid.SampledFrom(append(kinds, "t3_thread_update")).Draw(t, "kind"),
		}
		for _, k := range []string{"thread", "clientRequestId", "target", "action"} {
			if v := word.Draw(t, k); v != "" || rapid.Bool().Draw(t, k+"-set") {
				ev.Attrs = append(ev.Attrs, sim.A(k, v))
			}
		}
		var s keysScoped
		if got, want := string(s.appendKey([]byte("junk")[:0], ev)), s.key(ev); got != want {
			t.Fatalf("appendKey %q, key %q (event %+v)", got, want, ev)
		}
	})
}
