package script

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/agent"
	"github.com/orchsim/orchsim/model/browser"
	"github.com/orchsim/orchsim/model/mcp"
	"github.com/orchsim/orchsim/model/orchestrator"
	"github.com/orchsim/orchsim/model/provider"
	"github.com/orchsim/orchsim/model/server"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// t3Groups are the components a T3 script's invariants come from: every
// group but the desktop app's.
var t3Groups = []catalog.Group{catalog.ProviderSession, catalog.MCPCredential, catalog.PreviewTab,
	catalog.Orchestrator, catalog.RestartContinuation, catalog.Other}

// # The T3 script language
//
// A file whose language line is "# language: t3" drives one T3 server
// process (and its restarts) by hand; nothing happens that a command does
// not cause, apart from the timers the models arm themselves (idle
// release, sweeps). Every command prints the trace events it caused, then
// its result. The world is judged by every invariant of the T3 components
// (t3Groups); the run stops at the first violation. A script about one
// report keeps that bug alone with profile=fixed unfix=(its switch), so a
// bug added later does not change its story.
//
//	new [profile=reported|fixed] [fix=(a,b)] [unfix=(a,b)] [mutant=(m)] [seed=N]
//	    threads=(thread-a:claudeAgent, thread-b:codex) [projects=(thread-b:project-2)]
//	    [desktop=(thread-a)]
//	  Starts a world: one environment, one server, the threads on the given
//	  provider instances, every project with browser access on.
//	  Example: new profile=fixed threads=(thread-a:acpRegistry_bob) desktop=(thread-a)
//
//	prompt thread=T [open=D]
//	  The user sends a prompt: a run starts and the provider turn begins
//	  (the session opens, taking D of adapter start-up, default 1s, or is
//	  joined). Runs until the turn started or failed.
//
//	call thread=T tool=preview_open|preview_navigate|preview_click|preview_snapshot|t3_preview_close
//	     [tab=@N|<id>] [new-tab] [cred=current|previous]
//	  The thread's agent makes a tool call with the credential its current
//	  (or previous) provider process was given. @N is the N-th tab opened in
//	  the script. Prints "=> <outcome> [tab=@N]".
//
//	call thread=T tool=delegate_task|create_threads|schedule_task|t3_thread_send|t3_thread_update|t3_thread_interrupt|task_cancel
//	     [key=K] [mode=wait] [timeout=D] [target=T2] [action=A] [count=N] [task=%N] [cred=...] [nowait]
//	  An orchestrator tool call with clientRequestId K (none without key=).
//	  With nowait the script goes on while the call is in flight.
//	  %N is the N-th delegated task seen in the script. Prints the outcome
//	  (accepted, replayed or an error code) and the result ids.
//
//	end-turn thread=T [background=D]
//	  The agent finishes its turn (turn.terminal), optionally reporting
//	  pending background work for D.
//
//	advance by=D
//	  Lets virtual time pass (idle releases, sweeps, clean-ups happen).
//
//	crash thread=T           the provider process of T's session dies
//	browser-access project=P on=true|false
//	switch-provider thread=T to=I
//	runtime-options thread=T the user changes T's runtime options: its idle
//	                         live session restarts in place (RestartInPlace)
//	watch|unwatch|take|release thread=T tab=@N   the thread's user as a viewer
//	restart [graceful]       the server process dies (or shuts down) and a new one boots
//	interrupt thread=T       the user presses stop on T's running turn
//	setting continue=true|false   continueThreadsAfterServerUpdate
//	state                    prints tabs, live credentials, slots and sessions
//
// Commands and arguments added for the fidelity cases
// (scenarios/testdata/fidelity, FIDELITY.md §6-7):
//
//	new ... [child-duration=D] [child-fails=false]
//	  Delegated children work for D (default: drawn) and never fail.
//	call ... [instance=I] [text=T] [entries=(title/prompt/instance, ...)] [subagents]
//	         [fail=OP] [cancel-after=OP] [full]
//	  delegate_task's target instance and task text; create_threads'
//	  entries (prompt and instance optional); t3_thread_list's
//	  includeSubagents; fail makes the next dispatch of a command whose id
//	  contains OP fail (no receipt); cancel-after cancels the call after such
//	  a command committed; full prints every result field (run, instance,
//	  summary). Also task_status, t3_thread_fork (target= the thread to
//	  fork, default the caller), t3_thread_read, t3_thread_list, which
//	  always print every field.
//	archive thread=T [off]   archives (or unarchives) a thread
//	thread-meta thread=T [branch=B] [worktree=W]
//	store what=threads|messages|receipts|items|tasks|runs|sessions [thread=T]
//	  prints durable rows (thread= filters threads, messages, items, runs)
//	lose-work run=R work=(kind:description, ...) [thread=P]
//	  records background work the restart cancelled for run R (on its
//	  provider thread P, default the run's thread)
//	continue run=R            continueRestartedRun for the run's thread and R
//
// Inputs added so that scripts reach every model input (issue 13):
//
//	call ... [client-timeout=D|default] [retry]
//	  The agent's MCP client stops waiting after D ("default": the
//	  instance's own budget, agent.CallTimeout: 65 min for Claude, 5 min
//	  for ACP providers; Codex has none) and traces mcp-client timeout; the
//	  server goes on with the call. retry marks a call the agent repeats
//	  because it never saw an answer (retry=true in the trace).
//	call ... text=(free text, commas allowed)
//	  delegate_task's task text (the child's first message); the values
//	  are joined with ", ".
//	registry [liveness=D] [resolve-refreshes=true|false] [max-lifetime=D] [touch-refreshes=true|false]
//	  The MCP credential registry's settings (mcp.Settings) for this and
//	  every later server process, starting from the profile's era
//	  (mcp.SettingsFor: credential-lives-with-session); prints them.
//	close-session thread=T
//	  close(providerSessionId) of T's live provider session: the session
//	  is released with manual_shutdown. Prints "=> closed <id>".
//
// Client preview hosts (browser.DesktopHost, t3code#13051, #11167, #12407):
//
//	host client=C do=start|focus|open-tab|suspend|resume|leave-thread [thread=T] [mobile]
//	  A desktop (or, with mobile, mobile) app registered as a preview
//	  automation host: start registers it with the broker (again after a
//	  restart), focus brings its window to the front (the others behind),
//	  open-tab opens T's page in it by hand (prints "=> <tab id>"), suspend
//	  backgrounds it (its socket goes half-open), resume brings it back,
//	  leave-thread moves its window away from T (t3code#6355).
//	call thread=T tool=preview_evaluate|preview_wait_for [timeout=D]
//	  Reads T's page on a client host through the broker (preview_wait_for's
//	  timeoutMs D, default 15 s).
//
// Inputs added for the reports' own steps (issue 14: entries 16 and 17):
//
//	new ... [scheduling=true] [nested=N/D]
//	  scheduling turns the schedule_task scheduler on (daily fixed-time
//	  slots, orchestrator.Orchestrator.Scheduling) in every server process
//	  the script boots; nested is the chance N/D that a delegated child
//	  delegates a task of its own (orchestrator.Orchestrator.Nested, up to
//	  MaxNestedDepth deep; 1/1: always).
//	schedule which=#N on=true|false
//	  ScheduledTaskService.setEnabled of the N-th schedule_task row the
//	  script created: disabling clears its next run, enabling aims it at
//	  the next slot. Prints "=> enabled|disabled|unchanged #N".
//	store what=schedules
//	  prints the schedule rows (enabled, next run, last run, run count)
//
// Inputs added for the reports' own steps (issue 14: entries 19 and 20):
//
//	steer thread=T
//	  The user sends a message while T's turn runs (server.Steer): a
//	  durable pending turn start the turn's completion adopts. Prints
//	  "=> queued <message id>", or "=> not queued" (no running turn, or a
//	  message already waits).
//	call ... call-id=ID [redelivered]
//	  The call's MCP tools/call id (the agent's tool_use id); with
//	  redelivered the call is the transport's second delivery of the
//	  earlier call with that id (hermes-agent#57767,
//	  dedupe-keyless-by-call-id), traced as fault tool-call-redelivered
//	  with what the first delivery answered.
//	storm thread=T events=N
//	  N tool-call updates of T's provider flood the server's ingestion
//	  queue (server.IngestStorm, server.IngestEventCost each); events
//	  ingested later, a turn's completion among them, wait behind them.
//
// exec runs one command of the T3 language.
func (w *t3Script) exec(c *Command, a *cmdArgs) string {
	if c.Cmd == "new" {
		*w = t3Script{}
		w.start(a)
		return w.flush()
	}
	if w.k == nil {
		a.fail("%s before new", c.Cmd)
	}
	return w.run(c, a)
}

