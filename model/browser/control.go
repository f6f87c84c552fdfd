// Package browser models T3 Code's preview stack on the server: the
// PreviewAutomationBroker's owner key, the in-process ServerBrowser host with
// its tabs, limits and idle sweep, and the per-tab SessionControl (agentId,
// human owner, epoch, serial queue).
package browser

import "time"

// Reasons (PreviewAutomationControlReason) and other refusals, as the tools
// return them.
const (
	ReasonInterrupted   = "interrupted"
	ReasonClosed        = "closed"
	ReasonAgentMismatch = "agentMismatch"
	ReasonHumanControl  = "humanControl"
	ReasonTabLimit      = "tabLimit"
	ReasonTabRequired   = "tabRequired"
	// TabNotFound is PreviewAutomationTabNotFoundError.
	TabNotFound = "tabNotFound"
	// OK is a successful tool result.
	OK = "ok"
)

// Messages of BrowserControlInterrupted (SessionControl.ts): the refusals
// that share a reason are told apart by their text.
const (
	MsgInterrupted    = "Browser control changed. Refresh the snapshot before trying again."
	MsgClosed         = "This browser tab is closed."
	MsgAgentMismatch  = "This tab belongs to another agent."
	MsgHumanControl   = "A human controls this tab."
	MsgNotController  = "You do not control this browser tab."
	MsgAnotherViewer  = "Another viewer controls this browser tab."
	MsgOnlyController = "Only the controlling viewer can release this browser tab."
)

// Aborted is the outcome of work rejected by its abort signal: the signal's
// reason, as AbortSignal.reason is what upstream rejects with.
func Aborted(reason string) string { return "aborted: " + reason }

// Failed is the outcome of an action whose body threw: its own error.
func Failed(err string) string { return "error: " + err }

// Control is SessionControl: who may drive one tab. AgentID is the owner
// key the tab was opened with ("" for a human-opened tab) and never changes;
// Owner is the controlling human viewer ("" for none); Epoch bumps on every
// owner change and on close, invalidating queued work and element refs.
//
// Work runs on a serial FIFO queue. After each queued item completes, the
// queue waits for the work tracked (Track) up to that moment before it
// starts the next item; the caller of the item that registered tracked work
// does not wait for it (an action can answer before its navigation
// commits). Release waits for work tracked until handoff (a human's
// navigation) before later items run.
type Control struct {
	AgentID string
	Owner   string
	Epoch   int
	Closed  bool
	// OnEpoch is onGenerationChange: called after every owner change and
	// on close.
	OnEpoch func(epoch int)
	after   func(time.Duration, func())
	// IgnoreHuman is the human-control-ignored mutant: human control no
	// longer refuses or interrupts agent work.
	IgnoreHuman bool

	running  bool // an item's body is in progress
	waiting  bool // an item completed; the queue waits for tracked work
	queue    []*queued
	tracked  []int // ids of tracked work not settled yet
	handoff  []int // ids of work tracked until handoff, not settled yet
	trackSeq int
	waitUpTo int // the queue waits for tracked work with id <= waitUpTo
	idle     []func()
	// drain is a release's drain item waiting for handoff work with id <=
	// drainUpTo.
	drain     func()
	drainUpTo int
	// TrackedFailures counts tracked work that settled with an error (it
	// never poisons the queue).
	TrackedFailures int
}

// ItemKind names SessionControl's queued entry points.
type ItemKind int

// Item kinds: agent (needs agentMayAct and no human owner), human (needs
// the viewer to own control), system (needs no control, still waits its
// turn).
const (
	ItemAgent ItemKind = iota
	ItemHuman
	ItemSystem
)

// Signal is an AbortSignal given with queued work (SessionControl at
// e546a68d): aborting it rejects the work with the signal's reason if it
// has not started, and its body never runs.
type Signal struct {
	Aborted   bool
	Reason    string
	listeners []func()
}

