package invariants

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// fire is a scheduler fire of task s for slot, late after it, recording
// lastRunAt as rec ("-": none).
func fire(m float64, s, trigger, slot, late, rec string) sim.Event {
	return ev(m, "scheduler", "schedule.fire", trigger, "schedule="+s, "thread=thread-a", "slot="+slot, "late="+late,
		"enabled=true", "recorded="+rec)
}

// anthropics/claude-code#74055's story: a daily task fires at its slot
// (T+00:50), the app restarts at T+01:45, and the catch-up fires the same
// slot again minutes later, recording nothing.
func TestOneFirePerSlot(t *testing.T) {
	created := ev(0, "scheduler", "schedule.created", "", "schedule=s1", "thread=thread-a", "next=T+00:50:00.000")
	v := check(t, OneFirePerSlot, []sim.Event{created,
		fire(50, "s1", "scheduled", "T+00:50:00.000", "0s", "T+00:50:00.000"),
		ev(105, "server", "server.start", "", "incarnation=2"),
		fire(106, "s1", "catch-up", "T+00:50:00.000", "56m0s", "-"),
	})
	require.NotNil(t, v)
	for _, want := range []string{"s1", "twice", "T+00:50:00.000", "T+01:46:00.000", "catch-up"} {
		assert.Contains(t, v.Message, want)
	}
	// A disabled task fired by the catch-up.
	v = check(t, OneFirePerSlot, []sim.Event{created,
		ev(20, "scheduler", "schedule.enabled", "disabled", "schedule=s1"),
		fire(106, "s1", "catch-up", "T+00:50:00.000", "56m0s", "-"),
	})
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "while disabled since T+00:20:00.000")
	// A slot missed while the server was down, fired late.
	v = check(t, OneFirePerSlot, []sim.Event{created,
		fire(106, "s1", "catch-up", "T+00:50:00.000", "56m0s", "-"),
	})
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "56m0s late")
	// A fire that records no lastRunAt.
	v = check(t, OneFirePerSlot, []sim.Event{created,
		fire(51, "s1", "catch-up", "T+00:50:00.000", "1m0s", "-"),
	})
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "without recording lastRunAt")
}

// The fix and near misses: one fire per day's slot, a re-enabled task's
// next slot, a fire within the grace, another task's slot.
func TestOneFirePerSlot_NearMisses(t *testing.T) {
	h := []sim.Event{
		ev(0, "scheduler", "schedule.created", "", "schedule=s1", "thread=thread-a"),
		fire(50, "s1", "scheduled", "T+00:50:00.000", "0s", "T+00:50:00.000"),
		ev(60, "scheduler", "schedule.enabled", "disabled", "schedule=s1"),
		ev(61, "scheduler", "schedule.skip", "missed", "schedule=s1", "slot=T+00:50:00.000"),
		ev(70, "scheduler", "schedule.enabled", "enabled", "schedule=s1"),
		fire(1490+9.5, "s1", "scheduled", "T+24:50:00.000", "9m30s", "T+24:59:30.000"),
		fire(1500, "s2", "scheduled", "T+25:00:00.000", "0s", "T+25:00:00.000"),
	}
	assert.Nil(t, check(t, OneFirePerSlot, h))
}
