package invariants

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// ev builds a history event: "actor kind outcome k=v k=v" at minute m.
func ev(m float64, actor, kind, outcome string, kv ...string) sim.Event {
	e := sim.Event{At: time.Duration(m * float64(time.Minute)), Actor: actor, Kind: kind, Outcome: outcome}
	for _, p := range kv {
		k, v, _ := strings.Cut(p, "=")
		e.Attrs = append(e.Attrs, sim.A(k, v))
	}
	return e
}

// check feeds history to a fresh checker named name and returns the first
// violation.
func check(t *testing.T, name string, history []sim.Event) *sim.Violation {
	t.Helper()
	c := New(name)[0]
	for i := range history {
		history[i].Seq = uint64(i)
		if v := c.Observe(&history[i]); v != nil {
			v.At = history[i].At
			return v
		}
	}
	return nil
}

// The #23021 story: thread-a opens tab_1 under credential c1, idles out,
// resumes under c2 and is refused on its own tab.
func resumedThreadHistory(outcome string) []sim.Event {
	return []sim.Event{
		ev(0, "mcp-registry", "credential.issue", "", "thread=thread-a", "cred=c1", "for=psess:thread-a#1"),
		ev(1, "agent/thread-a", "preview_open", "ok", "thread=thread-a", "cred=c1", "key=env-1/c1/thread-a", "tab=tab_1", "tab-thread=thread-a"),
		ev(40, "mcp-registry", "credential.revoke", "", "thread=thread-a", "cred=c1", "cause=cleanup:psess:thread-a#1"),
		ev(90, "mcp-registry", "credential.issue", "", "thread=thread-a", "cred=c2", "for=psess:thread-a#2"),
		ev(91, "agent/thread-a", "t3_preview_close", outcome, "thread=thread-a", "cred=c2", "tab=tab_1", "key=env-1/c2/thread-a", "tab-thread=thread-a", "owner=env-1/c1/thread-a"),
	}
}

func TestThreadKeepsItsTabs(t *testing.T) {
	assert.Nil(t, check(t, ThreadKeepsItsTabs, resumedThreadHistory("ok")))
	v := check(t, ThreadKeepsItsTabs, resumedThreadHistory("agentMismatch"))
	require.NotNil(t, v)
	assert.Equal(t, ThreadKeepsItsTabs, v.Invariant)
	for _, want := range []string{"thread-a", "tab_1", "c1", "c2", "T+00:01:00.000", "T+01:31:00.000"} {
		assert.Contains(t, v.Message, want)
	}
}

func TestThreadKeepsItsTabs_OtherThreadsMismatchIsFine(t *testing.T) {
	h := []sim.Event{
		ev(1, "agent/thread-a", "preview_open", "ok", "thread=thread-a", "cred=c1", "tab=tab_1", "tab-thread=thread-a"),
		// With ignore-tab-owner off, a foreign tab id may resolve and be refused: that is protection.
		ev(2, "agent/thread-b", "preview_navigate", "agentMismatch", "thread=thread-b", "cred=c9", "tab=tab_1", "tab-thread=thread-a"),
	}
	assert.Nil(t, check(t, ThreadKeepsItsTabs, h))
}

func TestNoCrossThreadTabAction(t *testing.T) {
	h := []sim.Event{
		ev(1, "agent/thread-a", "preview_open", "ok", "thread=thread-a", "cred=c1", "tab=tab_1", "tab-thread=thread-a"),
		ev(2, "agent/thread-a", "preview_navigate", "ok", "thread=thread-a", "cred=c1", "tab=tab_1", "tab-thread=thread-a"),
		ev(3, "agent/thread-b", "preview_navigate", "tabNotFound", "thread=thread-b", "cred=c2", "tab=tab_1"),
		ev(4, "agent/thread-b", "preview_snapshot", "ok", "thread=thread-b", "cred=c2", "tab=tab_1", "tab-thread=thread-a"),
	}
	assert.Nil(t, check(t, NoCrossThreadTabAction, h), "refusals and reads are not actions")
	h = append(h, ev(5, "agent/thread-b", "t3_preview_close", "ok", "thread=thread-b", "cred=c2", "tab=tab_1", "tab-thread=thread-a"))
	v := check(t, NoCrossThreadTabAction, h)
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "thread thread-b (credential c2) ran t3_preview_close on tab tab_1 of thread thread-a at T+00:05:00.000")
}

