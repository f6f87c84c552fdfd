package invariants

import (
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Provider-session invariants, written from ProviderSessionManager's
// contract: an idle release asks hasPendingBackgroundWork first and defers
// while work is pending, up to DEFAULT_MAX_IDLE_PIN_MS (4 h); the release
// exists to reclaim idle runtimes, never to end work the user started.
// They read the manager's background-work and session.release events.
const NoReapWhileWorkOwed = "no-reap-while-work-owed"

// MaxIdlePin is how long pending background work may defer an idle release
// (DEFAULT_MAX_IDLE_PIN_MS, 4 h).
const MaxIdlePin = 4 * time.Hour

func init() {
	register(Info{Name: NoReapWhileWorkOwed, Group: catalog.ProviderSession,
		Property: "an idle release never ends a provider session while background work it reported is still running, within the 4 h pin cap",
		Source:   "ProviderSessionManager hasPendingBackgroundWork, DEFAULT_MAX_IDLE_PIN_MS; PR #10689",
		Reports:  []catalog.Report{"t3code#4198", "t3code#10600"},
		New:      func() sim.Checker { return &reapOwed{} }})
}

// owed is background work a session reported.
type owed struct {
	session      string
	since, until time.Duration
}

type reapOwed struct {
	work []owed // a few at a time; a slice keeps the checker free of map ranges
}

func (*reapOwed) Name() string { return NoReapWhileWorkOwed }

func (r *reapOwed) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Kind == "server.start":
		r.work = r.work[:0]
	case ev.Kind == "background-work":
		until, err := ParseT(ev.Get("until"))
		if err != nil {
			return nil
		}
		session := ev.Get("providerSessionId")
		for i := range r.work {
			if r.work[i].session == session {
				r.work[i].until = max(r.work[i].until, until)
				return nil
			}
		}
		r.work = append(r.work, owed{session: session, since: ev.At, until: until})
	case ev.Kind == "session.release":
		session := ev.Get("providerSessionId")
		for i, w := range r.work {
			if w.session != session {
				continue
			}
			r.work = append(r.work[:i], r.work[i+1:]...)
			if ev.Get("reason") == "idle_timeout" && w.until > ev.At && ev.At-w.since < MaxIdlePin {
				return violation(NoReapWhileWorkOwed,
					"provider session %s was released for idleness at %s while the background work it reported at %s was still running (until %s, %s inside the 4 h pin cap): that work dies with the session",
					session, at(ev.At), at(w.since), at(w.until), MaxIdlePin-(ev.At-w.since))
			}
			return nil
		}
	}
	return nil
}
