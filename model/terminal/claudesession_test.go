package terminal

// Fidelity cases of agent-code
// src/providers/claude/runtime/claudeSession.promptAcceptance.test.ts
// @428aed2d ("ClaudeSession prompt acceptance") that AC-35 does not hold:
// AC-N33..AC-N41, against the ClaudeSession model (claudesession.go) with
// a stub headless surface, as upstream installs one.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

// stubHeadless is installPromptSurface: a composer classification, a
// condition snapshot and a count of composer reads.
type stubHeadless struct {
	composer string
	conds    []Condition
	reads    int
}

func (h *stubHeadless) ComposerState() string   { h.reads++; return h.composer }
func (h *stubHeadless) Conditions() []Condition { return h.conds }
func (h *stubHeadless) Screen() string          { return "" }

func (f *fixture) claudeSession(resume string) *ClaudeSession {
	return NewClaudeSession(f.m.env.Now, func(d time.Duration, fn func()) sim.Timer { return f.m.env.Clock.AfterFunc(d, fn) }, resume, 1)
}

// TestACN33_OneTransitionFansOutWithoutReparsing is AC-N33, upstream "fans
// one gate transition out to many waiters without reparsing per waiter".
func TestACN33_OneTransitionFansOutWithoutReparsing(t *testing.T) {
	f := newFixture(t)
	cs := f.claudeSession("")
	h := &stubHeadless{composer: "unpainted"}
	cs.Headless, cs.TailAttached, cs.ReplayQuiesced = h, true, true
	var got []Readiness
	for i := 0; i < 50; i++ {
		cs.AwaitReadyForPrompt(ReadyOpts{Timeout: 10 * time.Second}, func(r Readiness) { got = append(got, r) })
	}
	require.Empty(t, got)
	require.Equal(t, 50, cs.ListenerCount())
	before := h.reads
	h.composer = "empty"
	cs.Refresh()
	require.Len(t, got, 50)
	for _, r := range got {
		assert.Equal(t, "ready", r.Kind)
	}
	assert.Equal(t, before+1, h.reads, "one composer read for the transition, whatever the waiters")
	assert.Zero(t, cs.ListenerCount())
}

// TestACN34_DistinctTranscriptIDsForFreshSessions is AC-N34, upstream
// "assigns distinct exact transcript ids to concurrent fresh sessions":
// two fresh Claude backends spawned at once get distinct ids; a resumed
// session keeps its resume id.
func TestACN34_DistinctTranscriptIDsForFreshSessions(t *testing.T) {
	f := newFixture(t)
	f.app.AddSession(Meta{ID: "second", Kind: Claude, Cwd: "/tmp/project", Mode: Feed})
	f.m.Recover(RecoverRequest{Session: "stable-session", Kind: Claude, Cwd: "/tmp/project"}, func(RecoverResult) {})
	f.m.Recover(RecoverRequest{Session: "second", Kind: Claude, Cwd: "/tmp/project"}, func(RecoverResult) {})
	first, second := f.m.Backend("stable-session").cs.TranscriptID, f.m.Backend("second").cs.TranscriptID
	assert.NotEmpty(t, first)
	assert.NotEqual(t, first, second)
	assert.Equal(t, "resume-id", f.claudeSession("resume-id").TranscriptID)
}

func userEntry(content string) JSONLEntry {
	return JSONLEntry{Type: "user", Role: "user", Content: content}
}

// TestACN35_OnlyExactFuturePayloadMatches is AC-N35, upstream "matches only
// an exact future user or queue JSONL payload".
func TestACN35_OnlyExactFuturePayloadMatches(t *testing.T) {
	f := newFixture(t)
	cs := f.claudeSession("")
	w := cs.ArmPromptAcceptance("line one\r\nline two", AcceptanceOpts{ExpectedImageCount: -1})
	cs.Ingest(userEntry("line one\nline two."))
	_, settled := w.Settled()
	assert.False(t, settled, "a near-match does not acknowledge")
	cs.Ingest(JSONLEntry{Type: "queue-operation", Operation: "enqueue", Content: "line one\nline two"})
	a, settled := w.Settled()
	require.True(t, settled)
	assert.Equal(t, "queue", a.Kind)
}