func TestHumanControlExclusive(t *testing.T) {
	base := []sim.Event{
		ev(1, "viewer/thread-a", "control.take", "ok", "thread=thread-a", "tab=tab_1"),
		ev(2, "agent/thread-a", "preview_click", "humanControl", "thread=thread-a", "cred=c1", "tab=tab_1", "tab-thread=thread-a"),
		ev(3, "viewer/thread-a", "control.release", "", "thread=thread-a", "tab=tab_1"),
		ev(4, "agent/thread-a", "preview_click", "ok", "thread=thread-a", "cred=c1", "tab=tab_1", "tab-thread=thread-a"),
	}
	assert.Nil(t, check(t, HumanControlExclusive, base))
	bad := append(base[:1:1], ev(2, "agent/thread-a", "preview_click", "ok", "thread=thread-a", "cred=c1", "tab=tab_1"))
	v := check(t, HumanControlExclusive, bad)
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "while viewer/thread-a controlled it (since T+00:01:00.000)")
	refused := []sim.Event{
		ev(1, "viewer/thread-b", "control.take", "refused", "thread=thread-a", "tab=tab_1"),
		ev(2, "agent/thread-a", "preview_click", "ok", "thread=thread-a", "cred=c1", "tab=tab_1"),
	}
	assert.Nil(t, check(t, HumanControlExclusive, refused), "a refused take gives no control")
}

func TestRevokedCredentialDenied(t *testing.T) {
	ok := []sim.Event{
		ev(0, "mcp-registry", "credential.issue", "", "thread=thread-a", "cred=c1"),
		ev(1, "agent/thread-a", "preview_open", "ok", "thread=thread-a", "cred=c1"),
		ev(2, "mcp-registry", "credential.revoke", "", "thread=thread-a", "cred=c1", "cause=cleanup:x"),
		ev(3, "agent/thread-a", "preview_open", "401 unknown_or_expired_token", "thread=thread-a", "cred=c1"),
		// Authorized before the revoke, run after it (queued on the tab): allowed.
		ev(4, "agent/thread-a", "preview_click", "ok", "thread=thread-a", "cred=c1", "authorized=T+00:01:30.000"),
	}
	assert.Nil(t, check(t, RevokedCredentialDenied, ok))
	bad := append(ok[:3:3], ev(3, "agent/thread-a", "preview_navigate", "agentMismatch", "thread=thread-a", "cred=c1"))
	v := check(t, RevokedCredentialDenied, bad)
	require.NotNil(t, v, "any answer but 401 means the dead credential was accepted")
	assert.Contains(t, v.Message, "credential c1")
	assert.Contains(t, v.Message, "credential.revoke (cleanup:x)")

	restart := []sim.Event{
		ev(0, "mcp-registry", "credential.issue", "", "thread=thread-a", "cred=c1"),
		ev(5, "server", "server.start", "", "incarnation=2"),
		ev(6, "agent/thread-a", "preview_snapshot", "ok", "thread=thread-a", "cred=c1"),
	}
	v = check(t, RevokedCredentialDenied, restart)
	require.NotNil(t, v, "credentials die with the server process")
	assert.Contains(t, v.Message, "server restart")
}