type scriptThread struct {
	id     string
	cred   provider.ThreadCred
	past   []provider.ThreadCred
	inTurn bool
	failed string
}

type t3Script struct {
	k       *sim.Kernel
	env     *model.Env
	st      *store.Store
	srv     *server.Server
	incarn  int
	threads []*scriptThread
	desktop []string
	tabs    []string
	tasks   []string
	printed int
	open    time.Duration // adapter start-up time of the next session open
	// child overrides the delegated children's duration and failure draws
	// (zero: drawn).
	childDuration  time.Duration
	childNeverFail bool
	// failOp and cancelOp are the one-shot orchestrator faults of the next
	// call.
	failOp, cancelOp string
	// registry holds the MCP credential registry's settings a registry
	// command set, applied to every server process the script boots (nil:
	// the profile's era, mcp.SettingsFor).
	registry *mcp.Settings
	// created are the threads agents created (children, create_threads,
	// forks) in the order the script saw them: ^N names the N-th.
	created []string
	// hosts are the client preview hosts the host command made, in order.
	hosts []*browser.DesktopHost
	// scheduling and nested are new's scheduling= and nested=, applied to
	// every server process the script boots.
	scheduling bool
	nested     sim.Ratio
	// steers counts the messages steer sent.
	steers int
	// callOutcome is the answer of the last call with each call-id=
	// (looked up by a redelivered call, never ranged over).
	callOutcome map[string]string
}

