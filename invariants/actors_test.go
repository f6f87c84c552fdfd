package invariants

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// actorOnlyHistories are, per checker that declares actors
// (sim.ActorObserver), a history whose only violation is reported at an
// agent tool call of a kind the checker does not declare: so the checker
// sees it only through its actor declaration.
var actorOnlyHistories = map[string][]sim.Event{
	// c1 is revoked, then the agent still gets an answer with it.
	RevokedCredentialDenied: {
		ev(0, "server", "credential.issue", "ok", "cred=c1"),
		ev(1, "server", "credential.revoke", "ok", "cred=c1", "cause=idle"),
		ev(2, "agent/a", "preview_snapshot", "ok", "cred=c1", "thread=a"),
	},
	// r1 was left running by incarnation 1; incarnation 2's first command
	// is an agent tool call.
	NoRunOutlivesItsProcess: {
		ev(0, "server", "server.start", "ok", "incarnation=1"),
		ev(1, "server", "run.start", "ok", "run=r1", "thread=a"),
		ev(2, "server", "server.start", "ok", "incarnation=2"),
		ev(3, "agent/a", "preview_snapshot", "ok", "cred=c2", "thread=a"),
	},
	// thread a's session is written stopped with a turn still queued when
	// the restarted server's first command, an agent tool call, arrives.
	StoppedSessionSettles: {
		ev(0, "server", "server.start", "ok", "incarnation=1"),
		ev(1, "server", "turn.queued", "ok", "thread=a", "message=m1"),
		ev(2, "server", "session.runtime", "stopped", "thread=a"),
		ev(3, "server", "server.start", "ok", "incarnation=2"),
		ev(4, "agent/a", "preview_snapshot", "ok", "cred=c2", "thread=a"),
	},
}

// Every checker that declares actors reports a violation it can only see
// through that declaration, fed as the trace feeds it (sim.Feeds): dropping
// the declaration, or narrowing it to miss agent/ actors, fails here.
func TestDeclaredActorsAreRead(t *testing.T) {
	declaring := 0
	for _, i := range All() {
		c := i.New()
		a, ok := c.(sim.ActorObserver)
		if !ok || len(a.ObservedActors()) == 0 {
			continue
		}
		declaring++
		history, ok := actorOnlyHistories[i.Name]
		require.True(t, ok, "%s declares actors: add a history to actorOnlyHistories whose violation only an agent event shows", i.Name)
		last := &history[len(history)-1]
		if k, ok := c.(sim.KindObserver); ok {
			require.NotContains(t, k.ObservedKinds(), last.Kind, "%s: the history's last event must be of an undeclared kind", i.Name)
		}
		var got *sim.Violation
		for j := range history {
			history[j].Seq = uint64(j)
			if !sim.Feeds(c, &history[j]) {
				continue
			}
			if v := c.Observe(&history[j]); v != nil {
				got = v
				require.Equal(t, len(history)-1, j, "%s reported before the agent event", i.Name)
			}
		}
		require.NotNil(t, got, "%s did not report the violation only its agent/ actor declaration shows", i.Name)
		assert.Equal(t, i.Name, got.Invariant)
	}
	assert.Equal(t, len(actorOnlyHistories), declaring, "a history for a checker that no longer declares actors")
}
