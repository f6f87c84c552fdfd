package orchestrator

// Fidelity cases of the upstream inventory (scenarios/testdata/fidelity/
// UPSTREAM.tsv) that need a thread the tools cannot create: run against
// the orchestrator directly. Each test is named after its case id; the
// registry of cases is scenarios/fidelity_upstream_test.go.

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/mcp"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// orch is a parent thread on codex in project-1 calling with the
// credential (and namespace) ns-parent.
type orch struct {
	st *store.Store
	o  *Orchestrator
	s  mcp.Scope
}

func newOrch() *orch {
	k := sim.NewKernel(false)
	env := &model.Env{Clock: k, Trace: k.Trace(), Source: sim.NewTapeSource(nil, false),
		Profile: model.MustProfile(model.PresetReported, nil, nil), EnvironmentID: "env-1"}
	st := &store.Store{}
	st.Projects = append(st.Projects, &store.Project{ID: "project-1"})
	st.Threads = append(st.Threads, &store.Thread{ID: "parent", ProjectID: "project-1", Instance: "codex"})
	s := mcp.Scope{EnvironmentID: "env-1", RequestNamespace: "ns-parent", Capabilities: mcp.CapOrchestration,
		Thread: &mcp.ThreadScope{ThreadID: "parent", ProviderSessionID: "ns-parent", ProviderInstanceID: "codex"}}
	return &orch{st: st, o: New(env, st), s: s}
}

func (x *orch) call(tool, key, target string) Answer {
	var got Answer
	x.o.Dispatch(Call{Scope: x.s, ToolCall: model.ToolCall{Tool: tool, ClientRequestID: key, Target: target}},
		func(Answer) {}, func(a Answer, _ model.ToolResult) { got = a })
	return got
}

func (x *orch) count(id string) int {
	n := 0
	for _, t := range x.st.Threads {
		if t.ID == id {
			n++
		}
	}
	return n
}

// TestOMN23_ForkToOccupiedTargetFails is OM-N23 and OM-N24, upstream
// scenarios "t3_thread_fork to an occupied target id fails and leaves the
// target untouched" and "... to a deleted occupied target fails and leaves
// it deleted" (OrchestratorMcpToolkit.integration.test.ts @ 006bb815).
func TestOMN23_ForkToOccupiedTargetFails(t *testing.T) {
	x := newOrch()
	free := x.call(ToolThreadFork, "free-target", "parent")
	require.Equal(t, Accepted, free.Outcome)
	require.Len(t, free.Result.ThreadIDs, 1)
	target := func(key string) string { return "thread:mcp-fork:ns-parent:" + key }
	assert.Equal(t, target("free-target"), free.Result.ThreadIDs[0], "the derived target id")

	for _, c := range []struct {
		key     string
		deleted bool
	}{{"occupied-target", false}, {"deleted-occupied-target", true}} { // OM-N23, OM-N24
		existing := &store.Thread{ID: target(c.key), ProjectID: "project-1", Instance: "codex", Title: "Existing target must survive",
			Deleted: c.deleted}
		x.st.Threads = append(x.st.Threads, existing)
		got := x.call(ToolThreadFork, c.key, "parent")
		assert.Equal(t, ErrDispatch, got.Outcome, "%s: orchestration_error", c.key)
		assert.Equal(t, 1, x.count(existing.ID), "no second thread with the id")
		assert.Equal(t, "Existing target must survive", existing.Title)
		assert.Equal(t, c.deleted, existing.Deleted, "a deleted target stays deleted")
		assert.Nil(t, x.st.Receipt(got.CommandID), "no receipt for the refused fork")
	}
}

// TestOMN01_IdleCreateReplays is OM-N01, upstream "creates and replays an
// idle MCP thread without a prompt" (OrchestratorMcpService.createThreads
// .test.ts @ 7e1bab52): the replay answers the same threads; the created
// thread has no message and no run.
func TestOMN01_IdleCreateReplays(t *testing.T) {
	x := newOrch()
	var created, replayed Answer
	call := Call{Scope: x.s, ToolCall: model.ToolCall{Tool: model.ToolCreateThreads, ClientRequestID: "idle-create"},
		Extra: Extra{Threads: []ThreadSpec{{Title: "Later"}}}}
	x.o.Dispatch(call, func(Answer) {}, func(a Answer, _ model.ToolResult) { created = a })
	x.o.Dispatch(call, func(Answer) {}, func(a Answer, _ model.ToolResult) { replayed = a })
	require.Equal(t, Accepted, created.Outcome)
	assert.Equal(t, Replayed, replayed.Outcome)
	assert.Equal(t, created.Result, replayed.Result, "the replay answers what the create did")
	require.Len(t, created.Result.ThreadIDs, 1)
	id := created.Result.ThreadIDs[0]
	assert.Equal(t, "Later", x.st.Thread(id).Title)
	assert.Empty(t, x.st.Thread(id).ActiveRunID, "idle: no run")
	for _, m := range x.st.Messages {
		assert.NotEqual(t, id, m.ThreadID, "no message")
	}
	for _, r := range x.st.Runs {
		assert.NotEqual(t, id, r.ThreadID, "no run")
	}
}

