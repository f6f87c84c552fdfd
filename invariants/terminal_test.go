package invariants

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// tev is ev at sec seconds (millisecond precision).
func tev(sec float64, actor, kind, outcome string, kv ...string) sim.Event {
	e := ev(0, actor, kind, outcome, kv...)
	e.At = time.Duration(math.Round(sec*1000)) * time.Millisecond
	return e
}

// checkEnd is check, then the checker's end-of-run judgement at end.
func checkEnd(t *testing.T, name string, history []sim.Event, end time.Duration) *sim.Violation {
	t.Helper()
	c := New(name)[0]
	for i := range history {
		history[i].Seq = uint64(i)
		if v := c.Observe(&history[i]); v != nil {
			v.At = history[i].At
			return v
		}
	}
	f, ok := c.(sim.Finisher)
	if !ok {
		return nil
	}
	return f.Finish(end)
}

func requireMessage(t *testing.T, v *sim.Violation, name string, want ...string) {
	t.Helper()
	require.NotNil(t, v)
	assert.Equal(t, name, v.Invariant)
	for _, w := range want {
		assert.Contains(t, v.Message, w)
	}
}

// The report's sequence: Claude agent s1 live with a draft; Spotlight
// remounts its pane; the wake adopts it, waits 30 s and kills it.
func remountKill(disposition string) []sim.Event {
	return []sim.Event{
		tev(1, "main", "start", "live", "session=s1", "backend=s1#1"),
		tev(3, "agent/s1", "screen", "composer", "session=s1", "backend=s1#1"),
		tev(60, "renderer", "wake", "", "session=s1", "wake=w4", "caller=terminal-leaf.mount", "by=p5"),
		tev(60.01, "renderer", "wake.recover", "ok", "session=s1", "wake=w4", "backend=s1#1", "disposition="+disposition, "lifecycle=live"),
		tev(90.02, "main", "kill", "killed", "session=s1", "backend=s1#1", "cause=readiness-timeout", "wake=w4"),
	}
}

func TestLiveAgentSurvivesRemount(t *testing.T) {
	assert.Nil(t, check(t, LiveAgentSurvivesRemount, remountKill("spawned")), "a wake may kill what it spawned")
	v := check(t, LiveAgentSurvivesRemount, remountKill("adopted"))
	requireMessage(t, v, LiveAgentSurvivesRemount, "w4", "s1#1", "p5", "T+00:01:00.010", "T+00:01:30.020", "T+00:00:03.000")
}

func TestLiveAgentSurvivesRemount_WedgedBackendMayBeReplaced(t *testing.T) {
	h := remountKill("adopted")
	h = append(h[:1], h[2:]...) // it never painted its composer
	assert.Nil(t, check(t, LiveAgentSurvivesRemount, h))
	h = remountKill("adopted")
	h[4] = tev(90.02, "main", "kill", "killed", "session=s1", "backend=s1#1", "cause=spawn-deadline")
	assert.Nil(t, check(t, LiveAgentSurvivesRemount, h), "a kill that no wake asked for is not the wake's")
}

func mountThen(then sim.Event) []sim.Event {
	return []sim.Event{
		tev(1, "main", "start", "live", "session=s1", "backend=s1#1"),
		tev(60, "pane/p5", "pane.mount", "", "session=s1", "surface=spotlight", "view=terminal", "cols=200", "rows=50"),
		then,
	}
}

func TestRemountAttachesPromptly(t *testing.T) {
	ok := mountThen(tev(60.03, "pane/p5", "pane.attach", "attached", "session=s1"))
	assert.Nil(t, checkEnd(t, RemountAttachesPromptly, ok, 2*time.Minute))
	v := check(t, RemountAttachesPromptly, mountThen(tev(65, "pane/p5", "pane.unmount", "", "session=s1")))
	requireMessage(t, v, RemountAttachesPromptly, "p5", "spotlight", "s1", "s1#1", "T+00:01:00.000", "T+00:01:05.000", "unmounted without attaching")
	v = checkEnd(t, RemountAttachesPromptly, mountThen(tev(60.5, "user", "type", "queued", "session=s1", "pane=p5")), 2*time.Minute)
	requireMessage(t, v, RemountAttachesPromptly, "p5", "had not attached when the run ended at T+00:02:00.000")
}