func (w *t3Script) applyRegistry() {
	if w.srv == nil || w.registry == nil {
		return
	}
	w.srv.Registry.Settings = *w.registry
}

// clientTimeout reads client-timeout=D|default: how long the thread's MCP
// client waits for the call's answer ("default": agent.CallTimeout of the
// thread's instance; 0: the script waits up to 2 h, as without it).
func (w *t3Script) clientTimeout(a *cmdArgs, th *scriptThread) time.Duration {
	if a.str("client-timeout", "") == "default" {
		d := agent.CallTimeout(w.st.Thread(th.id).Instance)
		if d == 0 {
			a.fail("client-timeout=default: instance %s has no client-side call timeout", w.st.Thread(th.id).Instance)
		}
		return d
	}
	return a.duration("client-timeout", 0)
}

// threadRef resolves ^N to the N-th created thread.
func (w *t3Script) threadRef(a *cmdArgs, v string) string {
	if !strings.HasPrefix(v, "^") {
		return v
	}
	n, err := strconv.Atoi(v[1:])
	if err != nil || n < 1 || n > len(w.created) {
		a.fail("thread %s: only %d threads created so far", v, len(w.created))
	}
	return w.created[n-1]
}

func (w *t3Script) noteCreated(ids ...string) {
	for _, id := range ids {
		known := false
		for _, c := range w.created {
			known = known || c == id
		}
		if id != "" && !known {
			w.created = append(w.created, id)
		}
	}
}

func (w *t3Script) start(a *cmdArgs) {
	prof, err := model.Spec{Preset: a.str("profile", model.PresetReported), Fix: a.vals("fix"), Unfix: a.vals("unfix"),
		Mutants: a.vals("mutant")}.Profile()
	if err != nil {
		a.fail("%v", err)
	}
	seed, err := strconv.ParseUint(a.str("seed", "1"), 10, 64)
	if err != nil {
		a.fail("seed: %v", err)
	}
	w.k, w.st = sim.NewKernel(true), &store.Store{}
	w.env = &model.Env{Clock: w.k, Trace: w.k.Trace(), Source: sim.NewSeededSource(seed, false), Profile: prof,
		EnvironmentID: EnvironmentID}
	for _, c := range invariants.New(invariants.InGroups(t3Groups...)...) {
		w.k.Trace().AddChecker(c)
	}
	projectOf := map[string]string{}
	for _, p := range a.vals("projects") {
		th, proj, _ := strings.Cut(p, ":")
		projectOf[th] = proj
	}
	for _, spec := range a.vals("threads") {
		id, inst, ok := strings.Cut(spec, ":")
		if _, known := provider.AdapterFor(inst); !ok || !known {
			a.fail("thread spec %q: want thread-id:instance with a known instance", spec)
		}
		if w.st.Thread(id) != nil {
			a.fail("thread %s is listed twice", id)
		}
		proj := projectOf[id]
		if proj == "" {
			proj = "project-1"
		}
		if w.st.Project(proj) == nil {
			w.st.Projects = append(w.st.Projects, &store.Project{ID: proj, BrowserAccess: true})
		}
		w.st.Threads = append(w.st.Threads, &store.Thread{ID: id, ProjectID: proj, Instance: inst})
		w.threads = append(w.threads, &scriptThread{id: id})
	}
	if len(w.threads) == 0 {
		a.fail("new needs threads=(id:instance, ...)")
	}
	w.desktop = a.vals("desktop")
	w.callOutcome = map[string]string{}
	w.scheduling = a.boolean("scheduling", false)
	if v := a.str("nested", ""); v != "" {
		n, d, ok := strings.Cut(v, "/")
		num, err1 := strconv.ParseUint(n, 10, 64)
		den, err2 := strconv.ParseUint(d, 10, 64)
		if !ok || err1 != nil || err2 != nil || den == 0 || num > den {
			a.fail("nested=%q: want a chance N/D with 0 <= N <= D, D > 0", v)
		}
		w.nested = sim.Per(num, den)
	}
	w.childDuration = a.duration("child-duration", 0)
	if v := a.str("child-fails", ""); v != "" {
		fails, err := strconv.ParseBool(v)
		if err != nil {
			a.fail("child-fails: %v", err)
		}
		w.childNeverFail = !fails
	}
	w.env.Emit("script", "world", "", sim.A("profile", prof.String()), sim.A("seed", fmt.Sprint(seed)))
	w.boot()
}

