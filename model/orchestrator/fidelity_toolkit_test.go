package orchestrator

// Fidelity cases of the toolkit's other scenarios
// (OrchestratorMcpToolkit.integration.test.ts @ 006bb815, assertions read in
// the stored index:70188769112), of OrchestratorMcpService.createThreads
// .test.ts @ 7e1bab52 and OrchestratorMcpService.test.ts @ c92c4680, and of
// the [variant] rollbackThread tests (index:71639911882).

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/mcp"
	"github.com/orchsim/orchsim/model/store"
)

// TestOMN13_ToolAnnotations is OM-N13, upstream scenario "tool
// annotations (readOnly, idempotent, destructive, openWorld hints) of the
// orchestrator tools": the hints the test asserts, each tool known.
func TestOMN13_ToolAnnotations(t *testing.T) {
	for tool, want := range map[string]Annotations{
		ToolCapabilities:          {ReadOnly: true, Idempotent: true},
		model.ToolDelegateTask:    {Destructive: true, OpenWorld: true},
		ToolTaskStatus:            {Idempotent: true},
		model.ToolCreateThreads:   {Destructive: true},
		ToolThreadList:            {ReadOnly: true, Idempotent: true},
		ToolThreadRead:            {},
		model.ToolThreadUpdate:    {Destructive: true},
		model.ToolThreadSend:      {Destructive: true},
		ToolThreadWait:            {ReadOnly: true},
		model.ToolThreadInterrupt: {Destructive: true},
		model.ToolScheduleTask:    {Destructive: true},
	} {
		got, ok := ToolAnnotations(tool)
		require.True(t, ok, tool)
		assert.Equal(t, want, got, tool)
	}
	_, ok := ToolAnnotations("no_such_tool")
	assert.False(t, ok)
}

// providers is the toolkit test's provider registry: Codex with a
// reasoning select, Claude without descriptors, OpenCode without an adapter.
func providers() []Provider {
	return []Provider{
		{InstanceID: "codex", Driver: "codex", Adapter: true, Models: []ModelInfo{{ID: "gpt-5.4", Described: true,
			Options: []OptionDescriptor{{ID: "reasoning", Type: "select", Choices: []string{"low", "medium", "high"}}}}}},
		{InstanceID: "claudeAgent", Driver: "claudeAgent", Adapter: true, Models: []ModelInfo{{ID: "claude-sonnet-4-6"}}},
		{InstanceID: "opencode", Driver: "opencode", Models: []ModelInfo{{ID: "opencode/test"}}},
	}
}

func toolkitWorld() *orch {
	x := newOrch()
	x.o.Providers = providers()
	x.st.Thread("parent").Model = "gpt-5.4"
	x.liveRun("parent", "run:parent")
	return x
}

// TestOMN14_Capabilities is OM-N14, upstream scenario
// "orchestrator_capabilities reports inherited provider, features and
// providers with model options": the inherited codex and model, every
// feature, Claude able to run a cross-provider child, OpenCode (no
// adapter) not, and Codex's model with its reasoning options.
func TestOMN14_Capabilities(t *testing.T) {
	x := toolkitWorld()
	got := x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: ToolCapabilities}})
	require.NotNil(t, got.Caps)
	c := *got.Caps
	assert.Equal(t, "codex", c.InheritedInstance)
	assert.Equal(t, "gpt-5.4", c.InheritedModel)
	assert.Equal(t, Features{AppOwnedSubagents: true, AsyncPolling: true, Cancellation: true, BatchThreadCreation: true,
		ThreadManagement: true, IncrementalThreadRead: true, ScheduledTasks: true, MaxBatchThreads: 20}, c.Features)
	byID := map[string]ProviderView{}
	for _, p := range c.Providers {
		byID[p.InstanceID] = p
	}
	assert.True(t, byID["claudeAgent"].CanRunCrossProviderChildTask)
	assert.False(t, byID["opencode"].CanRunChildTask)
	require.Len(t, byID["codex"].Models, 1)
	assert.Equal(t, "gpt-5.4", byID["codex"].Models[0].ID)
	require.Len(t, byID["codex"].Models[0].Options, 1)
	assert.Equal(t, OptionDescriptor{ID: "reasoning", Type: "select", Choices: []string{"low", "medium", "high"}},
		byID["codex"].Models[0].Options[0])
}