// TestACN36_TrailingWhitespaceTrimmedInteriorKept is AC-N36, upstream
// "normalizes Claude-trimmed trailing whitespace without collapsing
// interior text".
func TestACN36_TrailingWhitespaceTrimmedInteriorKept(t *testing.T) {
	f := newFixture(t)
	cs := f.claudeSession("")
	w := cs.ArmPromptAcceptance("keep  interior\n", AcceptanceOpts{ExpectedImageCount: -1})
	cs.ResolvePromptAcceptance(userEntry("keep interior"), 1)
	_, settled := w.Settled()
	assert.False(t, settled, "interior spaces are not collapsed")
	cs.ResolvePromptAcceptance(userEntry("keep  interior"), 2)
	a, settled := w.Settled()
	require.True(t, settled)
	assert.Equal(t, "user", a.Kind)
}

// TestACN37_EntryAtOrBeforeCursorIgnored is AC-N37, upstream "ignores an
// entry at or before the waiter ingest cursor".
func TestACN37_EntryAtOrBeforeCursorIgnored(t *testing.T) {
	f := newFixture(t)
	cs := f.claudeSession("")
	cs.SetIngestCursor(4)
	w := cs.ArmPromptAcceptance("continue", AcceptanceOpts{Timeout: 100 * time.Millisecond, ExpectedImageCount: -1})
	cs.ResolvePromptAcceptance(userEntry("continue"), 4)
	_, settled := w.Settled()
	assert.False(t, settled, "cursor 4 is not after the waiter's")
	cs.ResolvePromptAcceptance(userEntry("continue"), 5)
	a, _ := w.Settled()
	assert.Equal(t, "user", a.Kind)
}

// TestACN38_ImageOnlyIgnoresToolResult is AC-N38, upstream "does not
// acknowledge image-only delivery from an unrelated empty tool-result user
// entry".
func TestACN38_ImageOnlyIgnoresToolResult(t *testing.T) {
	f := newFixture(t)
	cs := f.claudeSession("")
	w := cs.ArmPromptAcceptance("", AcceptanceOpts{RequiresImage: true, ExpectedImageCount: 1})
	cs.ResolvePromptAcceptance(JSONLEntry{Type: "user", Role: "user", Structured: true,
		Blocks: []ContentBlock{{Type: "tool_result", Text: "done"}}}, 1)
	_, settled := w.Settled()
	assert.False(t, settled, "a tool result is not the image prompt")
	cs.ResolvePromptAcceptance(JSONLEntry{Type: "user", Role: "user", Structured: true,
		Blocks: []ContentBlock{{Type: "text", Text: "[Image #1]"}, {Type: "image"}}}, 2)
	a, _ := w.Settled()
	assert.Equal(t, "user", a.Kind)
}

// TestACN39_TextPlusImageShapeExact is AC-N39, upstream "matches the real
// Claude text-plus-image JSONL shape without weakening exact text
// matching": the trailing pill is stripped, and only as many as images.
func TestACN39_TextPlusImageShapeExact(t *testing.T) {
	f := newFixture(t)
	cs := f.claudeSession("")
	w := cs.ArmPromptAcceptance("describe briefly", AcceptanceOpts{ExpectedImageCount: 1})
	cs.ResolvePromptAcceptance(JSONLEntry{Type: "user", Role: "user", Structured: true,
		Blocks: []ContentBlock{{Type: "text", Text: "describe briefly please [Image #2]"}, {Type: "image"}}}, 1)
	_, settled := w.Settled()
	assert.False(t, settled, "other text with the pill is no match")
	cs.ResolvePromptAcceptance(JSONLEntry{Type: "user", Role: "user", Structured: true,
		Blocks: []ContentBlock{{Type: "text", Text: "describe briefly [Image #2]"}, {Type: "image"}}}, 2)
	a, _ := w.Settled()
	assert.Equal(t, "user", a.Kind)
}

