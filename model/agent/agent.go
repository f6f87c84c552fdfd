// Package agent models the actors around a T3 server: the coding agent of
// each thread (it remembers the tabs it opened across a resume of the same
// native conversation and acts on them with whatever credential its current
// provider process was given) and the human user of each thread (prompts
// at random gaps, watching and taking control of tabs, toggling browser
// access, switching provider).
package agent

import (
	"time"

	"orchsim/model"
	"orchsim/model/browser"
	"orchsim/model/provider"
	"orchsim/sim"
)

// Net is how actors reach the current server process: deliveries cross a
// process boundary, so the world schedules them with latency and may lose
// them; while the server is down calls fail with ECONNREFUSED.
type Net interface {
	// Call sends a tool call with cred on behalf of thread's agent; reply
	// runs when the answer arrives.
	Call(threadID string, cred provider.ThreadCred, call model.ToolCall, reply func(model.ToolResult))
	// TurnFinished reports the end of the agent's turn (turn.terminal),
	// with pending background work for backgroundFor.
	TurnFinished(threadID string, backgroundFor time.Duration)
}

// Agent is the simulated agent of one thread's native conversation.
type Agent struct {
	env    *model.Env
	rand   *sim.Rand
	net    Net
	Thread string
	// Tabs are the explicit tab ids this conversation remembers.
	Tabs []string
	// Past are credentials earlier provider processes of the thread used.
	Past []provider.ThreadCred

	cred   provider.ThreadCred
	active bool
	turn   int
	steps  int
	// Foreign returns a tab id the agent has seen but another thread owns
	// (pasted by a user), or "".
	Foreign func(r *sim.Rand) string
}

// New returns the agent of threadID.
func New(env *model.Env, net Net, threadID string) *Agent {
	return &Agent{env: env, rand: env.Rand("agent/" + threadID), net: net, Thread: threadID}
}

// Active reports whether a turn is in progress.
func (a *Agent) Active() bool { return a.active }

// StartTurn begins a turn in a provider process that was given cred.
func (a *Agent) StartTurn(cred provider.ThreadCred) {
	if a.cred.CredID != "" && a.cred.CredID != cred.CredID {
		a.Past = append(a.Past, a.cred)
	}
	a.cred = cred
	a.active = true
	a.turn++
	a.steps = 1 + a.rand.IntN("turn-steps", 6)
	a.next(a.turn)
}

// Abort ends the turn in progress without the agent (crash, release,
// restart); late replies of that turn are ignored.
func (a *Agent) Abort() {
	a.active = false
	a.turn++
}

func (a *Agent) next(turn int) {
	think := a.rand.Duration("think", 2*time.Second, 3*time.Minute)
	a.env.After(think, func() {
		if a.turn != turn || !a.active {
			return
		}
		if a.steps == 0 {
			a.finish()
			return
		}
		a.steps--
		a.step(turn)
	})
}

func (a *Agent) finish() {
	a.active = false
	var background time.Duration
	if a.rand.Chance("background-work", sim.Per(1, 8)) {
		background = a.rand.Duration("background-for", time.Minute, 6*time.Hour)
	}
	a.net.TurnFinished(a.Thread, background)
}

// step makes one tool call, chosen from what the conversation remembers.
func (a *Agent) step(turn int) {
	call := model.ToolCall{URL: "http://localhost:5173/" + a.rand.Hex("page", 2)}
	if len(a.Tabs) == 0 {
		call.Tool = model.ToolPreviewOpen
		call.NewTab = a.rand.Chance("new-tab", sim.Per(1, 5))
		if a.Foreign != nil && a.rand.Chance("foreign-tab", sim.Per(1, 25)) {
			if id := a.Foreign(a.rand); id != "" {
				call = model.ToolCall{Tool: model.ToolPreviewNavigate, TabID: id, URL: call.URL}
			}
		}
	} else {
		tab := a.Tabs[a.rand.IntN("which-tab", len(a.Tabs))]
		switch a.rand.Pick("action", 35, 20, 12, 10, 8, 10, 5) {
		case 0:
			call.Tool, call.TabID = model.ToolPreviewNavigate, tab
		case 1:
			call.Tool, call.TabID = model.ToolPreviewClick, tab
		case 2:
			call.Tool, call.TabID = model.ToolPreviewClose, tab
		case 3:
			call.Tool, call.TabID = model.ToolPreviewSnapshot, tab
		case 4:
			call.Tool = model.ToolPreviewOpen
		case 5:
			call.Tool, call.NewTab = model.ToolPreviewOpen, true
		case 6:
			call.Tool, call.TabID = model.ToolPreviewNavigate, tab
			if a.Foreign != nil {
				if id := a.Foreign(a.rand); id != "" {
					call.TabID = id
				}
			}
		}
	}
	a.net.Call(a.Thread, a.cred, call, func(r model.ToolResult) {
		a.remember(call, r)
		if a.turn == turn && a.active {
			a.next(turn)
		}
	})
}

func (a *Agent) remember(call model.ToolCall, r model.ToolResult) {
	switch {
	case call.Tool == model.ToolPreviewOpen && r.Outcome == browser.OK:
		a.add(r.TabID)
	case call.Tool == model.ToolPreviewClose && r.Outcome == browser.OK:
		a.forget(call.TabID)
	case r.Outcome == browser.TabNotFound || r.Outcome == browser.ReasonClosed:
		a.forget(call.TabID)
	case r.Outcome == browser.ReasonAgentMismatch:
		// The agent is told to open its own tab; it stops using this one.
		a.forget(call.TabID)
	}
}

func (a *Agent) add(tab string) {
	for _, t := range a.Tabs {
		if t == tab {
			return
		}
	}
	a.Tabs = append(a.Tabs, tab)
}

func (a *Agent) forget(tab string) {
	for i, t := range a.Tabs {
		if t == tab {
			a.Tabs = append(a.Tabs[:i], a.Tabs[i+1:]...)
			return
		}
	}
}

// StaleCall replays one call with a credential an earlier provider process
// of the thread held (a lingering subprocess or a late client retry).
func (a *Agent) StaleCall() bool {
	if len(a.Past) == 0 {
		return false
	}
	old := a.Past[a.rand.IntN("stale-cred", len(a.Past))]
	call := model.ToolCall{Tool: model.ToolPreviewSnapshot}
	if len(a.Tabs) > 0 {
		call = model.ToolCall{Tool: model.ToolPreviewNavigate, TabID: a.Tabs[0], URL: "http://localhost:5173/stale"}
	}
	a.net.Call(a.Thread, old, call, func(model.ToolResult) {})
	return true
}
