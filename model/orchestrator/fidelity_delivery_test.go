package orchestrator

// Fidelity cases of OrchestratorMcpToolkit.integration.test.ts's bundled
// delivery scenarios (inventory at 006bb815; the assertions read in the
// stored index:70188769112, which keeps every one of them), run against
// the orchestrator over a hand-built store. Each test is named after its
// case id; the registry is scenarios/fidelity_upstream_test.go.

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// deliveryWorld is newOrch with delegated completion delivery on and a
// live parent run (run:parent) on the caller's codex.
func deliveryWorld() *orch {
	x := newOrch()
	x.o.Deliveries = true
	x.o.ChildFails = func() bool { return false }
	x.liveRun("parent", "run:parent")
	return x
}

func (x *orch) liveRun(thread, id string) *store.Run {
	r := &store.Run{ID: id, ThreadID: thread, Instance: "codex", Status: store.RunRunning}
	x.st.Runs = append(x.st.Runs, r)
	x.st.Thread(thread).ActiveRunID = id
	return r
}

func (x *orch) kernel() *sim.Kernel { return x.o.env.Clock.(*sim.Kernel) }

// advance runs the clock d on.
func (x *orch) advance(d time.Duration) { x.kernel().RunUntil(x.o.env.Now() + d) }

// delegateFor starts a delegated task (async unless mode says wait) whose
// child works for d.
func (x *orch) delegateFor(key string, d time.Duration, mode string) (*store.Task, Answer) {
	x.o.ChildDuration = func() time.Duration { return d }
	var a Answer
	x.o.Dispatch(Call{Scope: x.s, ToolCall: model.ToolCall{Tool: model.ToolDelegateTask, ClientRequestID: key, Mode: mode,
		Timeout: time.Millisecond}, Extra: Extra{Task: "task " + key}},
		func(Answer) {}, func(got Answer, _ model.ToolResult) { a = got })
	return x.st.Task(a.Result.TaskID), a
}

func (x *orch) dispatchCall(c Call) Answer {
	var got Answer
	c.Scope = x.s
	x.o.Dispatch(c, func(Answer) {}, func(a Answer, _ model.ToolResult) { got = a })
	return got
}

func (x *orch) taskStatus(t *store.Task) Answer {
	return x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: ToolTaskStatus, TaskID: t.ID}})
}

func states(ts ...*store.Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Delivery)
	}
	return out
}

// coalesced makes two async tasks of run:parent complete: one reservation.
func coalesced(t *testing.T) (*orch, []*store.Task) {
	x := deliveryWorld()
	one, _ := x.delegateFor("coalesced-one", time.Minute, "")
	two, _ := x.delegateFor("coalesced-two", time.Minute, "")
	x.advance(2 * time.Minute)
	require.Equal(t, store.TaskCompleted, one.Status)
	require.Equal(t, store.TaskCompleted, two.Status)
	return x, []*store.Task{one, two}
}

// TestOMN05_CoalescedTerminalsReserveOneDelivery is OM-N05, upstream
// scenario "several async terminals of one parent run reserve one
// coalesced delivery and one wake offer": both tasks are in the one
// reservation, claimed, with one offer naming its message.
func TestOMN05_CoalescedTerminalsReserveOneDelivery(t *testing.T) {
	x, tasks := coalesced(t)
	c := x.o.Cohort("run:parent")
	require.NotNil(t, c)
	require.NotNil(t, c.Reservation)
	assert.ElementsMatch(t, []string{tasks[0].ID, tasks[1].ID}, c.Reservation.TaskIDs)
	assert.Len(t, c.Reservation.TaskIDs, 2)
	assert.Equal(t, 1, c.Offers, "one wake offer")
	assert.Equal(t, "message:delegated-completion:run:parent:1", c.Reservation.MessageID)
	assert.Equal(t, []string{DeliveryClaimed, DeliveryClaimed}, states(tasks...))
}

