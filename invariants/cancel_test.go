package invariants

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// anthropics/claude-code#95138's story: thread-a delegates P (task p); P's
// child delegates C (task c) 8 s later; thread-a cancels P at 1 min. The
// history ends with tail.
func cancelTreeHistory(tail ...sim.Event) []sim.Event {
	h := []sim.Event{
		ev(0, "agent/thread-a", "delegate_task", "accepted", "thread=thread-a", "clientRequestId=-", "result=task=p child=thread:p"),
		ev(8.0/60, "orchestrator", "task.delegated", "", "task=c", "parent-task=p", "parent=thread:p", "depth=1"),
		ev(1, "orchestrator", "task.settled", "interrupted", "task=p", "parent=thread-a"),
	}
	return append(h, tail...)
}

func cancelOf(m float64, task, outcome string) sim.Event {
	return ev(m, "agent/thread-a", "task_cancel", outcome, "thread=thread-a", "clientRequestId=cancel-round-1", "task="+task,
		"result=task="+task)
}

func TestCancelReachesDescendants(t *testing.T) {
	// The report: C works on for 30 min and completes.
	v := check(t, CancelReachesDescendants, cancelTreeHistory(cancelOf(1, "p", "accepted"),
		ev(31, "orchestrator", "task.settled", "completed", "task=c", "parent=thread:p")))
	require.NotNil(t, v)
	for _, want := range []string{"task c", "under task p", "completed at T+00:31:00.000", "thread-a", "T+00:01:00.000", "T+00:00:08.000"} {
		assert.Contains(t, v.Message, want)
	}
	// Still running past the grace, seen at the next event.
	v = check(t, CancelReachesDescendants, cancelTreeHistory(cancelOf(1, "p", "accepted"),
		ev(3, "agent/thread-b", "t3_thread_send", "accepted", "thread=thread-b")))
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "still running at T+00:03:00.000, 2m0s after")
	// Or at the end of the run.
	v = checkEnd(t, CancelReachesDescendants, cancelTreeHistory(cancelOf(1, "p", "accepted")), 90*time.Second)
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "task c")
	// A grandchild of the cancelled task, two levels down.
	v = check(t, CancelReachesDescendants, cancelTreeHistory(
		ev(0.5, "orchestrator", "task.delegated", "", "task=g", "parent-task=c", "parent=thread:c", "depth=2"),
		ev(1, "orchestrator", "task.settled", "interrupted", "task=c"),
		cancelOf(1, "p", "accepted"),
		ev(20, "orchestrator", "task.settled", "failed", "task=g")))
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "task g")
	// A cancel of a task that had already settled still owes the stop of
	// the work under it.
	v = check(t, CancelReachesDescendants, []sim.Event{
		ev(0, "agent/thread-a", "delegate_task", "accepted", "thread=thread-a", "result=task=p child=thread:p"),
		ev(0.5, "orchestrator", "task.delegated", "", "task=c", "parent-task=p"),
		ev(2, "orchestrator", "task.settled", "completed", "task=p"),
		cancelOf(3, "p", "accepted"),
		ev(10, "orchestrator", "task.settled", "completed", "task=c"),
	})
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "task c")
}

// The fix: the cancel stops C at once (its task.settled comes first, in the
// same instant), or within the grace.
func TestCancelReachesDescendants_Fixed(t *testing.T) {
	assert.Nil(t, checkEnd(t, CancelReachesDescendants, cancelTreeHistory(
		ev(1, "orchestrator", "task.settled", "interrupted", "task=c", "parent=thread:p"),
		cancelOf(1, "p", "accepted"),
		ev(40, "agent/thread-b", "t3_thread_send", "accepted", "thread=thread-b")), 48*time.Hour))
	assert.Nil(t, checkEnd(t, CancelReachesDescendants, cancelTreeHistory(
		cancelOf(1, "p", "accepted"),
		ev(1.5, "orchestrator", "task.settled", "interrupted", "task=c", "parent=thread:p")), 48*time.Hour))
}

// Near misses: C finished before the cancel; a cancel of another task (a
// sibling, or C's own child); a refused cancel; a descendant of another
// tree; a retry that replays the cancel after the cascade.
func TestCancelReachesDescendants_NearMisses(t *testing.T) {
	for name, h := range map[string][]sim.Event{
		"settled before": cancelTreeHistory(
			ev(0.9, "orchestrator", "task.settled", "completed", "task=c"), cancelOf(1, "p", "accepted")),
		"another task": cancelTreeHistory(
			ev(0.2, "agent/thread-a", "delegate_task", "accepted", "thread=thread-a", "result=task=q child=thread:q"),
			cancelOf(1, "q", "accepted"),
			ev(30, "orchestrator", "task.settled", "completed", "task=c")),
		"refused": cancelTreeHistory(cancelOf(1, "p", "task_not_cancellable"),
			ev(30, "orchestrator", "task.settled", "completed", "task=c")),
		"the descendant itself": cancelTreeHistory(cancelOf(1, "c", "accepted"),
			ev(1, "orchestrator", "task.settled", "interrupted", "task=c")),
		"replayed after the cascade": cancelTreeHistory(
			ev(1, "orchestrator", "task.settled", "interrupted", "task=c"),
			cancelOf(1, "p", "accepted"), cancelOf(5, "p", "replayed")),
	} {
		t.Run(name, func(t *testing.T) {
			assert.Nil(t, checkEnd(t, CancelReachesDescendants, h, 48*time.Hour))
		})
	}
}