// Abort aborts the signal with reason.
func (s *Signal) Abort(reason string) {
	if s.Aborted {
		return
	}
	s.Aborted, s.Reason = true, reason
	ls := s.listeners
	s.listeners = nil
	for _, f := range ls {
		f()
	}
}

// Item is one unit of work for the queue.
type Item struct {
	Kind ItemKind
	// Actor is the agent id (ItemAgent) or the viewer (ItemHuman).
	Actor       string
	IgnoreOwner bool
	// Signal, if set, can abort the item before it starts.
	Signal *Signal
	// Run performs the action and calls finish exactly once, with the
	// action's outcome, when it completes (at once or later).
	Run func(finish func(outcome string))
	// Done receives the outcome: the action's own, or a refusal.
	Done func(outcome string)
}

type queued struct {
	kind        ItemKind
	actor       string
	epoch       int
	ignoreOwner bool
	signal      *Signal
	// start runs the item; it calls complete when the item is done.
	start  func(complete func())
	reject func(reason string)
}

// NewControl returns the control of a tab owned by agentID, scheduling queue
// completions with after.
func NewControl(agentID string, after func(time.Duration, func())) *Control {
	return &Control{AgentID: agentID, after: after}
}

// MayAct is agentMayAct: a tab with no agent owner, or owned by a.
func (c *Control) MayAct(a string) bool { return c.AgentID == "" || c.AgentID == a }

// CanActNow is agentCanActNow: a may act and no human owns the tab.
func (c *Control) CanActNow(a string) bool { return c.MayAct(a) && c.Owner == "" }

func (c *Control) changeOwner(owner string) {
	c.Owner = owner
	c.Epoch++
	if c.OnEpoch != nil {
		c.OnEpoch(c.Epoch)
	}
}

// Agent submits work for agent a. Refusals are immediate, mismatch before
// human control; accepted work joins the serial queue, and when dequeued is
// re-checked: closed -> closed, epoch changed or no longer allowed ->
// interrupted. run performs the action and says how long it took; done gets
// the outcome when the action starts (or is refused): the worlds' preview
// tools answer when the action is decided.
func (c *Control) Agent(a string, ignoreOwner bool, run func() (string, time.Duration), done func(string)) {
	if r, refused := c.agentRefusal(a, ignoreOwner); refused {
		done(r)
		return
	}
	c.enqueue(&queued{kind: ItemAgent, actor: a, epoch: c.Epoch, ignoreOwner: ignoreOwner, reject: done,
		start: func(complete func()) {
			outcome, took := run()
			done(outcome)
			c.after(took, complete)
		}})
}

func (c *Control) agentRefusal(a string, ignoreOwner bool) (string, bool) {
	switch {
	case c.Closed:
		return ReasonClosed, true
	case !ignoreOwner && !c.MayAct(a):
		return ReasonAgentMismatch, true
	case c.Owner != "" && !c.IgnoreHuman:
		return ReasonHumanControl, true
	}
	return "", false
}

// Submit queues an item with its own completion (upstream's agent, human
// and system). Refusals are immediate: closed; for agents mismatch then
// human control; for humans a viewer that does not own control
// (interrupted, MsgNotController); an already aborted signal rejects with
// its reason before the item reaches the queue.
func (c *Control) Submit(it Item) {
	switch it.Kind {
	case ItemAgent:
		if r, refused := c.agentRefusal(it.Actor, it.IgnoreOwner); refused {
			it.Done(r)
			return
		}
	case ItemHuman:
		if c.Closed {
			it.Done(ReasonClosed)
			return
		}
		if c.Owner != it.Actor {
			it.Done(ReasonInterrupted)
			return
		}
	default:
		if c.Closed {
			it.Done(ReasonClosed)
			return
		}
	}
	if it.Signal != nil && it.Signal.Aborted {
		it.Done(Aborted(it.Signal.Reason))
		return
	}
	q := &queued{kind: it.Kind, actor: it.Actor, epoch: c.Epoch, ignoreOwner: it.IgnoreOwner, signal: it.Signal,
		reject: it.Done,
		start: func(complete func()) {
			it.Run(func(outcome string) {
				it.Done(outcome)
				complete()
			})
		}}
	if it.Signal != nil {
		it.Signal.listeners = append(it.Signal.listeners, func() { c.abort(q) })
	}
	c.enqueue(q)
}

