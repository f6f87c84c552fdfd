package invariants

import (
	"strings"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Credential-lifetime invariants, written from McpSessionRegistry's
// contract (McpSessionRegistry.ts@1b69cde2, the doc comments of touch and
// DEFAULT_LIVENESS_WINDOW_MS): provider turns are signs of life, "so that a
// session which is plainly alive keeps its credential even when it goes a
// long time without touching an MCP tool"; the liveness window only bounds
// "credentials whose session died without a clean stop". They read the
// provider session manager's session.opened, session.attach, turn.start,
// session.detach, session.release and provider.crash events and the
// registry's credential.expire.
const LiveSessionKeepsCredential = "live-session-keeps-credential"

// CredentialLivenessWindow is the registry's contract: a credential of a
// live session outlives its thread's last provider turn by 24 h
// (DEFAULT_LIVENESS_WINDOW_MS, McpSessionRegistry.ts@1b69cde2).
const CredentialLivenessWindow = 24 * time.Hour

func init() {
	register(Info{Name: LiveSessionKeepsCredential, Group: catalog.MCPCredential,
		Property: "the registry never expires the credential a live provider session holds for a thread within 24 h of the thread's last provider turn (or of the credential's issue): expiry only bounds credentials whose session died without a clean stop",
		Source:   "McpSessionRegistry.ts@1b69cde2 (touch, DEFAULT_LIVENESS_WINDOW_MS); PR #4659",
		Reports:  []catalog.Report{"t3code#4463"},
		New: func() sim.Checker {
			return &keepsCredential{lastTurn: map[string]time.Duration{}, issued: map[string]time.Duration{}}
		}})
}

// holding is a credential a live provider session holds for a thread.
type holding struct {
	cred, thread, session, incarnation string
	since                              time.Duration
}

// liveCredentials follows which credentials live provider sessions hold,
// from the provider session manager's events. The checker and the probe
// counter share it. A holding is keyed by its (thread, provider session)
// pair, at most one per pair; the holdings of each credential and of each
// incarnation are kept in intrusive lists in the order they were taken, so
// every event costs the holdings it touches, not all of them (a world of
// 1,000 threads holds about a thousand). The maps are looked up, never
// ranged over; released nodes are reused.
type liveCredentials struct {
	byPair map[holdPair]*holdNode
	byCred map[string]holdList
	byInc  map[string]holdList
	free   *holdNode
}

// holdPair is the (thread, provider session) pair a holding is keyed by.
type holdPair struct{ thread, session string }

// holdNode is one holding, linked into its credential's list and its
// incarnation's list.
type holdNode struct {
	h                  holding
	credPrev, credNext *holdNode
	incPrev, incNext   *holdNode
}

// holdList is a list's first and last node.
type holdList struct{ head, tail *holdNode }

// take records a holding, replacing the pair's earlier one.
func (l *liveCredentials) take(h holding) {
	if l.byPair == nil {
		l.byPair, l.byCred, l.byInc = map[holdPair]*holdNode{}, map[string]holdList{}, map[string]holdList{}
	}
	k := holdPair{h.thread, h.session}
	if old := l.byPair[k]; old != nil {
		l.release(old)
	}
	n := l.free
	if n != nil {
		l.free = n.credNext
		*n = holdNode{}
	} else {
		n = &holdNode{}
	}
	n.h = h
	l.byPair[k] = n
	c := l.byCred[h.cred]
	if n.credPrev = c.tail; c.tail != nil {
		c.tail.credNext = n
	} else {
		c.head = n
	}
	c.tail = n
	l.byCred[h.cred] = c
	i := l.byInc[h.incarnation]
	if n.incPrev = i.tail; i.tail != nil {
		i.tail.incNext = n
	} else {
		i.head = n
	}
	i.tail = n
	l.byInc[h.incarnation] = i
}

// release drops one holding from every index and keeps its node for reuse.
func (l *liveCredentials) release(n *holdNode) {
	delete(l.byPair, holdPair{n.h.thread, n.h.session})
	c := l.byCred[n.h.cred]
	if n.credPrev != nil {
		n.credPrev.credNext = n.credNext
	} else {
		c.head = n.credNext
	}
	if n.credNext != nil {
		n.credNext.credPrev = n.credPrev
	} else {
		c.tail = n.credPrev
	}
	if c.head == nil {
		delete(l.byCred, n.h.cred)
	} else {
		l.byCred[n.h.cred] = c
	}
	i := l.byInc[n.h.incarnation]
	if n.incPrev != nil {
		n.incPrev.incNext = n.incNext
	} else {
		i.head = n.incNext
	}
	if n.incNext != nil {
		n.incNext.incPrev = n.incPrev
	} else {
		i.tail = n.incPrev
	}
	if i.head == nil {
		delete(l.byInc, n.h.incarnation)
	} else {
		l.byInc[n.h.incarnation] = i
	}
	*n = holdNode{credNext: l.free}
	l.free = n
}

// liveCredentialKinds are the kinds liveCredentials.observe reads.
var liveCredentialKinds = []string{"server.start", "session.opened", "session.attach", "session.detach", "session.release", "provider.crash"}

// observe updates the holdings from ev (of liveCredentialKinds).
func (l *liveCredentials) observe(ev *sim.Event) {
	switch ev.Kind {
	case "server.start":
		// The new process's registry knows none of the old credentials,
		// and (in this model) no provider process survived.
		clear(l.byPair)
		clear(l.byCred)
		clear(l.byInc)
	case "session.opened", "session.attach":
		l.take(holding{cred: ev.Get("cred"), thread: ev.Get("thread"), session: ev.Get("providerSessionId"),
			incarnation: ev.Get("incarnation"), since: ev.At})
	case "session.detach":
		if n := l.byPair[holdPair{ev.Get("thread"), ev.Get("providerSessionId")}]; n != nil {
			l.release(n)
		}
	case "session.release", "provider.crash":
		for n := l.byInc[ev.Get("incarnation")].head; n != nil; {
			next := n.incNext
			l.release(n)
			n = next
		}
	}
}

// holder returns the live session holding cred: of several, the one that
// took it first.
func (l *liveCredentials) holder(cred string) (holding, bool) {
	if n := l.byCred[cred].head; n != nil {
		return n.h, true
	}
	return holding{}, false
}

type keepsCredential struct {
	live     liveCredentials
	lastTurn map[string]time.Duration // thread -> last turn.start (touch)
	issued   map[string]time.Duration // credential -> credential.issue
}

func (*keepsCredential) Name() string { return LiveSessionKeepsCredential }

// ObservedKinds implements sim.KindObserver.
func (*keepsCredential) ObservedKinds() []string { return keepsCredentialKinds }

var keepsCredentialKinds = joinKinds(liveCredentialKinds, []string{"credential.issue", "turn.start", "credential.expire"})

func (k *keepsCredential) Observe(ev *sim.Event) *sim.Violation {
	k.live.observe(ev)
	switch ev.Kind {
	case "credential.issue":
		k.issued[ev.Get("cred")] = ev.At
	case "turn.start":
		k.lastTurn[ev.Get("thread")] = ev.At
	case "credential.expire":
		cred := ev.Get("cred")
		h, ok := k.live.holder(cred)
		if !ok {
			return nil
		}
		alive := k.issued[cred] // a reuse is no sign of life: issue or touch only
		if t, ok := k.lastTurn[h.thread]; ok && t > alive {
			alive = t
		}
		if ev.At-alive >= CredentialLivenessWindow {
			return nil // the session showed no sign of life for the whole window
		}
		why := "no sign of life the registry counts since " + ev.Get("last-alive")
		if ev.Get("cause") == "lifetime" {
			why = "lifetime cap: issued at " + ev.Get("issued")
		}
		return violation(LiveSessionKeepsCredential,
			"thread %s lost credential %s of its live provider session %s (incarnation %s, holding it since %s): the registry expired it at %s (%s), %s after the thread's last sign of life at %s; the provider process keeps that token in its config and cannot rotate it, so its MCP calls are refused 401 from now on",
			h.thread, cred, h.session, h.incarnation, at(h.since), at(ev.At), why, ev.At-alive, at(alive))
	}
	return nil
}

// OneLiveCredentialPerThread is written from issueActiveMcpCredential's
// contract (t3code#7870 quotes it: it "revokes the thread's existing
// credentials before issuing new ones"; PR #7083's review: "every prepare
// path went through issueActiveMcpCredential, which always revokes the
// thread first", and session restarts rely on it): a thread has at most one
// live MCP credential, so a capability withdrawn from the thread (browser
// access) or a process replaced cannot live on in an orphaned bearer
// token. It reads the registry's credential.issue, credential.revoke and
// credential.expire events and server.start (a new registry knows none).
const OneLiveCredentialPerThread = "one-live-credential-per-thread"

func init() {
	register(Info{Name: OneLiveCredentialPerThread, Group: catalog.MCPCredential,
		Property: "issuing a thread an MCP credential leaves none of the thread's earlier credentials live: a thread holds at most one live credential",
		Source:   "issueActiveMcpCredential (revokes the thread's existing credentials first; quoted in t3code#7870); t3code PR #7083 review",
		Reports:  []catalog.Report{"t3code#7083"},
		New:      func() sim.Checker { return newOneCredential() }})
}

type liveCred struct {
	cred, thread, caps string
	issued             time.Duration
}

// oneCredential keeps the live credentials in issue order, indexed by
// thread and by credential id (looked up only, never ranged over: a world
// of 1,000 threads holds as many): a list's first entry is the earliest
// issued live one, what a scan in issue order finds first.
type oneCredential struct {
	byThread map[string][]*liveCred
	byCred   map[string][]*liveCred
}

func newOneCredential() *oneCredential {
	return &oneCredential{byThread: map[string][]*liveCred{}, byCred: map[string][]*liveCred{}}
}

func (*oneCredential) Name() string { return OneLiveCredentialPerThread }

// ObservedKinds implements sim.KindObserver.
func (*oneCredential) ObservedKinds() []string { return oneCredentialKinds }

var oneCredentialKinds = []string{"server.start", "credential.revoke", "credential.expire", "credential.issue"}

func (o *oneCredential) Observe(ev *sim.Event) *sim.Violation {
	switch ev.Kind {
	case "server.start":
		clear(o.byThread)
		clear(o.byCred)
	case "credential.revoke", "credential.expire":
		cred := ev.Get("cred")
		if list := o.byCred[cred]; len(list) > 0 {
			c := list[0]
			sim.Unindex(o.byCred, cred, c)
			sim.Unindex(o.byThread, c.thread, c)
		}
	case "credential.issue":
		thread, caps := ev.Get("thread"), ev.Get("caps")
		if list := o.byThread[thread]; len(list) > 0 {
			c := list[0]
			why := ""
			if strings.Contains(c.caps, "preview") && !strings.Contains(caps, "preview") {
				why = ", so the old token still drives the preview tools after the thread's browser access was withdrawn"
			}
			return violation(OneLiveCredentialPerThread,
				"thread %s was issued credential %s (%s, for %s) at %s while its credential %s (%s, issued at %s) was still live: the prepare did not revoke the thread's credentials first%s",
				thread, ev.Get("cred"), caps, ev.Get("for"), at(ev.At), c.cred, c.caps, at(c.issued), why)
		}
		c := &liveCred{cred: ev.Get("cred"), thread: thread, caps: caps, issued: ev.At}
		o.byThread[thread] = append(o.byThread[thread], c)
		o.byCred[c.cred] = append(o.byCred[c.cred], c)
	}
	return nil
}
