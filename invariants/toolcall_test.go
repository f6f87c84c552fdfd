package invariants

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// hermes-agent#57767's story in T3: thread-a's delegate_task without a
// clientRequestId is accepted; the same tool call is delivered again 10 s
// later and, keyed by a fresh random UUID, creates a second child.
func keylessHistory(second sim.Event) []sim.Event {
	return keylessHistoryFirst("accepted", second)
}

func keylessHistoryFirst(first string, second sim.Event) []sim.Event {
	return []sim.Event{
		ev(0, "agent/thread-a", "delegate_task", "accepted", "thread=thread-a", "clientRequestId=-",
			"command=command:mcp:ns:delegate-task:uuid-1", "result=task=t1 child=c1", "effect=child"),
		ev(10.0/60, "fault", "tool-call-redelivered", "", "thread=thread-a", "tool=delegate_task", "tool-call=toolu_a_3",
			"first="+first),
		second,
	}
}

func TestOneEffectPerToolCall(t *testing.T) {
	v := check(t, OneEffectPerToolCall, keylessHistory(ev(10.0/60, "agent/thread-a", "delegate_task", "accepted", "thread=thread-a",
		"clientRequestId=-", "redelivered=true", "tool-call=toolu_a_3", "command=command:mcp:ns:delegate-task:uuid-2",
		"result=task=t2 child=c2", "effect=child")))
	require.NotNil(t, v)
	for _, want := range []string{"thread-a", "toolu_a_3", "T+00:00:10.000", "uuid-2", "task=t2"} {
		assert.Contains(t, v.Message, want)
	}
	// The debounce mutant's story: a new keyless call replays an old receipt.
	v = check(t, OneEffectPerToolCall, keylessHistory(ev(12, "agent/thread-a", "delegate_task", "replayed", "thread=thread-a",
		"clientRequestId=-", "command=command:mcp:ns:delegate-task:debounce", "result=task=t1 child=c1")))
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "another call's result")
}

// The fix replays the second delivery; near misses: a keyed call's
// replay, a second delivery refused, a new keyless call that runs.
func TestOneEffectPerToolCall_NearMisses(t *testing.T) {
	for name, second := range map[string]sim.Event{
		"fixed": ev(0.2, "agent/thread-a", "delegate_task", "replayed", "thread=thread-a", "clientRequestId=-",
			"redelivered=true", "tool-call=toolu_a_3", "result=task=t1 child=c1"),
		"keyed replay": ev(5, "agent/thread-a", "delegate_task", "replayed", "thread=thread-a", "clientRequestId=review-round-1",
			"result=task=t1 child=c1"),
		"refused": ev(0.2, "agent/thread-a", "delegate_task", "parent_not_active", "thread=thread-a", "clientRequestId=-",
			"redelivered=true"),
		"new call": ev(5, "agent/thread-a", "delegate_task", "accepted", "thread=thread-a", "clientRequestId=-",
			"result=task=t3 child=c3", "effect=child"),
	} {
		t.Run(name, func(t *testing.T) {
			assert.Nil(t, check(t, OneEffectPerToolCall, keylessHistory(second)))
		})
	}
	// The first delivery was refused (no run to interrupt, a dead
	// caller): the second is the call's only effect.
	assert.Nil(t, check(t, OneEffectPerToolCall, keylessHistoryFirst("no_active_run", ev(10.0/60, "agent/thread-a",
		"delegate_task", "accepted", "thread=thread-a", "clientRequestId=-", "redelivered=true", "tool-call=toolu_a_3",
		"result=task=t2 child=c2", "effect=child"))))
}
