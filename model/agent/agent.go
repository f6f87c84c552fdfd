// Package agent models the actors around a T3 server: the coding agent of
// each thread (it remembers the tabs it opened across a resume of the same
// native conversation and acts on them with whatever credential its current
// provider process was given) and the human user of each thread (prompts
// at random gaps, watching and taking control of tabs, toggling browser
// access, switching provider).
package agent

import (
	"slices"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/browser"
	"github.com/orchsim/orchsim/model/provider"
	"github.com/orchsim/orchsim/sim"
)

// Net is how actors reach the current server process: deliveries cross a
// process boundary, so the world schedules them with latency and may lose
// them; while the server is down calls fail with ECONNREFUSED.
type Net interface {
	// Call sends a tool call with cred on behalf of thread's agent; reply
	// gets the answer when it arrives.
	Call(threadID string, cred provider.ThreadCred, call model.ToolCall, reply model.Replier)
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
	calls  sim.Slab[sentCall] // send's call records
	active bool
	turn   int
	steps  int
	// Foreign returns a tab id the agent has seen but another thread owns
	// (pasted by a user), or "".
	Foreign func(r *sim.Rand) string

	// Repertoire says which tools the agent uses.
	Repertoire Repertoire
	// Instance is the provider instance the agent runs on (it decides the
	// client-side MCP call timeout).
	Instance string
	// Peers returns the other threads the agent may send to, rename or
	// interrupt.
	Peers func() []string
	// World, when set, replaces Peers: every thread of the world in order
	// (the agent's own among them), shared by the agents and not modified.
	// The peers are World without Thread, in order, picked without
	// building that list: a world of 1,000 threads would build it on every
	// orchestrator call.
	World  []string
	selfAt int // Thread's index in World, -1 when absent; valid once worldN is set
	worldN int // 1 + the number of peers in World, 0 until computed
	// KeyReuse is the chance that a new t3_thread_send or
	// t3_thread_interrupt reuses the clientRequestId of the tool's previous
	// round (a client retry bug or an id collision, t3code#5231) instead of
	// a fresh one.
	KeyReuse sim.Ratio

	// HostTools makes the agent also read the user's pages on the client
	// hosts (preview_evaluate, preview_wait_for through the broker); its
	// draws for them come from their own stream, agent-host/<thread>.
	HostTools bool
	hrand     *sim.Rand
	// ReplanRetry is the chance that a create_threads retried for want of
	// an answer asks for one entry more than the lost call (the agent
	// re-planned the batch) under the same clientRequestId; drawn from
	// replan/<thread>, a stream of its own.
	ReplanRetry sim.Ratio
	replan      *sim.Rand

	rounds  map[string]int
	pending []model.ToolCall // calls that never got an answer, retried next
	// redispatch are new delegate_task calls for tasks the agent took
	// for dead (WaitTimeoutKeepsHandle off), made after the retries.
	redispatch []model.ToolCall
	inflight   *model.ToolCall
	callSeq    int
	// thinking is next's timer event for its turn; thinks and previews
	// allocate next's events and previewStep's call records.
	thinking *thinking
	thinks   sim.Slab[thinking]
	previews sim.Slab[previewCall]
	timeout  sim.Timer
	tasks    []string // delegated task ids the agent was told about
}

// Repertoire selects the tools an agent uses.
type Repertoire struct {
	Preview      bool
	Orchestrator bool
}

// WaitTimeoutKeepsHandle is PR #7427 ("stop treating a wait timeout as a
// dead child"): delegate_task's description tells agents that timeoutMs
// limits the parent's wait, the child keeps running, and the caller keeps
// its taskId and uses task_status. Off is the guidance before it (and
// coder/xum#2098): an agent takes the timeout for a failed child and
// dispatches the same work again, a second live child for one request.
const WaitTimeoutKeepsHandle model.Switch = "wait-timeout-keeps-handle"

// HandleKeptOnlyWithTimeout is a wrong fix: the guidance reaches only
// calls that set timeoutMs; a wait on the default budget that times out is
// still taken for a dead child and dispatched again.
const HandleKeptOnlyWithTimeout model.Mutant = "handle-kept-only-with-timeout"

