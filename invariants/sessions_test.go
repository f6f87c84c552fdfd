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
