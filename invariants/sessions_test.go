package invariants

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// t3code#4198's story: a turn ends with a background task running until
// T+2h; the reaper releases the session at T+00:31 for idleness.
func TestNoReapWhileWorkOwed(t *testing.T) {
	h := []sim.Event{
		ev(1, "psm", "background-work", "", "providerSessionId=psess:thread-a", "until=T+02:00:00.000"),
		ev(31, "psm", "session.release", "stopped", "providerSessionId=psess:thread-a", "incarnation=psess:thread-a#1.1", "reason=idle_timeout"),
	}
	v := check(t, NoReapWhileWorkOwed, h)
	require.NotNil(t, v)
	for _, want := range []string{"psess:thread-a", "T+00:31:00.000", "T+00:01:00.000", "T+02:00:00.000"} {
		assert.Contains(t, v.Message, want)
	}
}

// The near misses: the work had ended, the pin cap ran out, another
// session, a crash or a manual stop rather than an idle release.
func TestNoReapWhileWorkOwed_NearMisses(t *testing.T) {
	bg := func(m float64, until string) sim.Event {
		return ev(m, "psm", "background-work", "", "providerSessionId=psess:thread-a", "until="+until)
	}
	release := func(m float64, session, reason string) sim.Event {
		return ev(m, "psm", "session.release", "stopped", "providerSessionId="+session, "reason="+reason)
	}
	for name, h := range map[string][]sim.Event{
		"work ended":     {bg(1, "T+00:10:00.000"), release(31, "psess:thread-a", "idle_timeout")},
		"pin cap":        {bg(1, "T+09:00:00.000"), release(4*60+31, "psess:thread-a", "idle_timeout")},
		"other session":  {bg(1, "T+02:00:00.000"), release(31, "psess:thread-b", "idle_timeout")},
		"crash":          {bg(1, "T+02:00:00.000"), release(31, "psess:thread-a", "runtime_error")},
		"manual stop":    {bg(1, "T+02:00:00.000"), release(31, "psess:thread-a", "manual_shutdown")},
		"server restart": {bg(1, "T+02:00:00.000"), ev(20, "server", "server.start", "", "incarnation=2"), release(31, "psess:thread-a", "idle_timeout")},
	} {
		assert.Nil(t, check(t, NoReapWhileWorkOwed, h), name)
	}
}

func TestOneRunPerMessage(t *testing.T) {
	start := func(m float64, run, msg string) sim.Event {
		return ev(m, "server", "run.start", "", "thread=thread-a", "run="+run, "message="+msg)
	}
	v := check(t, OneRunPerMessage, []sim.Event{start(1, "run:1", "message:thread-a:1"), start(40, "run:2", "message:thread-a:1")})
	require.NotNil(t, v)
	for _, want := range []string{"message:thread-a:1", "run:1", "run:2", "T+00:01:00.000", "T+00:40:00.000"} {
		assert.Contains(t, v.Message, want)
	}
	assert.Nil(t, check(t, OneRunPerMessage, []sim.Event{start(1, "run:1", "message:thread-a:1"), start(40, "run:2", "message:thread-a:2")}))
	assert.Nil(t, check(t, OneRunPerMessage, []sim.Event{start(1, "run:1", "message:thread-a:1"),
		ev(40, "server", "run.start", "", "thread=thread-a", "run=run:2", "continuation-of=run:1")}), "a continuation answers no message")
}

// t3code#15173's story: thread-a delegates a child at T+00:05 and ends its
// turn; its session is released for idleness at T+00:36 while the child
// still runs (it settles at T+01:10).
func TestNoIdleReleaseWhileChildOwed(t *testing.T) {
	h := []sim.Event{
		ev(1, "psm", "session.opened", "ready", "providerSessionId=psess:thread-a", "thread=thread-a"),
		ev(5, "agent/thread-a", "delegate_task", "accepted", "thread=thread-a", "result=task=node:delegated-task:k1 child=thread:delegated-task:k1"),
		ev(36, "psm", "session.release", "stopped", "providerSessionId=psess:thread-a", "reason=idle_timeout"),
		ev(70, "orchestrator", "task.settled", "completed", "task=node:delegated-task:k1", "parent=thread-a"),
	}
	v := check(t, NoIdleReleaseWhileChildOwed, h)
	require.NotNil(t, v)
	for _, want := range []string{"psess:thread-a", "thread-a", "node:delegated-task:k1", "T+00:36:00.000", "T+00:05:00.000"} {
		assert.Contains(t, v.Message, want)
	}
	// A shared (codex) session: the second thread's child pins it too.
	h = []sim.Event{
		ev(1, "psm", "session.opened", "ready", "providerSessionId=psess:codex", "thread=thread-a"),
		ev(2, "psm", "session.attach", "", "providerSessionId=psess:codex", "thread=thread-b"),
		ev(5, "agent/thread-b", "delegate_task", "accepted", "thread=thread-b", "result=task=node:t2"),
		ev(36, "psm", "session.release", "stopped", "providerSessionId=psess:codex", "reason=idle_timeout"),
	}
	require.NotNil(t, check(t, NoIdleReleaseWhileChildOwed, h))
}

