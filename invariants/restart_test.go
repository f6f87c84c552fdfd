package invariants

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// t3code#4584's story: a run is running when the server is killed; the new
// process does not settle it, and the user's next prompt finds it running.
func zombieRunHistory(tail ...sim.Event) []sim.Event {
	h := []sim.Event{
		ev(0, "server", "server.start", "", "incarnation=1"),
		ev(1, "user/thread-a", "prompt", "", "thread=thread-a"),
		ev(1, "server", "run.start", "", "thread=thread-a", "run=run:1", "instance=codex"),
		ev(5, "server", "server.start", "", "incarnation=2"),
	}
	return append(h, tail...)
}

func TestNoRunOutlivesItsProcess(t *testing.T) {
	v := check(t, NoRunOutlivesItsProcess, zombieRunHistory(ev(9, "user/thread-b", "prompt", "", "thread=thread-b")))
	require.NotNil(t, v)
	for _, want := range []string{"run:1", "thread-a", "T+00:01:00.000", "incarnation 1", "incarnation 2", "T+00:09:00.000", "user/thread-b prompt"} {
		assert.Contains(t, v.Message, want)
	}
	v = check(t, NoRunOutlivesItsProcess, zombieRunHistory(
		ev(6, "server", "run.end", "completed", "thread=thread-a", "run=run:1")))
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "recorded completed")
	v = check(t, NoRunOutlivesItsProcess, zombieRunHistory(
		ev(5, "server", "reconcile", "completed", "trigger=startup", "thread=thread-a", "run=run:1")))
	require.NotNil(t, v, "a startup reconcile that completes an orphan")
	assert.Contains(t, v.Message, "recorded completed")
}

// The near misses: a run the startup reconcile cancelled, one that ended
// before the restart, a run of the new process, and the first command
// judged only once.
func TestNoRunOutlivesItsProcess_NearMisses(t *testing.T) {
	prompt := ev(9, "user/thread-a", "prompt", "", "thread=thread-a")
	for name, h := range map[string][]sim.Event{
		"reconciled": zombieRunHistory(ev(5, "server", "reconcile", "cancelled", "trigger=startup", "thread=thread-a", "run=run:1"), prompt),
		"ended": {ev(0, "server", "server.start", "", "incarnation=1"), ev(1, "server", "run.start", "", "thread=thread-a", "run=run:1"),
			ev(3, "server", "run.end", "completed", "thread=thread-a", "run=run:1"), ev(5, "server", "server.start", "", "incarnation=2"), prompt},
		"new process": {ev(0, "server", "server.start", "", "incarnation=1"), ev(1, "server", "run.start", "", "thread=thread-a", "run=run:1"), prompt},
	} {
		assert.Nil(t, check(t, NoRunOutlivesItsProcess, h), name)
	}
}
