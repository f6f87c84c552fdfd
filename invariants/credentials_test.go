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

// t3code PR #7083's finding: browser access of thread-b's project is
// withdrawn; the thread re-attaches to the shared codex session and its
// prepare takes the deny path, issuing c2 without revoking c1, which still
// carries preview.
func TestOneLiveCredentialPerThread(t *testing.T) {
	issued := []sim.Event{
		ev(0, "mcp-registry", "credential.issue", "", "thread=thread-b", "cred=c1", "caps=orchestration,preview", "for=psess:codex#1.1"),
		ev(0, "mcp-registry", "credential.issue", "", "thread=thread-a", "cred=a1", "caps=orchestration,preview", "for=psess:codex#1.1"),
	}
	deny := append(append([]sim.Event{}, issued...),
		ev(41, "mcp-registry", "credential.issue", "", "thread=thread-b", "cred=c2", "caps=orchestration", "for=psess:codex#1.1"))
	v := check(t, OneLiveCredentialPerThread, deny)
	require.NotNil(t, v)
	for _, want := range []string{"thread thread-b was issued credential c2 (orchestration, for psess:codex#1.1) at T+00:41:00.000",
		"its credential c1 (orchestration,preview, issued at T+00:00:00.000) was still live", "after the thread's browser access was withdrawn"} {
		assert.Contains(t, v.Message, want)
	}

	// The fix: the prepare revokes the thread's credentials first.
	fixed := append(append([]sim.Event{}, issued...),
		ev(41, "mcp-registry", "credential.revoke", "", "thread=thread-b", "cred=c1", "cause=prepare:psess:codex#1.1"),
		ev(41, "mcp-registry", "credential.issue", "", "thread=thread-b", "cred=c2", "caps=orchestration", "for=psess:codex#1.1"))
	assert.Nil(t, check(t, OneLiveCredentialPerThread, fixed))

	// Near misses: another thread's live credential; one that expired; a
	// server restart (the new registry knows none of the old ones).
	assert.Nil(t, check(t, OneLiveCredentialPerThread, issued), "one credential per thread")
	expired := append(append([]sim.Event{}, issued...),
		ev(40, "mcp-registry", "credential.expire", "", "thread=thread-b", "cred=c1", "cause=liveness"),
		ev(41, "mcp-registry", "credential.issue", "", "thread=thread-b", "cred=c2", "caps=orchestration", "for=psess:codex#1.2"))
	assert.Nil(t, check(t, OneLiveCredentialPerThread, expired))
	restart := append(append([]sim.Event{}, issued...),
		ev(40, "server", "server.start", "", "incarnation=2"),
		ev(41, "mcp-registry", "credential.issue", "", "thread=thread-b", "cred=c2", "caps=orchestration,preview", "for=psess:codex#2.1"))
	assert.Nil(t, check(t, OneLiveCredentialPerThread, restart))

	// Any second live credential is the fault, not only a withdrawn capability.
	twice := append(append([]sim.Event{}, issued...),
		ev(41, "mcp-registry", "credential.issue", "", "thread=thread-b", "cred=c2", "caps=orchestration,preview", "for=psess:thread-b#1.2"))
	v = check(t, OneLiveCredentialPerThread, twice)
	require.NotNil(t, v)
	assert.NotContains(t, v.Message, "withdrawn")
}
