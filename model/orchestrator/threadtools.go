package orchestrator

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/store"
)

// Thread locks, archive, t3_thread_wait, the scheduled-task tools and
// rollbackThread (see toolkit.go for the sources).

func (o *Orchestrator) lock(thread string) {
	if o.locks == nil {
		o.locks = map[string]bool{}
	}
	o.locks[thread] = true
}

// unlock releases a thread's lock and runs the archives queued on it.
func (o *Orchestrator) unlock(thread string) {
	delete(o.locks, thread)
	queued := o.archives
	o.archives = nil
	for _, id := range queued {
		if id == thread {
			o.archive(id)
		} else {
			o.archives = append(o.archives, id)
		}
	}
}

// Outcomes of Archive.
const (
	ArchiveQueued   = "queued"
	Archived        = "archived"
	ArchiveRejected = ErrCommandRejected
)

// Archive is the app's thread.archive: queued behind a create that holds
// the thread's lock (createThreads' create and prompt, OM-02), refused for
// a thread with an active run (our reading of the test's flipped archive:
// the thread it queued on has taken its prompt), else archived.
func (o *Orchestrator) Archive(thread string) string {
	if o.locks[thread] {
		o.archives = append(o.archives, thread)
		return ArchiveQueued
	}
	return o.archive(thread)
}

func (o *Orchestrator) archive(thread string) string {
	t := o.st.Thread(thread)
	if t == nil || o.st.ActiveRun(thread) != nil {
		o.ArchiveResults = append(o.ArchiveResults, ArchiveRejected)
		return ArchiveRejected
	}
	t.Archived = true
	o.ArchiveResults = append(o.ArchiveResults, Archived)
	return Archived
}

func (o *Orchestrator) schedule(id string) *store.Schedule { return o.st.Schedule(id) }

// scheduledTool serves list_scheduled_tasks (the caller's project),
// update_scheduled_task (enabled, title, prompt) and delete_scheduled_task
// (the row removed) @ 04058804.
func (o *Orchestrator) scheduledTool(c Call, caller string) Answer {
	project := o.projectOf(caller)
	if c.Tool == ToolListScheduled {
		var out []ScheduledTask
		for _, s := range o.st.Schedules {
			if s.ProjectID == project || s.ProjectID == "" && o.projectOf(s.ThreadID) == project {
				out = append(out, scheduleView(s))
			}
		}
		return Answer{Outcome: "ok", Schedules: out}
	}
	s := o.schedule(c.Extra.ScheduleID)
	if s == nil {
		return Answer{Outcome: ErrTaskNotFound, Message: fmt.Sprintf("Scheduled task %s was not found.", c.Extra.ScheduleID)}
	}
	if c.Tool == ToolDeleteScheduled {
		i := slices.Index(o.st.Schedules, s)
		o.st.Schedules = slices.Delete(o.st.Schedules, i, i+1)
		return Answer{Outcome: "ok", Result: store.Result{ScheduleID: s.ID, Status: "deleted"}}
	}
	if c.Extra.Enabled != nil {
		s.Enabled = *c.Extra.Enabled
	}
	if c.Extra.Title != "" {
		s.Title = c.Extra.Title
	}
	if c.Extra.Prompt != "" {
		s.Prompt = c.Extra.Prompt
	}
	return Answer{Outcome: "ok", Result: store.Result{ScheduleID: s.ID}, Schedules: []ScheduledTask{scheduleView(s)}}
}

// waitThread is waitForThread @ 04058804: the named run (else the
// thread's latest) is watched until it is terminal or the budget
// (min(60 min, max(1 ms, timeoutMs or 10 min))) runs out; it only
// observes, acknowledging nothing. The model polls every TaskPollInterval.
func (o *Orchestrator) waitThread(c Call, r DispatchReplier) {
	thread := c.Target
	if o.st.Thread(thread) == nil {
		a := Answer{Outcome: ErrThreadNotFound}
		r.Dispatched(a)
		r.Done(a, model.ToolResult{Outcome: a.Outcome})
		return
	}
	runID := c.Extra.RunID
	if runID == "" {
		runID = o.latestRun(thread)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultWaitTimeout
	}
	deadline := o.env.Now() + min(MaxWaitTimeout, max(time.Millisecond, timeout))
	answer := func(timedOut bool) {
		status, ok := o.runStatus(thread, runID)
		if !ok {
			status = "idle"
		}
		w := &WaitResult{ThreadID: thread, RunID: runID, Status: status, TimedOut: timedOut}
		a := Answer{Outcome: "ok", Result: store.Result{RunID: runID, Status: status}, Wait: w}
		r.Dispatched(a)
		r.Done(a, model.ToolResult{Outcome: a.Outcome, Result: a.Result})
	}
	var poll func()
	poll = func() {
		if o.dead {
			return
		}
		if s, ok := o.runStatus(thread, runID); !ok || terminalRun(s) {
			answer(false)
			return
		}
		if o.env.Now() >= deadline {
			answer(true)
			return
		}
		o.env.After(min(TaskPollInterval, deadline-o.env.Now()), poll)
	}
	poll()
}

