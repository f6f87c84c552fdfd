package invariants

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

func call(m float64, thread, tool, key, cred, outcome, command, result string, extra ...string) sim.Event {
	kv := append([]string{"thread=" + thread, "cred=" + cred, "clientRequestId=" + key, "command=" + command, "result=" + result}, extra...)
	return ev(m, "agent/"+thread, tool, outcome, kv...)
}

func TestOneEffectPerRequest(t *testing.T) {
	replay := []sim.Event{
		call(1, "thread-a", "delegate_task", "review-round-1", "c1", "accepted", "cmd:c1:k", "task=t1", "effect=child"),
		ev(40, "psm", "session.release", "stopped", "incarnation=S#1.1", "reason=idle_timeout"),
		ev(40, "mcp-registry", "credential.revoke", "", "thread=thread-a", "cred=c1", "cause=cleanup:S#1.1"),
		call(60, "thread-a", "delegate_task", "review-round-1", "c2", "replayed", "cmd:c1:k", "task=t1"),
		// The same key in another thread is another request.
		call(61, "thread-b", "delegate_task", "review-round-1", "c3", "accepted", "cmd:c3:k", "task=t2", "effect=child"),
		// No clientRequestId: never idempotent, never a duplicate.
		call(62, "thread-a", "schedule_task", "-", "c2", "accepted", "cmd:c2:u1", "schedule=s1", "effect=schedule"),
		call(63, "thread-a", "schedule_task", "-", "c2", "accepted", "cmd:c2:u2", "schedule=s2", "effect=schedule"),
		// A second disposal of a completion delivery creates nothing.
		call(64, "thread-a", "task_cancel", "cancel-1", "c2", "accepted", "cmd:c2:cancel", "task=t1", "effect=interrupt"),
		call(65, "thread-a", "task_cancel", "cancel-1", "c2", "accepted", "cmd:c2:dispose", "task=t1", "effect=dispose"),
	}
	assert.Nil(t, check(t, OneEffectPerRequest, replay))

	dup := append(append([]sim.Event{}, replay[:3]...),
		call(60, "thread-a", "delegate_task", "review-round-1", "c2", "accepted", "cmd:c2:k", "task=t9", "effect=child"))
	v := check(t, OneEffectPerRequest, dup)
	require.NotNil(t, v)
	for _, want := range []string{`thread thread-a ran delegate_task with clientRequestId "review-round-1" twice`,
		"cmd:c1:k with credential c1 at T+00:01:00.000", "cmd:c2:k with credential c2 at T+01:00:00.000",
		"re-issued by idle release and resume"} {
		assert.Contains(t, v.Message, want)
	}

	updates := []sim.Event{
		call(1, "thread-a", "t3_thread_update", "k", "c1", "accepted", "u1", "", "target=thread-a", "action=rename", "effect=update"),
		call(2, "thread-a", "t3_thread_update", "k", "c1", "accepted", "u2", "", "target=thread-b", "action=rename", "effect=update"),
	}
	assert.Nil(t, check(t, OneEffectPerRequest, updates), "t3_thread_update keys include target and action")

	restart := []sim.Event{
		ev(0, "server", "server.start", "", "incarnation=1"),
		call(1, "thread-a", "create_threads", "k", "c1", "accepted", "x1", "threads=a", "effect=threads"),
		ev(2, "server", "server.start", "", "incarnation=2"),
		call(3, "thread-a", "create_threads", "k", "c2", "accepted", "x2", "threads=b", "effect=threads"),
	}
	v = check(t, OneEffectPerRequest, restart)
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "re-issued by server restart")
}

func TestRetryReturnsOriginal(t *testing.T) {
	ok := []sim.Event{
		call(1, "thread-a", "delegate_task", "k", "c1", "accepted", "cmd1", "task=t1 child=x1"),
		call(2, "thread-a", "delegate_task", "k", "c2", "replayed", "cmd1", "task=t1 child=x1"),
		call(3, "thread-a", "delegate_task", "k", "c2", "parent_not_active", "", ""),
	}
	assert.Nil(t, check(t, RetryReturnsOriginal, ok))
	bad := append(ok[:1:1], call(2, "thread-a", "delegate_task", "k", "c2", "accepted", "cmd2", "task=t2 child=x2"))
	v := check(t, RetryReturnsOriginal, bad)
	require.NotNil(t, v)
	assert.Contains(t, v.Message, `got "task=t2 child=x2"; the first call returned "task=t1 child=x1"`)
}

func TestRequestKeysScopedPerThread(t *testing.T) {
	ok := []sim.Event{
		call(1, "thread-a", "delegate_task", "k", "c1", "accepted", "command:mcp:A:delegate-task:k", "task=t1"),
		call(2, "thread-b", "delegate_task", "k", "c2", "accepted", "command:mcp:B:delegate-task:k", "task=t2"),
		call(3, "thread-a", "delegate_task", "k", "c1", "replayed", "command:mcp:A:delegate-task:k", "task=t1"),
	}
	assert.Nil(t, check(t, RequestKeysScopedPerThread, ok))
	leak := []sim.Event{
		call(1, "thread-a", "delegate_task", "k", "c1", "accepted", "command:mcp:global:delegate-task:k", "task=t1"),
		call(2, "thread-b", "delegate_task", "k", "c2", "replayed", "command:mcp:global:delegate-task:k", "task=t1"),
	}
	v := check(t, RequestKeysScopedPerThread, leak)
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "from thread thread-b")
	assert.Contains(t, v.Message, "[thread-a delegate_task k]")
}

// t3code#5231's story: thread-a sends to thread-b with key k, then reuses k
// for a send to thread-c and is answered replayed: nothing reached
// thread-c.
func TestReplayLandsOnTarget(t *testing.T) {
	send := func(m float64, target, outcome string) sim.Event {
		return ev(m, "agent/thread-a", "t3_thread_send", outcome, "thread=thread-a", "clientRequestId=handoff-round-1",
			"target="+target, "command=command:mcp:ns:thread-send:handoff-round-1")
	}
	v := check(t, ReplayLandsOnTarget, []sim.Event{send(1, "thread-b", "accepted"), send(5, "thread-c", "replayed")})
	require.NotNil(t, v)
	for _, want := range []string{"thread thread-c", "thread thread-b", "T+00:01:00.000", "T+00:05:00.000", "handoff-round-1"} {
		assert.Contains(t, v.Message, want)
	}
	// A genuine retry (same target) and a conflict refusal are fine.
	assert.Nil(t, check(t, ReplayLandsOnTarget, []sim.Event{send(1, "thread-b", "accepted"), send(5, "thread-b", "replayed")}))
	assert.Nil(t, check(t, ReplayLandsOnTarget, []sim.Event{send(1, "thread-b", "accepted"),
		send(5, "thread-c", "OrchestrationCommandIdConflictError")}))
}