func TestRemountAttachesPromptly_NotLiveIsExempt(t *testing.T) {
	h := mountThen(tev(90, "pane/p5", "pane.attach", "attached", "session=s1"))
	h = append([]sim.Event{}, h[0], tev(30, "main", "kill", "killed", "session=s1", "backend=s1#1"), h[1], h[2])
	assert.Nil(t, check(t, RemountAttachesPromptly, h), "a pane of a dead session waits for the respawn")
	feed := mountThen(tev(90, "pane/p5", "pane.unmount", "", "session=s1"))
	feed[1] = tev(60, "pane/p5", "pane.mount", "", "session=s1", "surface=spotlight", "view=feed")
	assert.Nil(t, check(t, RemountAttachesPromptly, feed))
}

// StrictMode: mount p7, unmount p7 before its attach (count stays 0),
// mount p8; both chained attaches land.
func strictMode(late string) []sim.Event {
	return []sim.Event{
		tev(10, "pane/p7", "pane.mount", "", "session=s1", "view=terminal"),
		tev(10, "pane/p7", "pane.unmount", "", "session=s1"),
		tev(10, "pane/p8", "pane.mount", "", "session=s1", "view=terminal"),
		tev(10.01, "main", "pty.detach", "unmatched", "session=s1", "pane=p7", "count=0"),
		tev(10.05, "main", "pty.attach", "attached", "session=s1", "pane=p7", "count=1"),
		tev(10.06, "pane/p7", "pane.attach", late, "session=s1"),
		tev(10.06, "main", "pty.attach", "attached", "session=s1", "pane=p8", "count=2"),
		tev(10.07, "pane/p8", "pane.attach", "attached", "session=s1"),
	}
}

func TestPTYAttachBalanced(t *testing.T) {
	fixed := strictMode("released")
	fixed = append(fixed, tev(10.08, "main", "pty.detach", "decremented", "session=s1", "pane=p7", "count=1"),
		tev(40, "agent/s1", "output", "", "session=s1"))
	assert.Nil(t, checkEnd(t, PTYAttachBalanced, fixed, time.Minute))

	leak := append(strictMode("late-ignored"), tev(40, "agent/s1", "output", "", "session=s1"))
	v := check(t, PTYAttachBalanced, leak)
	requireMessage(t, v, PTYAttachBalanced, "session s1", "holds 2", "[p8]", "T+00:00:10.060", "T+00:00:40.000", "late attach ignored by unmounted pane p7")
}

func TestPTYAttachBalanced_StolenReference(t *testing.T) {
	h := []sim.Event{
		tev(1, "main", "pty.attach", "attached", "session=s1", "pane=p2", "count=1"),
		tev(1.01, "pane/p2", "pane.attach", "attached", "session=s1"),
		tev(5, "pane/p3", "pane.mount", "", "session=s1", "view=terminal"),
		tev(6, "pane/p3", "pane.unmount", "", "session=s1"),
		tev(6.01, "main", "pty.detach", "released", "session=s1", "pane=p3", "count=0"),
	}
	assert.Nil(t, check(t, PTYAttachBalanced, h), "within the settle time")
	v := checkEnd(t, PTYAttachBalanced, h, 10*time.Second)
	requireMessage(t, v, PTYAttachBalanced, "forwards nothing with 0", "[p2]", "T+00:00:06.010", "run ended")
}

func TestPTYSizeKept(t *testing.T) {
	h := []sim.Event{
		tev(1, "pane/p2", "pane.mount", "", "session=s1", "surface=editor", "view=terminal", "cols=89", "rows=48"),
		tev(60, "pane/p2", "pane.unmount", "", "session=s1"),
		tev(60.01, "main", "pty.resize", "resized", "session=s1", "pane=p2", "cols=120", "rows=40", "cause=restore"),
	}
	assert.Nil(t, check(t, PTYSizeKept, h), "no pane shows the session: Reader, another tab")
	h = []sim.Event{h[0], h[1],
		tev(60, "pane/p5", "pane.mount", "", "session=s1", "surface=spotlight", "view=terminal", "cols=200", "rows=50"),
		h[2],
		tev(60.02, "main", "pty.resize", "resized", "session=s1", "pane=p5", "cols=200", "rows=50", "cause=pane")}
	v := check(t, PTYSizeKept, h)
	requireMessage(t, v, PTYSizeKept, "pane p2", "s1", "120x40", "p5", "spotlight", "200x50", "T+00:01:00.010")
}