// The fix and the near misses: the child settled first, the release was
// not for idleness, the thread had detached, another thread's child, a
// refused call, and the fixed story (the release deferred until after the
// child settled).
func TestNoIdleReleaseWhileChildOwed_NearMisses(t *testing.T) {
	open := ev(1, "psm", "session.opened", "ready", "providerSessionId=psess:thread-a", "thread=thread-a")
	child := ev(5, "agent/thread-a", "delegate_task", "accepted", "thread=thread-a", "result=task=node:t1")
	settled := func(m float64) sim.Event {
		return ev(m, "orchestrator", "task.settled", "completed", "task=node:t1", "parent=thread-a")
	}
	release := func(m float64, reason string) sim.Event {
		return ev(m, "psm", "session.release", "stopped", "providerSessionId=psess:thread-a", "reason="+reason)
	}
	for name, h := range map[string][]sim.Event{
		"settled first": {open, child, settled(20), release(50, "idle_timeout")},
		"crash":         {open, child, release(36, "runtime_error")},
		"shutdown":      {open, child, release(36, "server_shutdown")},
		"detached": {open, child, ev(10, "psm", "session.detach", "", "providerSessionId=psess:thread-a", "thread=thread-a", "terminal=false"),
			release(36, "idle_timeout")},
		"other thread": {open, ev(5, "agent/thread-b", "delegate_task", "accepted", "thread=thread-b", "result=task=node:t9"), release(36, "idle_timeout")},
		"replayed after settling": {open, child, settled(20),
			ev(25, "agent/thread-a", "delegate_task", "replayed", "thread=thread-a", "result=task=node:t1"), release(60, "idle_timeout")},
		"refused": {open, ev(5, "agent/thread-a", "delegate_task", "parent_not_active", "thread=thread-a"), release(36, "idle_timeout")},
		"fixed": {open, child, ev(36, "psm", "idle-release-deferred", "delegated child", "providerSessionId=psess:thread-a", "thread=thread-a"),
			settled(70), release(100, "idle_timeout")},
	} {
		assert.Nil(t, check(t, NoIdleReleaseWhileChildOwed, h), name)
	}
}

// t3code#3604's story: an OpenCode (ACP) thread's conversation native:a:1
// exists from its creation; after an idle release the next session creates
// native:a:2 instead of resuming it.
func TestResumeBindsStoredNative(t *testing.T) {
	create := func(m float64, native string, kv ...string) sim.Event {
		return ev(m, "psm", "native.create", "", append([]string{"thread=thread-a", "native=" + native, "instance=acpRegistry_bob", "written=true"}, kv...)...)
	}
	v := check(t, ResumeBindsStoredNative, []sim.Event{create(1, "native:thread-a:1"), create(40, "native:thread-a:2")})
	require.NotNil(t, v)
	for _, want := range []string{"thread-a", "native:thread-a:2", "native:thread-a:1", "T+00:40:00.000", "T+00:01:00.000"} {
		assert.Contains(t, v.Message, want)
	}
	// A Claude conversation exists once its first turn is written.
	claude := func(m float64, native string) sim.Event {
		return ev(m, "psm", "native.create", "", "thread=thread-a", "native="+native, "instance=claudeAgent", "written=false")
	}
	require.NotNil(t, check(t, ResumeBindsStoredNative, []sim.Event{claude(1, "native:thread-a:1"),
		ev(3, "psm", "native.turn", "durable", "thread=thread-a", "native=native:thread-a:1"), claude(40, "native:thread-a:2")}))
}

// The fix and the near misses: the session resumed; the old conversation
// never existed (a Claude session killed before its first turn); another
// instance after a provider switch; another thread.
func TestResumeBindsStoredNative_NearMisses(t *testing.T) {
	create := func(m float64, thread, native, instance, written string) sim.Event {
		return ev(m, "psm", "native.create", "", "thread="+thread, "native="+native, "instance="+instance, "written="+written)
	}
	for name, h := range map[string][]sim.Event{
		"resumed": {create(1, "thread-a", "n1", "acpRegistry_bob", "true"),
			ev(40, "psm", "native.resume", "resumed", "thread=thread-a", "native=n1", "instance=acpRegistry_bob")},
		"never written": {create(1, "thread-a", "n1", "claudeAgent", "false"), create(40, "thread-a", "n2", "claudeAgent", "false")},
		"other instance": {create(1, "thread-a", "n1", "acpRegistry_bob", "true"), create(40, "thread-a", "n2", "claudeAgent", "false"),
			create(80, "thread-a", "n3", "acpRegistry_bob", "true")},
		"other thread": {create(1, "thread-a", "n1", "acpRegistry_bob", "true"), create(40, "thread-b", "n2", "acpRegistry_bob", "true")},
	} {
		assert.Nil(t, check(t, ResumeBindsStoredNative, h), name)
	}
}