// rollback is rollbackThread ([variant] OrchestratorMcpService.test.ts,
// index:71639911882): the checkpoint after the chosen run (runOrdinal 0:
// the base checkpoint) of another thread is restored by dispatching the
// app's checkpoint.rollback under a stable command id, so a retry replays
// it. Refused: the caller's own thread (invalid_request), a thread caller
// without a live run on its provider (parent_not_active), a target above
// the caller's runtime mode (runtime_mode_escalation_denied), a target
// with a turn running and a checkpoint that is missing or not ready
// (invalid_request). OAuth clients (scope.Thread nil) have no live-run
// check and their approved ceiling as the limit.
func (o *Orchestrator) rollback(c Call) Answer {
	refuse := func(code, msg string) Answer { return Answer{Outcome: code, Message: msg} }
	target := o.st.Thread(c.Target)
	if target == nil {
		return refuse(ErrThreadNotFound, fmt.Sprintf("Thread %s was not found.", c.Target))
	}
	caller, limit := "", "full-access"
	if c.Scope.Thread != nil {
		caller = c.Scope.Thread.ThreadID
		if caller == c.Target {
			return refuse(ErrInvalidRequest, "A thread cannot roll itself back.")
		}
		run := o.st.ActiveRun(caller)
		if run == nil || run.Instance != c.Scope.Thread.ProviderInstanceID {
			return refuse(ErrParentNotActive, "The calling provider no longer owns an active thread run.")
		}
		if p := o.st.Thread(caller); p != nil {
			limit = p.RuntimeMode
		}
	} else if c.Scope.Client != nil {
		caller = "client:" + c.Scope.Client.SessionID
		if c.Scope.Client.Access == "read-only" {
			return refuse(ErrCapabilityDenied, "This client was approved for read-only access.")
		}
		limit = c.Scope.Client.Access
	}
	if runtimeModeRank(target.RuntimeMode) > runtimeModeRank(limit) {
		return refuse(ErrRuntimeModeEscalated, fmt.Sprintf("Thread %s runs above this caller's runtime mode.", target.ID))
	}
	if o.st.ActiveRun(target.ID) != nil {
		return refuse(ErrInvalidRequest, fmt.Sprintf("Thread %s has a turn running.", target.ID))
	}
	checkpoint := ""
	if c.Extra.RunOrdinal == 0 {
		checkpoint = "checkpoint:" + target.ID + ":base"
	} else {
		n := 0
		for _, r := range o.st.Runs {
			if r.ThreadID != target.ID {
				continue
			}
			if n++; n != c.Extra.RunOrdinal {
				continue
			}
			for _, cp := range o.st.Checkpoints {
				if cp.RunID == r.ID && cp.Status == "" {
					checkpoint = "checkpoint:" + r.ID
				}
			}
		}
	}
	if checkpoint == "" {
		return refuse(ErrInvalidRequest, fmt.Sprintf("Run %d of thread %s has no restorable checkpoint.", c.Extra.RunOrdinal, target.ID))
	}
	key := c.ClientRequestID
	if key == "" {
		key = o.fresh()
	}
	ns := Enc(RequestNamespace(o.env.Profile, c.Scope))
	id := strings.Join([]string{"command:mcp", ns, "rollback-thread", Enc(key)}, ":")
	return o.dispatch(id, caller, EffectUpdate, c, func() (store.Result, bool) {
		target.RollbackRequestID = id
		return store.Result{Status: "rollback_requested", CheckpointID: checkpoint, RunOrdinal: c.Extra.RunOrdinal,
			RestoreFiles: !c.Extra.KeepFiles}, true
	})
}

// forkSourceRun is ConversationTransferMcpService's sourceRun @ 3877d50d:
// latest_stable is the newest completed run with a checkpoint, run:<id>
// that run, checkpoint:<id> the run the checkpoint was taken after. No
// such run is run_not_found; a run not completed is not a stable source
// (invalid_request).
func (o *Orchestrator) forkSourceRun(thread, point string) (string, string, string) {
	var run *store.Run
	checkpointed := func(r *store.Run) bool {
		return slices.ContainsFunc(o.st.Checkpoints, func(c *store.Checkpoint) bool { return c.RunID == r.ID })
	}
	switch {
	case point == "latest_stable":
		for _, r := range o.st.RunsOf(thread) {
			if r.Status == store.RunCompleted && checkpointed(r) {
				run = r
			}
		}
	case strings.HasPrefix(point, "run:"):
		if r := o.st.Run(point); r != nil && r.ThreadID == thread {
			run = r
		}
	case strings.HasPrefix(point, "checkpoint:"):
		if r := o.st.Run(strings.TrimPrefix(point, "checkpoint:")); r != nil && r.ThreadID == thread && checkpointed(r) {
			run = r
		}
	}
	if run == nil {
		return "", ErrRunNotFound, fmt.Sprintf("No run in thread %s matches source point %s.", thread, point)
	}
	if run.Status != store.RunCompleted {
		return "", ErrInvalidRequest, fmt.Sprintf("Fork source run %s is %s; only completed runs are stable fork sources.", run.ID, run.Status)
	}
	return run.ID, "", ""
}
