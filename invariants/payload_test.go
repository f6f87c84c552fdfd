package invariants

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// The receipt-checks-payload story: thread-a's create_threads of two
// threads is accepted, its answer is lost, and the agent retries with the
// same clientRequestId and three entries. The first two replay; the third
// is new work, answered as a success.
func batchReuseHistory(outcome, result string) []sim.Event {
	const cmd = "command=command:mcp:thread%3Aenv-1%3Athread-a:create-thread:batch-round-1:0"
	return []sim.Event{
		ev(0, "agent/thread-a", "create_threads", "accepted", "thread=thread-a", "cred=c1", "clientRequestId=batch-round-1", cmd,
			"result=threads=t:0,t:1", "effect=threads"),
		ev(5, "agent/thread-a", "create_threads", outcome, "thread=thread-a", "cred=c1", "clientRequestId=batch-round-1", "retry=true", cmd,
			result, "effect=threads"),
	}
}

func TestBatchReusedWithMoreEntries(t *testing.T) {
	v := check(t, OneEffectPerRequest, batchReuseHistory("accepted", "result=threads=t:0,t:1,t:2"))
	require.NotNil(t, v)
	for _, want := range []string{"thread-a", "create_threads", "batch-round-1", "T+00:00:00.000", "T+00:05:00.000", "the same command id"} {
		assert.Contains(t, v.Message, want)
	}
	v = check(t, RetryReturnsOriginal, batchReuseHistory("accepted", "result=threads=t:0,t:1,t:2"))
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "threads=t:0,t:1,t:2")
	// The fix refuses the reuse as a conflict; an identical retry replays.
	for _, h := range [][]sim.Event{
		batchReuseHistory("OrchestrationCommandIdConflictError", "result="),
		batchReuseHistory("replayed", "result=threads=t:0,t:1"),
	} {
		assert.Nil(t, check(t, OneEffectPerRequest, h))
		assert.Nil(t, check(t, RetryReturnsOriginal, h))
	}
}
