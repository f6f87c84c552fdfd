package invariants

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/orchsim/orchsim/sim"
)

// slept is the world's fault actor resuming the host after d of sleep, at
// second s (the wall clock has jumped by d; the awake clock has not).
func slept(s float64, d time.Duration) sim.Event {
	return tev(s, "fault", "host.resume", "", "slept="+d.String())
}

// The hunt's chaos seed 1019859 (docs/findings.md): a pane mounts, the host
// sleeps 2 h 25 min, the pane attaches 21 ms after the resume. The renderer
// was blank for 21 ms of awake time, not for the 2 h 25 min it slept.
func TestRemountAttachesPromptly_CountsAwakeTime(t *testing.T) {
	nap := 145 * time.Minute
	resume := 60 + nap.Seconds()
	h := mountThen(slept(resume, nap))
	h = append(h, tev(resume+0.021, "pane/p5", "pane.attach", "attached", "session=s1"))
	assert.Nil(t, check(t, RemountAttachesPromptly, h), "a pane attached 21 ms after the host woke is prompt")

	// Awake time past the bound is still a violation, and the message
	// says how long the host slept in between.
	h = mountThen(slept(resume, nap))
	h = append(h, tev(resume+5, "pane/p5", "pane.attach", "attached", "session=s1"))
	v := check(t, RemountAttachesPromptly, h)
	requireMessage(t, v, RemountAttachesPromptly, "p5", "blank for 5s of awake time", "the host having slept 2h25m0s")

	// At the end of a run, too: a sleep alone is not an overdue attach.
	h = mountThen(slept(resume, nap))
	assert.Nil(t, checkEnd(t, RemountAttachesPromptly, h, time.Duration((resume+0.5)*float64(time.Second))))
}

func TestPTYAttachBalanced_CountsAwakeTime(t *testing.T) {
	// A mismatch of 10 ms of awake time that a 2 h sleep interrupts.
	h := []sim.Event{
		tev(1, "main", "pty.attach", "attached", "session=s1", "pane=p2", "count=1"),
		slept(1+7200, 2*time.Hour),
		tev(7201.01, "pane/p2", "pane.attach", "attached", "session=s1"),
	}
	assert.Nil(t, check(t, PTYAttachBalanced, h), "the reference settled within 10 ms of awake time")
	h[2] = tev(7241, "agent/s1", "output", "", "session=s1")
	v := check(t, PTYAttachBalanced, h)
	requireMessage(t, v, PTYAttachBalanced, "session s1", "holds 1")
}

func TestCancelReachesDescendants_CountsAwakeTime(t *testing.T) {
	// The host sleeps an hour right after the cancel; C stops 10 s after
	// the resume: within the minute of awake time.
	h := cancelTreeHistory(cancelOf(1, "p", "accepted"), slept(61*60, time.Hour),
		ev(61+10.0/60, "orchestrator", "task.settled", "interrupted", "task=c"))
	assert.Nil(t, check(t, CancelReachesDescendants, h))
	// Still running 2 min of awake time after the resume: overdue.
	h = cancelTreeHistory(cancelOf(1, "p", "accepted"), slept(61*60, time.Hour),
		ev(63, "agent/thread-b", "t3_thread_send", "accepted", "thread=thread-b"))
	v := check(t, CancelReachesDescendants, h)
	if assert.NotNil(t, v) {
		assert.Contains(t, v.Message, "2m0s of awake time, the host having slept 1h0m0s in between after")
	}
	// Running at the end of the run is a violation whatever the host slept.
	h = cancelTreeHistory(cancelOf(1, "p", "accepted"), slept(61*60, time.Hour))
	assert.NotNil(t, checkEnd(t, CancelReachesDescendants, h, 61*time.Minute+time.Second))
}