func (w *t3Script) boot() {
	w.incarn++
	w.srv = server.New(w.env, w.st, w.incarn, server.Hooks{
		TurnStarted: func(threadID string, _ *provider.Entry, cred provider.ThreadCred) {
			th := w.thread(threadID)
			if th.cred.CredID != "" && th.cred.CredID != cred.CredID {
				th.past = append(th.past, th.cred)
			}
			th.cred, th.inTurn, th.failed = cred, true, ""
		},
		TurnAborted: func(threadID, why string) {
			th := w.thread(threadID)
			th.inTurn, th.failed = false, why
		},
		DesktopFor: func(threadID string) (bool, time.Duration) {
			for _, d := range w.desktop {
				if d == threadID {
					return true, 500 * time.Millisecond
				}
			}
			return false, 0
		},
		OpenLatency: func(string) time.Duration { return w.open },
	})
	w.applyRegistry()
	for _, h := range w.hosts {
		h.Attach(w.srv.Broker)
	}
	o := w.srv.Orch
	o.Scheduling, o.Nested = w.scheduling, w.nested
	if w.childDuration > 0 {
		o.ChildDuration = func() time.Duration { return w.childDuration }
	}
	if w.childNeverFail {
		o.ChildFails = func() bool { return false }
	}
	o.FailCommand = func(id string) bool {
		if w.failOp != "" && strings.Contains(id, w.failOp) {
			w.failOp = ""
			return true
		}
		return false
	}
	o.CancelAfter = func(id string) bool {
		if w.cancelOp != "" && strings.Contains(id, w.cancelOp) {
			w.cancelOp = ""
			return true
		}
		return false
	}
}

// thread returns the script's thread id; a thread of the store the script
// has not seen yet (one an agent created) joins it.
func (w *t3Script) thread(id string) *scriptThread {
	for _, th := range w.threads {
		if th.id == id {
			return th
		}
	}
	if w.st.Thread(id) != nil {
		th := &scriptThread{id: id}
		w.threads = append(w.threads, th)
		return th
	}
	return nil
}

// flush returns the trace events appended since the last flush.
func (w *t3Script) flush() string {
	var b strings.Builder
	ev := w.k.Trace().Events()
	for ; w.printed < len(ev); w.printed++ {
		b.WriteString(ev[w.printed].Describe())
		b.WriteByte('\n')
	}
	return b.String()
}

// runUntil steps the kernel until cond holds or limit of virtual time passed.
func (w *t3Script) runUntil(limit time.Duration, cond func() bool) {
	deadline := w.k.Elapsed() + limit
	for !cond() {
		if !w.k.RunUntil(min(deadline, w.k.Elapsed()+50*time.Millisecond)) || w.k.Elapsed() >= deadline {
			return
		}
	}
}

func (w *t3Script) tabArg(a *cmdArgs) string {
	v := a.str("tab", "")
	if strings.HasPrefix(v, "@") {
		n, err := strconv.Atoi(v[1:])
		if err != nil || n < 1 || n > len(w.tabs) {
			a.fail("tab %s: only %d tabs opened so far", v, len(w.tabs))
		}
		return w.tabs[n-1]
	}
	return v
}

func (w *t3Script) taskArg(a *cmdArgs) string {
	v := a.str("task", "")
	if strings.HasPrefix(v, "%") {
		n, err := strconv.Atoi(v[1:])
		if err != nil || n < 1 || n > len(w.tasks) {
			a.fail("task %s: only %d tasks seen so far", v, len(w.tasks))
		}
		return w.tasks[n-1]
	}
	return v
}

func (w *t3Script) taskName(id string) string {
	for i, t := range w.tasks {
		if t == id {
			return fmt.Sprintf("%%%d", i+1)
		}
	}
	return id
}

func (w *t3Script) tabName(id string) string {
	for i, t := range w.tabs {
		if t == id {
			return fmt.Sprintf("@%d", i+1)
		}
	}
	return id
}