func typedBlind() []sim.Event {
	return []sim.Event{
		tev(60, "pane/p5", "pane.mount", "", "session=s1", "view=terminal"),
		tev(62, "user", "type", "queued", "session=s1", "pane=p5", "key=text", "seq=1-200"),
		tev(70, "user", "type", "queued", "session=s1", "pane=p5", "key=text", "seq=201-300"),
		tev(70, "pane/p5", "input.drop", "dropped", "session=s1", "seq=1-44"),
	}
}

func TestNoInputLost(t *testing.T) {
	ok := append(typedBlind(),
		tev(70.1, "main", "pty.write", "delivered", "session=s1", "pane=p5", "seq=45-300"),
		tev(80, "user", "type", "sent", "session=s1", "pane=p5", "seq=301"),
		tev(80.1, "main", "pty.write", "delivered", "session=s1", "pane=p5", "seq=301"),
		tev(99, "pane/p5", "pane.unmount", "", "session=s1"))
	assert.Nil(t, checkEnd(t, NoInputLost, ok, 2*time.Minute))

	v := check(t, NoInputLost, append(typedBlind(), tev(90, "pane/p5", "pane.unmount", "", "session=s1", "pending=45-300")))
	requireMessage(t, v, NoInputLost, "pane p5", "s1", "45-300", "T+00:01:02.000", "T+00:01:30.000")

	v = check(t, NoInputLost, append(typedBlind(), tev(70.1, "main", "pty.write", "delivered", "session=s1", "pane=p5", "seq=46-300")))
	requireMessage(t, v, NoInputLost, "45-300", "out of order")

	v = checkEnd(t, NoInputLost, typedBlind(), 2*time.Minute)
	requireMessage(t, v, NoInputLost, "still held keystrokes 45-300", "T+00:02:00.000")
}

func wedgedSpawn(then ...sim.Event) []sim.Event {
	return append([]sim.Event{
		tev(0, "pane/p1", "pane.mount", "", "session=s1", "view=terminal"),
		tev(2, "main", "start", "live", "session=s1", "backend=s1#1"),
		tev(4, "agent/s1", "boot", "wedged", "session=s1", "backend=s1#1"),
	}, then...)
}

func TestWedgedSpawnReplaced(t *testing.T) {
	killed := wedgedSpawn(tev(32, "main", "kill", "killed", "session=s1", "backend=s1#1", "cause=readiness-timeout"),
		tev(300, "user", "retry", "", "session=s1"))
	assert.Nil(t, checkEnd(t, WedgedSpawnReplaced, killed, time.Hour))
	healthy := []sim.Event{tev(2, "main", "start", "live", "session=s1", "backend=s1#1"),
		tev(5, "agent/s1", "screen", "composer", "session=s1", "backend=s1#1"), tev(300, "user", "retry", "")}
	assert.Nil(t, checkEnd(t, WedgedSpawnReplaced, healthy, time.Hour))

	v := check(t, WedgedSpawnReplaced, wedgedSpawn(tev(40, "user", "spotlight.enter", "", "session=s2")))
	requireMessage(t, v, WedgedSpawnReplaced, "s1#1", "s1", "T+00:00:02.000", "pane p1", "T+00:00:33.000", "T+00:00:40.000")
}

// A wedged backend nobody shows is still due: at the end of the run, or
// 31 s after a pane first shows it.
func TestWedgedSpawnReplaced_Unshown(t *testing.T) {
	h := []sim.Event{tev(2, "main", "start", "live", "session=s3", "backend=s3#1")}
	assert.Nil(t, checkEnd(t, WedgedSpawnReplaced, h, 30*time.Second))
	requireMessage(t, checkEnd(t, WedgedSpawnReplaced, h, time.Hour), WedgedSpawnReplaced, "s3#1", "no pane showed it", "run ended")
	h = append(h, tev(600, "pane/p9", "pane.mount", "", "session=s3", "view=terminal"),
		tev(620, "user", "type", "queued", "session=s3"))
	assert.Nil(t, check(t, WedgedSpawnReplaced, h), "due 31 s after the pane showed it")
	h = append(h, tev(640, "user", "type", "queued", "session=s3"))
	requireMessage(t, check(t, WedgedSpawnReplaced, h), WedgedSpawnReplaced, "pane p9 showed it from T+00:10:00.000", "T+00:10:31.000")
}