// Observe is observe: a read that needs no control and does not queue. It
// reports false (closed) on a closed tab.
func (c *Control) Observe(run func()) bool {
	if c.Closed {
		return false
	}
	run()
	return true
}

func (c *Control) abort(q *queued) {
	for i, x := range c.queue {
		if x == q {
			c.queue = append(c.queue[:i], c.queue[i+1:]...)
			q.reject(Aborted(q.signal.Reason))
			return
		}
	}
}

func (c *Control) enqueue(q *queued) {
	c.queue = append(c.queue, q)
	c.pump()
}

// allowed re-checks an item when it is dequeued.
func (c *Control) allowed(q *queued) bool {
	switch q.kind {
	case ItemAgent:
		if !q.ignoreOwner && !c.MayAct(q.actor) {
			return false
		}
		return c.IgnoreHuman || q.epoch == c.Epoch && c.Owner == ""
	case ItemHuman:
		return q.epoch == c.Epoch && c.Owner == q.actor
	}
	return true
}

func (c *Control) pump() {
	for !c.Busy() && len(c.queue) > 0 {
		q := c.queue[0]
		c.queue = c.queue[1:]
		switch {
		case c.Closed:
			q.reject(ReasonClosed)
			continue
		case !c.allowed(q):
			q.reject(ReasonInterrupted)
			continue
		}
		// The queue stays busy for as long as the action takes, then for the
		// work tracked up to its completion.
		c.running = true
		q.start(func() {
			c.running, c.waiting = false, true
			c.waitUpTo = c.trackSeq
			c.resume()
		})
	}
	if !c.Busy() && len(c.queue) == 0 && len(c.idle) > 0 {
		idle := c.idle
		c.idle = nil
		for _, f := range idle {
			f()
		}
	}
}

// resume restarts the queue once no tracked work the last item waits for
// is outstanding.
func (c *Control) resume() {
	if !c.waiting {
		return
	}
	for _, id := range c.tracked {
		if id <= c.waitUpTo {
			return
		}
	}
	c.waiting = false
	c.pump()
}

// Track is track(work): the queue will not start its next item until the
// work settles; failures are swallowed (counted, never poisoning the
// queue). It returns the work's settle function; err != "" is a failure.
func (c *Control) Track() (settle func(err string)) {
	return c.trackIn(&c.tracked, c.resume)
}

// TrackUntilHandoff is trackUntilHandoff(work): a human's navigation runs
// without holding the queue, but a release waits for it before control
// changes hands to queued agent work.
func (c *Control) TrackUntilHandoff() (settle func(err string)) {
	return c.trackIn(&c.handoff, c.notifyHandoff)
}

// trackIn registers work in list and returns its settle function, which
// removes it once (counting a failure) and then calls settled.
func (c *Control) trackIn(list *[]int, settled func()) func(err string) {
	c.trackSeq++
	id := c.trackSeq
	*list = append(*list, id)
	done := false
	return func(err string) {
		if done {
			return
		}
		done = true
		if err != "" {
			c.TrackedFailures++
		}
		for i, x := range *list {
			if x == id {
				*list = append((*list)[:i], (*list)[i+1:]...)
				break
			}
		}
		settled()
	}
}

func (c *Control) notifyHandoff() {
	if c.drain != nil && c.handoffSettled(c.drainUpTo) {
		d := c.drain
		c.drain = nil
		d()
	}
}

