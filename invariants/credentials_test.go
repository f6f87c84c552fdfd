package invariants

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// t3code#4463's story: a codex session opens for thread-a with credential
// c1, keeps taking turns but makes no MCP call, and the idle era's 30 min
// timeout expires c1 while the session runs.
func liveSessionHistory(tail ...sim.Event) []sim.Event {
	h := []sim.Event{
		ev(0, "mcp-registry", "credential.issue", "", "thread=thread-a", "cred=c1", "for=psess:codex#1.1"),
		ev(0, "psm", "session.opened", "ready", "providerSessionId=psess:codex", "incarnation=psess:codex#1.1", "thread=thread-a", "cred=c1"),
		ev(0, "psm", "turn.start", "", "providerSessionId=psess:codex", "thread=thread-a"),
		ev(20, "psm", "turn.start", "", "providerSessionId=psess:codex", "thread=thread-a"),
	}
	return append(h, tail...)
}

func TestLiveSessionKeepsCredential(t *testing.T) {
	expire := ev(45, "mcp-registry", "credential.expire", "", "thread=thread-a", "cred=c1", "cause=liveness", "last-alive=T+00:05:00.000")
	v := check(t, LiveSessionKeepsCredential, liveSessionHistory(expire))
	require.NotNil(t, v)
	for _, want := range []string{"thread-a", "c1", "psess:codex#1.1", "T+00:45:00.000", "no sign of life the registry counts since T+00:05:00.000", "T+00:20:00.000", "25m0s after"} {
		assert.Contains(t, v.Message, want)
	}
	lifetime := ev(480.1, "mcp-registry", "credential.expire", "", "thread=thread-a", "cred=c1", "cause=lifetime", "issued=T+00:00:00.000")
	v = check(t, LiveSessionKeepsCredential, liveSessionHistory(ev(470, "psm", "turn.start", "", "thread=thread-a"), lifetime))
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "lifetime cap: issued at T+00:00:00.000")
}

// The near misses: the credential of a session that ended (released,
// crashed, detached, or lost in a restart) may expire, and so may a live
// session's after 24 h without a turn, as may another thread's credential.
func TestLiveSessionKeepsCredential_NearMisses(t *testing.T) {
	expire := func(m float64, cred string) sim.Event {
		return ev(m, "mcp-registry", "credential.expire", "", "thread=thread-a", "cred="+cred, "cause=liveness")
	}
	for name, h := range map[string][]sim.Event{
		"released": liveSessionHistory(ev(30, "psm", "session.release", "stopped", "providerSessionId=psess:codex", "incarnation=psess:codex#1.1", "reason=idle_timeout"), expire(45, "c1")),
		"crashed":  liveSessionHistory(ev(30, "psm", "provider.crash", "", "providerSessionId=psess:codex", "incarnation=psess:codex#1.1"), expire(45, "c1")),
		"detached": liveSessionHistory(ev(30, "psm", "session.detach", "", "providerSessionId=psess:codex", "thread=thread-a", "terminal=false"), expire(45, "c1")),
		"restart":  liveSessionHistory(ev(30, "server", "server.start", "", "incarnation=2"), expire(45, "c1")),
		"24 h":     liveSessionHistory(expire(20+24*60, "c1")),
		"other":    liveSessionHistory(expire(45, "c9")),
		"23 h reuse": append([]sim.Event{ev(-60*23, "mcp-registry", "credential.issue", "", "thread=thread-a", "cred=c0")},
			liveSessionHistory(ev(25, "psm", "session.attach", "", "providerSessionId=psess:codex", "incarnation=psess:codex#1.1", "thread=thread-b", "cred=c0"), expire(61, "c0"))...),
		"replaced": liveSessionHistory(ev(25, "psm", "session.attach", "", "providerSessionId=psess:codex", "incarnation=psess:codex#1.1", "thread=thread-a", "cred=c2"), expire(45, "c1")),
	} {
		assert.Nil(t, check(t, LiveSessionKeepsCredential, h), name)
	}
}