func init() {
	model.RegisterMutant(model.MutantInfo{Name: HandleKeptOnlyWithTimeout, Group: catalog.Orchestrator,
		Doc:        "only a wait with an explicit timeoutMs keeps its handle; one on the default budget is dispatched again",
		Scenario:   "request-retry",
		Invariants: []string{"one-live-child-per-request"}})
	model.RegisterSwitch(model.SwitchInfo{Name: WaitTimeoutKeepsHandle, Group: catalog.Orchestrator,
		Reports:    []catalog.Report{"coder/xum#2098", "t3code#11168"},
		Source:     "delegate_task tool description and schema, PR #7427",
		Scenario:   "request-retry",
		Invariants: []string{"one-live-child-per-request"},
		Reported:   "an agent whose delegate_task wait timed out dispatches the same work again under a new key",
		Fixed:      "the agent keeps the taskId of a timed-out wait and lets the child run",
		Upstream:   "t3code PR #7427",
		Mechanism:  "model/agent: what an agent does after a timed-out delegate_task wait"})
}

// Client-side MCP call budgets (MODEL.md Part 0): Claude's 65 min
// (CLAUDE_T3_MCP_TOOL_TIMEOUT_MS), a Node client's header timeout of about
// 5 min for ACP providers, none for Codex.
const (
	ClaudeCallTimeout = 65 * time.Minute
	NodeHeaderTimeout = 5 * time.Minute
)

// CallTimeout returns the client-side budget of an MCP call from instance
// (0: none).
func CallTimeout(instance string) time.Duration {
	a, _ := provider.AdapterFor(instance)
	switch a.Driver {
	case "claudeAgent":
		return ClaudeCallTimeout
	case "acp":
		return NodeHeaderTimeout
	}
	return 0
}

// New returns the agent of threadID, using the preview tools.
func New(env *model.Env, net Net, threadID string) *Agent {
	return &Agent{env: env, rand: env.Rand("agent/" + threadID), net: net, Thread: threadID,
		Repertoire: Repertoire{Preview: true}, rounds: map[string]int{}, replan: env.Rand("replan/" + threadID)}
}

// Pending returns the calls the agent will retry because it never saw
// their answer.
func (a *Agent) Pending() []model.ToolCall { return a.pending }

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
	if !a.env.Enabled("agent/" + a.Thread) {
		a.steps = 0 // switched off by the shrinker: it only ends its turns
	}
	a.next(a.turn)
}

// Abort ends the turn in progress without the agent (crash, release,
// restart, interrupt); late replies of that turn are ignored, and a call
// still in flight is remembered for a retry.
func (a *Agent) Abort() {
	if a.inflight != nil {
		a.pending = append(a.pending, *a.inflight)
		a.inflight = nil
	}
	if a.timeout != nil {
		a.timeout.Stop()
	}
	a.active = false
	a.turn++
}

func (a *Agent) next(turn int) {
	think := a.rand.Duration("think", 2*time.Second, 3*time.Minute)
	if a.thinking == nil || a.thinking.turn != turn {
		// One event record per turn, not per step: it depends only on the
		// turn, and a timer of an earlier turn keeps that turn's record.
		a.thinking = a.thinks.New()
		*a.thinking = thinking{a: a, turn: turn}
	}
	a.env.RunAfter(think, a.thinking)
}

// thinking is the end of an agent's think time in turn turn: its next step.
type thinking struct {
	a    *Agent
	turn int
}

func (t *thinking) Run() {
	a, turn := t.a, t.turn
	if a.turn != turn || !a.active {
		return
	}
	if a.steps == 0 {
		a.finish()
		return
	}
	a.steps--
	a.step(turn)
}

func (a *Agent) finish() {
	a.active = false
	var background time.Duration
	if a.rand.Chance("background-work", sim.Per(1, 8)) {
		background = a.rand.Duration("background-for", time.Minute, 6*time.Hour)
	}
	a.net.TurnFinished(a.Thread, background)
}

