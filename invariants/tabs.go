package invariants

import (
	"strings"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Tab-ownership invariants (report 000_993d1fdfc50e8ec7, T3 Code #23021;
// MODEL.md §12 S1-S4).
const (
	NoCrossThreadTabAction        = "no-cross-thread-tab-action"
	HumanControlExclusive         = "human-control-exclusive"
	ThreadKeepsItsTabs            = "thread-keeps-its-tabs"
	RevokedCredentialDenied       = "revoked-credential-denied"
	StaleCleanupSparesReplacement = "stale-cleanup-spares-replacement"
)

func init() {
	register(Info{Name: NoCrossThreadTabAction, Group: catalog.PreviewTab,
		Property: "an agent never drives (navigate, click, close) a tab that belongs to another thread",
		Source:   "000_993d1fdfc50e8ec7 acceptance check 4; MODEL.md §12 S1",
		Reports:  []catalog.Report{"t3code#23021"},
		New:      func() sim.Checker { return &noCrossThread{} }})
	register(Info{Name: HumanControlExclusive, Group: catalog.PreviewTab,
		Property: "while a human viewer controls a tab, no agent action runs on it",
		Source:   "000_993d1fdfc50e8ec7 acceptance check 4; MODEL.md §12 S2",
		Reports:  []catalog.Report{"t3code#23021"},
		New: func() sim.Checker {
			return &humanControl{controller: map[string]string{}, since: map[string]time.Duration{}}
		}})
	register(Info{Name: ThreadKeepsItsTabs, Group: catalog.PreviewTab,
		Property: "a live, authorized caller of a thread is never refused with agentMismatch on an agent tab its own thread opened",
		Source:   "000_993d1fdfc50e8ec7 (T3 Code #23021) acceptance checks 1, 3, 7",
		Reports:  []catalog.Report{"t3code#23021"},
		New:      func() sim.Checker { return &keepsTabs{opened: map[string]openedTab{}} }})
	register(Info{Name: RevokedCredentialDenied, Group: catalog.MCPCredential,
		Property: "a call authorized after its credential was revoked, expired or lost in a restart never succeeds",
		Source:   "000_993d1fdfc50e8ec7 acceptance check 5; MODEL.md §12 S3",
		Reports:  []catalog.Report{"t3code#23021"},
		New:      func() sim.Checker { return &revokedDenied{dead: map[string]deadCred{}} }})
	register(Info{Name: StaleCleanupSparesReplacement, Group: catalog.MCPCredential,
		Property: "a released session's clean-up never revokes, or clears the slot of, a credential issued for or held by another live session",
		Source:   "000_993d1fdfc50e8ec7 acceptance check 5; MODEL.md §3 I3-I4, §12 S4",
		Reports:  []catalog.Report{"t3code#23021"},
		New:      func() sim.Checker { return newStaleCleanup() }})
}

type noCrossThread struct{}

func (*noCrossThread) Name() string { return NoCrossThreadTabAction }

// ObservedKinds implements sim.KindObserver.
func (*noCrossThread) ObservedKinds() []string { return noCrossThreadKinds }

var noCrossThreadKinds = actingKinds

func (*noCrossThread) Observe(ev *sim.Event) *sim.Violation {
	if !isToolEvent(ev) || !acting(ev.Kind) || ev.Outcome != outcomeOK {
		return nil
	}
	tabThread, thread := ev.Get("tab-thread"), ev.Get("thread")
	if tabThread == "" || tabThread == thread {
		return nil
	}
	return violation(NoCrossThreadTabAction,
		"agent of thread %s (credential %s) ran %s on tab %s of thread %s at %s",
		thread, ev.Get("cred"), ev.Kind, ev.Get("tab"), tabThread, at(ev.At))
}

type humanControl struct {
	controller map[string]string // tab -> viewer
	since      map[string]time.Duration
}

func (*humanControl) Name() string { return HumanControlExclusive }

// ObservedKinds implements sim.KindObserver.
func (*humanControl) ObservedKinds() []string { return humanControlKinds }

var humanControlKinds = joinKinds([]string{"control.take", "control.release", "tab.swept", "server.start"}, actingKinds)

func (h *humanControl) Observe(ev *sim.Event) *sim.Violation {
	tab := ev.Get("tab")
	switch {
	case ev.Kind == "control.take" && ev.Outcome == outcomeOK:
		h.controller[tab] = ev.Actor
		h.since[tab] = ev.At
	case ev.Kind == "control.release", ev.Kind == "tab.swept":
		delete(h.controller, tab)
	case ev.Kind == "server.start":
		clear(h.controller)
	case isToolEvent(ev) && acting(ev.Kind) && ev.Outcome == outcomeOK:
		if v, ok := h.controller[tab]; ok {
			return violation(HumanControlExclusive,
				"agent of thread %s ran %s on tab %s at %s while %s controlled it (since %s)",
				ev.Get("thread"), ev.Kind, tab, at(ev.At), v, at(h.since[tab]))
		}
		if ev.Kind == "t3_preview_close" {
			delete(h.controller, tab)
		}
	}
	return nil
}

type openedTab struct {
	thread string
	cred   string
	key    string
	at     time.Duration // formatted only in a message
}

type keepsTabs struct {
	opened map[string]openedTab
}

func (*keepsTabs) Name() string { return ThreadKeepsItsTabs }

// ObservedKinds implements sim.KindObserver.
func (*keepsTabs) ObservedKinds() []string { return keepsTabsKinds }

var keepsTabsKinds = joinKinds([]string{toolOpen}, actingKinds)

func (k *keepsTabs) Observe(ev *sim.Event) *sim.Violation {
	if !isToolEvent(ev) {
		return nil
	}
	tab := ev.Get("tab")
	if ev.Kind == toolOpen && ev.Outcome == outcomeOK {
		if _, seen := k.opened[tab]; !seen {
			k.opened[tab] = openedTab{thread: ev.Get("thread"), cred: ev.Get("cred"), key: ev.Get("key"), at: ev.At}
		}
		return nil
	}
	if !acting(ev.Kind) || ev.Outcome != "agentMismatch" {
		return nil
	}
	o, ok := k.opened[tab]
	thread := ev.Get("thread")
	if !ok || o.thread != thread || ev.Get("tab-thread") != thread {
		return nil
	}
	return violation(ThreadKeepsItsTabs,
		"thread %s lost its own tab %s: %s with credential %s (key %s) refused agentMismatch at %s; the thread opened it at %s with credential %s (owner key %s)",
		thread, tab, ev.Kind, ev.Get("cred"), ev.Get("key"), at(ev.At), at(o.at), o.cred, o.key)
}

type deadCred struct {
	at  time.Duration
	how string
}

type revokedDenied struct {
	dead   map[string]deadCred
	issued []string
	str    sim.Strings // the hows of dead
}

func (*revokedDenied) Name() string { return RevokedCredentialDenied }

// ObservedKinds implements sim.KindObserver: the credentials' lives.
func (*revokedDenied) ObservedKinds() []string { return revokedDeniedKinds }

var revokedDeniedKinds = []string{"credential.issue", "credential.revoke", "credential.expire", "server.start"}

// ObservedActors implements sim.ActorObserver: it judges every agent tool
// call, whatever its kind.
func (*revokedDenied) ObservedActors() []string { return agentActors }

func (r *revokedDenied) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Kind == "credential.issue":
		r.issued = append(r.issued, ev.Get("cred"))
	case ev.Kind == "credential.revoke" || ev.Kind == "credential.expire":
		var hb [96]byte
		r.dead[ev.Get("cred")] = deadCred{at: ev.At, how: r.str.Bytes(append(append(append(append(hb[:0], ev.Kind...), " ("...), ev.Get("cause")...), ')'))}
	case ev.Kind == "server.start":
		// Every credential of the previous process died with it.
		for _, c := range r.issued {
			if _, ok := r.dead[c]; !ok {
				r.dead[c] = deadCred{at: ev.At, how: "server restart"}
			}
		}
		r.issued = r.issued[:0]
	case isToolEvent(ev):
		d, ok := r.dead[ev.Get("cred")]
		if !ok || authorizedAt(ev) < d.at {
			return nil
		}
		if ev.Outcome == "401 unknown_or_expired_token" || ev.Outcome == "ECONNREFUSED" {
			return nil
		}
		return violation(RevokedCredentialDenied,
			"agent of thread %s called %s with credential %s at %s and got %q; the credential died at %s by %s",
			ev.Get("thread"), ev.Kind, ev.Get("cred"), at(ev.At), ev.Outcome, at(d.at), d.how)
	}
	return nil
}