func (x *orch) schedule(e Extra, key string) Answer {
	return x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: model.ToolScheduleTask, ClientRequestID: key}, Extra: e})
}

// TestOMN15_ScheduleTaskBindsCaller is OM-N15, upstream scenario
// "schedule_task binds the calling thread, derives its title and inherits
// the model": the summary is bound to the caller in its project, enabled,
// with the interval and the prompt as title; the row was created by an
// agent over MCP with the caller's model.
func TestOMN15_ScheduleTaskBindsCaller(t *testing.T) {
	x := toolkitWorld()
	got := x.schedule(Extra{Prompt: "wake up in this thread and say hello", Schedule: `{"type":"interval","everyMs":60000}`},
		"schedule-hello-1")
	require.Equal(t, Accepted, got.Outcome)
	require.Len(t, got.Schedules, 1)
	v := got.Schedules[0]
	assert.Equal(t, ScheduledTask{ID: v.ID, Title: "wake up in this thread and say hello", Prompt: "wake up in this thread and say hello",
		ProjectID: "project-1", BoundThreadID: "parent", Kind: "interval", EveryMs: 60_000, Enabled: true}, v)
	require.Len(t, x.st.Schedules, 1)
	row := x.st.Schedules[0]
	assert.Equal(t, []string{"agent", "mcp", "gpt-5.4"}, []string{row.CreatedBy, row.CreationSource, row.Model})
	assert.Equal(t, "Scheduled task", ScheduleTitle("", "  \nsecond line"))
}

// TestOMN16_ListUpdateDeleteScheduledTasks is OM-N16, upstream scenario
// "list_scheduled_tasks, update_scheduled_task and delete_scheduled_task":
// the project's list has the task bound to the caller; an update pauses
// it; a delete removes it.
func TestOMN16_ListUpdateDeleteScheduledTasks(t *testing.T) {
	x := toolkitWorld()
	id := x.schedule(Extra{Prompt: "wake up", Schedule: `{"type":"interval","everyMs":60000}`}, "schedule-hello-1").Result.ScheduleID
	list := x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: ToolListScheduled}})
	require.Len(t, list.Schedules, 1)
	assert.Equal(t, id, list.Schedules[0].ID)
	assert.Equal(t, "parent", list.Schedules[0].BoundThreadID)
	off := false
	upd := x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: ToolUpdateScheduled}, Extra: Extra{ScheduleID: id, Enabled: &off}})
	require.Len(t, upd.Schedules, 1)
	assert.False(t, upd.Schedules[0].Enabled)
	assert.Len(t, x.st.Schedules, 1, "paused, not deleted")
	del := x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: ToolDeleteScheduled}, Extra: Extra{ScheduleID: id}})
	assert.Equal(t, store.Result{ScheduleID: id, Status: "deleted"}, del.Result)
	assert.Empty(t, x.st.Schedules)
}

// TestOMN17_ScheduleAsJSONString is OM-N17, upstream scenario
// "schedule_task decodes a schedule sent as a JSON string": the string
// form decodes to the hourly interval, bound to the caller.
func TestOMN17_ScheduleAsJSONString(t *testing.T) {
	x := toolkitWorld()
	got := x.schedule(Extra{Prompt: "check for new pull requests", Schedule: `"{\"type\":\"interval\",\"everyMs\":3600000}"`},
		"schedule-opencode-compat-1")
	require.Equal(t, Accepted, got.Outcome)
	require.Len(t, got.Schedules, 1)
	assert.Equal(t, "interval", got.Schedules[0].Kind)
	assert.Equal(t, int64(3_600_000), got.Schedules[0].EveryMs)
	assert.Equal(t, "parent", got.Schedules[0].BoundThreadID)
	x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: ToolDeleteScheduled}, Extra: Extra{ScheduleID: got.Schedules[0].ID}})
	assert.Empty(t, x.st.Schedules)
	bad := x.schedule(Extra{Prompt: "x", Schedule: `"not json"`}, "bad")
	assert.Equal(t, ErrInvalidRequest, bad.Outcome)
}