// delegate starts an async delegated task that runs for an hour.
func (x *orch) delegate(key string) *store.Task {
	x.o.ChildDuration = func() time.Duration { return time.Hour }
	var a Answer
	x.o.Dispatch(Call{Scope: x.s, ToolCall: model.ToolCall{Tool: model.ToolDelegateTask, ClientRequestID: key}},
		func(Answer) {}, func(got Answer, _ model.ToolResult) { a = got })
	if a.Outcome != Accepted {
		panic("delegate_task: " + a.Outcome)
	}
	return x.st.Task(a.Result.TaskID)
}

func (x *orch) cancel(task *store.Task, key string) Answer {
	var a Answer
	x.o.Dispatch(Call{Scope: x.s, ToolCall: model.ToolCall{Tool: model.ToolTaskCancel, TaskID: task.ID, ClientRequestID: key}},
		func(Answer) {}, func(got Answer, _ model.ToolResult) { a = got })
	return a
}

// TestOMN03_FailedInterruptKeepsDelivery is OM-N03, upstream "does not
// dispose delivery when the child interrupt fails" (OrchestratorMcpService
// .test.ts @ c92c4680): the interrupt command fails, the cancel answers
// task_not_cancellable and no disposal is dispatched.
func TestOMN03_FailedInterruptKeepsDelivery(t *testing.T) {
	x := newOrch()
	task := x.delegate("child")
	var dispatched []string
	x.o.FailCommand = func(id string) bool {
		dispatched = append(dispatched, id)
		return strings.Contains(id, ":cancel-task:")
	}
	got := x.cancel(task, "cancel-failed-task")
	assert.Equal(t, ErrTaskNotCancellable, got.Outcome)
	assert.Equal(t, []string{"command:mcp:ns-parent:cancel-task:cancel-failed-task"}, dispatched, "only the interrupt was dispatched")
	assert.Equal(t, "pending", task.Delivery, "the delivery is not disposed")
	assert.Equal(t, store.TaskRunning, task.Status)
}

// TestOMN04_FailedDisposalStillCancelRequested is OM-N04, upstream "returns
// cancel requested when post-interrupt disposal fails": the interrupt and
// then the disposal are dispatched; the disposal's failure does not change
// the answer.
func TestOMN04_FailedDisposalStillCancelRequested(t *testing.T) {
	x := newOrch()
	task := x.delegate("child")
	var dispatched []string
	x.o.FailCommand = func(id string) bool {
		dispatched = append(dispatched, id)
		return strings.Contains(id, ":cancel-task-completion-delivery:")
	}
	got := x.cancel(task, "cancel-dispose-failed-task")
	assert.Equal(t, Accepted, got.Outcome)
	assert.Equal(t, "cancel_requested", got.Result.Status)
	assert.Equal(t, []string{"command:mcp:ns-parent:cancel-task:cancel-dispose-failed-task",
		"command:mcp:ns-parent:cancel-task-completion-delivery:cancel-dispose-failed-task"}, dispatched)
}

// TestOMN19_InterruptedFollowUpIsTheLatestTerminalRun is OM-N19, upstream
// scenario "t3_thread_interrupt of the child follow-up: task_status reports
// it interrupted" (OrchestratorMcpToolkit.integration.test.ts @ 006bb815):
// the task stays completed with its summary; the interrupted follow-up is
// the latest terminal run, with its status, and nothing is pending.
func TestOMN19_InterruptedFollowUpIsTheLatestTerminalRun(t *testing.T) {
	x := newOrch()
	x.o.ChildFails = func() bool { return false }
	task := x.delegate("child")
	x.o.env.Clock.(*sim.Kernel).RunUntil(2 * time.Hour)
	require.Equal(t, store.TaskCompleted, task.Status)
	followUp := &store.Run{ID: "run:follow-up", ThreadID: task.ChildThreadID, Instance: "codex", Status: store.RunRunning}
	x.st.Runs = append(x.st.Runs, followUp)
	x.st.Thread(task.ChildThreadID).ActiveRunID = followUp.ID
	x.o.Interrupt = func(thread string) bool {
		x.st.EndRun(x.st.Thread(thread).ActiveRunID, store.RunInterrupted)
		return true
	}
	interrupted := x.call(model.ToolThreadInterrupt, "interrupt-delegated-child-followup-1", task.ChildThreadID)
	require.Equal(t, Accepted, interrupted.Outcome)
	assert.Equal(t, followUp.ID, interrupted.Result.InterruptedRunID)
	assert.Equal(t, "interrupt_requested", interrupted.Result.Status)
	var status Answer
	x.o.Dispatch(Call{Scope: x.s, ToolCall: model.ToolCall{Tool: ToolTaskStatus, TaskID: task.ID}},
		func(Answer) {}, func(a Answer, _ model.ToolResult) { status = a })
	assert.Equal(t, store.TaskCompleted, status.Result.Status, "the task's own status")
	assert.Equal(t, "answer to: ", status.Result.Summary)
	assert.False(t, status.Result.HasPendingChildRuns)
	assert.Equal(t, followUp.ID, status.Result.LatestTerminalRunID)
	assert.Equal(t, store.RunInterrupted, status.Result.LatestTerminalStatus)
}