func TestStaleCleanupSparesReplacement(t *testing.T) {
	prefix := []sim.Event{
		ev(0, "psm", "session.open", "", "incarnation=S#1", "thread=thread-a"),
		ev(0, "mcp-registry", "credential.issue", "", "thread=thread-a", "cred=c1", "for=S#1"),
		ev(0.1, "psm", "session.opened", "ready", "incarnation=S#1", "thread=thread-a", "cred=c1"),
		ev(40, "psm", "session.release", "stopped", "incarnation=S#1"),
		// The replacement is opening while S#1's scope closes.
		ev(40.1, "psm", "session.open", "", "incarnation=S#2", "thread=thread-a"),
		ev(40.1, "mcp-registry", "credential.revoke", "", "thread=thread-a", "cred=c1", "cause=prepare:S#2"),
		ev(40.1, "mcp-registry", "credential.issue", "", "thread=thread-a", "cred=c2", "for=S#2"),
	}
	good := append(append([]sim.Event{}, prefix...),
		ev(40.2, "mcp-registry", "credential.revoke", "", "thread=thread-a", "cred=c1", "cause=cleanup:S#1"))
	assert.Nil(t, check(t, StaleCleanupSparesReplacement, good))

	bad := append(append([]sim.Event{}, prefix...),
		ev(40.2, "mcp-registry", "credential.revoke", "", "thread=thread-a", "cred=c2", "cause=cleanup:S#1"))
	v := check(t, StaleCleanupSparesReplacement, bad)
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "clean-up of released session S#1 did credential.revoke of credential c2 of thread thread-a")
	assert.Contains(t, v.Message, "issued for live session S#2")

	slot := append(append([]sim.Event{}, prefix...),
		ev(40.2, "psm", "slot.clear", "", "thread=thread-a", "cred=c2", "cause=cleanup:S#1"))
	assert.NotNil(t, check(t, StaleCleanupSparesReplacement, slot), "clearing the replacement's slot is the same fault")

	dead := append(append([]sim.Event{}, prefix...),
		ev(40.15, "psm", "session.open", "ProviderSessionOpenError", "incarnation=S#2"),
		ev(40.2, "mcp-registry", "credential.revoke", "", "thread=thread-a", "cred=c2", "cause=cleanup:S#1"))
	assert.Nil(t, check(t, StaleCleanupSparesReplacement, dead), "a failed replacement has nothing to spare")

	// swarajbachu/zuse#463 in T3 terms: S restarts in place (runtime
	// options changed); the old runtime's clean-up, by session id alone,
	// revokes the new generation's credential.
	inPlace := []sim.Event{
		ev(0, "psm", "session.open", "", "incarnation=S#1", "thread=thread-a"),
		ev(0, "mcp-registry", "credential.issue", "", "thread=thread-a", "cred=c1", "for=S#1"),
		ev(0.1, "psm", "session.opened", "ready", "incarnation=S#1", "thread=thread-a", "cred=c1"),
		ev(30, "psm", "session.release", "stopped", "incarnation=S#1", "reason=runtime_restart"),
		ev(30, "psm", "session.open", "", "incarnation=S#2", "thread=thread-a", "restart-of=S#1"),
		ev(30, "mcp-registry", "credential.revoke", "", "thread=thread-a", "cred=c1", "cause=prepare:S#2"),
		ev(30, "mcp-registry", "credential.issue", "", "thread=thread-a", "cred=c2", "for=S#2"),
		ev(30, "psm", "session.opened", "ready", "incarnation=S#2", "thread=thread-a", "cred=c2"),
	}
	own := append(append([]sim.Event{}, inPlace...),
		ev(30.5, "psm", "credential.cleanup", "clear", "incarnation=S#1", "thread=thread-a", "cred=c1"))
	assert.Nil(t, check(t, StaleCleanupSparesReplacement, own), "the old generation cleans up its own, already revoked, credential")
	bySession := append(append([]sim.Event{}, inPlace...),
		ev(30.5, "mcp-registry", "credential.revoke", "", "thread=thread-a", "cred=c2", "cause=cleanup:S#1"))
	v = check(t, StaleCleanupSparesReplacement, bySession)
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "released session S#1 did credential.revoke of credential c2")
	assert.Contains(t, v.Message, "issued for live session S#2 (the released session recorded c1)")
}

func TestParseT(t *testing.T) {
	d, err := ParseT("T+36:21:12.732")
	require.NoError(t, err)
	assert.Equal(t, "T+36:21:12.732", sim.FormatT(d))
	_, err = ParseT("yesterday")
	assert.Error(t, err)
}

func TestEveryInvariantIsDocumented(t *testing.T) {
	for _, i := range All() {
		assert.NotEmpty(t, i.Property, i.Name)
		assert.NotEmpty(t, i.Source, i.Name)
		assert.Equal(t, i.Name, i.New().Name())
	}
}
