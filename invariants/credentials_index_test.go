package invariants

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/orchsim/orchsim/sim"
)

// sliceHoldings is the scan liveCredentials replaced: every holding in
// the order taken, dropped by predicate. The indexed version must answer
// every holder question the same way over any sequence of the provider
// session manager's events.
type sliceHoldings struct{ held []holding }

func (s *sliceHoldings) drop(keep func(holding) bool) {
	out := s.held[:0]
	for _, h := range s.held {
		if keep(h) {
			out = append(out, h)
		}
	}
	s.held = out
}

func (s *sliceHoldings) observe(ev *sim.Event) {
	switch ev.Kind {
	case "server.start":
		s.held = s.held[:0]
	case "session.opened", "session.attach":
		thread, session := ev.Get("thread"), ev.Get("providerSessionId")
		s.drop(func(h holding) bool { return h.thread != thread || h.session != session })
		s.held = append(s.held, holding{cred: ev.Get("cred"), thread: thread, session: session,
			incarnation: ev.Get("incarnation"), since: ev.At})
	case "session.detach":
		thread, session := ev.Get("thread"), ev.Get("providerSessionId")
		s.drop(func(h holding) bool { return h.thread != thread || h.session != session })
	case "session.release", "provider.crash":
		inc := ev.Get("incarnation")
		s.drop(func(h holding) bool { return h.incarnation != inc })
	}
}

func (s *sliceHoldings) holder(cred string) (holding, bool) {
	for _, h := range s.held {
		if h.cred == cred {
			return h, true
		}
	}
	return holding{}, false
}

// Few threads, sessions, credentials and incarnations, so that pairs are
// re-taken, credentials are shared by several holdings and incarnations
// released while they hold several.
func TestLiveCredentials_AnswerAsTheScanDid(t *testing.T) {
	names := func(p string) *rapid.Generator[string] {
		return rapid.SampledFrom([]string{p + "1", p + "2", p + "3"})
	}
	kinds := rapid.SampledFrom([]string{"session.opened", "session.attach", "session.detach", "session.release",
		"provider.crash", "server.start", "turn.start"})
	rapid.Check(t, func(t *rapid.T) {
		var ix liveCredentials
		var ref sliceHoldings
		n := rapid.IntRange(0, 60).Draw(t, "events")
		for i := range n {
			ev := &sim.Event{At: time.Duration(i) * time.Second, Kind: kinds.Draw(t, "kind"), Attrs: []sim.Attr{
				sim.A("thread", names("t").Draw(t, "thread")), sim.A("providerSessionId", names("s").Draw(t, "session")),
				sim.A("cred", names("c").Draw(t, "cred")), sim.A("incarnation", names("i").Draw(t, "incarnation"))}}
			ix.observe(ev)
			ref.observe(ev)
			for _, c := range []string{"c1", "c2", "c3"} {
				got, ok := ix.holder(c)
				want, wok := ref.holder(c)
				if ok != wok || got != want {
					t.Fatalf("after %d events, holder(%s) = %v %v, the scan says %v %v", i+1, c, got, ok, want, wok)
				}
			}
		}
	})
}
