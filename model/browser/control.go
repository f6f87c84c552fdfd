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

// Control is SessionControl: who may drive one tab. AgentID is the owner
// key the tab was opened with ("" for a human-opened tab) and never changes;
// Owner is the controlling human viewer ("" for none); Epoch bumps on every
// owner change and on close, invalidating queued work.
type Control struct {
	AgentID string
	Owner   string
	Epoch   int
	Closed  bool
	busy    bool
	queue   []*queued
	after   func(time.Duration, func())
	// IgnoreHuman is the human-control-ignored mutant: human control no
	// longer refuses or interrupts agent work.
	IgnoreHuman bool
}

type queued struct {
	agent string
	epoch int
	run   func() (outcome string, took time.Duration)
	done  func(outcome string)
}

// NewControl returns the control of a tab owned by agentID, scheduling queue
// completions with after.
func NewControl(agentID string, after func(time.Duration, func())) *Control {
	return &Control{AgentID: agentID, after: after}
}

// MayAct is agentMayAct: a tab with no agent owner, or owned by a.
func (c *Control) MayAct(a string) bool { return c.AgentID == "" || c.AgentID == a }

// Agent submits work for agent a. Refusals are immediate, mismatch before
// human control; accepted work joins the serial queue, and when dequeued is
// re-checked: closed -> closed, epoch changed or no longer allowed ->
// interrupted. run performs the action and says how long it took; done gets
// the outcome when the action starts (or is refused).
func (c *Control) Agent(a string, ignoreOwner bool, run func() (string, time.Duration), done func(string)) {
	switch {
	case c.Closed:
		done(ReasonClosed)
		return
	case !ignoreOwner && !c.MayAct(a):
		done(ReasonAgentMismatch)
		return
	case c.Owner != "" && !c.IgnoreHuman:
		done(ReasonHumanControl)
		return
	}
	c.queue = append(c.queue, &queued{agent: a, epoch: c.Epoch, run: run, done: done})
	c.pump(ignoreOwner)
}

func (c *Control) pump(ignoreOwner bool) {
	for !c.busy && len(c.queue) > 0 {
		q := c.queue[0]
		c.queue = c.queue[1:]
		switch {
		case c.Closed:
			q.done(ReasonClosed)
			continue
		case !c.IgnoreHuman && (q.epoch != c.Epoch || c.Owner != "") || (!ignoreOwner && !c.MayAct(q.agent)):
			q.done(ReasonInterrupted)
			continue
		}
		// The outcome is decided (and reported) when the action starts; the
		// queue stays busy for as long as the action takes.
		c.busy = true
		outcome, took := q.run()
		q.done(outcome)
		c.after(took, func() {
			c.busy = false
			c.pump(ignoreOwner)
		})
	}
}

// Take gives control to viewer; it fails if another viewer holds it or the
// tab is closed.
func (c *Control) Take(viewer string) bool {
	if c.Closed || (c.Owner != "" && c.Owner != viewer) {
		return false
	}
	if c.Owner != viewer {
		c.Owner = viewer
		c.Epoch++
	}
	return true
}

// Release returns control; only the owning viewer may.
func (c *Control) Release(viewer string) bool {
	if c.Owner == "" || c.Owner != viewer {
		return false
	}
	c.Owner = ""
	c.Epoch++
	return true
}

// Close marks the control closed and drops any owner; queued work fails
// with closed when it is dequeued.
func (c *Control) Close() {
	if c.Closed {
		return
	}
	c.Closed = true
	c.Owner = ""
	c.Epoch++
	c.pump(false)
}