func (w *t3Script) run(d *Command, a *cmdArgs) string {
	var result string
	switch d.Cmd {
	case "prompt":
		th := w.mustThread(a)
		w.open = a.duration("open", time.Second)
		th.inTurn, th.failed = false, ""
		if w.srv == nil || !w.srv.SendPrompt(th.id) {
			result = "=> not sent (server down or a run is active)"
			break
		}
		w.runUntil(time.Minute, func() bool { return th.inTurn || th.failed != "" })
		switch {
		case th.inTurn:
			result = "=> turn started with credential " + th.cred.CredID
		case th.failed != "":
			result = "=> turn failed: " + th.failed
		default:
			result = "=> turn not started (the run stopped at a violation, or the session is still opening)"
		}
	case "call":
		th := w.mustThread(a)
		call := model.ToolCall{Tool: a.need("tool"), TabID: w.tabArg(a), NewTab: a.has("new-tab"), URL: "http://localhost:5173/",
			ClientRequestID: a.str("key", ""), Mode: a.str("mode", ""), Timeout: a.duration("timeout", 0),
			Target: w.threadRef(a, a.str("target", "")), Action: a.str("action", ""), TaskID: w.taskArg(a)}
		call.Retry = a.has("retry")
		call.CallID = a.str("call-id", "")
		if a.has("redelivered") {
			// The transport's second delivery of the call (as the worlds'
			// call-redelivery does): traced first, with what the first
			// delivery answered.
			first, ok := w.callOutcome[call.CallID]
			if call.CallID == "" || !ok {
				a.fail("call redelivered needs the call-id= of an earlier call")
			}
			call.Redelivered = true
			w.env.Emit("fault", "tool-call-redelivered", "", sim.A("thread", th.id), sim.A("tool", call.Tool),
				sim.A("tool-call", call.CallID), sim.A("first", first))
		}
		giveUp := w.clientTimeout(a, th)
		extra := orchestrator.Extra{Instance: a.str("instance", ""), Task: a.text("text", ""), IncludeSubagents: a.has("subagents")}
		for _, e := range a.vals("entries") {
			parts := strings.SplitN(e, "/", 3)
			spec := orchestrator.ThreadSpec{Title: parts[0]}
			if len(parts) > 1 {
				spec.Prompt = parts[1]
			}
			if len(parts) > 2 {
				spec.Instance = parts[2]
			}
			extra.Threads = append(extra.Threads, spec)
		}
		w.failOp, w.cancelOp = a.str("fail", ""), a.str("cancel-after", "")
		full := a.has("full") || orchestrator.Serves(call.Tool)
		if n := a.str("count", ""); n != "" {
			c, err := strconv.Atoi(n)
			if err != nil {
				a.fail("count: %v", err)
			}
			call.Count = c
		}
		cred := th.cred
		if a.str("cred", "current") == "previous" {
			if len(th.past) == 0 {
				a.fail("%s has no previous credential", th.id)
			}
			cred = th.past[len(th.past)-1]
		}
		var got *model.ToolResult
		nowait := a.has("nowait")
		if w.srv == nil {
			got = &model.ToolResult{Outcome: model.OutcomeServerDown}
		} else {
			w.srv.CallToolExt(th.id, cred.Token, cred.CredID, call, extra, func(r model.ToolResult) { got = &r })
			if nowait {
				result = "=> in flight"
				break
			}
			limit := 2 * time.Hour
			if giveUp > 0 {
				limit = giveUp
			}
			w.runUntil(limit, func() bool { return got != nil })
			if got == nil && giveUp > 0 && w.k.Trace().Violation() == nil {
				// The agent's MCP client stops waiting (agent.Agent's
				// clientTimeout); the server still works on the call.
				w.env.Emit("mcp-client/"+th.id, "timeout", "", sim.A("tool", call.Tool), sim.A("clientRequestId", orDash(call.ClientRequestID)))
				result = fmt.Sprintf("=> client gave up after %s (the call is still in flight)", giveUp)
				break
			}
		}
		if got == nil {
			result = "=> no answer"
			if w.k.Trace().Violation() != nil {
				result += " (the run stopped at the violation)"
			}
			break
		}
		if got.TaskID != "" && w.taskName(got.TaskID) == got.TaskID {
			w.tasks = append(w.tasks, got.TaskID)
		}
		if full && call.Tool != orchestrator.ToolThreadList && call.Tool != orchestrator.ToolThreadRead {
			w.noteCreated(got.ChildThreadID)
			w.noteCreated(got.ThreadIDs...)
		}
		if call.Tool == model.ToolPreviewOpen && got.Outcome == browser.OK && w.tabName(got.TabID) == got.TabID {
			w.tabs = append(w.tabs, got.TabID)
		}
		if call.CallID != "" {
			w.callOutcome[call.CallID] = got.Outcome
		}
		result = "=> " + got.Outcome
		if got.TabID != "" {
			result += " tab=" + w.tabName(got.TabID)
		}
		if got.TaskID != "" {
			result += " task=" + w.taskName(got.TaskID)
		}
		if got.ChildThreadID != "" {
			result += " child=" + got.ChildThreadID
		}
		if len(got.ThreadIDs) > 0 {
			result += " threads=" + strings.Join(got.ThreadIDs, ",")
		}
		if got.MessageID != "" {
			result += " message=" + got.MessageID
		}
		if got.ScheduleID != "" {
			result += " schedule=" + got.ScheduleID
		}
		if run := got.RunID + got.InterruptedRunID; run != "" && full {
			result += " run=" + run
		}
		if got.Status != "" {
			result += " status=" + got.Status
		}
		if got.WaitTimedOut {
			result += " waitTimedOut"
		}
		if !full {
			w.failOp, w.cancelOp = "", ""
			break
		}
		if got.InstanceID != "" {
			result += " instance=" + got.InstanceID
		}
		if got.Summary != "" {
			result += fmt.Sprintf(" summary=%q", got.Summary)
		}
		if got.Delivery != "" && call.Tool == orchestrator.ToolTaskStatus {
			result += " delivery=" + got.Delivery
		}
		if call.Tool == orchestrator.ToolTaskStatus && got.Outcome == "ok" {
			result += fmt.Sprintf(" latestTerminalRun=%q pendingChildRuns=%v", got.LatestTerminalRunID, got.HasPendingChildRuns)
		}
		w.failOp, w.cancelOp = "", ""
	case "host":
		id := a.need("client")
		var h *browser.DesktopHost
		for _, x := range w.hosts {
			if x.ClientID == id {
				h = x
			}
		}
		if h == nil {
			h = browser.NewDesktopHost(w.env, id, a.has("mobile"))
			w.hosts = append(w.hosts, h)
			if w.srv != nil {
				h.Attach(w.srv.Broker)
			}
		}
		switch do := a.need("do"); do {
		case "start":
			h.Start()
		case "focus":
			for _, o := range w.hosts {
				if o != h {
					o.Focus(false)
				}
			}
			h.Focus(true)
		case "open-tab":
			result = "=> " + h.OpenTab(w.mustThread(a).id)
		case "suspend":
			h.Suspend()
		case "resume":
			h.Resume()
		case "leave-thread":
			h.LeaveThread(w.mustThread(a).id)
		default:
			a.fail("host do=%s: one of start, focus, open-tab, suspend, resume, leave-thread", do)
		}
		w.runUntil(100*time.Millisecond, func() bool { return false })
	case "end-turn":
		th := w.mustThread(a)
		if w.srv != nil {
			w.srv.TurnFinished(th.id, a.duration("background", 0))
		}
		th.inTurn = false
	case "advance":
		w.k.RunUntil(w.k.Elapsed() + a.duration("by", 0))
	case "crash":
		th := w.mustThread(a)
		if w.srv == nil || !w.srv.Crash(th.id) {
			result = "=> no live session"
		}
		w.runUntil(time.Second, func() bool { return false })
	case "browser-access":
		on, err := strconv.ParseBool(a.need("on"))
		if err != nil {
			a.fail("on: %v", err)
		}
		if w.srv != nil {
			w.srv.SetBrowserAccess(a.need("project"), on)
		} else {
			w.st.Project(a.need("project")).BrowserAccess = on
		}
	case "runtime-options":
		th := w.mustThread(a)
		if w.srv == nil || !w.srv.ChangeRuntimeOptions(th.id) {
			result = "=> no idle live session"
		}
	case "switch-provider":
		th := w.mustThread(a)
		if !w.srv.SwitchProvider(th.id, a.need("to")) {
			result = "=> not switched"
		}
	case "watch", "unwatch", "take", "release":
		th := w.mustThread(a)
		id := w.tabArg(a)
		tab := w.srv.Browser.Tab(th.id, id)
		if tab == nil {
			result = "=> no such tab"
			break
		}
		viewer := "viewer/" + th.id
		switch d.Cmd {
		case "watch":
			w.srv.Browser.Watch(tab, viewer)
		case "unwatch":
			w.srv.Browser.Unwatch(tab, viewer)
		case "take":
			w.srv.Browser.TakeControl(tab, viewer)
		case "release":
			w.srv.Browser.ReleaseControl(tab, viewer)
		}
	case "restart":
		how := "crash"
		if a.has("graceful") {
			how = "graceful"
		}
		w.env.Emit("fault", "server-restart", how, sim.A("incarnation", fmt.Sprint(w.incarn)))
		if how == "graceful" {
			w.srv.Shutdown()
		} else {
			w.srv.Kill()
		}
		for _, th := range w.threads {
			th.inTurn = false
		}
		w.boot()
		// Let startup finish (restart continuations start their turns).
		w.runUntil(5*time.Second, func() bool { return false })
	case "schedule":
		which := a.need("which")
		n, err := strconv.Atoi(strings.TrimPrefix(which, "#"))
		if !strings.HasPrefix(which, "#") || err != nil || n < 1 || n > len(w.st.Schedules) {
			a.fail("schedule which=%s: want #N, one of the %d schedule rows so far", which, len(w.st.Schedules))
		}
		on := a.boolean("on", true)
		outcome := "disabled"
		if on {
			outcome = "enabled"
		}
		if !w.srv.Orch.SetEnabled(w.st.Schedules[n-1].ID, on) {
			outcome = "unchanged"
		}
		result = "=> " + outcome + " " + which
	case "steer":
		th := w.mustThread(a)
		msg := fmt.Sprintf("message:%s:steer-%d", th.id, w.steers+1)
		if w.srv.Steer(th.id, msg) {
			w.steers++
			result = "=> queued " + msg
		} else {
			result = "=> not queued"
		}
	case "storm":
		th := w.mustThread(a)
		n := a.integer("events", 0)
		if n < 1 {
			a.fail("storm events=%d: want a positive number of events", n)
		}
		w.srv.IngestStorm(th.id, n)
	case "interrupt":
		th := w.mustThread(a)
		if !w.srv.Interrupt(th.id) {
			result = "=> no active run"
		}
	case "registry":
		if w.registry == nil {
			era := mcp.SettingsFor(w.env.Profile)
			w.registry = &era
		}
		r := w.registry
		r.LivenessWindow = a.duration("liveness", r.LivenessWindow)
		r.ResolveRefreshes = a.boolean("resolve-refreshes", r.ResolveRefreshes)
		r.MaxLifetime = a.duration("max-lifetime", r.MaxLifetime)
		r.TouchRefreshes = a.boolean("touch-refreshes", r.TouchRefreshes)
		w.applyRegistry()
		result = fmt.Sprintf("=> registry liveness=%s resolve-refreshes=%v max-lifetime=%s touch-refreshes=%v",
			r.LivenessWindow, r.ResolveRefreshes, r.MaxLifetime, r.TouchRefreshes)
	case "close-session":
		th := w.mustThread(a)
		var e *provider.Entry
		if w.srv != nil {
			e = w.srv.PSM.EntryForThread(th.id)
		}
		if e == nil {
			result = "=> no live session"
			break
		}
		if err := w.srv.PSM.Close(e.ID); err != nil {
			result = "=> close failed: " + err.Error()
		} else {
			result = "=> closed " + e.ID
		}
		w.runUntil(time.Second, func() bool { return false })
	case "setting":
		on, err := strconv.ParseBool(a.need("continue"))
		if err != nil {
			a.fail("continue: %v", err)
		}
		w.st.Settings.ContinueThreadsAfterServerUpdate = on
	case "state":
		result = w.state()
	case "archive":
		th := w.mustThread(a)
		w.st.Thread(th.id).Archived = !a.has("off")
	case "thread-meta":
		th := w.mustThread(a)
		t := w.st.Thread(th.id)
		t.Branch, t.WorktreePath = a.str("branch", t.Branch), a.str("worktree", t.WorktreePath)
	case "store":
		result = w.storeRows(a.need("what"), w.threadRef(a, a.str("thread", "")))
	case "lose-work":
		run := w.st.Run(a.need("run"))
		if run == nil {
			a.fail("unknown run %s", a.need("run"))
		}
		pt := a.str("thread", run.ThreadID)
		for _, v := range a.vals("work") {
			kind, desc, _ := strings.Cut(v, ":")
			run.LostWork = append(run.LostWork, store.LostWork{ProviderThread: pt, Kind: kind, Description: desc})
		}
	case "continue":
		run := w.st.Run(a.need("run"))
		if run == nil || w.srv == nil {
			a.fail("unknown run or server down")
		}
		if !w.srv.ContinueRestartedRun(run.ThreadID, run.ID) {
			result = "=> nothing dispatched"
		}
	default:
		a.fail("unknown command %q", d.Cmd)
	}
	out := w.flush()
	if result = strings.TrimRight(result, "\n"); result != "" {
		out += result + "\n"
	}
	if out == "" {
		out = "ok\n"
	}
	return out
}