// TestOMN06_ServerOwnedDeliveryRefusesQueueEdits is OM-N06, upstream
// scenario "a server-owned queued delivery refuses queued-run edit,
// reorder and promote-to-steer": the dispatched delivery queues behind the
// live parent run; an edit is rejected, reorder and steer fail to
// dispatch, and it stays queued.
func TestOMN06_ServerOwnedDeliveryRefusesQueueEdits(t *testing.T) {
	x, _ := coalesced(t)
	d := x.o.DispatchDelivery("run:parent", 1)
	require.NotNil(t, d)
	assert.Equal(t, DeliveryQueued, d.Status, "queued after the active parent run")
	assert.Nil(t, x.o.DispatchDelivery("run:parent", 1), "a reservation is dispatched once")
	assert.Equal(t, ErrCommandRejected, x.o.QueueCommand(QueueEdit, d.ID))
	assert.Equal(t, ErrDispatchFailed, x.o.QueueCommand(QueueReorder, d.ID))
	assert.Equal(t, ErrDispatchFailed, x.o.QueueCommand(QueueSteer, d.ID))
	assert.Equal(t, DeliveryQueued, d.Status)
}

// TestOMN07_TaskStatusAcknowledgesAndCancelsQueuedDelivery is OM-N07,
// upstream scenario "task_status acknowledges each coalesced task and
// cancels the queued delivery": once both are observed the queued
// delivery is cancelled and the reservation is gone (delivery null).
func TestOMN07_TaskStatusAcknowledgesAndCancelsQueuedDelivery(t *testing.T) {
	x, tasks := coalesced(t)
	d := x.o.DispatchDelivery("run:parent", 1)
	require.NotNil(t, d)
	require.Equal(t, "ok", x.taskStatus(tasks[0]).Outcome)
	assert.Equal(t, DeliveryQueued, d.Status, "one task still unobserved")
	require.Equal(t, "ok", x.taskStatus(tasks[1]).Outcome)
	assert.Equal(t, []string{DeliveryAcknowledged, DeliveryAcknowledged}, states(tasks...))
	assert.Equal(t, DeliveryCancelled, d.Status)
	assert.Nil(t, x.o.Cohort("run:parent").Reservation)
	assert.Equal(t, "run:parent", tasks[0].ObservedByRunID)
}

// queuedDelivery is queueAutomaticCompletion: one completed task of
// run:parent whose delivery is reserved and queued.
func queuedDelivery(t *testing.T, x *orch, key string) (*store.Task, *store.DeliveryRun) {
	task, _ := x.delegateFor(key, time.Minute, "")
	x.advance(2 * time.Minute)
	c := x.o.Cohort("run:parent")
	require.NotNil(t, c.Reservation)
	d := x.o.DispatchDelivery("run:parent", c.Reservation.Generation)
	require.NotNil(t, d)
	require.Equal(t, DeliveryQueued, d.Status)
	return task, d
}

// TestOMN08_ThreadWaitObservesWithoutAcknowledging is OM-N08, upstream
// scenario "t3_thread_wait on a child observes its status without
// acknowledging delivery": the wait answers the child completed, not timed
// out; the task stays claimed and its delivery queued.
func TestOMN08_ThreadWaitObservesWithoutAcknowledging(t *testing.T) {
	x := deliveryWorld()
	task, d := queuedDelivery(t, x, "direct-child-read")
	w := x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: ToolThreadWait, Target: task.ChildThreadID, Timeout: 10 * time.Second}})
	require.NotNil(t, w.Wait)
	assert.Equal(t, WaitResult{ThreadID: task.ChildThreadID, RunID: "run:" + task.ID, Status: store.TaskCompleted}, *w.Wait)
	assert.Equal(t, DeliveryClaimed, task.Delivery)
	assert.Equal(t, DeliveryQueued, d.Status)
}

func (x *orch) read(thread string, a ReadArgs) ThreadRead {
	got := x.dispatchCall(Call{ToolCall: model.ToolCall{Tool: ToolThreadRead, Target: thread}, Extra: Extra{Read: a}})
	if got.Read == nil {
		panic("t3_thread_read: " + got.Outcome)
	}
	return *got.Read
}