type record struct {
	incarnation, thread, cred string
}

type staleCleanup struct {
	issuedFor map[string]string // cred -> incarnation whose prepare minted it
	live      map[string]bool   // incarnation -> opening or live
	recorded  []record          // (incarnation, thread) -> cred, in record order
	// at indexes recorded by (incarnation, thread); byCred lists, per
	// credential, the positions in recorded that were ever given it since
	// the last server.start (some since given another: a reader checks).
	// Both are looked up only: a world of 1,000 threads records as many.
	at     map[incThread]int
	byCred map[string][]int
}

type incThread struct{ incarnation, thread string }

func newStaleCleanup() *staleCleanup {
	return &staleCleanup{issuedFor: map[string]string{}, live: map[string]bool{},
		at: map[incThread]int{}, byCred: map[string][]int{}}
}

func (*staleCleanup) Name() string { return StaleCleanupSparesReplacement }

// ObservedKinds implements sim.KindObserver.
func (*staleCleanup) ObservedKinds() []string { return staleCleanupKinds }

var staleCleanupKinds = []string{"server.start", "credential.issue", "session.open", "session.opened", "session.attach", "session.release", "credential.revoke", "slot.clear"}

func (s *staleCleanup) record(inc, thread, cred string) {
	i, ok := s.at[incThread{inc, thread}]
	if ok {
		if s.recorded[i].cred == cred {
			return
		}
		s.recorded[i].cred = cred
	} else {
		i = len(s.recorded)
		s.at[incThread{inc, thread}] = i
		s.recorded = append(s.recorded, record{inc, thread, cred})
	}
	s.byCred[cred] = append(s.byCred[cred], i)
}