// completedChild is a completed delegated task of parent.
func completedChild(t *testing.T, x *orch) *store.Task {
	x.o.ChildFails = func() bool { return false }
	task, _ := x.delegateFor("delegate-claude-1", time.Minute, "")
	x.advance(2 * time.Minute)
	require.Equal(t, store.TaskCompleted, task.Status)
	return task
}

// TestOMN18_PendingChildRunsSkipHeldQueue is OM-N18, upstream scenario
// "a legacy child projection without a subagent_spawn transfer still finds
// the delegated run": hasPendingChildRuns is true for a running and for a
// queued follow-up, false for one a queue Stop holds.
func TestOMN18_PendingChildRunsSkipHeldQueue(t *testing.T) {
	x := newOrch()
	task := completedChild(t, x)
	follow := &store.Run{ID: "run:follow-up", ThreadID: task.ChildThreadID, Instance: "codex", Status: store.RunRunning}
	x.st.Runs = append(x.st.Runs, follow)
	assert.True(t, x.taskStatus(task).Result.HasPendingChildRuns, "running")
	follow.Status = store.RunQueued
	got := x.taskStatus(task).Result
	assert.True(t, got.HasPendingChildRuns, "queued")
	assert.Equal(t, "run:"+task.ID, got.LatestTerminalRunID, "the delegated run is found: a queued run is not terminal")
	follow.QueueHeld = true
	assert.False(t, x.taskStatus(task).Result.HasPendingChildRuns, "a held queue waits for the user")
}

func (x *orch) delegateTarget(key string, e Extra) Answer {
	return x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: model.ToolDelegateTask, ClientRequestID: key}, Extra: e})
}

// TestOMN20_OptionsOutsideDescriptorsRejected is OM-N20, upstream scenario
// "delegate_task rejects options outside the model's descriptors before
// creating a child": invalid_request naming rejected options, no child
// thread and no receipt; valid options reach the child's selection.
func TestOMN20_OptionsOutsideDescriptorsRejected(t *testing.T) {
	x := toolkitWorld()
	threads := len(x.st.Threads)
	got := x.delegateTarget("delegate-rejected-options-1", Extra{Instance: "codex", Model: "gpt-5.4",
		Options: []Option{{ID: "reasoning", Value: "extreme"}}})
	assert.Equal(t, ErrInvalidRequest, got.Outcome)
	assert.Contains(t, got.Message, "rejected options")
	assert.Len(t, x.st.Threads, threads, "no child thread")
	assert.Empty(t, x.st.Receipts)
	ok := x.delegateTarget("delegate-cancel-1", Extra{Instance: "codex", Model: "gpt-5.4", Options: []Option{{ID: "reasoning", Value: "low"}}})
	require.Equal(t, Accepted, ok.Outcome)
	child := x.st.Thread(ok.Result.ChildThreadID)
	assert.Equal(t, "gpt-5.4", child.Model)
	assert.Equal(t, []string{"reasoning=low"}, child.ModelOptions)
}

// TestOMN21_DuplicateOptionIDsRejected is OM-N21, upstream scenario
// "delegate_task rejects duplicate option ids": invalid_request naming the
// id given more than once, and no child.
func TestOMN21_DuplicateOptionIDsRejected(t *testing.T) {
	x := toolkitWorld()
	threads := len(x.st.Threads)
	got := x.delegateTarget("delegate-duplicate-options-1", Extra{Instance: "codex", Model: "gpt-5.4",
		Options: []Option{{ID: "reasoning", Value: "low"}, {ID: "reasoning", Value: "high"}}})
	assert.Equal(t, ErrInvalidRequest, got.Outcome)
	assert.Contains(t, got.Message, "more than once")
	assert.Len(t, x.st.Threads, threads)
}

// createPrompted creates one thread with a prompt (a run starts) and
// returns it and its run.
func createPrompted(t *testing.T, x *orch, key, title, prompt string) (string, *store.Run) {
	var run *store.Run
	x.o.StartRun = func(thread string) string {
		run = x.liveRun(thread, "run:"+thread)
		return run.ID
	}
	got := x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: model.ToolCreateThreads, ClientRequestID: key},
		Extra: Extra{Threads: []ThreadSpec{{Title: title, Prompt: prompt, Instance: "claudeAgent"}}}})
	require.Equal(t, Accepted, got.Outcome)
	require.NotNil(t, run)
	return got.Result.ThreadIDs[0], run
}

