package browser

import (
	"fmt"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

// The PreviewAutomationBroker (apps/server/src/mcp/PreviewAutomationBroker.ts
// @ 0330fb08, the version FIDELITY.md §3 tests): hosts (the server's own
// headless browser, desktop apps) connect with a clientId and get a
// connectionId; invoke routes a tool's request to one host, pinned per
// assignment key, and waits for the host's response under a deadline.
//
// The worlds call the in-process ServerBrowser directly: they have one host,
// the preferred one, so routing is trivial there. The broker is exercised by
// the fidelity cases (PB-*), and the pin key's dependence on the credential
// (BUG-1) is shown there; see docs/fidelity.md.

// RouteByTabOwner routes an operation on a tab to the host that holds it:
// hosts report their tabs (reportStatus, per clientId, kept across a
// re-registration), and an operation that names a tab, or none (the
// thread's current tab), goes to that tab's host, a host that is not
// connected being a typed NoAvailableHost failure. Off is
// PreviewAutomationBroker.ts @ 0330fb08 (t3code#13051): the first call of
// a provider session pins it to the best host of the moment (capability,
// focus, focus recency) for the life of that host's connection; the pin is
// re-evaluated on disconnect only, so with two desktop clients registered
// the session's calls run in the browsing context of the host the user is
// not looking at, and succeed there silently. The follow-up of #12535
// (t3code#12898, a re-registration drops the session's tab assignment) is
// the same fault: the tab records here are the hosts', not the lease's.
const RouteByTabOwner model.Switch = "route-by-tab-owner"

// TimeoutEvictsHost is PR #11381: a request that its host leaves
// unanswered past the broker's deadline invalidates that connection; the
// host is evicted (its other requests fail disconnected) and is chosen
// again only once it registers anew, which a live host does a second later
// (#12535). Off is t3code#11167: a still-registered socket counts as a live
// host; a backgrounded mobile client whose socket is half-open stays
// listed, keeps its leases, and every thread's calls routed to it time out,
// with no failover.
const TimeoutEvictsHost model.Switch = "timeout-evicts-host"

// HostDeadlineHeadroom hands the host a wait budget below the broker's
// deadline (previewAutomationHostTimeoutMs, PreviewAutomationBroker.ts
// @ 0f941fd4: the caller's timeout less min(500 ms, timeout/4)), so the
// broker's deadline is strictly greater than the operation's own timeout.
// Off is t3code#12407 and its follow-up #12898: preview_wait_for passes one
// timeoutMs as both the host's wait budget and the broker's deadline; the
// host's honest "not found" lands at or just after the deadline, and the
// evicting broker (#11381) drops a healthy host.
const HostDeadlineHeadroom model.Switch = "host-deadline-headroom"

// Wrong fixes of the host routing and eviction.
const (
	// RouteExplicitTabOnly consults the tab records only for an explicit
	// tabId; a call that names no tab still follows the session's pin.
	RouteExplicitTabOnly model.Mutant = "route-explicit-tab-only"
	// TimeoutDropsAssignmentOnly answers a missed deadline by dropping the
	// session's lease only: the host stays registered and routable.
	TimeoutDropsAssignmentOnly model.Mutant = "timeout-drops-assignment-only"
	// HeadroomForExplicitTimeoutOnly applies the host headroom only when
	// the caller set timeoutMs; the 15 s default is still passed both ways.
	HeadroomForExplicitTimeoutOnly model.Mutant = "headroom-for-explicit-timeout-only"
)

func init() {
	model.RegisterSwitch(model.SwitchInfo{Name: RouteByTabOwner, Group: catalog.PreviewTab,
		Reports:    []catalog.Report{"t3code#13051"},
		Source:     "apps/server/src/mcp/PreviewAutomationBroker.ts@0330fb08 (hostAssignmentKey, invoke's route); issue #13051's triage",
		Scenario:   "tab-ownership",
		Invariants: []string{"preview-op-on-owning-host"},
		Reported:   "a provider session's first call pins it to the best host of the moment until that host disconnects; its later calls run there",
		Fixed:      "an operation on a tab (or on the thread's current tab) runs on the host that reported the tab; an absent holder is NoAvailableHost",
		Upstream:   "",
		Script:     "scenarios/testdata/tab_ownership/two_hosts_wrong_context",
		Mechanism:  "model/browser: broker host routing (pin vs tab records)"})
	model.RegisterSwitch(model.SwitchInfo{Name: TimeoutEvictsHost, Group: catalog.PreviewTab,
		Reports:    []catalog.Report{"t3code#11167"},
		Source:     "issue #11167's triage (PreviewAutomationBroker.ts@0330fb08: prune on disconnect only); PR #11381 (evict on an unanswered deadline), PR #12535 (re-register after 1 s)",
		Scenario:   "tab-ownership",
		Invariants: []string{"timed-out-host-not-rechosen"},
		Reported:   "a host that missed a deadline stays registered with its leases and is routed to again",
		Fixed:      "a missed deadline evicts the host; it is routed to again only after it registers anew",
		Upstream:   "t3code PR #11381",
		Script:     "scenarios/testdata/tab_ownership/half_open_mobile_host",
		Mechanism:  "model/browser: broker host liveness (eviction on a missed deadline)"})
	model.RegisterSwitch(model.SwitchInfo{Name: HostDeadlineHeadroom, Group: catalog.PreviewTab,
		Reports:    []catalog.Report{"t3code#12407"},
		Source:     "apps/server/src/mcp/PreviewAutomationBroker.ts@0f941fd4 (previewAutomationHostTimeoutMs); issues #12407, #12898; toolkits/preview/handlers.ts preview_wait_for",
		Scenario:   "tab-ownership",
		Invariants: []string{"host-evicted-only-past-its-budget", "live-host-answers-in-time"},
		Reported:   "the host's wait budget equals the broker's deadline: an honest miss lands at the deadline and the host is evicted",
		Fixed:      "the host's budget is the caller's timeout less min(500 ms, timeout/4); the deadline stays the caller's timeout",
		Upstream:   "",
		Script:     "scenarios/testdata/tab_ownership/wait_for_evicts_host",
		Mechanism:  "model/browser: broker deadline vs host wait budget"})
	model.RegisterMutant(model.MutantInfo{Name: RouteExplicitTabOnly, Group: catalog.PreviewTab,
		Doc:        "the tab records route only calls with an explicit tabId; a call naming no tab follows the session's pin",
		Scenario:   "tab-ownership",
		Invariants: []string{"preview-op-on-owning-host"}})
	model.RegisterMutant(model.MutantInfo{Name: TimeoutDropsAssignmentOnly, Group: catalog.PreviewTab,
		Doc:        "a missed deadline drops the session's lease, but the host stays registered and routable",
		Scenario:   "tab-ownership",
		Invariants: []string{"timed-out-host-not-rechosen"}})
	model.RegisterMutant(model.MutantInfo{Name: HeadroomForExplicitTimeoutOnly, Group: catalog.PreviewTab,
		Doc:        "the host headroom applies only to an explicit timeoutMs; the 15 s default is passed as both budget and deadline",
		Scenario:   "tab-ownership",
		Invariants: []string{"host-evicted-only-past-its-budget", "live-host-answers-in-time"}})
}

// Broker constants.
const (
	// BrokerDefaultTimeout is invoke's default timeoutMs.
	BrokerDefaultTimeout = 15 * time.Second
	// ResponseGrace is PREVIEW_AUTOMATION_RESPONSE_GRACE_MS.
	ResponseGrace = time.Second
	// RecordingTransferTimeout bounds recordingStop, whose answer carries
	// the recording (1a485d78 waits beyond the normal deadline; the bound
	// is a model choice).
	RecordingTransferTimeout = 10 * time.Minute
	// TombstoneTTL is how long a timed-out request stays quarantined (the
	// newer broker's tombstone; only with Broker.Quarantine).
	TombstoneTTL = 60 * time.Second
)

// Broker operations beyond the host's (V1 operations are what a legacy host
// that advertises nothing supports).
const (
	OpResize         = "resize"
	OpRecordingStart = "recordingStart"
	OpRecordingStop  = "recordingStop"
)

// V1Operations is PREVIEW_AUTOMATION_V1_OPERATIONS (contracts
// previewAutomation.ts): what a host that advertises no operations
// supports. Recording is a V1 operation; close is not (the desktop host
// closes its tabs itself).
var V1Operations = []string{OpStatus, OpOpen, OpNavigate, OpSnapshot, OpClick, "type", "press", "scroll", OpEvaluate, "waitFor",
	OpRecordingStart, OpRecordingStop}

// Broker error tags (PreviewAutomation*Error).
const (
	ErrNoAvailableHost    = "NoAvailableHostError"
	ErrTimeout            = "TimeoutError"
	ErrClientDisconnected = "ClientDisconnectedError"
	ErrMalformedResponse  = "MalformedResponseError"
	ErrInvalidSelector    = "InvalidSelectorError"
	ErrTargetNotEditable  = "TargetNotEditableError"
	ErrTabNotFound        = "TabNotFoundError"
	ErrControlInterrupted = "ControlInterruptedError"
	ErrResultTooLarge     = "ResultTooLargeError"
	ErrRemoteUnavailable  = "RemoteUnavailableError"
	ErrExecution          = "ExecutionError"
)

// BrokerScope is the part of the caller's MCP scope the broker reads.
type BrokerScope struct {
	EnvironmentID      string
	ThreadID           string
	ProviderSessionID  string // the MCP credential id
	ProviderInstanceID string
}

// AssignmentKey is hostAssignmentKey: environmentId NUL providerSessionId
// (the credential id) as read at 0330fb08; with stable-tab-owner the
// assignment follows the thread, as the owner key does.
func AssignmentKey(p model.Profile, s BrokerScope) string {
	if p.Fixed(model.StableTabOwner) {
		return s.EnvironmentID + "\x00" + s.ThreadID
	}
	return s.EnvironmentID + "\x00" + s.ProviderSessionID
}

// Host is one connected host (ClientConnection).
type Host struct {
	ClientID      string
	ConnectionID  string
	EnvironmentID string
	// Ops are the operations the host advertised; they do not change
	// after Connect (the broker ranks its hosts by their number).
	Ops        []string
	focused    bool
	focusOrder int
	closed     bool
	// assigned counts the assignments whose host this is: a host with none
	// (all but one, usually, when a restart closes every host) is dropped
	// without a walk of every assignment.
	assigned int
	// Stream is what the broker sent the host: "connected", then one
	// "request <id>" per request.
	Stream []string
	// Requests are the requests delivered to the host, in order.
	Requests []HostRequest
	// OnRequest, if set, is called with each delivered request.
	OnRequest func(HostRequest)
	// OnClose, if set, is called once when the broker ends the connection
	// (evicted, replaced by a newer registration, the server died), with
	// the reason.
	OnClose func(reason string)
}

func (h *Host) supports(op string) bool {
	for _, o := range h.Ops {
		if o == op {
			return true
		}
	}
	return false
}

// HostRequest is the request a host receives.
type HostRequest struct {
	RequestID     string
	ThreadID      string
	TabID         string
	TabIDExplicit bool
	Operation     string
	Timeout       time.Duration
	Input         BrokerInput
}

// BrokerInput is the part of a request's input the broker reads.
type BrokerInput struct {
	Selector string
	Locator  string
	Value    string
}

// RemoteError is a host's error payload.
type RemoteError struct {
	Tag     string
	Message string
	// SelectorKind and SelectorLength are TargetNotEditable's detail;
	// MaximumBytes ResultTooLarge's.
	SelectorKind   string
	SelectorLength int
	MaximumBytes   int
}

// Response is a host's answer to a request.
type Response struct {
	ClientID     string
	ConnectionID string
	RequestID    string
	// Phase "started" (navigation began) or "" (final).
	Phase string
	OK    bool
	// Result: Value, and the tab id the operation resolved to ("" none).
	Value string
	TabID string
	Error *RemoteError
}

// BrokerError is a PreviewAutomation*Error with its bounded diagnostics: it
// never carries the selector text or the remote message.
type BrokerError struct {
	Tag                string
	Operation          string
	EnvironmentID      string
	ThreadID           string
	ProviderSessionID  string
	ProviderInstanceID string
	ClientID           string
	ConnectionID       string
	RequestID          string
	TabID              string
	Timeout            time.Duration
	SelectorKind       string
	SelectorLength     int
	RemoteTag          string
	RemoteMessageLen   int
	MaximumBytes       int
	// Outcome is a timeout's outcome: "unknown" (the host may have acted)
	// or "not_started" (quarantined, never sent).
	Outcome string
}

func (e *BrokerError) Error() string {
	s := fmt.Sprintf("PreviewAutomation%s: %s", e.Tag, e.Operation)
	if e.RequestID != "" {
		s += " " + e.RequestID + " via " + e.ClientID
	}
	if e.SelectorKind != "" {
		s += fmt.Sprintf(" (%s of %d chars)", e.SelectorKind, e.SelectorLength)
	}
	return s
}

// BrokerResult is a successful invoke's result.
type BrokerResult struct {
	Value    string
	TabID    string
	ClientID string
}

type assignment struct {
	key         string
	host        *Host
	tabID       string
	tabSequence int
}

type pendingRequest struct {
	id      string
	host    *Host
	ctx     BrokerError
	seq     int
	started bool
	timer   sim.Timer
	reply   func(BrokerResult, *BrokerError)
	done    bool
	scope   BrokerScope
	input   BrokerInput
	read    bool
	// tabID is the tab the caller named ("" none).
	tabID string
	// budget is the wait budget sent to the host; sent when.
	budget time.Duration
	sent   time.Duration
}

type tombstone struct {
	requestID string
	env, psid string
	until     time.Duration
}

// Broker is the PreviewAutomationBroker of one server process.
type Broker struct {
	env         *model.Env
	rand        *sim.Rand
	hosts       []*Host
	assignments []*assignment
	pending     []*pendingRequest
	seq         int
	focusSeq    int
	// Quarantine turns on the newer broker's tombstones: after a timed-out
	// mutating request, further mutating requests of the same credential
	// and environment are refused not_started until the late answer
	// arrives or TombstoneTTL passes.
	Quarantine bool
	tombstones []tombstone
	// tabs are the hosts' reportStatus records: which client holds which
	// tab of which thread, in report order (the last of a thread is its
	// current tab). They are keyed by clientId, not connection, so they
	// outlive a re-registration.
	tabs []tabRecord
	dead bool
	// byClient is the connected host of each clientId (hosts holds at most
	// one per clientId: Connect replaces the old one), tabAt the position
	// in tabs of each (environment, tab) record, byKey the assignment of
	// each key (assignments holds at most one per key): lookups only,
	// never ranged over; hosts, tabs and assignments keep the order.
	byClient map[string]*Host
	tabAt    map[tabKey]int
	byKey    map[string]*assignment
	// ranked are the hosts of hosts in route's order, worst first (fewer
	// operations, not focused, focused or connected earlier), kept sorted
	// as hosts connect, go and change focus: route takes the last that
	// fits instead of scanning every host (after a restart every thread
	// of a world of 1,000 threads routes anew). focusOrder is unique, so
	// the order is total; a host connecting is the latest, so it goes at
	// the end or just before the focused hosts. threadTabs are the positions in tabs of each
	// (environment, thread)'s records, in tabs' order (tabHolder).
	ranked     []*Host
	threadTabs map[tabThread][]int
}

// tabThread identifies a thread of an environment (Broker.threadTabs).
type tabThread struct{ env, thread string }

// tabKey identifies a tab record: the environment and the tab id.
type tabKey struct{ env, tab string }

// tabRecord is one tab a host reported.
type tabRecord struct {
	env, thread, tab, client string
	opened                   time.Duration
}

// NewBroker returns a broker with no hosts.
func NewBroker(env *model.Env) *Broker {
	return &Broker{env: env, rand: env.Rand("broker"), byClient: map[string]*Host{}, tabAt: map[tabKey]int{},
		byKey: map[string]*assignment{}, threadTabs: map[tabThread][]int{}}
}

// BrokerSizes are a broker's table sizes (Broker.Sizes): connected hosts,
// tab records, the (environment, thread) pairs that reported tabs, and
// assignments by key. Counts, not bytes.
type BrokerSizes struct{ Hosts, Tabs, ThreadTabs, Keys int }

// Sizes returns b's table sizes now.
func (b *Broker) Sizes() BrokerSizes {
	return BrokerSizes{Hosts: len(b.byClient), Tabs: len(b.tabs), ThreadTabs: len(b.threadTabs), Keys: len(b.byKey)}
}

// Reserve sizes b's empty tables for sz (a dead predecessor's Sizes: after
// a restart every host connects and reports its tabs again), so they do
// not grow from empty one rehash at a time. Only a table still empty is
// resized; the tables are looked up, never ranged over, so their capacity
// changes nothing a run does.
func (b *Broker) Reserve(sz BrokerSizes) {
	if len(b.byClient) == 0 && sz.Hosts > 0 {
		b.byClient = make(map[string]*Host, sz.Hosts)
	}
	if len(b.hosts) == 0 && len(b.ranked) == 0 && sz.Hosts > 0 {
		b.hosts, b.ranked = make([]*Host, 0, sz.Hosts), make([]*Host, 0, sz.Hosts)
	}
	if len(b.tabs) == 0 && sz.Tabs > 0 {
		b.tabAt = make(map[tabKey]int, sz.Tabs)
		b.tabs = make([]tabRecord, 0, sz.Tabs)
	}
	if len(b.threadTabs) == 0 && sz.ThreadTabs > 0 {
		b.threadTabs = make(map[tabThread][]int, sz.ThreadTabs)
	}
	if len(b.byKey) == 0 && sz.Keys > 0 {
		b.byKey = make(map[string]*assignment, sz.Keys)
	}
}

// Connect registers a host (acquireConnection): a fresh connectionId, the
// stream's first event is "connected"; ops nil means the V1 operations. A
// host reconnecting with the same clientId replaces the old connection,
// whose assignments go and whose pending requests fail disconnected.
func (b *Broker) Connect(clientID, environmentID string, ops []string) *Host {
	if ops == nil {
		ops = V1Operations
	}
	h := &Host{ClientID: clientID, EnvironmentID: environmentID, Ops: ops,
		ConnectionID: b.env.Unique("conn-" + b.rand.Hex("connection-id", 8))}
	h.Stream = append(h.Stream, "connected")
	if old := b.byClient[clientID]; old != nil {
		b.close(old, "replaced")
	}
	b.focusSeq++
	h.focusOrder = b.focusSeq
	b.hosts = append(b.hosts, h)
	b.rank(h)
	b.byClient[clientID] = h
	b.env.Emit(brokerActor, "host.connect", "", sim.A("client", clientID), sim.A("conn", h.ConnectionID))
	return h
}

const brokerActor = "broker"

// Disconnect ends a host's stream (the host went away).
func (b *Broker) Disconnect(h *Host) { b.close(h, "closed") }

// close drops h's connection, traces it and tells the host why.
func (b *Broker) close(h *Host, reason string) {
	if h.closed {
		return
	}
	b.drop(h)
	b.env.Emit(brokerActor, "host.disconnect", reason, sim.A("client", h.ClientID), sim.A("conn", h.ConnectionID))
	if h.OnClose != nil {
		h.OnClose(reason)
	}
}

// Kill ends the broker with its server process: every connection closes
// (reason "server-died"); pending requests die unanswered with the process.
func (b *Broker) Kill() {
	b.dead = true
	for _, p := range b.pending {
		p.done = true
		p.timer.Stop()
	}
	b.pending = nil
	b.ranked = nil // nothing routes now: the closes need not unrank one by one
	for len(b.hosts) > 0 {
		b.close(b.hosts[0], "server-died")
	}
	// A dead broker routes nothing (Invoke answers NoAvailableHost first):
	// its tab records need not outlive it while its timers are pending.
	b.hosts, b.tabs = nil, nil
	clear(b.tabAt)
	clear(b.threadTabs)
}

// ReportTab is a host's reportStatus of a tab it holds for threadID,
// opened (made current) at openedAt. It is recorded under every profile;
// only route-by-tab-owner routes by it.
func (b *Broker) ReportTab(clientID, environmentID, threadID, tabID string, openedAt time.Duration) {
	k := tabKey{environmentID, tabID}
	if i, ok := b.tabAt[k]; ok {
		b.tabs[i].client, b.tabs[i].opened = clientID, openedAt
		return
	}
	b.tabAt[k] = len(b.tabs)
	tt := tabThread{environmentID, threadID}
	b.threadTabs[tt] = append(b.threadTabs[tt], len(b.tabs))
	b.tabs = append(b.tabs, tabRecord{env: environmentID, thread: threadID, tab: tabID, client: clientID, opened: openedAt})
}

// tabHolder returns the tab an operation of thread addresses (tabID if
// given, else the thread's current tab: the last opened) and the client
// that holds it, or "" for both when no host reported one.
func (b *Broker) tabHolder(environmentID, threadID, tabID string) (tab, client string) {
	var best *tabRecord
	for _, i := range b.threadTabs[tabThread{environmentID, threadID}] {
		r := &b.tabs[i]
		if tabID != "" && r.tab != tabID {
			continue
		}
		if best == nil || r.opened >= best.opened {
			best = r
		}
	}
	if best == nil {
		return "", ""
	}
	return best.tab, best.client
}

func (b *Broker) hostByClient(clientID, environmentID string) *Host {
	if h := b.byClient[clientID]; h != nil && h.EnvironmentID == environmentID {
		return h
	}
	return nil
}

func (b *Broker) drop(h *Host) {
	for i, x := range b.hosts {
		if x == h {
			if i == 0 { // Kill closes the hosts first to last
				b.hosts[0] = nil // the backing array must not keep it
				b.hosts = b.hosts[1:]
			} else {
				b.hosts = append(b.hosts[:i], b.hosts[i+1:]...)
			}
			break
		}
	}
	b.unrank(h)
	if b.byClient[h.ClientID] == h {
		delete(b.byClient, h.ClientID)
	}
	h.closed = true
	for i := 0; h.assigned > 0 && i < len(b.assignments); {
		if a := b.assignments[i]; a.host == h {
			h.assigned--
			b.assignments = append(b.assignments[:i], b.assignments[i+1:]...)
			if b.byKey[a.key] == a {
				delete(b.byKey, a.key)
			}
			continue
		}
		i++
	}
	for _, p := range append([]*pendingRequest(nil), b.pending...) {
		if p.host == h {
			b.fail(p, ErrClientDisconnected)
		}
	}
}

// Focus is focusHost: ignored unless the clientId is connected in that
// environment with that connectionId.
func (b *Broker) Focus(clientID, environmentID, connectionID string, focused bool) {
	h := b.byClient[clientID]
	if h == nil || h.EnvironmentID != environmentID || h.ConnectionID != connectionID {
		return
	}
	if !focused && !h.focused {
		return // nothing changes (a window sent behind another already was)
	}
	b.unrank(h)
	h.focused = focused
	if focused {
		b.focusSeq++
		h.focusOrder = b.focusSeq
	}
	b.rank(h)
}

// rankAt returns the number of hosts in ranked that h is better than or
// equal to: where h goes, or one past where it is.
func (b *Broker) rankAt(h *Host) int {
	lo, hi := 0, len(b.ranked)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if better(b.ranked[m], h) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// rank inserts h into ranked; unrank removes it (if there).
func (b *Broker) rank(h *Host) {
	i := b.rankAt(h)
	b.ranked = append(b.ranked, nil)
	copy(b.ranked[i+1:], b.ranked[i:])
	b.ranked[i] = h
}

func (b *Broker) unrank(h *Host) {
	if i := b.rankAt(h) - 1; i >= 0 && b.ranked[i] == h {
		copy(b.ranked[i:], b.ranked[i+1:])
		b.ranked[len(b.ranked)-1] = nil
		b.ranked = b.ranked[:len(b.ranked)-1]
	}
}

// live reports whether h is one of the connected hosts.
func (b *Broker) live(h *Host) bool { return h != nil && b.byClient[h.ClientID] == h }

func (b *Broker) assignment(key string) *assignment { return b.byKey[key] }

// route chooses the host: the live assignment if it supports the operation
// (a live assignment that does not is not moved: no host); else the best
// host of the environment that supports it, by number of operations
// (capable before legacy), focus, focus recency.
func (b *Broker) route(key string, s BrokerScope, op string) (*Host, *assignment) {
	a := b.assignment(key)
	if a != nil && !b.live(a.host) {
		b.removeAssignment(a)
		a = nil
	}
	if a != nil && a.host.EnvironmentID == s.EnvironmentID {
		if a.host.supports(op) {
			return a.host, a
		}
		return nil, a
	}
	for i := len(b.ranked) - 1; i >= 0; i-- { // best last: the last that fits is the best
		if h := b.ranked[i]; h.EnvironmentID == s.EnvironmentID && h.supports(op) {
			return h, a
		}
	}
	return nil, a
}

func better(h, than *Host) bool {
	if len(h.Ops) != len(than.Ops) {
		return len(h.Ops) > len(than.Ops)
	}
	if h.focused != than.focused {
		return h.focused
	}
	return h.focusOrder > than.focusOrder
}

func (b *Broker) removeAssignment(a *assignment) {
	for i, x := range b.assignments {
		if x == a {
			a.host.assigned--
			b.assignments = append(b.assignments[:i], b.assignments[i+1:]...)
			if b.byKey[a.key] == a {
				delete(b.byKey, a.key)
			}
			return
		}
	}
}

// Invoke routes op for scope and calls reply with the result or error once
// the host answers, the deadline passes, or the host goes. tabID "" means
// none given: the assignment's remembered tab, if its host is the one
// chosen, is sent instead (tabIdExplicit false).
func (b *Broker) Invoke(s BrokerScope, op string, in BrokerInput, tabID string, timeout time.Duration,
	reply func(BrokerResult, *BrokerError)) {
	explicitTimeout := timeout > 0
	if !explicitTimeout {
		timeout = BrokerDefaultTimeout
	}
	key := AssignmentKey(b.env.Profile, s)
	ctx := BrokerError{Operation: op, EnvironmentID: s.EnvironmentID, ThreadID: s.ThreadID,
		ProviderSessionID: s.ProviderSessionID, ProviderInstanceID: s.ProviderInstanceID}
	read := IsRead(op)
	if b.Quarantine && !read && b.quarantined(s) {
		e := ctx
		e.Tag, e.Outcome = ErrTimeout, "not_started"
		reply(BrokerResult{}, &e)
		return
	}
	if b.dead {
		e := ctx
		e.Tag = ErrNoAvailableHost
		reply(BrokerResult{}, &e)
		return
	}
	pin := "-"
	if a := b.assignment(key); a != nil && b.live(a.host) {
		pin = a.host.ClientID
	}
	ownerTab, owner := b.tabHolder(s.EnvironmentID, s.ThreadID, tabID)
	var h *Host
	var a *assignment
	if owner != "" && b.env.Profile.Fixed(RouteByTabOwner) && (tabID != "" || !b.env.Profile.Has(RouteExplicitTabOnly)) {
		// The tab's holder executes the operation, whatever the session's
		// pin says; a holder that is not connected is a typed failure,
		// never a silent run in another host's browsing context.
		h, a = b.hostByClient(owner, s.EnvironmentID), b.assignment(key)
		if h == nil || !h.supports(op) {
			e := ctx
			e.Tag, e.TabID, e.ClientID = ErrNoAvailableHost, ownerTab, owner
			reply(BrokerResult{}, &e)
			return
		}
	} else {
		h, a = b.route(key, s, op)
	}
	if h == nil {
		e := ctx
		e.Tag = ErrNoAvailableHost
		reply(BrokerResult{}, &e)
		return
	}
	reuseTab := a != nil && a.host == h
	if a == nil || a.host != h {
		if a != nil {
			b.removeAssignment(a)
		}
		a = &assignment{key: key, host: h}
		h.assigned++
		b.assignments = append(b.assignments, a)
		b.byKey[key] = a
	}
	explicit := tabID != ""
	if !explicit && reuseTab {
		tabID = a.tabID
	}
	if !explicit && h.ClientID == owner && b.env.Profile.Fixed(RouteByTabOwner) {
		tabID = ownerTab // the thread's current tab, on the host that holds it
	}
	seq := b.seq
	b.seq++
	id := b.env.Str().Join("preview-", seq)
	ctx.ClientID, ctx.ConnectionID, ctx.RequestID, ctx.TabID, ctx.Timeout = h.ClientID, h.ConnectionID, id, tabID, timeout
	switch {
	case in.Locator != "":
		ctx.SelectorKind, ctx.SelectorLength = "locator", len(in.Locator)
	case in.Selector != "":
		ctx.SelectorKind, ctx.SelectorLength = "selector", len(in.Selector)
	}
	p := &pendingRequest{id: id, host: h, ctx: ctx, seq: seq, scope: s, input: in, read: read, reply: reply}
	if explicit {
		p.tabID = tabID
	}
	b.pending = append(b.pending, p)
	budget := timeout
	if b.env.Profile.Fixed(HostDeadlineHeadroom) && (explicitTimeout || !b.env.Profile.Has(HeadroomForExplicitTimeoutOnly)) {
		budget = HostTimeout(timeout)
	}
	req := HostRequest{RequestID: id, ThreadID: s.ThreadID, TabID: tabID, TabIDExplicit: explicit, Operation: op,
		Timeout: budget, Input: in}
	h.Stream = append(h.Stream, "request "+id)
	h.Requests = append(h.Requests, req)
	deadline := initialDeadline(op, timeout)
	p.budget, p.sent = budget, b.env.Now()
	b.env.Emit(brokerActor, "host.request", "", sim.A("client", h.ClientID), sim.A("conn", h.ConnectionID),
		sim.A("request", id), sim.A("thread", s.ThreadID), sim.A("op", op), sim.A("tab", orNone(tabID)),
		sim.A("explicit", fmt.Sprint(explicit)), sim.A("budget", budget.String()), sim.A("deadline", deadline.String()), sim.A("pin", pin),
		sim.A("tab-host", orNone(owner)))
	p.timer = b.env.Clock.AfterFunc(deadline, func() { b.timeout(p) })
	if h.OnRequest != nil {
		h.OnRequest(req)
	}
}

// initialDeadline is initialResponseTimeoutMs: a navigation gets twice its
// timeout plus the grace before it must report it started (or finished);
// recordingStop waits for the transfer.
func initialDeadline(op string, timeout time.Duration) time.Duration {
	switch op {
	case OpNavigate:
		return 2*timeout + ResponseGrace
	case OpRecordingStop:
		return RecordingTransferTimeout
	}
	return timeout
}

// Respond is respond: a response that names no pending request of that
// client and connection is dropped (or clears a tombstone). A started
// phase (ok) starts a fresh deadline of timeout plus grace; a failed
// response without an error is malformed.
func (b *Broker) Respond(r Response) {
	var p *pendingRequest
	for _, x := range b.pending {
		if x.id == r.RequestID && x.ctx.ClientID == r.ClientID && x.ctx.ConnectionID == r.ConnectionID {
			p = x
			break
		}
	}
	if p == nil {
		b.clearTombstone(r.RequestID)
		return
	}
	b.env.Emit(brokerActor, "host.respond", "", sim.A("client", r.ClientID), sim.A("conn", r.ConnectionID), sim.A("request", r.RequestID))
	if r.Phase == "started" && r.OK {
		if !p.started {
			p.started = true
			p.timer.Stop()
			p.timer = b.env.Clock.AfterFunc(p.ctx.Timeout+ResponseGrace, func() { b.timeout(p) })
		}
		return
	}
	if !r.OK {
		if r.Error == nil {
			b.fail(p, ErrMalformedResponse)
			return
		}
		e := classify(p.ctx, *r.Error)
		b.finish(p)
		p.reply(BrokerResult{}, &e)
		return
	}
	b.finish(p)
	// Remember the tab the request resolved to (the response's, else the
	// one the caller named) for the assignment's later requests.
	tab := r.TabID
	if tab == "" {
		tab = p.tabID
	}
	if tab != "" {
		if a := b.assignment(AssignmentKey(b.env.Profile, p.scope)); a != nil && a.host == p.host && a.tabSequence <= p.seq {
			a.tabID, a.tabSequence = tab, p.seq
		}
	}
	p.reply(BrokerResult{Value: r.Value, TabID: r.TabID, ClientID: p.host.ClientID}, nil)
}

func classify(ctx BrokerError, r RemoteError) BrokerError {
	e := ctx
	e.RemoteTag, e.RemoteMessageLen = r.Tag, len(r.Message)
	switch r.Tag {
	case ErrNoAvailableHost, ErrTabNotFound, ErrTimeout, ErrControlInterrupted, ErrInvalidSelector:
		e.Tag = r.Tag
	case ErrTargetNotEditable:
		e.Tag = r.Tag
		if r.SelectorKind != "" {
			e.SelectorKind, e.SelectorLength = r.SelectorKind, r.SelectorLength
		}
	case ErrResultTooLarge:
		e.Tag, e.MaximumBytes = r.Tag, r.MaximumBytes
	case "UnavailableError":
		e.Tag = ErrRemoteUnavailable
	default:
		e.Tag = ErrExecution
	}
	return e
}

func (b *Broker) finish(p *pendingRequest) {
	p.done = true
	p.timer.Stop()
	for i, x := range b.pending {
		if x == p {
			b.pending = append(b.pending[:i], b.pending[i+1:]...)
			return
		}
	}
}

func (b *Broker) fail(p *pendingRequest, tag string) {
	if p.done {
		return
	}
	b.finish(p)
	e := p.ctx
	e.Tag = tag
	if tag == ErrTimeout {
		e.Outcome = "unknown"
	}
	p.reply(BrokerResult{}, &e)
}

func (b *Broker) timeout(p *pendingRequest) {
	if p.done {
		return
	}
	if b.Quarantine && !p.read {
		b.tombstones = append(b.tombstones, tombstone{requestID: p.id, env: p.scope.EnvironmentID,
			psid: p.scope.ProviderSessionID, until: b.env.Now() + TombstoneTTL})
	}
	h := p.host
	attrs := []sim.Attr{sim.A("client", h.ClientID), sim.A("conn", h.ConnectionID), sim.A("request", p.id),
		sim.A("thread", p.scope.ThreadID), sim.A("op", p.ctx.Operation), sim.A("budget", p.budget.String()),
		sim.A("waited", (b.env.Now() - p.sent).String())}
	b.env.Emit(brokerActor, "host.deadline-missed", "", attrs...)
	b.fail(p, ErrTimeout)
	if b.env.Profile.Fixed(TimeoutEvictsHost) && !b.env.Profile.Has(TimeoutDropsAssignmentOnly) && b.live(h) {
		// An unanswered request invalidates the connection (#11381): the
		// host is dropped, its other requests fail disconnected, and it is
		// not routed to again until it registers anew.
		b.env.Emit(brokerActor, "host.evict", "", attrs...)
		b.close(h, "evicted")
		return
	}
	if b.env.Profile.Has(TimeoutDropsAssignmentOnly) {
		if a := b.assignment(AssignmentKey(b.env.Profile, p.scope)); a != nil && a.host == h {
			b.removeAssignment(a)
		}
	}
}

// HostTimeout is previewAutomationHostTimeoutMs (PreviewAutomationBroker.ts
// @ 0f941fd4): the wait budget a host gets for a caller's timeout, below
// the broker's own deadline by a headroom of min(500 ms, timeout/4) (at
// least 1 ms), so an honest answer at the end of the host's budget still
// lands before the broker gives up.
func HostTimeout(timeout time.Duration) time.Duration {
	if timeout <= time.Millisecond {
		return time.Millisecond
	}
	headroom := min(ResponseHeadroom, timeout/4)
	headroom = max(headroom, time.Millisecond)
	return timeout - headroom
}

// ResponseHeadroom is PREVIEW_AUTOMATION_RESPONSE_HEADROOM_MS.
const ResponseHeadroom = 500 * time.Millisecond

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (b *Broker) quarantined(s BrokerScope) bool {
	now := b.env.Now()
	kept := b.tombstones[:0]
	hit := false
	for _, t := range b.tombstones {
		if t.until <= now {
			continue
		}
		kept = append(kept, t)
		if t.env == s.EnvironmentID && t.psid == s.ProviderSessionID {
			hit = true
		}
	}
	b.tombstones = kept
	return hit
}

func (b *Broker) clearTombstone(requestID string) {
	for i, t := range b.tombstones {
		if t.requestID == requestID {
			b.tombstones = append(b.tombstones[:i], b.tombstones[i+1:]...)
			return
		}
	}
}

// Hosts returns the connected hosts.
func (b *Broker) Hosts() []*Host { return b.hosts }