// TestOMN09_DirectReadAcknowledgesOnlyTheWholeResult is OM-N09, upstream
// scenario "a direct t3_thread_read acknowledges delivery only once the
// untruncated terminal result is returned": the prompt page, a one-char
// page of the result and the remainder read by item id leave it claimed;
// a whole oversized item pages back intact; the untruncated result
// acknowledges it (observed by the parent run) and cancels the delivery.
func TestOMN09_DirectReadAcknowledgesOnlyTheWholeResult(t *testing.T) {
	x := deliveryWorld()
	task, d := queuedDelivery(t, x, "direct-child-read")
	child := task.ChildThreadID
	prompt := x.read(child, ReadArgs{Limit: 1})
	require.Len(t, prompt.Items, 1)
	assert.Equal(t, "user_message", prompt.Items[0].Type)
	assert.Equal(t, DeliveryClaimed, task.Delivery)

	first := x.read(child, ReadArgs{HasAfter: true, AfterPosition: prompt.NextPosition, Limit: 1, MaxChars: 1})
	require.Len(t, first.Items, 1)
	assert.Equal(t, "assistant_message", first.Items[0].Type)
	assert.True(t, first.Items[0].TextTruncated)
	assert.Equal(t, 1, first.Items[0].NextTextOffset)
	assert.Equal(t, DeliveryClaimed, task.Delivery)

	rest := x.read(child, ReadArgs{ItemID: first.Items[0].ItemID, TextOffset: 1, MaxChars: 50_000})
	require.Len(t, rest.Items, 1)
	assert.Equal(t, -1, rest.Items[0].NextTextOffset)
	assert.Equal(t, "answer to: task direct-child-read", first.Items[0].Text+rest.Items[0].Text)
	assert.Equal(t, DeliveryClaimed, task.Delivery, "a suffix alone acknowledges nothing")

	long := strings.Repeat("界🧪\n", 20_000) + "FINAL_CONSTRAINT"
	x.st.Messages = append(x.st.Messages, &store.Message{ID: "oversized-retrieval", ThreadID: child, Text: long, Role: "assistant"})
	recovered, offset := "", 0
	for offset != -1 {
		page := x.read(child, ReadArgs{ItemID: "item:oversized-retrieval", TextOffset: offset, MaxChars: 50_000})
		require.Len(t, page.Items, 1)
		recovered += page.Items[0].Text
		offset = page.Items[0].NextTextOffset
	}
	assert.Equal(t, long, recovered)
	assert.Equal(t, DeliveryClaimed, task.Delivery)

	whole := x.read(child, ReadArgs{HasAfter: true, AfterPosition: prompt.NextPosition, Limit: 1})
	require.Len(t, whole.Items, 1)
	assert.False(t, whole.Items[0].TextTruncated)
	assert.Equal(t, "answer to: task direct-child-read", whole.Items[0].Text)
	assert.Equal(t, DeliveryAcknowledged, task.Delivery)
	assert.Equal(t, "run:parent", task.ObservedByRunID)
	assert.Equal(t, DeliveryCancelled, d.Status)
}

// TestOMN10_QueueRaceKeepsUserWork is OM-N10, upstream scenario "queue
// race: new user work keeps its queue entry while observation disposes the
// stale automatic delivery": the user's queued message stays queued (no
// run, still there) while task_status acknowledges the task and cancels
// the stale delivery.
func TestOMN10_QueueRaceKeepsUserWork(t *testing.T) {
	x := deliveryWorld()
	task, d := queuedDelivery(t, x, "queue-race")
	user := &store.Message{ID: "message:mcp-parent:queue-race:user", ThreadID: "parent", Text: strings.Repeat("🙂", 16001)}
	x.st.Messages = append(x.st.Messages, user)
	require.Equal(t, "ok", x.taskStatus(task).Outcome)
	assert.Equal(t, DeliveryCancelled, d.Status)
	assert.Equal(t, DeliveryAcknowledged, task.Delivery)
	assert.Same(t, user, x.st.Message(user.ID), "the user's queued work keeps its entry")
	assert.Empty(t, user.RunID, "still queued")
}

// TestOMN11_SteerRaceCancelsStaleDelivery is OM-N11, upstream scenario
// "steer race: a native in-place steer keeps the parent running and the
// stale delivery is cancelled": a steer joins the parent's run, which keeps
// running; the observed result cancels the delivery (delivery null).
func TestOMN11_SteerRaceCancelsStaleDelivery(t *testing.T) {
	x := deliveryWorld()
	task, d := queuedDelivery(t, x, "steer-race")
	x.st.Messages = append(x.st.Messages, &store.Message{ID: "message:mcp-parent:steer-race:user", ThreadID: "parent",
		Text: "Steer the active parent after receiving the result.", RunID: "run:parent"})
	require.Equal(t, "ok", x.taskStatus(task).Outcome)
	assert.Equal(t, store.RunRunning, x.st.Run("run:parent").Status)
	assert.Equal(t, DeliveryCancelled, d.Status)
	assert.Equal(t, DeliveryAcknowledged, task.Delivery)
	assert.Nil(t, x.o.Cohort("run:parent").Reservation)
}