// TestOMN22_ReadPagesCreatedThread is OM-N22, upstream scenario
// "t3_thread_read pages a created thread (user message, then assistant
// message)": after its run completed, a one-item page holds the agent's
// user message with more to read, and the next page the assistant's.
func TestOMN22_ReadPagesCreatedThread(t *testing.T) {
	x := toolkitWorld()
	id, run := createPrompted(t, x, "create-thread-batch-1", "Claude ordinary thread", "Complete the newly created ordinary thread.")
	x.st.Messages = append(x.st.Messages, &store.Message{ID: "message:answer", ThreadID: id, RunID: run.ID, Role: "assistant",
		Text: "Claude completed: Complete the newly created ordinary thread."})
	x.st.EndRun(run.ID, store.RunCompleted)
	first := x.read(id, ReadArgs{Limit: 1})
	assert.Equal(t, store.RunCompleted, first.Status)
	assert.Equal(t, []string{"agent", "mcp"}, []string{first.CreatedBy, first.CreationSource})
	require.Len(t, first.Items, 1)
	assert.Equal(t, "user_message", first.Items[0].Type)
	assert.Equal(t, []string{"agent", "mcp"}, []string{first.Items[0].CreatedBy, first.Items[0].CreationSource})
	assert.True(t, first.HasMore)
	next := x.read(id, ReadArgs{HasAfter: true, AfterPosition: first.NextPosition, Limit: 1})
	require.Len(t, next.Items, 1)
	assert.Equal(t, "assistant_message", next.Items[0].Type)
	assert.Equal(t, "Claude completed: Complete the newly created ordinary thread.", next.Items[0].Text)
}

// TestOMN26_ForkInheritsSourceItems is OM-N26, upstream scenario "a forked
// thread shows the source's items and t3_thread_read attributes them to
// the source": the fork has no messages of its own, and its read shows the
// source's prompt from the source thread, by an agent over MCP.
func TestOMN26_ForkInheritsSourceItems(t *testing.T) {
	x := toolkitWorld()
	src, run := createPrompted(t, x, "create-thread-batch-1", "Claude ordinary thread", "Complete the newly created ordinary thread.")
	x.st.EndRun(run.ID, store.RunCompleted)
	fork := x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: ToolThreadFork, ClientRequestID: "inherited-read", Target: src}})
	require.Equal(t, Accepted, fork.Outcome)
	forked := fork.Result.ThreadIDs[0]
	for _, m := range x.st.Messages {
		assert.NotEqual(t, forked, m.ThreadID, "no messages of its own")
	}
	read := x.read(forked, ReadArgs{})
	require.NotEmpty(t, read.Items)
	it := read.Items[0]
	assert.Equal(t, "Complete the newly created ordinary thread.", it.Text)
	assert.Equal(t, src, it.SourceThreadID)
	assert.Equal(t, []string{"agent", "mcp"}, []string{it.CreatedBy, it.CreationSource})
}

// TestOMN28_CreatedRunningThreadItem is OM-N28, upstream scenario
// "t3_thread_start creates a running thread with a thread_created item",
// as create_threads with a prompt (the newer file's form): the thread
// runs, and the parent's thread_created item names it and its run.
func TestOMN28_CreatedRunningThreadItem(t *testing.T) {
	x := toolkitWorld()
	id, run := createPrompted(t, x, "managed-active-thread-1", "Managed active thread", "Remain active.")
	assert.Equal(t, store.RunRunning, x.read(id, ReadArgs{}).Status)
	var item *store.ThreadItem
	for _, it := range x.st.Items {
		if it.Kind == "thread_created" && it.Ref == id {
			item = it
		}
	}
	require.NotNil(t, item)
	assert.Equal(t, "parent", item.ThreadID)
	assert.Equal(t, run.ID, item.TargetRun)
}

func (x *orch) wait(thread, run string, timeout time.Duration) WaitResult {
	var got *WaitResult
	x.o.Dispatch(Call{Scope: x.s, ToolCall: model.ToolCall{Tool: ToolThreadWait, Target: thread, Timeout: timeout},
		Extra: Extra{RunID: run}}, func(Answer) {}, func(a Answer, _ model.ToolResult) { got = a.Wait })
	x.advance(timeout + time.Second)
	if got == nil {
		panic("t3_thread_wait did not answer")
	}
	return *got
}