// agent-orchestrator#3023: the user types into a freshly spawned agent
// before its TUI paints the composer; main writes the keys at once and they
// land in the output area. With the fix main holds them and delivers them
// once the composer has painted, or rejects them when the backend stops.
func TestInputLandsInComposer(t *testing.T) {
	live := tev(1, "main", "start", "live", "session=s1", "backend=s1#1")
	paint := tev(4, "agent/s1", "screen", "composer", "session=s1", "backend=s1#1")
	write := func(sec float64, outcome, seq string, kv ...string) sim.Event {
		return tev(sec, "main", "pty.write", outcome, append([]string{"session=s1", "pane=p1", "seq=" + seq, "backend=s1#1"}, kv...)...)
	}
	t.Run("story: written before the composer painted", func(t *testing.T) {
		v := check(t, InputLandsInComposer, []sim.Event{live, write(2, "delivered", "1-3"), paint})
		requireMessage(t, v, InputLandsInComposer, "pane p1 wrote keystrokes 1-3", "backend s1#1 had not painted its composer", "T+00:00:02.000")
	})
	t.Run("fix: held, then delivered after the paint", func(t *testing.T) {
		assert.Nil(t, checkEnd(t, InputLandsInComposer, []sim.Event{live, write(2, "held", "1-3"), paint,
			write(4, "delivered", "1-3", "held-since=T+00:00:02.000"), write(5, "delivered", "4")}, time.Minute))
	})
	t.Run("fix: held, then rejected when the backend stops", func(t *testing.T) {
		assert.Nil(t, checkEnd(t, InputLandsInComposer, []sim.Event{live, write(2, "held", "1-3"),
			tev(31, "main", "kill", "killed", "session=s1", "backend=s1#1", "cause=spawn-deadline"),
			write(31, "rejected", "1-3", "why=killed")}, time.Hour))
	})
	t.Run("held and never settled", func(t *testing.T) {
		v := checkEnd(t, InputLandsInComposer, []sim.Event{live, write(2, "held", "1-3")}, time.Hour)
		requireMessage(t, v, InputLandsInComposer, "held keystrokes 1-3", "neither delivered nor rejected")
	})
	t.Run("out of order", func(t *testing.T) {
		v := check(t, InputLandsInComposer, []sim.Event{live, paint, write(5, "delivered", "4-6"), write(6, "delivered", "2-3")})
		requireMessage(t, v, InputLandsInComposer, "out of the order typed")
	})
	t.Run("near miss: another backend painted", func(t *testing.T) {
		other := tev(4, "agent/s2", "screen", "composer", "session=s2", "backend=s2#1")
		v := check(t, InputLandsInComposer, []sim.Event{live, other, write(5, "delivered", "1")})
		requireMessage(t, v, InputLandsInComposer, "backend s1#1")
	})
	t.Run("near miss: the old generation painted, the new one not yet", func(t *testing.T) {
		v := check(t, InputLandsInComposer, []sim.Event{live, paint,
			tev(9, "main", "exit", "1", "session=s1", "backend=s1#1"),
			tev(12, "main", "start", "live", "session=s1", "backend=s1#2"),
			tev(13, "main", "pty.write", "delivered", "session=s1", "pane=p1", "seq=1", "backend=s1#2")})
		requireMessage(t, v, InputLandsInComposer, "backend s1#2 had not painted")
	})
	t.Run("near miss: a write with no entry is not a delivery", func(t *testing.T) {
		assert.Nil(t, check(t, InputLandsInComposer, []sim.Event{
			tev(2, "main", "pty.write", "no-entry", "session=s1", "pane=p1", "seq=1")}))
	})
}

