package invariants

import (
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Preview host invariants: the PreviewAutomationBroker's routing of
// operations to client hosts, their liveness and their eviction.
const (
	PreviewOpOnOwningHost        = "preview-op-on-owning-host"
	TimedOutHostNotRechosen      = "timed-out-host-not-rechosen"
	HostEvictedOnlyPastItsBudget = "host-evicted-only-past-its-budget"
	LiveHostAnswersInTime        = "live-host-answers-in-time"
)

func init() {
	register(Info{Name: PreviewOpOnOwningHost, Group: catalog.PreviewTab,
		Property: "a preview operation of a thread (on a named tab, or on none: the thread's current tab) is sent to the host that holds that tab, while that host is connected",
		Source: "PreviewAutomationBroker.ts@0330fb08 invoke: \"keep one provider session on one physical desktop runtime so a multi-step " +
			"browser interaction cannot jump between independent Electron cookie/DOM state\"; issue #13051's contract (an explicit tab→host mapping)",
		Reports: []catalog.Report{"t3code#13051"},
		New: func() sim.Checker {
			return &owningHost{conn: map[string]string{}, current: map[string]hostTabSeen{}, tabs: map[string]hostTabSeen{}}
		}})
	register(Info{Name: TimedOutHostNotRechosen, Group: catalog.PreviewTab,
		Property: "a host connection that let a request's deadline pass unanswered is sent no further request until it answers something or registers anew",
		Source:   "PR #11381 (\"an unanswered request invalidates this connection\"); issue #11167's contract (a host counts as available only if it answered within a liveness window)",
		Reports:  []catalog.Report{"t3code#11167"},
		New:      func() sim.Checker { return &notRechosen{suspect: map[string]missedDeadline{}} }})
	register(Info{Name: HostEvictedOnlyPastItsBudget, Group: catalog.PreviewTab,
		Property: "the broker evicts a host for an unanswered request only after waiting strictly longer than the wait budget it gave the host for that request",
		Source:   "previewAutomationHostTimeoutMs, PreviewAutomationBroker.ts@0f941fd4 (the host's budget stays below the broker's deadline); issues #12407, #12898",
		Reports:  []catalog.Report{"t3code#12407"},
		New:      func() sim.Checker { return &evictedPastBudget{sent: map[string]sentRequest{}} }})
	register(Info{Name: LiveHostAnswersInTime, Group: catalog.PreviewTab,
		Property: "a host that is reading its socket (not suspended) answers every request, with a result or a typed error, before the broker's deadline",
		Source: "PR #8272 and previewAutomationHostTimeoutMs (a host that gives up \"still has room to say why over the wire\"); PR #7200 " +
			"(a hidden thread is not a closed tab: automation on it is restored, a poisoned capture fails fast with a recoverable error)",
		Reports: []catalog.Report{"t3code#6355", "t3code#12407"},
		New:     func() sim.Checker { return &answersInTime{suspended: map[string]time.Duration{}} }})
}

// answersInTime follows which hosts are suspended (host.suspend,
// host.resume) and judges every missed deadline (host.deadline-missed).
type answersInTime struct {
	suspended map[string]time.Duration
}

func (*answersInTime) Name() string { return LiveHostAnswersInTime }

// ObservedKinds implements sim.KindObserver.
func (*answersInTime) ObservedKinds() []string { return answersInTimeKinds }

var answersInTimeKinds = []string{"host.suspend", "host.resume", "host.deadline-missed"}

func (a *answersInTime) Observe(ev *sim.Event) *sim.Violation {
	switch ev.Kind {
	case "host.suspend":
		a.suspended[ev.Get("client")] = ev.At
	case "host.resume":
		delete(a.suspended, ev.Get("client"))
	case "host.deadline-missed":
		if ev.Actor != "broker" {
			return nil
		}
		if _, off := a.suspended[ev.Get("client")]; off {
			return nil
		}
		return violation(LiveHostAnswersInTime,
			"host %s (connection %s), awake and reading, let the deadline of request %s (%s of thread %s) pass unanswered at %s after %s (its budget %s)",
			ev.Get("client"), ev.Get("conn"), ev.Get("request"), ev.Get("op"), ev.Get("thread"), at(ev.At), ev.Get("waited"), ev.Get("budget"))
	}
	return nil
}

type hostTabSeen struct {
	tab, client string
	at          time.Duration
}

// owningHost follows which host connections are up (host.connect,
// host.disconnect; a server start closes them all), which host holds each
// thread's current tab (host.tab-open: the last one opened), and judges
// every request the broker sends (host.request).
type owningHost struct {
	conn    map[string]string      // client -> its live connection
	current map[string]hostTabSeen // thread -> its current tab
	tabs    map[string]hostTabSeen // tab -> where it was opened
}

func (*owningHost) Name() string { return PreviewOpOnOwningHost }

// ObservedKinds implements sim.KindObserver.
func (*owningHost) ObservedKinds() []string { return owningHostKinds }

var owningHostKinds = []string{"server.start", "host.connect", "host.disconnect", "host.tab-open", "host.request"}

func (o *owningHost) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Kind == "server.start":
		clear(o.conn)
	case ev.Actor == "broker" && ev.Kind == "host.connect":
		o.conn[ev.Get("client")] = ev.Get("conn")
	case ev.Actor == "broker" && ev.Kind == "host.disconnect":
		if o.conn[ev.Get("client")] == ev.Get("conn") {
			delete(o.conn, ev.Get("client"))
		}
	case ev.Kind == "host.tab-open":
		t := hostTabSeen{tab: ev.Get("tab"), client: ev.Get("client"), at: ev.At}
		o.current[ev.Get("thread")] = t
		o.tabs[t.tab] = t
	case ev.Actor == "broker" && ev.Kind == "host.request":
		thread, client := ev.Get("thread"), ev.Get("client")
		target, ok := o.current[thread]
		if ev.Get("explicit") == "true" {
			target, ok = o.tabs[ev.Get("tab")]
		}
		if !ok || target.client == client {
			return nil
		}
		if _, up := o.conn[target.client]; !up {
			return nil
		}
		return violation(PreviewOpOnOwningHost,
			"request %s (%s) of thread %s was sent to host %s at %s (session pinned to %s), but the tab it addresses, %s, is held by host %s, connected, where it was opened at %s: the operation runs in another host's browsing context",
			ev.Get("request"), ev.Get("op"), thread, client, at(ev.At), ev.Get("pin"), target.tab, target.client, at(target.at))
	}
	return nil
}