// TestOMN29_WaitTimesOutOnRunningRun is OM-N29, upstream scenario
// "t3_thread_wait with a 1 ms timeout reports timedOut on a running run".
func TestOMN29_WaitTimesOutOnRunningRun(t *testing.T) {
	x := toolkitWorld()
	id, run := createPrompted(t, x, "managed-active-thread-1", "Managed active thread", "Remain active.")
	assert.Equal(t, WaitResult{ThreadID: id, RunID: run.ID, Status: store.RunRunning, TimedOut: true}, x.wait(id, run.ID, time.Millisecond))
}

// TestOMN30_SendSteersActiveRun is OM-N30, upstream scenario
// "t3_thread_send mode steer steers the active run": the answer names the
// active run, delivered by steering, and the message is the caller's; a
// thread without an active run is not sendable in steer mode.
func TestOMN30_SendSteersActiveRun(t *testing.T) {
	x := toolkitWorld()
	id, run := createPrompted(t, x, "managed-active-thread-1", "Managed active thread", "Remain active.")
	got := x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: model.ToolThreadSend, Target: id, ClientRequestID: "managed-active-steer-1"},
		Extra: Extra{SendMode: "steer", Prompt: "Include the latest parent guidance before finishing."}})
	require.Equal(t, Accepted, got.Outcome)
	assert.Equal(t, run.ID, got.Result.RunID)
	assert.Equal(t, "steered", got.Result.Delivery)
	m := x.st.Message(got.Result.MessageID)
	require.NotNil(t, m)
	assert.Equal(t, "parent", m.Sender)
	x.st.EndRun(run.ID, store.RunCompleted)
	idle := x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: model.ToolThreadSend, Target: id, ClientRequestID: "steer-idle"},
		Extra: Extra{SendMode: "steer", Prompt: "late"}})
	assert.Equal(t, ErrThreadNotSendable, idle.Outcome)
}

// TestOMN31_InterruptThenWaitAndRepeat is OM-N31, upstream scenario
// "t3_thread_interrupt then t3_thread_wait reports interrupted; a repeated
// interrupt answers interrupted": the interrupt is requested for the
// active run, the wait sees it interrupted, and an interrupt naming that
// run answers its terminal status.
func TestOMN31_InterruptThenWaitAndRepeat(t *testing.T) {
	x := toolkitWorld()
	id, run := createPrompted(t, x, "managed-active-thread-1", "Managed active thread", "Remain active.")
	x.o.Interrupt = func(thread string) bool {
		x.st.EndRun(x.st.Thread(thread).ActiveRunID, store.RunInterrupted)
		return true
	}
	first := x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: model.ToolThreadInterrupt, Target: id, ClientRequestID: "managed-active-interrupt-1"}})
	require.Equal(t, Accepted, first.Outcome)
	assert.Equal(t, "interrupt_requested", first.Result.Status)
	assert.Equal(t, run.ID, first.Result.InterruptedRunID)
	assert.Equal(t, store.RunInterrupted, x.wait(id, run.ID, 10*time.Second).Status)
	again := x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: model.ToolThreadInterrupt, Target: id}, Extra: Extra{RunID: run.ID}})
	assert.Equal(t, store.Result{RunID: run.ID, Status: store.RunInterrupted}, again.Result)
}

// TestOMN40_RunningAndQueuedFollowUps is OM-N40, upstream "reports running
// and queued child follow-ups from a Codex replay transcript", over
// hand-built follow-up runs: with one running and one queued, the task
// stays completed with its summary, pending, its delegated run the latest
// terminal; once the running one is interrupted and the queued one
// completes, that one is the latest terminal and nothing is pending.
func TestOMN40_RunningAndQueuedFollowUps(t *testing.T) {
	x := newOrch()
	task := completedChild(t, x)
	running := &store.Run{ID: "run:running-follow-up", ThreadID: task.ChildThreadID, Instance: "codex", Status: store.RunRunning}
	queued := &store.Run{ID: "run:queued-follow-up", ThreadID: task.ChildThreadID, Instance: "codex", Status: store.RunQueued}
	x.st.Runs = append(x.st.Runs, running, queued)
	got := x.taskStatus(task).Result
	assert.Equal(t, store.TaskCompleted, got.Status)
	assert.Equal(t, "answer to: task delegate-claude-1", got.Summary)
	assert.True(t, got.HasPendingChildRuns)
	assert.Equal(t, "run:"+task.ID, got.LatestTerminalRunID)
	running.Status, queued.Status = store.RunInterrupted, store.RunCompleted
	got = x.taskStatus(task).Result
	assert.False(t, got.HasPendingChildRuns)
	assert.Equal(t, queued.ID, got.LatestTerminalRunID)
	assert.Equal(t, store.RunCompleted, got.LatestTerminalStatus)
}