// storeRows prints durable rows of one table.
func (w *t3Script) storeRows(what, thread string) string {
	var b strings.Builder
	match := func(id string) bool { return thread == "" || id == thread }
	switch what {
	case "threads":
		for _, t := range w.st.Threads {
			if !match(t.ID) {
				continue
			}
			fmt.Fprintf(&b, "thread %s project=%s instance=%s", t.ID, t.ProjectID, t.Instance)
			for _, kv := range [][2]string{{"title", t.Title}, {"createdBy", t.CreatedBy}, {"source", t.CreationSource},
				{"parent", t.ParentThread}, {"relationship", t.Relationship}, {"root", t.RootParent},
				{"branch", t.Branch}, {"worktree", t.WorktreePath}, {"activeRun", t.ActiveRunID}} {
				if kv[1] != "" {
					fmt.Fprintf(&b, " %s=%s", kv[0], kv[1])
				}
			}
			if t.Archived {
				b.WriteString(" archived")
			}
			b.WriteByte('\n')
		}
	case "messages":
		for _, m := range w.st.Messages {
			if match(m.ThreadID) {
				fmt.Fprintf(&b, "message %s thread=%s sender=%q text=%q run=%q command=%s\n", m.ID, m.ThreadID, m.Sender, m.Text,
					m.RunID, m.CommandID)
			}
		}
	case "schedules":
		fmtT := func(d time.Duration) string {
			if d < 0 {
				return "-"
			}
			return sim.FormatT(d)
		}
		for i, sc := range w.st.Schedules {
			if !match(sc.ThreadID) {
				continue
			}
			fmt.Fprintf(&b, "schedule #%d thread=%s timed=%t slot=%s enabled=%t next=%s last=%s status=%s runs=%d\n", i+1, sc.ThreadID,
				sc.Timed, sc.TimeOfDay, sc.Enabled, fmtT(sc.NextRunAt), fmtT(sc.LastRunAt), sc.LastRunStatus, sc.RunCount)
		}
	case "receipts":
		for _, r := range w.st.Receipts {
			fmt.Fprintf(&b, "receipt %s %s\n", r.CommandID, r.Status)
		}
	case "items":
		for _, it := range w.st.Items {
			if match(it.ThreadID) {
				fmt.Fprintf(&b, "item %s thread=%s ref=%s\n", it.Kind, it.ThreadID, it.Ref)
			}
		}
	case "tasks":
		for _, t := range w.st.Tasks {
			fmt.Fprintf(&b, "task %s parent=%s child=%s status=%s delivery=%s\n", w.taskName(t.ID), t.ParentThread, t.ChildThreadID,
				t.Status, t.Delivery)
		}
	case "runs":
		for _, r := range w.st.Runs {
			if match(r.ThreadID) {
				fmt.Fprintf(&b, "run %s thread=%s instance=%s status=%s", r.ID, r.ThreadID, r.Instance, r.Status)
				if r.ContinuationOf != "" {
					fmt.Fprintf(&b, " continuationOf=%s", r.ContinuationOf)
				}
				b.WriteByte('\n')
			}
		}
	case "sessions":
		for _, p := range w.st.ProviderSessions {
			fmt.Fprintf(&b, "provider-session %s status=%s lastError=%q\n", p.ID, p.Status, p.LastError)
		}
	default:
		return "unknown table " + what
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

func (w *t3Script) mustThread(a *cmdArgs) *scriptThread {
	id := w.threadRef(a, a.need("thread"))
	th := w.thread(id)
	if th == nil {
		a.fail("unknown thread %q", id)
	}
	return th
}

func (w *t3Script) state() string {
	var b strings.Builder
	if w.srv == nil {
		return "server down\n"
	}
	for _, t := range w.srv.Browser.Tabs() {
		fmt.Fprintf(&b, "tab %s thread=%s owner=%s desktop=%v watched=%v controller=%q\n", w.tabName(t.TabID), t.ThreadID,
			browser.ShowKey(t.Control.AgentID), t.Desktop, t.Watched(), t.Control.Owner)
	}
	for _, th := range w.threads {
		if sl, ok := w.srv.Slots.Get(th.id); ok {
			live := w.srv.Registry.Lookup(sl.CredID) != nil
			fmt.Fprintf(&b, "slot %s cred=%s live=%v\n", th.id, sl.CredID, live)
		}
	}
	for _, e := range w.srv.PSM.Entries() {
		fmt.Fprintf(&b, "session %s busy=%v\n", e.Incarnation, e.Busy())
	}
	if b.Len() == 0 {
		return "empty\n"
	}
	return b.String()
}
