package terminal

// AC-34: agent-code src/providers/codex/runtime/codexSession.readiness.test.ts
// @428aed2d ("CodexSession prompt readiness lifecycle"), all seven cases,
// against the CodexSession model (codexsession.go) with a stub headless
// whose condition snapshot has CodexHeadless's shape.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// codexReadyScreen is READY_SCREEN: the composer marker and the model
// footer of a real codex 0.144.6 capture.
const codexReadyScreen = "› \n  gpt-5.6-sol high fast · /tmp/x"

type stubCodexHeadless struct {
	screen string
	conds  []Condition
}

func (h *stubCodexHeadless) Screen() string          { return h.screen }
func (h *stubCodexHeadless) Conditions() []Condition { return h.conds }

func (f *fixture) codexSession(h *stubCodexHeadless) *CodexSession {
	cs := NewCodexSession(f.m.env.Now, func(d time.Duration, fn func()) sim.Timer { return f.m.env.Clock.AfterFunc(d, fn) })
	cs.Headless = h
	return cs
}

func (f *fixture) awaitCodex(cs *CodexSession, timeout time.Duration) func() *Readiness {
	var got *Readiness
	cs.AwaitReadyForPrompt(ReadyOpts{Timeout: timeout, Poll: 50 * time.Millisecond}, func(r Readiness) { got = &r })
	return func() *Readiness { return got }
}

var trustDialog = Condition{Kind: "codex.trust-dialog", Actions: 2}

// TestAC34_ExitAnswersTerminalNotDeadline is AC-34, upstream "returns
// terminal exit instead of polling until the deadline".
func TestAC34_ExitAnswersTerminalNotDeadline(t *testing.T) {
	f := newFixture(t)
	cs := f.codexSession(&stubCodexHeadless{screen: "Starting Codex…"})
	got := f.awaitCodex(cs, 10*time.Second)
	cs.Exited = true
	f.run(50 * time.Millisecond)
	require.NotNil(t, got())
	assert.Equal(t, GateState{Kind: "terminal", Reason: "exited"}, got().GateState)
}

// TestAC34_TrustDialogBlocksAtOnce is AC-34, upstream "reports blocked
// while the trust dialog owns the screen instead of polling to the
// deadline".
func TestAC34_TrustDialogBlocksAtOnce(t *testing.T) {
	f := newFixture(t)
	cs := f.codexSession(&stubCodexHeadless{screen: "Starting Codex…", conds: []Condition{trustDialog}})
	got := f.awaitCodex(cs, 15*time.Second)
	f.run(50 * time.Millisecond)
	require.NotNil(t, got())
	assert.Equal(t, Readiness{GateState: GateState{Kind: "blocked", Condition: "codex.trust-dialog", Resolvable: true}}, *got())
}

// TestAC34_ApprovalModalBlocks is AC-34, upstream "blocks while an approval
// modal is on screen".
func TestAC34_ApprovalModalBlocks(t *testing.T) {
	f := newFixture(t)
	cs := f.codexSession(&stubCodexHeadless{screen: "Starting Codex…",
		conds: []Condition{{Kind: "codex.approval", Actions: 1, Options: 2}}})
	got := f.awaitCodex(cs, 15*time.Second)
	f.run(50 * time.Millisecond)
	require.NotNil(t, got())
	assert.Equal(t, GateState{Kind: "blocked", Condition: "codex.approval", Resolvable: true}, got().GateState)
}

// TestAC34_StaleApprovalDoesNotBlock is AC-34, upstream "does not block on
// a stale approval whose modal has gone" (options empty, actions still
// advertised).
func TestAC34_StaleApprovalDoesNotBlock(t *testing.T) {
	f := newFixture(t)
	cs := f.codexSession(&stubCodexHeadless{screen: codexReadyScreen,
		conds: []Condition{{Kind: "codex.approval", Actions: 1, Options: 0}}})
	got := f.awaitCodex(cs, 15*time.Second)
	f.run(50 * time.Millisecond)
	require.NotNil(t, got())
	assert.Equal(t, "ready", got().Kind)
}

// TestAC34_RecoversOnceTrustAnswered is AC-34, upstream "recovers to ready
// once the trust dialog is answered".
func TestAC34_RecoversOnceTrustAnswered(t *testing.T) {
	f := newFixture(t)
	h := &stubCodexHeadless{screen: "Do you trust the contents of this directory?", conds: []Condition{{Kind: "codex.trust-dialog", Actions: 1}}}
	cs := f.codexSession(h)
	first := f.awaitCodex(cs, 15*time.Second)
	require.NotNil(t, first())
	assert.Equal(t, "blocked", first().Kind)
	h.conds, h.screen = nil, codexReadyScreen
	after := f.awaitCodex(cs, 15*time.Second)
	f.run(50 * time.Millisecond)
	require.NotNil(t, after())
	assert.Equal(t, "ready", after().Kind)
	assert.True(t, cs.ComposerReady, "the latch is set")
}

// TestAC34_UnpaintedComposerPollsToTimeout is AC-34, upstream "keeps
// polling to a timeout when the composer is merely unpainted".
func TestAC34_UnpaintedComposerPollsToTimeout(t *testing.T) {
	f := newFixture(t)
	cs := f.codexSession(&stubCodexHeadless{screen: "Starting Codex…"})
	got := f.awaitCodex(cs, 15*time.Second)
	f.run(14900 * time.Millisecond)
	assert.Nil(t, got(), "still polling before the deadline")
	f.run(150 * time.Millisecond)
	require.NotNil(t, got())
	assert.Equal(t, "timeout", got().Kind)
	assert.Equal(t, GateState{Kind: "warming", Reason: "composer-unpainted"}, got().Last)
}

// TestAC34_TrustDialogWithoutActionsUnresolvable is AC-34, upstream
// "reports a trust dialog with no actions as unresolvable".
func TestAC34_TrustDialogWithoutActionsUnresolvable(t *testing.T) {
	f := newFixture(t)
	cs := f.codexSession(&stubCodexHeadless{screen: "Starting Codex…", conds: []Condition{{Kind: "codex.trust-dialog"}}})
	got := f.awaitCodex(cs, 15*time.Second)
	f.run(50 * time.Millisecond)
	require.NotNil(t, got())
	assert.Equal(t, "blocked", got().Kind)
	assert.False(t, got().Resolvable)
}
