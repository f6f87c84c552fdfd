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

// t3code#6560's story: a storm puts ingestion behind; thread-a's provider
// completes its turn (a checkpoint is captured) while the completion waits
// in the queue; the app quits, and the shutdown reconcile cancels the run.
func backlogHistory(tail ...sim.Event) []sim.Event {
	h := []sim.Event{
		ev(0, "server", "server.start", "", "incarnation=1"),
		ev(1, "server", "run.start", "", "thread=thread-a", "run=run:1"),
		ev(2, "server", "ingest.storm", "", "thread=thread-b", "events=90000", "backlog=30m0s"),
		ev(4, "server", "checkpoint.captured", "", "thread=thread-a", "run=run:1"),
		ev(4, "server", "ingest.queued", "", "thread=thread-a", "run=run:1", "behind=28m0s"),
	}
	return append(h, tail...)
}

func TestProjectionAgreesWithProvider(t *testing.T) {
	v := check(t, ProjectionAgreesWithProvider, backlogHistory(
		ev(9, "server", "reconcile", "cancelled", "trigger=shutdown", "thread=thread-a", "run=run:1")))
	require.NotNil(t, v)
	for _, want := range []string{"run:1", "thread-a", "cancelled", "T+00:09:00.000", "reconcile", "T+00:04:00.000"} {
		assert.Contains(t, v.Message, want)
	}
	v = check(t, ProjectionAgreesWithProvider, backlogHistory(
		ev(9, "server", "run.end", "interrupted", "thread=thread-a", "run=run:1")))
	require.NotNil(t, v, "a stop that lands on a completed turn")
}

// The fixed story (the journaled completion replayed, or ingested in
// time) and near misses: a run cancelled with no checkpoint, another run
// cancelled, a checkpointed run completed by the worker.
func TestProjectionAgreesWithProvider_NearMisses(t *testing.T) {
	for name, h := range map[string][]sim.Event{
		"replayed": backlogHistory(ev(9, "server", "ingest.replay", "completed", "thread=thread-a", "run=run:1", "seq=1"),
			ev(9, "server", "reconcile", "cancelled", "trigger=shutdown", "thread=thread-b", "run=run:2")),
		"ingested in time": backlogHistory(ev(30, "server", "run.end", "completed", "thread=thread-a", "run=run:1")),
		"no checkpoint": {ev(1, "server", "run.start", "", "thread=thread-a", "run=run:1"),
			ev(9, "server", "reconcile", "cancelled", "trigger=startup", "thread=thread-a", "run=run:1")},
	} {
		assert.Nil(t, check(t, ProjectionAgreesWithProvider, h), name)
	}
	// A journaled completion replayed by the new incarnation is not an
	// invented one.
	assert.Nil(t, check(t, NoRunOutlivesItsProcess, backlogHistory(
		ev(9, "server", "server.start", "", "incarnation=2"),
		ev(9, "server", "ingest.replay", "completed", "thread=thread-a", "run=run:1", "seq=1"),
		ev(10, "user/thread-a", "prompt", "", "thread=thread-a"))))
}

// t3code#4561's story: a steering message is queued during a turn; the
// user stops the turn, and quits while the session shuts down: the
// finalizer wrote the runtime stopped, the stopped projection never came.
func steerHistory(tail ...sim.Event) []sim.Event {
	h := []sim.Event{
		ev(0, "server", "server.start", "", "incarnation=1"),
		ev(1, "server", "run.start", "", "thread=thread-a", "run=run:1"),
		ev(2, "server", "turn.queued", "", "thread=thread-a", "message=message:thread-a:steer-1", "run=run:1"),
		ev(3, "user/thread-a", "stop", "", "thread=thread-a", "run=run:1"),
		ev(3, "server", "run.end", "interrupted", "thread=thread-a", "run=run:1"),
		ev(3, "server", "session.runtime", "stopped", "thread=thread-a"),
		ev(3, "user", "app.quit", "after-stop", "incarnation=1"),
		ev(4, "server", "server.start", "", "incarnation=2"),
	}
	return append(h, tail...)
}

func TestStoppedSessionSettles(t *testing.T) {
	v := check(t, StoppedSessionSettles, steerHistory(ev(5, "user/thread-a", "prompt", "", "thread=thread-a")))
	require.NotNil(t, v)
	for _, want := range []string{"thread-a", "T+00:03:00.000", "starting", "message:thread-a:steer-1", "T+00:02:00.000",
		"incarnation 2", "T+00:04:00.000", "user/thread-a prompt", "T+00:05:00.000"} {
		assert.Contains(t, v.Message, want)
	}
	// The wrong fix: projected stopped, the queued turn left pending.
	v = check(t, StoppedSessionSettles, steerHistory(
		ev(4, "server", "session.projected", "stopped", "thread=thread-a", "cause=startup-reconcile"),
		ev(5, "user/thread-b", "prompt", "", "thread=thread-b")))
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "still pending")
}