// TestOMN12_RestartKeepsCohortOpen is OM-N12, upstream scenario "restart
// race: a restarted parent keeps its cohort open and the acknowledged
// result cancels the stale delivery", with the restart a server process
// restart (the cohort and its reservation are durable): after it the
// cohort is still open, and task_status on the new process acknowledges
// the task and cancels the stale delivery.
func TestOMN12_RestartKeepsCohortOpen(t *testing.T) {
	x := deliveryWorld()
	task, d := queuedDelivery(t, x, "restart-race")
	x.o.Kill()
	x.o = New(x.o.env, x.st)
	x.o.Deliveries = true
	x.o.Recover()
	c := x.o.Cohort("run:parent")
	require.NotNil(t, c)
	assert.Equal(t, CohortOpen, c.Disposition)
	require.Equal(t, "ok", x.taskStatus(task).Outcome)
	assert.Equal(t, DeliveryCancelled, d.Status)
	assert.Equal(t, DeliveryAcknowledged, task.Delivery)
	assert.Equal(t, CohortOpen, c.Disposition)
}

// TestOMN32_WaitTimeoutUpgradesWakeAndCancelIsDisposed is OM-N32, upstream
// scenario "a wait-mode delegation whose wait times out upgrades
// completionWake to always; its cancel is disposed": the 1 ms wait times
// out with the child running, the policy is always, and task_cancel
// leaves the interrupted task disposed with no wake offer.
func TestOMN32_WaitTimeoutUpgradesWakeAndCancelIsDisposed(t *testing.T) {
	x := deliveryWorld()
	x.o.ChildDuration = func() time.Duration { return time.Hour }
	var res model.ToolResult
	x.o.Dispatch(Call{Scope: x.s, ToolCall: model.ToolCall{Tool: model.ToolDelegateTask, ClientRequestID: "delegate-wait-upgrade-1",
		Mode: "wait", Timeout: time.Millisecond}}, func(Answer) {}, func(_ Answer, r model.ToolResult) { res = r })
	x.advance(time.Second)
	require.True(t, res.WaitTimedOut)
	assert.Equal(t, store.TaskRunning, res.Status)
	task := x.st.Tasks[0]
	assert.Equal(t, WakeAlways, task.CompletionWake)
	require.Equal(t, Accepted, x.cancel(task, "cancel-wait-upgrade-1").Outcome)
	x.advance(time.Second)
	assert.Equal(t, store.TaskCancelled, task.Status)
	assert.Equal(t, DeliveryDisposed, task.Delivery)
	if c := x.o.Cohort("run:parent"); c != nil {
		assert.Zero(t, c.Offers, "no wake offer")
	}
}

// TestOMN33_UpgradeOfAcknowledgedTaskMakesNoOffer is OM-N33, upstream
// scenario "a wake-policy upgrade of an acknowledged terminal task
// persists without a wake offer": a wait-mode task that completed while
// the parent was live (settled_only: no offer) and was acknowledged by
// task_status takes the policy always and still offers nothing.
func TestOMN33_UpgradeOfAcknowledgedTaskMakesNoOffer(t *testing.T) {
	x := deliveryWorld()
	x.o.ChildDuration = func() time.Duration { return time.Second }
	x.o.Dispatch(Call{Scope: x.s, ToolCall: model.ToolCall{Tool: model.ToolDelegateTask, ClientRequestID: "delegate-claude-1",
		Mode: "wait", Timeout: 10 * time.Second}}, func(Answer) {}, func(Answer, model.ToolResult) {})
	x.advance(5 * time.Second)
	task := x.st.Tasks[0]
	require.Equal(t, store.TaskCompleted, task.Status)
	assert.Equal(t, WakeSettledOnly, task.CompletionWake)
	x.taskStatus(task)
	require.Equal(t, DeliveryAcknowledged, task.Delivery)
	x.o.SetWakePolicy(task, WakeAlways)
	assert.Equal(t, WakeAlways, task.CompletionWake, "the policy persists")
	c := x.o.Cohort("run:parent")
	if c != nil {
		assert.Zero(t, c.Offers)
	}
}