// t3code#2336's story: the cursor is persisted at session start, the CLI
// dies before its first turn, and the next open resumes a conversation
// that was never written.
func TestResumeCursorFindsConversation(t *testing.T) {
	h := []sim.Event{
		ev(1, "psm", "native.create", "", "thread=thread-a", "native=n1", "instance=claudeAgent", "written=false"),
		ev(1, "psm", "cursor.persist", "", "thread=thread-a", "native=n1", "instance=claudeAgent"),
		ev(2, "psm", "session.release", "error", "providerSessionId=psess:thread-a", "reason=runtime_error"),
		ev(10, "psm", "native.resume", "missing", "thread=thread-a", "native=n1", "then=open fails"),
		ev(10, "psm", "session.open", "ProviderSessionOpenError", "providerSessionId=psess:thread-a", "cause=resume-missing", "native=n1", "thread=thread-a"),
	}
	v := check(t, ResumeCursorFindsConversation, h)
	require.NotNil(t, v)
	for _, want := range []string{"thread-a", "psess:thread-a", "n1", "T+00:10:00.000", "T+00:01:00.000", "never had a durable turn"} {
		assert.Contains(t, v.Message, want)
	}
}

// The fix and the near misses: the cursor written after the first turn;
// the fallback to a fresh session; an open that failed for another reason.
func TestResumeCursorFindsConversation_NearMisses(t *testing.T) {
	for name, h := range map[string][]sim.Event{
		"after first turn": {ev(1, "psm", "native.create", "", "thread=thread-a", "native=n1", "written=false"),
			ev(5, "psm", "native.turn", "durable", "thread=thread-a", "native=n1"),
			ev(5, "psm", "cursor.persist", "", "thread=thread-a", "native=n1"),
			ev(40, "psm", "native.resume", "resumed", "thread=thread-a", "native=n1")},
		"fallback": {ev(10, "psm", "native.resume", "missing", "thread=thread-a", "native=n1", "then=fresh session"),
			ev(10, "psm", "cursor.clear", "", "thread=thread-a", "native=n1"),
			ev(10, "psm", "native.create", "", "thread=thread-a", "native=n2", "fallback-of=n1", "context=lost")},
		"adapter failed": {ev(10, "psm", "session.open", "ProviderSessionOpenError", "providerSessionId=psess:thread-a")},
	} {
		assert.Nil(t, check(t, ResumeCursorFindsConversation, h), name)
	}
}

// t3code#11805's story: a session's last turn ends at T+00:10, the host
// sleeps from T+00:20 for 2 h, and the first sweep after the wake reaps
// the session at T+02:22: 12 min of awake time without activity.
func TestIdleCountsAwakeTime(t *testing.T) {
	h := []sim.Event{
		ev(1, "psm", "session.opened", "ready", "providerSessionId=psess:thread-a", "thread=thread-a"),
		ev(10, "psm", "turn.terminal", "", "providerSessionId=psess:thread-a", "thread=thread-a"),
		ev(20, "fault", "host.suspend", "", "for=2h0m0s"),
		ev(140, "fault", "host.resume", "", "slept=2h0m0s"),
		ev(142, "psm", "session.release", "stopped", "providerSessionId=psess:thread-a", "reason=idle_timeout"),
	}
	v := check(t, IdleCountsAwakeTime, h)
	require.NotNil(t, v)
	for _, want := range []string{"psess:thread-a", "T+02:22:00.000", "T+00:10:00.000", "2h0m0s", "12m0s"} {
		assert.Contains(t, v.Message, want)
	}
}

// The fix and the near misses: a release after 30 awake minutes (the
// idle timer pushed back by the sleep), no sleep at all, a sleep before
// the last activity, a crash during the same window.
func TestIdleCountsAwakeTime_NearMisses(t *testing.T) {
	open := ev(1, "psm", "session.opened", "ready", "providerSessionId=psess:thread-a", "thread=thread-a")
	release := func(m float64, reason string) sim.Event {
		return ev(m, "psm", "session.release", "stopped", "providerSessionId=psess:thread-a", "reason="+reason)
	}
	sleep := func(m float64) sim.Event { return ev(m, "fault", "host.suspend", "", "for=2h0m0s") }
	for name, h := range map[string][]sim.Event{
		"awake 30 min": {open, sleep(20), release(151, "idle_timeout")},
		"no sleep":     {open, release(31, "idle_timeout")},
		"sleep before": {sleep(0), open, release(31, "idle_timeout")},
		"activity after wake": {open, sleep(20), ev(140, "psm", "turn.start", "", "providerSessionId=psess:thread-a"),
			ev(141, "psm", "turn.terminal", "", "providerSessionId=psess:thread-a"), release(171, "idle_timeout")},
		"crash": {open, sleep(20), release(142, "runtime_error")},
	} {
		assert.Nil(t, check(t, IdleCountsAwakeTime, h), name)
	}
}