// The fix (the startup pass settles it), the session exit projected before
// the quit, a queued turn adopted, and a restart with no stopped session.
func TestStoppedSessionSettles_NearMisses(t *testing.T) {
	prompt := ev(5, "user/thread-a", "prompt", "", "thread=thread-a")
	settled := []sim.Event{
		ev(4, "server", "session.projected", "stopped", "thread=thread-a", "cause=startup-reconcile"),
		ev(4, "server", "turn.queue-resolved", "cancelled", "thread=thread-a", "message=message:thread-a:steer-1"),
	}
	for name, h := range map[string][]sim.Event{
		"reconciled": steerHistory(append(settled, prompt)...),
		"exit projected before the quit": {ev(0, "server", "server.start", "", "incarnation=1"),
			ev(2, "server", "turn.queued", "", "thread=thread-a", "message=m", "run=run:1"),
			ev(3, "server", "session.runtime", "stopped", "thread=thread-a"),
			ev(3, "server", "session.projected", "stopped", "thread=thread-a", "cause=session.exited"),
			ev(3, "server", "turn.queue-resolved", "cancelled", "thread=thread-a", "message=m"),
			ev(4, "server", "server.start", "", "incarnation=2"), prompt},
		"adopted": {ev(0, "server", "server.start", "", "incarnation=1"),
			ev(2, "server", "turn.queued", "", "thread=thread-a", "message=m", "run=run:1"),
			ev(3, "server", "turn.queue-resolved", "adopted", "thread=thread-a", "message=m"),
			ev(3, "server", "run.start", "", "thread=thread-a", "run=run:2", "message=m"),
			ev(4, "server", "server.start", "", "incarnation=2"), prompt},
		"no restart": steerHistory()[:7],
	} {
		assert.Nil(t, check(t, StoppedSessionSettles, append(h, prompt)), name)
	}
}

// t3code#12926's story: an extra app instance's backend opens the home
// while incarnation 1 runs run:1, and its startup reconcile cancels it.
func TestReconcileSparesLiveRuns(t *testing.T) {
	live := []sim.Event{
		ev(0, "server", "server.start", "", "incarnation=1"),
		ev(1, "server", "run.start", "", "thread=thread-a", "run=run:1"),
		ev(5, "fault", "extra-instance", "agent-device", "live=1"),
	}
	v := check(t, ReconcileSparesLiveRuns, append(append([]sim.Event(nil), live...),
		ev(5, "server", "instance.extra", "started", "instance=extra-1", "port=3774", "live=1"),
		ev(5, "server", "reconcile", "cancelled", "trigger=startup", "thread=thread-a", "run=run:1", "instance=extra-1")))
	require.NotNil(t, v)
	for _, want := range []string{"run run:1 of thread thread-a", "started at T+00:01:00.000 under server incarnation 1",
		"cancelled at T+00:05:00.000 by the startup reconcile of extra-1 while incarnation 1 is alive"} {
		assert.Contains(t, v.Message, want)
	}
	// The fix: the extra instance refuses to start.
	assert.Nil(t, check(t, ReconcileSparesLiveRuns, append(append([]sim.Event(nil), live...),
		ev(5, "server", "instance.extra", "refused", "instance=extra-1", "port=3773", "live=1"))))
	// Near misses: a restart (crash or quit) whose successor's startup
	// reconcile cancels the dead process's run; a run that ended first; the
	// dying process's own shutdown reconcile.
	for name, h := range map[string][]sim.Event{
		"restart": {live[0], live[1], ev(4, "fault", "server-restart", "crash", "incarnation=1"),
			ev(5, "server", "server.start", "", "incarnation=2"),
			ev(5, "server", "reconcile", "cancelled", "trigger=startup", "thread=thread-a", "run=run:1")},
		"quit": {live[0], live[1], ev(4, "user", "app.quit", "sluggish", "incarnation=1"),
			ev(4, "server", "reconcile", "cancelled", "trigger=shutdown", "thread=thread-a", "run=run:1"),
			ev(5, "server", "server.start", "", "incarnation=2")},
		"ended": {live[0], live[1], ev(3, "server", "run.end", "completed", "thread=thread-a", "run=run:1"),
			ev(5, "server", "reconcile", "cancelled", "trigger=startup", "thread=thread-a", "run=run:1", "instance=extra-1")},
	} {
		assert.Nil(t, check(t, ReconcileSparesLiveRuns, h), name)
	}
}