// QwenLM/qwen-code#7385: a detach by a client that holds no reference (one
// whose attach never landed, one detaching twice) takes another client's
// reference. With PR #7386's ledger only a held reference is released.
func TestPTYDetachReleasesOwnReference(t *testing.T) {
	attach := func(sec float64, pane, count string) sim.Event {
		return tev(sec, "main", "pty.attach", "attached", "session=s1", "pane="+pane, "count="+count)
	}
	detach := func(sec float64, pane, outcome, count string) sim.Event {
		return tev(sec, "main", "pty.detach", outcome, "session=s1", "pane="+pane, "count="+count)
	}
	t.Run("story: a client whose attach found no entry detaches", func(t *testing.T) {
		v := check(t, PTYDetachOwnReference, []sim.Event{attach(1, "p1", "1"),
			tev(4, "main", "pty.attach", "no-entry", "session=s1", "pane=p2", "count=1"), detach(10, "p2", "released", "0")})
		requireMessage(t, v, PTYDetachOwnReference, "pane p2 detached session s1", "T+00:00:10.000", "taking a reference of [p1]")
	})
	t.Run("story: the same client detaches twice", func(t *testing.T) {
		v := check(t, PTYDetachOwnReference, []sim.Event{attach(1, "p1", "1"), attach(2, "p2", "2"),
			detach(3, "p2", "decremented", "1"), detach(3.5, "p2", "released", "0")})
		requireMessage(t, v, PTYDetachOwnReference, "pane p2 detached", "[p1]")
	})
	t.Run("fix: the stray detach is ignored", func(t *testing.T) {
		assert.Nil(t, check(t, PTYDetachOwnReference, []sim.Event{attach(1, "p1", "1"),
			detach(3, "p2", "ignored", "1"), detach(4, "p1", "released", "0")}))
	})
	t.Run("near miss: a detach at zero changes nothing", func(t *testing.T) {
		assert.Nil(t, check(t, PTYDetachOwnReference, []sim.Event{detach(3, "p2", "unmatched", "0")}))
	})
	t.Run("near miss: a late attach released by its own client", func(t *testing.T) {
		assert.Nil(t, check(t, PTYDetachOwnReference, []sim.Event{attach(1, "p1", "1"), attach(1.1, "p2", "2"),
			tev(1.2, "pane/p2", "pane.attach", "released", "session=s1"), detach(1.3, "p2", "decremented", "1")}))
	})
	t.Run("near miss: one client holding two references releases both", func(t *testing.T) {
		assert.Nil(t, check(t, PTYDetachOwnReference, []sim.Event{attach(1, "p1", "1"), attach(2, "p1", "2"),
			detach(3, "p1", "decremented", "1"), detach(4, "p1", "released", "0")}))
	})
	t.Run("near miss: another session's reference", func(t *testing.T) {
		v := check(t, PTYDetachOwnReference, []sim.Event{
			tev(1, "main", "pty.attach", "attached", "session=s2", "pane=p2", "count=1"),
			attach(2, "p1", "1"), detach(3, "p2", "released", "0")})
		requireMessage(t, v, PTYDetachOwnReference, "pane p2 detached session s1")
	})
}

// im-ian/acorn#37 in agent-code terms: the boot rehydrate and a leaf's wake
// both pass recover's check before either inserts, so two backends start
// for s1.
func spawnRace(second ...sim.Event) []sim.Event {
	h := []sim.Event{
		tev(0.001, "main", "recover", "constructing", "session=s1", "kind=claude", "caller=rehydrate"),
		tev(0.003, "main", "recover", "constructing", "session=s1", "kind=claude", "caller=w1"),
		tev(0.051, "main", "recover", "claimed", "session=s1", "kind=claude", "caller=rehydrate", "backend=s1#1"),
		tev(0.051, "main", "spawn", "starting", "session=s1", "backend=s1#1", "kind=claude"),
	}
	return append(h, second...)
}

