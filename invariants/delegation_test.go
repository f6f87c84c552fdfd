package invariants

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// t3code#11168's story: an ACP parent's delegate_task wait is accepted
// (task t1 exists), the server holds the answer for its 10 min budget, and
// the Node client dies at 5 min with no taskId.
func heldWaitHistory(tail ...sim.Event) []sim.Event {
	h := []sim.Event{
		ev(0, "agent/thread-a", "delegate_task", "accepted", "thread=thread-a", "cred=c1", "clientRequestId=-", "mode=wait",
			"result=task=t1 child=thread:child-1"),
	}
	return append(h, tail...)
}

func TestDelegateHandleBeforeClientTimeout(t *testing.T) {
	v := check(t, DelegateHandleBeforeClientTimeout, heldWaitHistory(
		ev(5, "mcp-client/thread-a", "timeout", "", "tool=delegate_task", "clientRequestId=-")))
	require.NotNil(t, v)
	for _, want := range []string{"thread-a", "t1", "T+00:05:00.000", "T+00:00:00.000", "5m0s after"} {
		assert.Contains(t, v.Message, want)
	}
}

// The near misses: the wait answered before the client gave up (its
// answer may still be lost in transit), another thread's client, another
// tool, an async call, or a server that died with its waits.
func TestDelegateHandleBeforeClientTimeout_NearMisses(t *testing.T) {
	timeout := func(m float64, thread, tool string) sim.Event {
		return ev(m, "mcp-client/"+thread, "timeout", "", "tool="+tool, "clientRequestId=-")
	}
	for name, h := range map[string][]sim.Event{
		"answered": heldWaitHistory(ev(0.75, "orchestrator", "delegate_task.wait", "waitTimedOut", "thread=thread-a", "task=t1"),
			timeout(5, "thread-a", "delegate_task")),
		"other thread": heldWaitHistory(timeout(5, "thread-b", "delegate_task")),
		"other tool":   heldWaitHistory(timeout(5, "thread-a", "create_threads")),
		"restart":      heldWaitHistory(ev(2, "server", "server.start", "", "incarnation=2"), timeout(5, "thread-a", "delegate_task")),
		"async": {ev(0, "agent/thread-a", "delegate_task", "accepted", "thread=thread-a", "mode=async", "result=task=t1"),
			timeout(5, "thread-a", "delegate_task")},
	} {
		assert.Nil(t, check(t, DelegateHandleBeforeClientTimeout, h), name)
	}
}

func TestOneLiveChildPerRequest(t *testing.T) {
	accept := func(m float64, task string, kv ...string) sim.Event {
		return ev(m, "agent/thread-a", "delegate_task", "accepted", append([]string{"thread=thread-a", "result=task=" + task}, kv...)...)
	}
	v := check(t, OneLiveChildPerRequest, []sim.Event{accept(0, "t1"), accept(1, "t2", "redispatch-of=t1")})
	require.NotNil(t, v)
	for _, want := range []string{"t1", "t2", "T+00:01:00.000", "T+00:00:00.000"} {
		assert.Contains(t, v.Message, want)
	}
	settled := ev(0.5, "orchestrator", "task.settled", "completed", "task=t1")
	assert.Nil(t, check(t, OneLiveChildPerRequest, []sim.Event{accept(0, "t1"), settled, accept(1, "t2", "redispatch-of=t1")}), "the first child ended")
	assert.Nil(t, check(t, OneLiveChildPerRequest, []sim.Event{accept(0, "t1"), accept(1, "t2")}), "new work")
}