// TestACN40_BusySessionImageQueueShape is AC-N40, upstream "matches the
// real Claude busy-session image queue shape".
func TestACN40_BusySessionImageQueueShape(t *testing.T) {
	f := newFixture(t)
	cs := f.claudeSession("")
	w := cs.ArmPromptAcceptance("inspect", AcceptanceOpts{ExpectedImageCount: 1})
	cs.ResolvePromptAcceptance(JSONLEntry{Type: "queue-operation", Operation: "enqueue", Content: "inspect [Image #3]"}, 1)
	a, _ := w.Settled()
	assert.Equal(t, "queue", a.Kind)
}

// TestACN41_EntryStampedBeforeArmingRejected is AC-N41, upstream "rejects
// an identical entry timestamped before the waiter armed".
func TestACN41_EntryStampedBeforeArmingRejected(t *testing.T) {
	f := newFixture(t)
	f.run(10 * time.Second)
	cs := f.claudeSession("")
	w := cs.ArmPromptAcceptance("continue", AcceptanceOpts{ExpectedImageCount: -1})
	stamped := func(at time.Duration) JSONLEntry {
		e := userEntry("continue")
		e.Stamped, e.Timestamp = true, at
		return e
	}
	cs.ResolvePromptAcceptance(stamped(0), 1)
	_, settled := w.Settled()
	assert.False(t, settled, "durable before the waiter armed")
	cs.ResolvePromptAcceptance(stamped(f.k.Elapsed()+time.Millisecond), 2)
	a, _ := w.Settled()
	assert.Equal(t, "user", a.Kind)
}

// The eight cases of claudeSession.promptAcceptance.test.ts FIDELITY.md
// lists as AC-35, against the ClaudeSession model.

// attached is a session whose transcript tail is attached and quiesced,
// on a stub headless with the given composer.
func (f *fixture) attached(composer string) (*ClaudeSession, *stubHeadless, *[]bool) {
	cs := f.claudeSession("")
	h := &stubHeadless{composer: composer}
	cs.Headless = h
	var seen []bool
	cs.OnInputReadiness = func(ready bool, _ string) { seen = append(seen, ready) }
	cs.TailAttached, cs.ReplayQuiesced = true, true
	return cs, h, &seen
}

// TestAC35_FreshSessionReadyAtAttachment is AC-35, upstream "makes a fresh
// session ready immediately after transcript attachment".
func TestAC35_FreshSessionReadyAtAttachment(t *testing.T) {
	f := newFixture(t)
	cs, _, seen := f.attached("empty")
	cs.Refresh()
	assert.Equal(t, []bool{true}, *seen)
	assert.True(t, cs.IsPromptAcceptanceReady())
}

// TestAC35_PostSpawnDeliveryAwaitsQuietWindow is AC-35, upstream "lets
// immediate post-spawn delivery await the replay quiet-window event".
func TestAC35_PostSpawnDeliveryAwaitsQuietWindow(t *testing.T) {
	f := newFixture(t)
	cs := f.claudeSession("resume-me")
	cs.Headless = &stubHeadless{composer: "empty"}
	cs.TailAttached = true
	cs.ArmReplayQuietWindow()
	var got *Readiness
	cs.AwaitReadyForPrompt(ReadyOpts{Timeout: time.Second}, func(r Readiness) { got = &r })
	f.run(249 * time.Millisecond)
	assert.Nil(t, got, "unsettled at 249 ms")
	f.run(time.Millisecond)
	require.NotNil(t, got)
	assert.Equal(t, Readiness{GateState: GateState{Kind: "ready"}, Waited: 250 * time.Millisecond}, *got)
}