func TestOneAgentProcessPerSession(t *testing.T) {
	// The report: the second claim forks s1#2 while s1#1 is starting.
	v := checkEnd(t, OneAgentPerSession, spawnRace(
		tev(0.053, "main", "recover", "claimed", "session=s1", "kind=claude", "caller=w1", "backend=s1#2"),
		tev(0.053, "main", "spawn", "starting", "session=s1", "backend=s1#2", "kind=claude"),
	), time.Minute)
	requireMessage(t, v, OneAgentPerSession, "session s1 has two agent processes", "backend s1#2 spawned at T+00:00:00.053 for w1",
		"backend s1#1, spawned at T+00:00:00.051 for rehydrate")

	// The fix: the second request joins the claim; nothing else spawns.
	assert.Nil(t, checkEnd(t, OneAgentPerSession, []sim.Event{
		tev(0.001, "main", "recover", "claimed", "session=s1", "kind=claude", "caller=rehydrate", "backend=s1#1"),
		tev(0.001, "main", "spawn", "starting", "session=s1", "backend=s1#1", "kind=claude"),
		tev(0.003, "main", "recover", "joined", "session=s1", "kind=claude", "caller=w1", "backend=s1#1"),
		tev(0.301, "main", "start", "live", "session=s1", "backend=s1#1"),
	}, time.Minute))

	// Near misses: a respawn after the first backend was killed, exited,
	// failed to start or was cancelled; and another session's spawn.
	for _, end := range []sim.Event{
		tev(5, "main", "kill", "killed", "session=s1", "backend=s1#1", "cause=spawn-deadline"),
		tev(5, "main", "exit", "1", "session=s1", "backend=s1#1", "cause=crash"),
		tev(5, "main", "start", "start-failed", "session=s1", "backend=s1#1"),
		tev(5, "main", "start", "cancelled", "session=s1", "backend=s1#1"),
	} {
		assert.Nil(t, checkEnd(t, OneAgentPerSession, spawnRace(end,
			tev(6, "main", "recover", "claimed", "session=s1", "kind=claude", "caller=w2", "backend=s1#2"),
			tev(6, "main", "spawn", "starting", "session=s1", "backend=s1#2", "kind=claude"),
		), time.Minute), "after %s %s", end.Kind, end.Outcome)
	}
	assert.Nil(t, checkEnd(t, OneAgentPerSession, spawnRace(
		tev(0.06, "main", "spawn", "starting", "session=s2", "backend=s2#1", "kind=codex"),
	), time.Minute))
}

// stablyai/orca#11006 in agent-code terms: the renderer reloads over a live
// backend and its restore cold-spawns the visible leaf.
func TestOneAgentProcessPerSession_ReloadColdRestore(t *testing.T) {
	live := []sim.Event{
		tev(0.001, "main", "recover", "claimed", "session=s1", "kind=codex", "caller=rehydrate", "backend=s1#1"),
		tev(0.001, "main", "spawn", "starting", "session=s1", "backend=s1#1", "kind=codex"),
		tev(0.301, "main", "start", "live", "session=s1", "backend=s1#1"),
		tev(2, "user", "renderer.reload", "", "panes=1"),
		tev(2, "pane/p1", "pane.unmount", "", "session=s1", "cause=reload"),
	}
	v := checkEnd(t, OneAgentPerSession, append(append([]sim.Event(nil), live...),
		tev(2.001, "main", "spawn.cold", "claimed", "session=s1", "kind=codex", "caller=rehydrate", "replaces=s1#1", "backend=s1#2"),
		tev(2.001, "main", "spawn", "starting", "session=s1", "backend=s1#2", "kind=codex"),
	), time.Minute)
	requireMessage(t, v, OneAgentPerSession, "backend s1#2 spawned at T+00:00:02.001 for rehydrate",
		"backend s1#1, spawned at T+00:00:00.001 for rehydrate, was still running")

	// The fix: the restore adopts s1#1.
	assert.Nil(t, checkEnd(t, OneAgentPerSession, append(append([]sim.Event(nil), live...),
		tev(2.001, "main", "recover", "adopted", "session=s1", "kind=codex", "caller=rehydrate", "backend=s1#1"),
	), time.Minute))
	// Near miss: the backend had crashed before the reload; a cold spawn
	// then is the only agent.
	assert.Nil(t, checkEnd(t, OneAgentPerSession, append(append([]sim.Event(nil), live[:3]...),
		tev(1, "main", "exit", "1", "session=s1", "backend=s1#1", "cause=crash"),
		tev(2.001, "main", "spawn.cold", "claimed", "session=s1", "kind=codex", "caller=rehydrate", "backend=s1#2"),
		tev(2.001, "main", "spawn", "starting", "session=s1", "backend=s1#2", "kind=codex"),
	), time.Minute))
}