type missedDeadline struct {
	request, thread, op string
	at                  time.Duration
}

// notRechosen marks a connection suspect when a deadline of its passes
// unanswered (host.deadline-missed) and clears it when the connection
// answers (host.respond) or closes.
type notRechosen struct {
	suspect map[string]missedDeadline // client NUL conn -> the missed deadline
}

func (*notRechosen) Name() string { return TimedOutHostNotRechosen }

// ObservedKinds implements sim.KindObserver.
func (*notRechosen) ObservedKinds() []string { return notRechosenKinds }

var notRechosenKinds = []string{"server.start", "host.deadline-missed", "host.respond", "host.disconnect", "host.request"}

func (n *notRechosen) Observe(ev *sim.Event) *sim.Violation {
	if ev.Actor != "broker" && ev.Kind != "server.start" {
		return nil
	}
	var kb [96]byte // looked up as string(key), which does not allocate
	key := append(append(append(kb[:0], ev.Get("client")...), 0), ev.Get("conn")...)
	switch ev.Kind {
	case "server.start":
		clear(n.suspect)
	case "host.deadline-missed":
		if _, ok := n.suspect[string(key)]; !ok {
			n.suspect[string(key)] = missedDeadline{request: ev.Get("request"), thread: ev.Get("thread"), op: ev.Get("op"), at: ev.At}
		}
	case "host.respond", "host.disconnect":
		delete(n.suspect, string(key))
	case "host.request":
		if m, ok := n.suspect[string(key)]; ok {
			return violation(TimedOutHostNotRechosen,
				"host %s (connection %s) left request %s (%s of thread %s) unanswered past its deadline at %s and has answered nothing since; request %s (%s of thread %s) was routed to it at %s",
				ev.Get("client"), ev.Get("conn"), m.request, m.op, m.thread, at(m.at), ev.Get("request"), ev.Get("op"), ev.Get("thread"), at(ev.At))
		}
	}
	return nil
}

type sentRequest struct {
	budget time.Duration
	at     time.Duration
	op     string
	thread string
}

// evictedPastBudget remembers each request's host budget and send time
// (host.request) and judges the evictions (host.evict).
type evictedPastBudget struct {
	sent map[string]sentRequest // client NUL conn NUL request -> what was sent
}

func (*evictedPastBudget) Name() string { return HostEvictedOnlyPastItsBudget }

// ObservedKinds implements sim.KindObserver.
func (*evictedPastBudget) ObservedKinds() []string { return evictedPastBudgetKinds }

var evictedPastBudgetKinds = []string{"host.request", "host.respond", "host.evict"}

func (e *evictedPastBudget) Observe(ev *sim.Event) *sim.Violation {
	if ev.Actor != "broker" {
		return nil
	}
	key := ev.Get("client") + "\x00" + ev.Get("conn") + "\x00" + ev.Get("request")
	switch ev.Kind {
	case "host.request":
		budget, err := time.ParseDuration(ev.Get("budget"))
		if err != nil {
			return nil
		}
		e.sent[key] = sentRequest{budget: budget, at: ev.At, op: ev.Get("op"), thread: ev.Get("thread")}
	case "host.respond":
		delete(e.sent, key)
	case "host.evict":
		s, ok := e.sent[key]
		delete(e.sent, key)
		if !ok || ev.At-s.at > s.budget {
			return nil
		}
		return violation(HostEvictedOnlyPastItsBudget,
			"broker evicted host %s (connection %s) at %s for request %s (%s of thread %s) sent at %s with a host wait budget of %s: it waited %s, no longer than the budget the host was given",
			ev.Get("client"), ev.Get("conn"), at(ev.At), ev.Get("request"), s.op, s.thread, at(s.at), s.budget, ev.At-s.at)
	}
	return nil
}