// TestAC35_ReadinessWaitBoundedListenersRemoved is AC-35, upstream "bounds
// readiness waiting and removes lifecycle listeners on timeout".
func TestAC35_ReadinessWaitBoundedListenersRemoved(t *testing.T) {
	f := newFixture(t)
	cs := f.claudeSession("")
	cs.Headless = &stubHeadless{composer: "unpainted"}
	var got *Readiness
	cs.AwaitReadyForPrompt(ReadyOpts{Timeout: 100 * time.Millisecond}, func(r Readiness) { got = &r })
	assert.Equal(t, 1, cs.ListenerCount())
	f.run(100 * time.Millisecond)
	require.NotNil(t, got)
	assert.Equal(t, Readiness{GateState: GateState{Kind: "timeout"}, Waited: 100 * time.Millisecond,
		Last: GateState{Kind: "warming", Reason: "replay-pending"}}, *got)
	assert.Zero(t, cs.ListenerCount())
}

// TestAC35_NoReadinessUntilEmptyComposerPainted is AC-35, upstream "does
// not publish readiness until Claude paints an empty composer".
func TestAC35_NoReadinessUntilEmptyComposerPainted(t *testing.T) {
	f := newFixture(t)
	cs, h, seen := f.attached("unpainted")
	cs.Refresh()
	assert.Empty(t, *seen)
	assert.False(t, cs.IsPromptAcceptanceReady())
	h.composer = "empty"
	cs.Refresh()
	assert.Equal(t, []bool{true}, *seen)
	assert.True(t, cs.IsPromptAcceptanceReady())
}

// TestAC35_BlockersAndDraftsAnswerAtOnce is AC-35, upstream "returns
// structured blockers and human drafts immediately without consuming the
// clock".
func TestAC35_BlockersAndDraftsAnswerAtOnce(t *testing.T) {
	f := newFixture(t)
	cs, h, _ := f.attached("empty")
	h.conds = []Condition{{Kind: "claude.trust-dialog", Actions: 1}}
	var got []Readiness
	cs.AwaitReadyForPrompt(ReadyOpts{Timeout: 10 * time.Second}, func(r Readiness) { got = append(got, r) })
	require.Len(t, got, 1, "answered at once")
	assert.Equal(t, GateState{Kind: "blocked", Condition: "claude.trust-dialog", Resolvable: true}, got[0].GateState)
	h.conds, h.composer = nil, "drafted"
	cs.Refresh()
	cs.AwaitReadyForPrompt(ReadyOpts{Timeout: 10 * time.Second}, func(r Readiness) { got = append(got, r) })
	require.Len(t, got, 2, "answered at once")
	assert.Equal(t, GateState{Kind: "occupied", Reason: "human-draft"}, got[1].GateState)
	assert.Zero(t, f.k.Elapsed(), "no clock spent")
}

// TestAC35_ReArmedReplayMovesBackToWarming is AC-35, upstream "moves back
// to warming when transcript replay safety is re-armed".
func TestAC35_ReArmedReplayMovesBackToWarming(t *testing.T) {
	f := newFixture(t)
	cs, _, _ := f.attached("empty")
	cs.Refresh()
	require.True(t, cs.IsPromptAcceptanceReady())
	cs.ReplayQuiesced = false
	cs.Refresh()
	assert.False(t, cs.IsPromptAcceptanceReady())
	assert.Equal(t, GateState{Kind: "warming", Reason: "replay-pending"}, cs.State())
}

// TestAC35_OccupiedAsLongAsDraftHeld is AC-35, upstream "reports occupied
// for as long as the composer holds a draft" (no time bound: typing never
// clears the composer).
func TestAC35_OccupiedAsLongAsDraftHeld(t *testing.T) {
	f := newFixture(t)
	cs, _, _ := f.attached("drafted")
	cs.Refresh()
	assert.Equal(t, "occupied", cs.State().Kind)
	f.run(600 * time.Second)
	cs.Refresh()
	assert.Equal(t, "occupied", cs.State().Kind)
}

// TestAC35_ReadyAsSoonAsComposerClears is AC-35, upstream "becomes ready as
// soon as the composer clears".
func TestAC35_ReadyAsSoonAsComposerClears(t *testing.T) {
	f := newFixture(t)
	cs, h, _ := f.attached("drafted")
	cs.Refresh()
	assert.Equal(t, "occupied", cs.State().Kind)
	h.composer = "empty"
	cs.Refresh()
	assert.Equal(t, "ready", cs.State().Kind)
}