// TestOM02_PromptBeforeConcurrentArchive is OM-02, upstream "accepts an
// MCP prompt before a concurrent archive can take its target"
// (OrchestratorMcpService.createThreads.test.ts @ 7e1bab52): an archive
// sent once the create committed queues on the thread's lock, the prompt
// is accepted, and the archive, run after it, is refused: one message, not
// archived.
func TestOM02_PromptBeforeConcurrentArchive(t *testing.T) {
	x := toolkitWorld()
	x.o.StartRun = func(thread string) string { return x.liveRun(thread, "run:"+thread).ID }
	var queued string
	x.o.Committed = func(id string) {
		tid := "thread:mcp:ns-parent:concurrent-create:0"
		queued = x.o.Archive(tid)
		assert.False(t, x.st.Thread(tid).Archived, "not archived while the create holds the lock")
	}
	got := x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: model.ToolCreateThreads, ClientRequestID: "concurrent-create"},
		Extra: Extra{Threads: []ThreadSpec{{Prompt: "Accept before archive"}}}})
	require.Equal(t, Accepted, got.Outcome)
	tid := got.Result.ThreadIDs[0]
	assert.Equal(t, ArchiveQueued, queued)
	assert.Equal(t, []string{ArchiveRejected}, x.o.ArchiveResults)
	n := 0
	for _, m := range x.st.Messages {
		if m.ThreadID == tid {
			n++
		}
	}
	assert.Equal(t, 1, n)
	assert.False(t, x.st.Thread(tid).Archived)
}

// TestOMN02_HeldTaskKeepsDelivery is OM-N02, upstream "does not dispose
// delivery when a nonterminal task has no active child run"
// (OrchestratorMcpService.test.ts @ c92c4680): task_cancel answers
// task_not_cancellable and dispatches nothing, the delivery kept.
func TestOMN02_HeldTaskKeepsDelivery(t *testing.T) {
	x := newOrch()
	task := x.delegate("child")
	task.Held = true
	var dispatched []string
	x.o.FailCommand = func(id string) bool {
		dispatched = append(dispatched, id)
		return false
	}
	got := x.cancel(task, "cancel-held-task")
	assert.Equal(t, ErrTaskNotCancellable, got.Outcome)
	assert.Empty(t, dispatched, "no stop, no disposal")
	assert.Equal(t, DeliveryPending, task.Delivery)
	assert.Equal(t, store.TaskRunning, task.Status)
}

// rollbackWorld is the [variant] harness: a caller with a live run and a
// target with one completed run and its ready checkpoint.
func rollbackWorld() *orch {
	x := newOrch()
	x.liveRun("parent", "run:parent")
	x.st.Threads = append(x.st.Threads, &store.Thread{ID: "target", ProjectID: "project-1", Instance: "codex"})
	x.st.Runs = append(x.st.Runs, &store.Run{ID: "run:target-1", ThreadID: "target", Instance: "codex", Status: store.RunCompleted})
	x.st.Checkpoints = append(x.st.Checkpoints, &store.Checkpoint{ThreadID: "target", RunID: "run:target-1"})
	return x
}

func (x *orch) rollback(s mcp.Scope, target, key string, ordinal int, keep bool) Answer {
	var got Answer
	x.o.Dispatch(Call{Scope: s, ToolCall: model.ToolCall{Tool: ToolThreadRollback, Target: target, ClientRequestID: key},
		Extra: Extra{RunOrdinal: ordinal, KeepFiles: keep}}, func(Answer) {}, func(a Answer, _ model.ToolResult) { got = a })
	return got
}