// TestOMN34_LegacyRequestStaysSettledOnly is OM-N34, upstream scenario "a
// legacy delegated_task.request without completionWake stays
// settled_only": the legacy row has no policy, offers nothing while
// running, and its terminal while the parent is live offers nothing either.
func TestOMN34_LegacyRequestStaysSettledOnly(t *testing.T) {
	x := deliveryWorld()
	task, _ := x.delegateFor("delegate-legacy", time.Minute, "")
	task.CompletionWake = "" // the legacy shape: the field is absent
	x.advance(30 * time.Second)
	assert.Nil(t, x.o.Cohort("run:parent"), "nothing terminalized: no offer")
	x.advance(time.Minute)
	require.Equal(t, store.TaskCompleted, task.Status)
	if c := x.o.Cohort("run:parent"); c != nil {
		assert.Zero(t, c.Offers)
		assert.Nil(t, c.Reservation)
	}
	assert.Equal(t, DeliveryPending, task.Delivery)
}

// TestOMN35_ParentStopIsABarrier is OM-N35, upstream scenario "parent Stop
// cancels the queued delivery, records a stopped barrier and disposes the
// running child's delivery": the cohort is stopped with no reservation,
// the queued delivery cancelled, the still-running task disposed, and its
// later terminal offers nothing.
func TestOMN35_ParentStopIsABarrier(t *testing.T) {
	x := deliveryWorld()
	legacy, _ := x.delegateFor("delegate-legacy", time.Hour, "")
	_, d := queuedDelivery(t, x, "stop-queued-delivery")
	c := x.o.Cohort("run:parent")
	offers := c.Offers
	x.o.StopParentRun("run:parent")
	x.st.EndRun("run:parent", store.RunInterrupted)
	assert.Equal(t, CohortStopped, c.Disposition)
	assert.Nil(t, c.Reservation)
	assert.Equal(t, DeliveryCancelled, d.Status)
	assert.Equal(t, DeliveryDisposed, legacy.Delivery)
	x.advance(2 * time.Hour)
	require.NotEqual(t, store.TaskRunning, legacy.Status)
	assert.Equal(t, DeliveryDisposed, legacy.Delivery)
	assert.Equal(t, offers, c.Offers)
}

// TestOMN36_UpgradeOfOfferedTaskMakesNoSecondOffer is OM-N36, upstream
// scenario "a wake-policy upgrade of a settled, already-offered task makes
// no second offer": a settled_only task that finished after its parent
// run ended offered once; making its policy always offers no more.
func TestOMN36_UpgradeOfOfferedTaskMakesNoSecondOffer(t *testing.T) {
	x := deliveryWorld()
	x.o.Dispatch(Call{Scope: x.s, ToolCall: model.ToolCall{Tool: model.ToolDelegateTask, ClientRequestID: "settled",
		Mode: "wait", Timeout: time.Millisecond}}, func(Answer) {}, func(Answer, model.ToolResult) {})
	task := x.st.Tasks[0]
	task.CompletionWake = WakeSettledOnly // the wait's timeout upgrade did not land
	x.st.EndRun("run:parent", store.RunCompleted)
	x.advance(2 * time.Hour)
	require.NotEqual(t, store.TaskRunning, task.Status)
	c := x.o.Cohort("run:parent")
	require.NotNil(t, c)
	require.Equal(t, 1, c.Offers, "finalize offered: the parent was settled")
	x.o.SetWakePolicy(task, WakeAlways)
	assert.Equal(t, WakeAlways, task.CompletionWake)
	assert.Equal(t, 1, c.Offers, "no second offer")
}

// late is the late-completion parent: an early task reserved and its
// delivery dispatched and running, and tasks still running.
func late(t *testing.T) (*orch, *store.Task, []*store.Task, *store.DeliveryRun) {
	x := deliveryWorld()
	early, _ := x.delegateFor("early-task", time.Minute, "")
	var rest []*store.Task
	for _, k := range []string{"late-task", "third-late-task", "fourth-late-task"} {
		task, _ := x.delegateFor(k, 10*time.Hour, "")
		rest = append(rest, task)
	}
	x.advance(2 * time.Minute)
	d := x.o.DispatchDelivery("run:parent", 1)
	require.NotNil(t, d)
	x.st.EndRun("run:parent", store.RunCompleted)
	require.True(t, x.o.StartDelivery(d.ID))
	return x, early, rest, d
}

