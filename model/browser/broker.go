package browser

import (
	"fmt"
	"time"

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
	Ops           []string
	focused       bool
	focusOrder    int
	closed        bool
	// Stream is what the broker sent the host: "connected", then one
	// "request <id>" per request.
	Stream []string
	// Requests are the requests delivered to the host, in order.
	Requests []HostRequest
	// OnRequest, if set, is called with each delivered request.
	OnRequest func(HostRequest)
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
}

// NewBroker returns a broker with no hosts.
func NewBroker(env *model.Env) *Broker {
	return &Broker{env: env, rand: env.Rand("broker")}
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
	for _, old := range b.hosts {
		if old.ClientID == clientID {
			b.drop(old)
			break
		}
	}
	b.focusSeq++
	h.focusOrder = b.focusSeq
	b.hosts = append(b.hosts, h)
	return h
}

// Disconnect ends a host's stream.
func (b *Broker) Disconnect(h *Host) { b.drop(h) }

func (b *Broker) drop(h *Host) {
	for i, x := range b.hosts {
		if x == h {
			b.hosts = append(b.hosts[:i], b.hosts[i+1:]...)
			break
		}
	}
	h.closed = true
	for i := 0; i < len(b.assignments); {
		if b.assignments[i].host == h {
			b.assignments = append(b.assignments[:i], b.assignments[i+1:]...)
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
	for _, h := range b.hosts {
		if h.ClientID != clientID {
			continue
		}
		if h.EnvironmentID != environmentID || h.ConnectionID != connectionID {
			return
		}
		h.focused = focused
		if focused {
			b.focusSeq++
			h.focusOrder = b.focusSeq
		}
		return
	}
}

func (b *Broker) live(h *Host) bool {
	for _, x := range b.hosts {
		if x == h {
			return true
		}
	}
	return false
}

func (b *Broker) assignment(key string) *assignment {
	for _, a := range b.assignments {
		if a.key == key {
			return a
		}
	}
	return nil
}

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
	var best *Host
	for _, h := range b.hosts {
		if h.EnvironmentID != s.EnvironmentID || !h.supports(op) {
			continue
		}
		if best == nil || better(h, best) {
			best = h
		}
	}
	return best, a
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
			b.assignments = append(b.assignments[:i], b.assignments[i+1:]...)
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
	if timeout <= 0 {
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
	h, a := b.route(key, s, op)
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
		b.assignments = append(b.assignments, a)
	}
	explicit := tabID != ""
	if !explicit && reuseTab {
		tabID = a.tabID
	}
	seq := b.seq
	b.seq++
	id := fmt.Sprintf("preview-%d", seq)
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
	req := HostRequest{RequestID: id, ThreadID: s.ThreadID, TabID: tabID, TabIDExplicit: explicit, Operation: op,
		Timeout: timeout, Input: in}
	h.Stream = append(h.Stream, "request "+id)
	h.Requests = append(h.Requests, req)
	p.timer = b.env.Clock.AfterFunc(initialDeadline(op, timeout), func() { b.timeout(p) })
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
	b.fail(p, ErrTimeout)
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
