package mcp

// Fidelity cases of FIDELITY.md §4 (McpSessionRegistry.test.ts @ 0b31e51e
// and liveness-era variants), run against the registry. Each test is named
// after its case id; the registry of cases is scenarios/fidelity_test.go.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// reg is the upstream harness: a registry over a test clock that starts at
// t=1000 ms, the fake HTTP server at 127.0.0.1:43123.
type reg struct {
	k *sim.Kernel
	r *Registry
}

func newReg(t *testing.T, p model.Profile) *reg {
	k := sim.NewKernel(false)
	env := &model.Env{Clock: k, Trace: k.Trace(), Source: sim.NewTapeSource(nil, false), Profile: p, EnvironmentID: "env-1"}
	r := NewRegistry(env)
	r.Endpoint = "http://127.0.0.1:43123/mcp"
	k.RunUntil(1000 * time.Millisecond)
	return &reg{k: k, r: r}
}

func (x *reg) at(ms int) { x.k.RunUntil(time.Duration(ms) * time.Millisecond) }

// profiles returns the two presets, built when asked: a package-level
// value would be built before this package's init registers its switch.
func profiles() []model.Profile {
	return []model.Profile{model.MustProfile(model.PresetReported, nil, nil), model.MustProfile(model.PresetFixed, nil, nil)}
}

// TestMR01_TokenResolvesAndRevokesByThread is MR-01, upstream "stores only a
// token hash, resolves the bearer token, and revokes by thread". The model
// keeps the token on the record (no hashing: the simulation never leaks
// tokens); the rest is as upstream.
func TestMR01_TokenResolvesAndRevokesByThread(t *testing.T) {
	x := newReg(t, profiles()[0])
	c := x.r.Issue("thread-1", "codex", CapOrchestration, "test")
	assert.Equal(t, "http://127.0.0.1:43123/mcp", c.Endpoint)
	assert.Greater(t, len(c.Token), 20)
	got := x.r.Resolve(c.Token)
	require.NotNil(t, got)
	assert.Equal(t, "thread-1", got.Scope.Thread.ThreadID)
	x.r.RevokeThread("thread-1", "test")
	assert.Nil(t, x.r.Resolve(c.Token))
}

// TestMR02_RevokesOneProviderSessionOnly is MR-02, upstream "revokes one
// provider session without revoking another credential for the thread"
// [BUG-1] [BUG-2]. The fixes do not touch the registry: both profiles agree.
func TestMR02_RevokesOneProviderSessionOnly(t *testing.T) {
	for _, p := range profiles() {
		x := newReg(t, p)
		c1 := x.r.Issue("thread-1", "codex", CapOrchestration, "test")
		c2 := x.r.Issue("thread-1", "claudeAgent", CapOrchestration, "test")
		require.NotEqual(t, c1.ID, c2.ID, "each credential has its own random providerSessionId")
		assert.NotEqual(t, "thread-1", c1.ID, "the credential id is not the thread id")
		x.r.RevokeProviderSession(c2.ID, "test")
		got := x.r.Resolve(c1.Token)
		require.NotNil(t, got, "%s", p)
		assert.Equal(t, c1.ID, got.Scope.Thread.ProviderSessionID)
		assert.Equal(t, c1.ID, got.Scope.RequestNamespace, "a thread caller's namespace is its credential id")
		assert.Nil(t, x.r.Resolve(c2.Token))
	}
}

// TestMR04_ExpiresAfterInactivity is MR-04, upstream (idle era, idle 100
// ms, maximum lifetime 1000 ms) "expires credentials after inactivity". The
// idle era is the reported profile's; the test shortens its bounds as the
// upstream test's options do.
func TestMR04_ExpiresAfterInactivity(t *testing.T) {
	x := newReg(t, profiles()[0])
	require.True(t, x.r.ResolveRefreshes)
	require.False(t, x.r.TouchRefreshes)
	x.r.LivenessWindow, x.r.MaxLifetime = 100*time.Millisecond, time.Second
	c := x.r.Issue("thread-1", "codex", CapOrchestration, "test")
	x.at(1101)
	assert.Nil(t, x.r.Resolve(c.Token), "idle 100 ms exceeded by 1 ms")

	// The maximum lifetime caps a credential in use.
	c = x.r.Issue("thread-1", "codex", CapOrchestration, "test")
	for ms := 1150; ms <= 2100; ms += 50 {
		x.at(ms)
		require.NotNil(t, x.r.Resolve(c.Token), "alive while used within its lifetime (at %d ms)", ms)
	}
	x.at(2102)
	assert.Nil(t, x.r.Resolve(c.Token), "past the 1000 ms lifetime")
}

