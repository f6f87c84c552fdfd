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

// OneRunPerMessage is written from the command receipt contract of a
// user message: its thread.turn.start carries the client's id, so a
// message delivered twice (a client retry, a duplicating transport) is one
// turn. It reads the server's run.start events and their message ids.
const OneRunPerMessage = "one-run-per-message"

func init() {
	register(Info{Name: OneRunPerMessage, Group: catalog.ProviderSession,
		Property: "a user message starts at most one run, however often it is delivered, across restarts",
		Source:   "OrchestrationEngine command receipts (thread.turn.start commandId); accepted input reaches its consumer once",
		Reports:  []catalog.Report{"anomalyco/opencode#27928"},
		New:      func() sim.Checker { return &runPerMessage{first: map[string]firstRun{}} }})
}

type firstRun struct {
	run string
	at  time.Duration
}

type runPerMessage struct {
	first map[string]firstRun // thread and message -> its first run
}

func (*runPerMessage) Name() string { return OneRunPerMessage }

func (r *runPerMessage) Observe(ev *sim.Event) *sim.Violation {
	if ev.Actor != "server" || ev.Kind != "run.start" || ev.Get("message") == "" {
		return nil
	}
	k := ev.Get("thread") + " " + ev.Get("message")
	f, seen := r.first[k]
	if !seen {
		r.first[k] = firstRun{run: ev.Get("run"), at: ev.At}
		return nil
	}
	return violation(OneRunPerMessage,
		"message %s of thread %s started run %s at %s, and again run %s at %s: one prompt was answered twice",
		ev.Get("message"), ev.Get("thread"), f.run, at(f.at), ev.Get("run"), at(ev.At))
}