// step makes one tool call: a retry of a call that never got an answer
// first, else one chosen from the agent's repertoire.
func (a *Agent) step(turn int) {
	if len(a.pending) > 0 {
		call := a.pending[0]
		a.pending = a.pending[1:]
		call.Retry = true
		if call.Tool == model.ToolCreateThreads && call.Count < 20 && a.replan.Chance("replan-batch", a.ReplanRetry) {
			call.Count++
		}
		a.send(turn, call)
		return
	}
	if len(a.redispatch) > 0 {
		call := a.redispatch[0]
		a.redispatch = a.redispatch[1:]
		a.send(turn, call)
		return
	}
	if a.Repertoire.Orchestrator && (!a.Repertoire.Preview || a.rand.Chance("use-orchestrator", sim.Per(1, 2))) {
		a.send(turn, a.orchestratorCall())
		return
	}
	a.previewStep(turn)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// send makes call with the current credential. An answer continues the
// turn; no answer within the client's budget makes the agent retry the same
// call (same clientRequestId), as its instructions tell it to.
func (a *Agent) send(turn int, call model.ToolCall) {
	a.callSeq++
	seq := a.callSeq
	call.CallID = a.env.Str().Join("toolu_"+a.Thread+"_", seq)
	c := a.calls.New() // call itself stays on the stack
	*c = sentCall{a: a, seq: seq, turn: turn, call: call}
	a.inflight = &c.call
	if d := CallTimeout(a.Instance); d > 0 && model.IsOrchestratorTool(call.Tool) {
		if a.timeout == nil {
			a.timeout = a.env.Clock.AfterFunc(d, func() { a.clientTimeout() })
		} else {
			a.timeout.Reset(d)
		}
	}
	a.net.Call(a.Thread, a.cred, call, c)
}

// sentCall is one call send made: the in-flight copy of the call and what
// its answer needs, in one allocation that is its own Replier.
type sentCall struct {
	a         *Agent
	seq, turn int
	call      model.ToolCall
}

// Reply continues the turn with the call's answer.
func (c *sentCall) Reply(r model.ToolResult) {
	a, turn := c.a, c.turn
	if a.callSeq != c.seq || a.inflight == nil {
		return // answered after the client gave up, or after an abort
	}
	a.inflight = nil
	if a.timeout != nil {
		a.timeout.Stop()
	}
	a.rememberOrchestrator(c.call, r)
	if a.turn == turn && a.active {
		a.next(turn)
	}
}

func (a *Agent) clientTimeout() {
	if a.inflight == nil || !a.active {
		return
	}
	call := *a.inflight
	a.inflight = nil
	a.env.Emit("mcp-client/"+a.Thread, "timeout", "", sim.A("tool", call.Tool), sim.A("clientRequestId", orDash(call.ClientRequestID)))
	a.pending = append([]model.ToolCall{call}, a.pending...)
	a.next(a.turn)
}

// key returns the clientRequestId of a new round of tool: round numbers
// start at 1 in every thread, so different threads naturally reuse the
// same key strings ("review-round-1"). One call in ten sends no key.
func (a *Agent) key(tool, prefix string) string {
	if a.rand.Chance("no-client-request-id", sim.Per(1, 10)) {
		return ""
	}
	// Only the tools that address another thread reuse keys: #5231's
	// story is the same key sent to a new target.
	if (tool == "send" || tool == "interrupt") && a.rounds[tool] > 0 && a.rand.Chance("reuse-key", a.KeyReuse) {
		return a.env.Str().Join(prefix+"-round-", a.rounds[tool])
	}
	a.rounds[tool]++
	return a.env.Str().Join(prefix+"-round-", a.rounds[tool])
}

// peers returns how many threads an orchestrator call may address: the
// agent's own, then its peers (peerAt names the i-th). Without World it
// also returns that list, which peerAt then reads.
func (a *Agent) peers() (int, []string) {
	if a.World == nil {
		peers := []string{a.Thread}
		if a.Peers != nil {
			peers = append(peers, a.Peers()...)
		}
		return len(peers), peers
	}
	if a.worldN == 0 {
		a.selfAt = slices.Index(a.World, a.Thread)
		a.worldN = 1 + len(a.World)
		if a.selfAt >= 0 {
			a.worldN--
		}
	}
	return a.worldN, nil
}

// peerAt returns the i-th thread of peers' order (list is peers' list).
func (a *Agent) peerAt(list []string, i int) string {
	if a.World == nil {
		return list[i]
	}
	if i == 0 {
		return a.Thread
	}
	if i--; a.selfAt >= 0 && i >= a.selfAt {
		i++
	}
	return a.World[i]
}

func (a *Agent) orchestratorCall() model.ToolCall {
	n, list := a.peers()
	peer := a.peerAt(list, a.rand.IntN("peer", n))
	switch a.rand.Pick("orchestrator-tool", 30, 15, 10, 15, 10, 8, 12) {
	case 0:
		call := model.ToolCall{Tool: model.ToolDelegateTask, ClientRequestID: a.key("delegate", "review"), Mode: "async"}
		if a.rand.Chance("wait-mode", sim.Per(1, 2)) {
			call.Mode = "wait"
			if a.rand.Chance("wait-timeout", sim.Per(1, 3)) {
				call.Timeout = a.rand.Duration("wait-budget", time.Minute, 60*time.Minute)
			}
		}
		return call
	case 1:
		return model.ToolCall{Tool: model.ToolCreateThreads, ClientRequestID: a.key("create", "batch"), Count: 1 + a.rand.IntN("batch-size", 3)}
	case 2:
		return model.ToolCall{Tool: model.ToolScheduleTask, ClientRequestID: a.key("schedule", "nightly")}
	case 3:
		return model.ToolCall{Tool: model.ToolThreadSend, ClientRequestID: a.key("send", "handoff"), Target: peer}
	case 4:
		return model.ToolCall{Tool: model.ToolThreadUpdate, ClientRequestID: a.key("update", "rename"), Target: peer, Action: "rename"}
	case 5:
		if peer == a.Thread && n > 1 {
			peer = a.peerAt(list, 1)
		}
		return model.ToolCall{Tool: model.ToolThreadInterrupt, ClientRequestID: a.key("interrupt", "stop"), Target: peer}
	default:
		if len(a.tasks) == 0 {
			return model.ToolCall{Tool: model.ToolDelegateTask, ClientRequestID: a.key("delegate", "review"), Mode: "async"}
		}
		task := a.tasks[a.rand.IntN("cancel-which", len(a.tasks))]
		return model.ToolCall{Tool: model.ToolTaskCancel, ClientRequestID: a.key("cancel", "cancel"), TaskID: task}
	}
}

func (a *Agent) rememberOrchestrator(call model.ToolCall, r model.ToolResult) {
	redispatch := !a.env.Profile.Fixed(WaitTimeoutKeepsHandle) ||
		a.env.Profile.Has(HandleKeptOnlyWithTimeout) && call.Timeout == 0
	if call.Tool == model.ToolDelegateTask && r.WaitTimedOut && r.TaskID != "" && redispatch {
		// The old guidance: a wait that timed out reads as a failed child,
		// so the agent dispatches the work again under a new key.
		a.redispatch = append(a.redispatch, model.ToolCall{Tool: model.ToolDelegateTask,
			ClientRequestID: a.key("delegate", "review"), Mode: call.Mode, Timeout: call.Timeout, RedispatchOf: r.TaskID})
	}
	if call.Tool == model.ToolDelegateTask && r.TaskID != "" {
		for _, t := range a.tasks {
			if t == r.TaskID {
				return
			}
		}
		a.tasks = append(a.tasks, r.TaskID)
	}
}

// previewStep makes one preview tool call, chosen from what the
// conversation remembers.
func (a *Agent) previewStep(turn int) {
	if a.HostTools {
		if a.hrand == nil {
			a.hrand = a.env.Rand("agent-host/" + a.Thread)
		}
		if a.hrand.Chance("host-call", sim.Per(1, 3)) {
			a.hostStep(turn)
			return
		}
	}
	call := model.ToolCall{URL: a.env.Str().Concat("http://localhost:5173/", a.rand.Hex("page", 2))}
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
	pc := a.previews.New()
	*pc = previewCall{a: a, turn: turn, tool: call.Tool, tab: call.TabID}
	a.net.Call(a.Thread, a.cred, call, pc)
}

// previewCall is what a preview call's answer needs (one allocation, its
// own Replier): the call's tool and tab, for remember.
type previewCall struct {
	a         *Agent
	turn      int
	tool, tab string
}

// Reply remembers the answer and continues the turn.
func (c *previewCall) Reply(r model.ToolResult) {
	a := c.a
	a.remember(model.ToolCall{Tool: c.tool, TabID: c.tab}, r)
	if a.turn == c.turn && a.active {
		a.next(c.turn)
	}
}

// hostStep reads the thread's page on a client host: preview_evaluate, or
// preview_wait_for with the default timeout (15 s), 5 s (#12898's repro)
// or 30 s. Neither names a tab: the page is the one the user has open.
func (a *Agent) hostStep(turn int) {
	call := model.ToolCall{Tool: model.ToolPreviewEvaluate}
	if a.hrand.Chance("wait-for", sim.Per(1, 2)) {
		call.Tool = model.ToolPreviewWaitFor
		call.Timeout = []time.Duration{0, 5 * time.Second, 30 * time.Second}[a.hrand.Pick("wait-timeout", 2, 1, 1)]
	}
	a.net.Call(a.Thread, a.cred, call, model.ReplyFunc(func(model.ToolResult) {
		if a.turn == turn && a.active {
			a.next(turn)
		}
	}))
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
	a.net.Call(a.Thread, old, call, model.ReplyFunc(func(model.ToolResult) {}))
	return true
}
