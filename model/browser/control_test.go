package browser

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/orchsim/orchsim/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// controlMachine drives one SessionControl with rapid: the actions are its
// inputs (agent work by the owner and by another agent, viewers taking and
// releasing control, close, time passing), and the "" action checks the
// safety properties after each of them.
type controlMachine struct {
	k        *sim.Kernel
	c        *Control
	ran      []execution
	refusals map[string]int
	closed   bool
}

type execution struct {
	agent string
	owner string
	epoch int
	at    int // epoch when submitted
}

func (m *controlMachine) submit(t *rapid.T, agent string) {
	epoch := m.c.Epoch
	m.c.Agent(agent, false, func() (string, time.Duration) {
		m.ran = append(m.ran, execution{agent: agent, owner: m.c.Owner, epoch: m.c.Epoch, at: epoch})
		return OK, time.Duration(rapid.IntRange(0, 3).Draw(t, "took")) * time.Second
	}, func(outcome string) { m.refusals[outcome]++ })
}

func (m *controlMachine) AgentOwner(t *rapid.T) { m.submit(t, "agent-a") }
func (m *controlMachine) AgentOther(t *rapid.T) {
	before := m.refusals[ReasonAgentMismatch] + m.refusals[ReasonClosed]
	m.submit(t, "agent-b")
	if m.refusals[ReasonAgentMismatch]+m.refusals[ReasonClosed] != before+1 {
		t.Fatalf("another agent's work was not refused at once")
	}
}
func (m *controlMachine) Take(t *rapid.T) {
	v := rapid.SampledFrom([]string{"viewer-1", "viewer-2"}).Draw(t, "viewer")
	prev := m.c.Owner
	ok := m.c.Take(v)
	if ok && prev != "" && prev != v {
		t.Fatalf("%s stole control from %s", v, prev)
	}
}
func (m *controlMachine) Release(t *rapid.T) {
	v := rapid.SampledFrom([]string{"viewer-1", "viewer-2"}).Draw(t, "viewer")
	prev := m.c.Owner
	if m.c.Release(v) && prev != v {
		t.Fatalf("%s released control held by %q", v, prev)
	}
}
func (m *controlMachine) Close(t *rapid.T) { m.c.Close(); m.closed = true }
func (m *controlMachine) Tick(t *rapid.T)  { m.k.RunUntil(m.k.Elapsed() + time.Second) }

// Check is the invariant action: no agent work ran while a human held the
// tab, after the tab closed, or across an epoch change; only the owner ran.
func (m *controlMachine) Check(t *rapid.T) {
	for _, e := range m.ran {
		if e.owner != "" {
			t.Fatalf("%s ran while %s controlled the tab", e.agent, e.owner)
		}
		if e.epoch != e.at {
			t.Fatalf("work submitted at epoch %d ran at epoch %d", e.at, e.epoch)
		}
		if e.agent != "agent-a" {
			t.Fatalf("%s ran on agent-a's tab", e.agent)
		}
	}
}

func TestControl_StateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := sim.NewKernel(false)
		m := &controlMachine{k: k, c: NewControl("agent-a", func(d time.Duration, f func()) { k.Schedule(d, f) }),
			refusals: map[string]int{}}
		t.Repeat(rapid.StateMachineActions(m))
	})
}

func TestControl_ReasonsInUpstreamOrder(t *testing.T) {
	k := sim.NewKernel(false)
	c := NewControl("agent-a", func(d time.Duration, f func()) { k.Schedule(d, f) })
	var got []string
	run := func() (string, time.Duration) { return OK, 0 }
	rec := func(o string) { got = append(got, o) }
	c.Agent("agent-b", false, run, rec)
	c.Take("viewer")
	c.Agent("agent-b", false, run, rec) // mismatch is checked before human control
	c.Agent("agent-a", false, run, rec)
	c.Release("viewer")
	c.Agent("agent-a", false, run, rec)
	c.Close()
	c.Agent("agent-a", false, run, rec)
	assert.Equal(t, []string{ReasonAgentMismatch, ReasonAgentMismatch, ReasonHumanControl, OK, ReasonClosed}, got)
	assert.Equal(t, 3, c.Epoch, "take, release and close each bump the epoch")
}