// AgentSystemLabs/nebula#78: the detached-idle reaper kills an agent whose
// background job is still running; with PR #80 it waits for the job and
// restarts the idle clock when it ends.
func TestNoReapOfLiveWork(t *testing.T) {
	job := tev(3, "agent/s1", "bg.start", "", "session=s1", "backend=s1#1", "job=s1#1/j1")
	end := tev(600, "agent/s1", "bg.end", "", "session=s1", "backend=s1#1", "job=s1#1/j1")
	reap := func(sec float64) sim.Event {
		return tev(sec, "main", "kill", "killed", "session=s1", "backend=s1#1", "cause=detached-idle")
	}
	t.Run("story: reaped with the job running", func(t *testing.T) {
		v := check(t, NoReapOfLiveWork, []sim.Event{job, reap(303)})
		requireMessage(t, v, NoReapOfLiveWork, "killed backend s1#1", "background job s1#1/j1", "T+00:05:03.000")
	})
	t.Run("mutant: reaped right after the job ended", func(t *testing.T) {
		v := check(t, NoReapOfLiveWork, []sim.Event{job, end, reap(603)})
		requireMessage(t, v, NoReapOfLiveWork, "3s after its background job", "idle less than 5m0s")
	})
	t.Run("fix: reaped 5 min after the job ended", func(t *testing.T) {
		assert.Nil(t, check(t, NoReapOfLiveWork, []sim.Event{job, end, reap(900)}))
	})
	t.Run("a running turn or prompt", func(t *testing.T) {
		v := check(t, NoReapOfLiveWork, []sim.Event{tev(1, "agent/s1", "turn.start", "", "session=s1", "backend=s1#1"), reap(400)})
		requireMessage(t, v, NoReapOfLiveWork, "its turn")
		v = check(t, NoReapOfLiveWork, []sim.Event{tev(1, "agent/s1", "prompt", "shown", "session=s1", "backend=s1#1"), reap(400)})
		requireMessage(t, v, NoReapOfLiveWork, "its prompt")
	})
	t.Run("a pane still attached (qwen-code#7385's kill on zero)", func(t *testing.T) {
		v := check(t, NoReapOfLiveWork, []sim.Event{tev(1, "pane/p1", "pane.attach", "attached", "session=s1"), reap(400)})
		requireMessage(t, v, NoReapOfLiveWork, "while pane p1 was attached")
	})
	t.Run("near miss: an owner's kill with the job running", func(t *testing.T) {
		assert.Nil(t, check(t, NoReapOfLiveWork, []sim.Event{job,
			tev(40, "main", "kill", "killed", "session=s1", "backend=s1#1", "cause=readiness-timeout", "wake=w2")}))
	})
	t.Run("near miss: another backend's job, a pane that unmounted", func(t *testing.T) {
		assert.Nil(t, check(t, NoReapOfLiveWork, []sim.Event{
			tev(1, "agent/s2", "bg.start", "", "session=s2", "backend=s2#1", "job=s2#1/j1"),
			tev(1, "pane/p1", "pane.attach", "attached", "session=s1"), tev(2, "pane/p1", "pane.unmount", "", "session=s1"),
			reap(400)}))
	})
	t.Run("near miss: the old generation's job died with it", func(t *testing.T) {
		assert.Nil(t, check(t, NoReapOfLiveWork, []sim.Event{job, tev(60, "main", "exit", "1", "session=s1", "backend=s1#1"),
			tev(70, "main", "start", "live", "session=s1", "backend=s1#2"),
			tev(700, "main", "kill", "killed", "session=s1", "backend=s1#2", "cause=detached-idle")}))
	})
}

// The 31 s are awake time (chaos seed 3763 under fixed): a host that
// sleeps an hour 2 s after a wedged backend went live owes its kill 29 s
// after it wakes, not at once; past that it is due again.
func TestWedgedSpawnReplaced_HostSleepStopsTheClock(t *testing.T) {
	slept := wedgedSpawn(tev(6, "fault", "host.suspend", "", "for=1h0m0s"), tev(3606, "fault", "host.resume", "", "slept=1h0m0s"))
	assert.Nil(t, check(t, WedgedSpawnReplaced, append(slept, tev(3630, "user", "type", "queued", "session=s1"))))
	v := check(t, WedgedSpawnReplaced, append(slept, tev(3640, "user", "type", "queued", "session=s1")))
	requireMessage(t, v, WedgedSpawnReplaced, "s1#1", "went live at T+00:00:02.000", "T+01:00:33.000", "the host having slept 1h0m0s", "T+01:00:40.000")
	// A client host's own suspend (host/mobile-1) is not the server host's.
	other := wedgedSpawn(tev(3606, "host/mobile-1", "host.resume", "", "client=mobile-1"))
	requireMessage(t, check(t, WedgedSpawnReplaced, other), WedgedSpawnReplaced, "s1#1")
}