// TestOMN37_LateTerminalHeldForOneSuccessor is OM-N37, upstream scenario
// "a child terminal after the coalesced delivery started is held for one
// successor delivery": the late terminal is pending while the first
// delivery runs, then reserves generation 2 alone (two offers in all),
// with one delivery outstanding.
func TestOMN37_LateTerminalHeldForOneSuccessor(t *testing.T) {
	x, _, rest, first := late(t)
	lateTask := rest[0]
	x.o.settle(lateTask, store.TaskCancelled)
	x.advance(time.Millisecond)
	assert.Equal(t, DeliveryPending, lateTask.Delivery)
	c := x.o.Cohort("run:parent")
	assert.Equal(t, first.ID, c.Reservation.DeliveryRun, "the running delivery keeps the only reservation")
	require.True(t, x.o.EndDelivery(first.ID))
	require.NotNil(t, c.Reservation)
	assert.Equal(t, 2, c.Reservation.Generation)
	assert.Equal(t, []string{lateTask.ID}, c.Reservation.TaskIDs)
	assert.Equal(t, 2, c.Offers)
	assert.Equal(t, DeliveryClaimed, lateTask.Delivery)
}

// TestOMN38_BoundedSuccessor is OM-N38, upstream scenario "a third
// terminal after the successor started stays pending (bounded
// successor)": terminals during the successor stay pending and leave its
// reservation and the offer count alone; when it completes they go out in
// one more delivery (delivered, claimed, claimed; three offers), and once
// that runs every result is delivered.
func TestOMN38_BoundedSuccessor(t *testing.T) {
	x, early, rest, first := late(t)
	lateTask, third, fourth := rest[0], rest[1], rest[2]
	x.o.settle(lateTask, store.TaskCancelled)
	x.advance(time.Millisecond)
	require.True(t, x.o.EndDelivery(first.ID))
	successor := x.o.DispatchDelivery("run:parent", 2)
	require.NotNil(t, successor)
	assert.Equal(t, DeliveryRunning, successor.Status, "no parent run is active: it runs at once")
	x.o.settle(third, store.TaskCancelled)
	x.o.settle(fourth, store.TaskCancelled)
	x.advance(time.Millisecond)
	c := x.o.Cohort("run:parent")
	assert.Equal(t, []string{DeliveryPending, DeliveryPending}, states(third, fourth))
	assert.Equal(t, 2, c.Reservation.Generation)
	assert.Equal(t, 2, c.Offers)
	require.True(t, x.o.EndDelivery(successor.ID))
	require.NotNil(t, c.Reservation)
	assert.Equal(t, 3, c.Reservation.Generation)
	assert.ElementsMatch(t, []string{third.ID, fourth.ID}, c.Reservation.TaskIDs)
	assert.Equal(t, []string{DeliveryDelivered, DeliveryClaimed, DeliveryClaimed}, states(lateTask, third, fourth))
	assert.Equal(t, 3, c.Offers)
	batch := x.o.DispatchDelivery("run:parent", 3)
	require.NotNil(t, batch)
	require.True(t, x.o.EndDelivery(batch.ID))
	assert.Nil(t, c.Reservation)
	assert.Equal(t, []string{DeliveryDelivered, DeliveryDelivered, DeliveryDelivered, DeliveryDelivered},
		states(early, lateTask, third, fourth))
	assert.Equal(t, 3, c.Offers)
}

// TestOMN39_QueueRemoveDisposesCohort is OM-N39, upstream scenario "Queue
// Remove of an automatic delivery disposes the cohort": the cohort is
// disposed with no reservation, the run cancelled, the task disposed with
// its result kept, and nothing more is offered.
func TestOMN39_QueueRemoveDisposesCohort(t *testing.T) {
	x := deliveryWorld()
	task, d := queuedDelivery(t, x, "remove-delegate")
	c := x.o.Cohort("run:parent")
	offers := c.Offers
	assert.Equal(t, Accepted, x.o.QueueCommand(QueueRemove, d.ID))
	assert.Equal(t, CohortDisposed, c.Disposition)
	assert.Nil(t, c.Reservation)
	assert.Equal(t, DeliveryCancelled, d.Status)
	assert.Equal(t, DeliveryDisposed, task.Delivery)
	assert.Equal(t, store.TaskCompleted, task.Status)
	assert.NotEmpty(t, task.Summary)
	x.advance(time.Hour)
	assert.Equal(t, offers, c.Offers)
}