// TestMR05_ExpiresWithoutSignsOfLife is MR-05 [variant], "expires
// credentials once their session stops showing signs of life" (liveness
// window 100 ms; resolve alone does not extend life). The liveness era is
// the fixed profile's (credential-lives-with-session).
func TestMR05_ExpiresWithoutSignsOfLife(t *testing.T) {
	x := newReg(t, profiles()[1])
	x.r.LivenessWindow = 100 * time.Millisecond
	c := x.r.Issue("thread-1", "codex", CapOrchestration, "test")
	x.at(1050)
	require.NotNil(t, x.r.Resolve(c.Token))
	x.at(1101)
	assert.Nil(t, x.r.Resolve(c.Token))
}

// TestMR07_TouchOfOtherThreadKeepsNothingAlive is MR-07 [variant], "does not
// keep credentials of other threads alive".
func TestMR07_TouchOfOtherThreadKeepsNothingAlive(t *testing.T) {
	x := newReg(t, profiles()[1])
	x.r.LivenessWindow = 100 * time.Millisecond
	c := x.r.Issue("thread-4", "codex", CapOrchestration, "test")
	x.at(1099)
	x.r.Touch("thread-unrelated")
	x.at(1101)
	assert.Nil(t, x.r.Resolve(c.Token))
	// Touching its own thread does.
	c = x.r.Issue("thread-4", "codex", CapOrchestration, "test")
	x.at(1199)
	x.r.Touch("thread-4")
	x.at(1201)
	assert.NotNil(t, x.r.Resolve(c.Token))
}

// The profile picks the registry's era: t3code#4463's idle era under
// reported (30 min idle timeout refreshed by MCP requests, 8 h cap, no
// touch), PR #4659's liveness era with credential-lives-with-session.
func TestRegistry_EraFollowsTheSwitch(t *testing.T) {
	idle := newReg(t, profiles()[0]).r
	assert.Equal(t, []any{IdleTimeout, true, MaximumLifetime, false},
		[]any{idle.LivenessWindow, idle.ResolveRefreshes, idle.MaxLifetime, idle.TouchRefreshes})
	live := newReg(t, profiles()[1]).r
	assert.Equal(t, []any{DefaultLivenessWindow, false, time.Duration(0), true},
		[]any{live.LivenessWindow, live.ResolveRefreshes, live.MaxLifetime, live.TouchRefreshes})

	// #4463's story: a session that keeps turning but makes no MCP call
	// loses its credential after 30 min in the idle era, keeps it with
	// the fix.
	for i, p := range profiles() {
		x := newReg(t, p)
		c := x.r.Issue("thread-1", "codex", CapPreview, "test")
		for ms := 1000 + 10*60_000; ms <= 1000+40*60_000; ms += 10 * 60_000 {
			x.at(ms)
			x.r.Touch("thread-1") // a provider turn, no MCP call
		}
		got := x.r.Resolve(c.Token)
		if i == 0 {
			assert.Nil(t, got, "idle era: 30 min without an MCP call")
		} else {
			assert.NotNil(t, got, "liveness era: the turns kept it alive")
		}
	}
}

// TestMRN01_EndpointFromBoundHost is MR-N01, MR-N02, MR-N03, MR-N04
// (0b31e51e) and MR-N05, MR-N06 ([variant] liveness era), upstream "builds
// MCP endpoints from the bound server host", one row per host.
func TestMRN01_EndpointFromBoundHost(t *testing.T) {
	for _, c := range []struct{ host, want string }{
		{"100.64.0.40", "http://100.64.0.40:43123/mcp"}, // MR-N01
		{"0.0.0.0", "http://127.0.0.1:43123/mcp"},       // MR-N02
		{"localhost", "http://localhost:43123/mcp"},     // MR-N03
		{"127.0.0.1", "http://127.0.0.1:43123/mcp"},     // MR-N04
		{"::", "http://127.0.0.1:43123/mcp"},            // MR-N05
		{"::1", "http://[::1]:43123/mcp"},               // MR-N06
	} {
		host, want := c.host, c.want
		x := newReg(t, profiles()[0])
		x.r.Endpoint = EndpointFor(host, 43123)
		cred := x.r.Issue("thread-"+host, "codex", CapOrchestration, "test")
		assert.Equal(t, want, cred.Endpoint, "bound to %s", host)
	}
}

// TestMRN07_TouchedEveryTurnStaysAlive is MR-N07 [variant], upstream "keeps
// a credential alive across turns that never touch an MCP tool": each turn
// touches its thread before the 100 ms window lapses. Touch is the
// liveness era's (credential-lives-with-session), so the fixed profile.
func TestMRN07_TouchedEveryTurnStaysAlive(t *testing.T) {
	x := newReg(t, profiles()[1])
	x.r.LivenessWindow = 100 * time.Millisecond
	c := x.r.Issue("thread-3", "codex", CapOrchestration, "test")
	ms := 1000
	for turn := 0; turn < 10; turn++ {
		ms += 99
		x.at(ms)
		x.r.Touch("thread-3")
	}
	got := x.r.Resolve(c.Token)
	require.NotNil(t, got, "alive at %d ms, well past one window", ms)
	assert.Equal(t, "thread-3", got.Scope.Thread.ThreadID)
}