// crynta/terax-ai#132 and RunMaestro/Maestro#1302 in agent-code terms: a
// failed start's late exit lands on the retry that reused its id.
func TestExitEndsOwnGeneration(t *testing.T) {
	story := func(late ...sim.Event) []sim.Event {
		return append([]sim.Event{
			tev(1, "main", "spawn", "starting", "session=s3", "backend=s3#1", "kind=opencode"),
			tev(3, "main", "start", "start-failed", "session=s3", "backend=s3#1"),
			tev(11, "main", "spawn", "starting", "session=s3", "backend=s3#2", "kind=opencode"),
			tev(12, "main", "start", "live", "session=s3", "backend=s3#2"),
		}, late...)
	}
	// The report: main applies s3#1's exit to s3#2's entry.
	v := checkEnd(t, ExitEndsOwnGeneration, story(
		tev(40, "main", "exit.late", "applied", "session=s3", "backend=s3#1", "entry=s3#2", "code=1")), time.Minute)
	requireMessage(t, v, ExitEndsOwnGeneration, "the exit of backend s3#1 of session s3", "arrived at T+00:00:40.000",
		"backend s3#2 (spawned at T+00:00:11.000)")
	// Its UI half: the renderer marks the running s3#2 exited.
	v = checkEnd(t, ExitEndsOwnGeneration, story(
		tev(40, "renderer", "session.exit", "1", "session=s3", "backend=s3#2", "cause=late-exit")), time.Minute)
	requireMessage(t, v, ExitEndsOwnGeneration, "marked backend s3#2 of session s3 exited at T+00:00:40.000 (cause late-exit)",
		"spawned at T+00:00:11.000 and is still running")

	// The fix: the late exit is ignored.
	assert.Nil(t, checkEnd(t, ExitEndsOwnGeneration, story(
		tev(40, "main", "exit.late", "ignored", "session=s3", "backend=s3#1", "entry=s3#2", "code=1")), time.Minute))
	// Near misses: a late exit that finds no entry; the renderer told of
	// a backend main killed, or that exited, first.
	assert.Nil(t, checkEnd(t, ExitEndsOwnGeneration, story(
		tev(40, "main", "exit.late", "no-entry", "session=s3", "backend=s3#1", "entry=-", "code=1")), time.Minute))
	for _, end := range []sim.Event{
		tev(40, "main", "kill", "killed", "session=s3", "backend=s3#2", "cause=reaper"),
		tev(40, "main", "exit", "1", "session=s3", "backend=s3#2", "cause=crash"),
	} {
		assert.Nil(t, checkEnd(t, ExitEndsOwnGeneration, story(end,
			tev(40.01, "renderer", "session.exit", "1", "session=s3", "backend=s3#2", "cause=crash")), time.Minute), "after %s", end.Kind)
	}
}

// agent-code's prompt delivery: bytes written before readiness (or into a
// prompt) are lost, and an Enter inside the paste accumulator is swallowed;
// pane keystrokes (seq, no data) are input-lands-in-composer's to judge.
func TestPromptDeliveryLandsInComposer(t *testing.T) {
	ok := []sim.Event{tev(1, "agent/s1", "composer", "absorbed", "session=s1", "backend=s1#1", "view=9"),
		tev(2, "agent/s1", "input.misplaced", "", "session=s1", "backend=s1#1", "seq=1-3", "why=composer-unpainted")}
	assert.Nil(t, check(t, PromptDeliveryLands, ok))
	v := check(t, PromptDeliveryLands, []sim.Event{tev(3, "agent/s1", "input.misplaced", "", "session=s1", "backend=s1#1",
		"data=paste+enter(9)", "why=prompt-on-screen")})
	requireMessage(t, v, PromptDeliveryLands, "paste+enter(9)", "backend s1#1", "T+00:00:03.000", "prompt-on-screen")
	v = check(t, PromptDeliveryLands, []sim.Event{tev(4, "agent/s1", "input.swallowed", "", "session=s1", "backend=s1#1",
		"why=paste-accumulating")})
	requireMessage(t, v, PromptDeliveryLands, "backend s1#1", "T+00:00:04.000", "swallowed")
}