func (s *staleCleanup) recordedBy(inc, thread string) string {
	if i, ok := s.at[incThread{inc, thread}]; ok {
		return s.recorded[i].cred
	}
	return ""
}

// holder returns the first record, in record order, that holds cred for a
// live incarnation other than stale: what a scan of recorded finds.
func (s *staleCleanup) holder(cred, stale string) (record, bool) {
	first := -1
	for _, i := range s.byCred[cred] {
		if r := s.recorded[i]; r.cred == cred && r.incarnation != stale && s.live[r.incarnation] && (first < 0 || i < first) {
			first = i
		}
	}
	if first < 0 {
		return record{}, false
	}
	return s.recorded[first], true
}

func (s *staleCleanup) Observe(ev *sim.Event) *sim.Violation {
	switch ev.Kind {
	case "server.start":
		s.live = map[string]bool{}
		s.recorded = s.recorded[:0]
		clear(s.at)
		clear(s.byCred)
	case "credential.issue":
		s.issuedFor[ev.Get("cred")] = ev.Get("for")
	case "session.open":
		if ev.Outcome == "" {
			s.live[ev.Get("incarnation")] = true
		} else {
			delete(s.live, ev.Get("incarnation"))
		}
	case "session.opened", "session.attach":
		s.record(ev.Get("incarnation"), ev.Get("thread"), ev.Get("cred"))
	case "session.release":
		delete(s.live, ev.Get("incarnation"))
	case "credential.revoke", "slot.clear":
		stale, ok := strings.CutPrefix(ev.Get("cause"), "cleanup:")
		if !ok {
			return nil
		}
		cred, thread := ev.Get("cred"), ev.Get("thread")
		own := s.recordedBy(stale, thread)
		if cred == own {
			return nil
		}
		if inc := s.issuedFor[cred]; inc != stale && s.live[inc] {
			return violation(StaleCleanupSparesReplacement,
				"clean-up of released session %s did %s of credential %s of thread %s at %s, but that credential was issued for live session %s (the released session recorded %s)",
				stale, ev.Kind, cred, thread, at(ev.At), inc, orNone(own))
		}
		if r, ok := s.holder(cred, stale); ok {
			return violation(StaleCleanupSparesReplacement,
				"clean-up of released session %s did %s of credential %s of thread %s at %s, but live session %s holds it",
				stale, ev.Kind, cred, thread, at(ev.At), r.incarnation)
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