func (c *Control) handoffSettled(upTo int) bool {
	for _, id := range c.handoff {
		if id <= upTo {
			return false
		}
	}
	return true
}

// Take gives control to viewer; it fails if another viewer holds it or the
// tab is closed.
func (c *Control) Take(viewer string) bool {
	if c.Closed || (c.Owner != "" && c.Owner != viewer) {
		return false
	}
	if c.Owner != viewer {
		c.changeOwner(viewer)
	}
	return true
}

// TakeWait is take(viewer) with its completion: control changes hands at
// once (the epoch bumps, queued agent work will be interrupted), and done
// gets OK once the running work has drained (a human no-op queued behind
// it), or a refusal: closed, or interrupted with MsgAnotherViewer.
func (c *Control) TakeWait(viewer string, done func(outcome string, msg string)) {
	switch {
	case c.Closed:
		done(ReasonClosed, MsgClosed)
		return
	case c.Owner != "" && c.Owner != viewer:
		done(ReasonInterrupted, MsgAnotherViewer)
		return
	}
	c.Take(viewer)
	c.Submit(Item{Kind: ItemHuman, Actor: viewer, Run: func(finish func(string)) { finish(OK) },
		Done: func(o string) { done(o, "") }})
}

// Release returns control; only the owning viewer may.
func (c *Control) Release(viewer string) bool {
	if c.Closed || c.Owner == "" || c.Owner != viewer {
		return false
	}
	c.changeOwner("")
	return true
}

// ReleaseWait is release(viewer) with its completion: control returns to
// the agent at once; a drain item queued behind running work waits for the
// work tracked until handoff (the viewer's navigation) before later items
// run, and done gets OK then. A refusal is closed, or interrupted with
// MsgOnlyController.
func (c *Control) ReleaseWait(viewer string, done func(outcome string, msg string)) {
	switch {
	case c.Closed:
		done(ReasonClosed, MsgClosed)
		return
	case c.Owner != viewer:
		done(ReasonInterrupted, MsgOnlyController)
		return
	}
	c.changeOwner("")
	c.enqueueDrain(func() { done(OK, "") })
}

func (c *Control) enqueueDrain(done func()) {
	c.enqueue(&queued{kind: ItemSystem, epoch: c.Epoch, reject: func(string) { done() },
		start: func(complete func()) {
			finish := func() {
				done()
				complete()
			}
			upTo := c.trackSeq
			if c.handoffSettled(upTo) {
				finish()
				return
			}
			c.drain, c.drainUpTo = finish, upTo
		}})
}

// Disconnect is disconnect(viewer): the controlling viewer's disconnect
// releases control (with the release's drain); anyone else's is a silent
// no-op, as is any disconnect after close.
func (c *Control) Disconnect(viewer string) {
	if c.Closed || c.Owner == "" || c.Owner != viewer {
		return
	}
	c.changeOwner("")
	c.enqueueDrain(func() {})
}

// Close marks the control closed and drops any owner (one owner change,
// whether or not a human held it); queued work fails with closed when it is
// dequeued. A repeated close changes nothing.
func (c *Control) Close() {
	if c.Closed {
		return
	}
	c.Closed = true
	c.changeOwner("")
	c.pump()
}

// CloseWait is close(): Close, then done once the running work has drained
// (queued work is rejected with closed meanwhile).
func (c *Control) CloseWait(done func()) {
	c.Close()
	c.WhenIdle(done)
}

// WhenIdle calls done once nothing runs or waits in the queue.
func (c *Control) WhenIdle(done func()) {
	if !c.Busy() && len(c.queue) == 0 {
		done()
		return
	}
	c.idle = append(c.idle, done)
}

// Busy reports whether an item runs or the queue waits for tracked work.
func (c *Control) Busy() bool { return c.running || c.waiting }

// Queued returns the number of items waiting in the queue.
func (c *Control) Queued() int { return len(c.queue) }