// TestOMN41_RollbackToRunCheckpoint is OM-N41, [variant] "dispatches the
// app's rollback for the checkpoint after the chosen run": rollback
// requested for run 1's checkpoint, restoring files, and the thread
// records the request.
func TestOMN41_RollbackToRunCheckpoint(t *testing.T) {
	x := rollbackWorld()
	got := x.rollback(x.s, "target", "", 1, false)
	require.Equal(t, Accepted, got.Outcome)
	assert.Equal(t, store.Result{Status: "rollback_requested", CheckpointID: "checkpoint:run:target-1", RunOrdinal: 1, RestoreFiles: true}, got.Result)
	assert.Equal(t, got.CommandID, x.st.Thread("target").RollbackRequestID)
}

// TestOMN42_RollbackToBaseKeepingFiles is OM-N42, [variant] "rolls back
// past every run to the base checkpoint, keeping files when asked".
func TestOMN42_RollbackToBaseKeepingFiles(t *testing.T) {
	x := rollbackWorld()
	got := x.rollback(x.s, "target", "", 0, true)
	require.Equal(t, Accepted, got.Outcome)
	assert.Equal(t, "checkpoint:target:base", got.Result.CheckpointID)
	assert.False(t, got.Result.RestoreFiles)
}

// TestOM20_RollbackRetriesAndRefusals is OM-20, the [variant]
// rollbackThread cases "uses the same command identity for retries and
// accepts an operate token" (an OAuth client with full access: the retry
// answers the same result under the same command id, one rollback), and
// the refusals: "refuses the caller's own thread" (invalid_request),
// "refuses a thread with a turn running" (invalid_request, "turn
// running"), "refuses a thread running above the caller's modes"
// (runtime_mode_escalation_denied), "refuses a caller whose own turn has
// ended" (parent_not_active) and "refuses a run whose checkpoint cannot be
// restored" (a missing checkpoint, a run that does not exist:
// invalid_request); no refusal dispatches anything.
func TestOM20_RollbackRetriesAndRefusals(t *testing.T) {
	x := rollbackWorld()
	client := mcp.Scope{EnvironmentID: "env-1", RequestNamespace: "client:rollback-token", Capabilities: mcp.CapOrchestration,
		Client: &mcp.ClientScope{SessionID: "rollback-token", Access: "full-access"}}
	first := x.rollback(client, "target", "rollback-retry", 1, false)
	retry := x.rollback(client, "target", "rollback-retry", 1, false)
	require.Equal(t, Accepted, first.Outcome)
	assert.Equal(t, Replayed, retry.Outcome)
	assert.Equal(t, first.CommandID, retry.CommandID)
	assert.Equal(t, first.Result, retry.Result)
	assert.Len(t, x.st.Receipts, 1, "one rollback")

	refused := func(x *orch, want string, s mcp.Scope, target string, ordinal int) Answer {
		t.Helper()
		before := len(x.st.Receipts)
		got := x.rollback(s, target, "", ordinal, false)
		assert.Equal(t, want, got.Outcome)
		assert.Len(t, x.st.Receipts, before, "nothing dispatched")
		return got
	}
	refused(rollbackWorld(), ErrInvalidRequest, x.s, "parent", 0)
	running := rollbackWorld()
	running.liveRun("target", "run:target-2")
	assert.Contains(t, refused(running, ErrInvalidRequest, running.s, "target", 1).Message, "turn running")
	above := rollbackWorld()
	above.st.Thread("parent").RuntimeMode = "approval-required"
	refused(above, ErrRuntimeModeEscalated, above.s, "target", 1)
	ended := rollbackWorld()
	ended.st.EndRun("run:parent", store.RunCompleted)
	refused(ended, ErrParentNotActive, ended.s, "target", 1)
	missing := rollbackWorld()
	missing.st.Checkpoints[0].Status = "missing"
	refused(missing, ErrInvalidRequest, missing.s, "target", 1)
	refused(missing, ErrInvalidRequest, missing.s, "target", 7)
}

// TestOMN43_ReadExposesRollback is OM-N43, [variant] "exposes the
// accepted rollback and terminal failure through thread read".
func TestOMN43_ReadExposesRollback(t *testing.T) {
	x := rollbackWorld()
	th := x.st.Thread("target")
	th.RollbackRequestID, th.RollbackFailureRequest, th.RollbackFailure = "rollback-failed", "rollback-failed", "Provider restoration failed."
	read := x.read("target", ReadArgs{})
	assert.Equal(t, "rollback-failed", read.RollbackRequestID)
	assert.Equal(t, []string{"rollback-failed", "Provider restoration failed."}, []string{read.RollbackFailureRequest, read.RollbackFailure})
}

// forkSource is a thread with a completed run that has its checkpoint and
// a later run still running.
func forkSource(x *orch) {
	x.st.Threads = append(x.st.Threads, &store.Thread{ID: "source", ProjectID: "project-1", Instance: "codex"})
	x.st.Runs = append(x.st.Runs, &store.Run{ID: "run:source-1", ThreadID: "source", Instance: "codex", Status: store.RunCompleted})
	x.st.Checkpoints = append(x.st.Checkpoints, &store.Checkpoint{ThreadID: "source", RunID: "run:source-1"})
	x.liveRun("source", "run:source-2")
}

func (x *orch) fork(key, source, point string) Answer {
	return x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: ToolThreadFork, ClientRequestID: key, Target: source},
		Extra: Extra{SourcePoint: point}})
}

// TestOMN25_ForkResultAndCheckpointFork is OM-N25, upstream scenario
// "t3_thread_fork result shape and a checkpoint fork of the same source
// run": a latest_stable fork answers its target, its fork transfer and the
// canonical source run (the newest completed run with a checkpoint, not
// the running one); a fork from that run's checkpoint resolves to the same
// run; a running run is no stable source and an unknown point no run.
func TestOMN25_ForkResultAndCheckpointFork(t *testing.T) {
	x := toolkitWorld()
	forkSource(x)
	latest := x.fork("fork-latest", "source", "latest_stable")
	require.Equal(t, Accepted, latest.Outcome)
	require.Len(t, latest.Result.ThreadIDs, 1)
	assert.Equal(t, "run:source-1", latest.Result.SourceRunID)
	require.Len(t, x.st.Transfers, 1)
	tr := x.st.Transfers[0]
	assert.Equal(t, store.Transfer{ID: latest.Result.TransferID, Kind: "fork", SourceThreadID: "source",
		TargetThreadID: latest.Result.ThreadIDs[0], SourceRunID: "run:source-1", Status: "pending"}, *tr)
	byCheckpoint := x.fork("fork-checkpoint", "source", "checkpoint:run:source-1")
	require.Equal(t, Accepted, byCheckpoint.Outcome)
	assert.Equal(t, latest.Result.SourceRunID, byCheckpoint.Result.SourceRunID, "the same source run")
	assert.NotEqual(t, latest.Result.ThreadIDs, byCheckpoint.Result.ThreadIDs)
	replay := x.fork("fork-checkpoint", "source", "checkpoint:run:source-1")
	assert.Equal(t, Replayed, replay.Outcome)
	assert.Equal(t, byCheckpoint.Result, replay.Result)
	assert.Equal(t, ErrInvalidRequest, x.fork("fork-running", "source", "run:source-2").Outcome)
	assert.Equal(t, ErrRunNotFound, x.fork("fork-none", "source", "checkpoint:nope").Outcome)
	assert.Len(t, x.st.Transfers, 2, "refusals record no transfer")
}

// TestOMN27_TransfersListPendingFork is OM-N27, upstream scenario
// "t3_thread_transfers lists the pending fork transfer": the fork's
// transfer, pending, is listed for its target and for its source.
func TestOMN27_TransfersListPendingFork(t *testing.T) {
	x := toolkitWorld()
	forkSource(x)
	f := x.fork("fork-latest", "source", "latest_stable")
	require.Equal(t, Accepted, f.Outcome)
	for _, thread := range []string{f.Result.ThreadIDs[0], "source"} {
		got := x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: ToolThreadTransfers, Target: thread}})
		require.Len(t, got.Transfers, 1, thread)
		assert.Equal(t, store.Transfer{ID: f.Result.TransferID, Kind: "fork", SourceThreadID: "source",
			TargetThreadID: f.Result.ThreadIDs[0], SourceRunID: "run:source-1", Status: "pending"}, got.Transfers[0])
	}
	assert.Empty(t, x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: ToolThreadTransfers}}).Transfers, "the caller's own: none")
}
