package terminal

// Fidelity cases of agent-code src/providers/claude/runtime/promptDelivery.test.ts
// @428aed2d ("deliverClaudePrompt routing"), AC-N42..AC-N57: the Claude
// delivery protocol (delivery.go) against a stub session, as upstream runs
// deliverClaudePrompt against a stub PromptDeliveryIo. Every await of the
// protocol continues in a zero-delay event, so "before the readiness
// resolves" is a point the test can stop at.

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stubIO is makeIo: snapshotScreen answers "" for the baseline (the first
// read) and afterPaste for every later one; acceptance is already settled
// user.
type stubIO struct {
	io     *PromptIO
	writes []string
	snaps  int
}

func makeStubIO(prompt, afterPaste string) *stubIO {
	s := &stubIO{}
	s.io = &PromptIO{SessionID: "s1", Prompt: prompt,
		Write: func(d string) (bool, error) { s.writes = append(s.writes, d); return true, nil },
		Session: &PromptSurface{
			SnapshotScreen: func() string {
				s.snaps++
				if s.snaps == 1 {
					return ""
				}
				return afterPaste
			},
			ArmPromptAcceptance: func(string, AcceptanceOpts) (*AcceptanceWaiter, error) {
				return SettledWaiter(Acceptance{Kind: "user", AcceptedAt: 123}), nil
			},
		}}
	return s
}

// deliverClaudeAsync returns a function reporting the result (nil while
// pending).
func (f *fixture) deliverClaudeAsync(io *PromptIO) func() *DeliveryResult {
	var got *DeliveryResult
	f.m.deliverClaudePrompt(io, func(r DeliveryResult, err error) {
		if err != nil {
			panic(err)
		}
		got = &r
	})
	return func() *DeliveryResult { return got }
}

func (f *fixture) settle(t *testing.T, res func() *DeliveryResult) DeliveryResult {
	t.Helper()
	f.run(time.Minute)
	r := res()
	require.NotNil(t, r, "the delivery settles")
	return *r
}

// TestACN42_WaitsForReplayReadinessBeforeAnyByte is AC-N42, upstream
// "waits for transcript replay readiness before writing any prompt bytes".
func TestACN42_WaitsForReplayReadinessBeforeAnyByte(t *testing.T) {
	f := newFixture(t)
	s := makeStubIO("fix the bug", "❯ fix the bug")
	var release func(Readiness)
	s.io.Session.AwaitReadyForPrompt = func(_ ReadyOpts, done func(Readiness)) { release = done }
	res := f.deliverClaudeAsync(s.io)
	f.run(time.Second)
	assert.Empty(t, s.writes, "no bytes before readiness")
	assert.Nil(t, res())
	require.NotNil(t, release)
	release(Readiness{GateState: GateState{Kind: "ready"}, Waited: 250 * time.Millisecond})
	r := f.settle(t, res)
	assert.True(t, r.OK)
	assert.Equal(t, []string{"fix the bug", "\r"}, s.writes)
}

// TestACN43_ReadinessTimeoutIsRetrySafePreWrite is AC-N43, upstream
// "returns a retry-safe pre-write failure when replay readiness times out".
func TestACN43_ReadinessTimeoutIsRetrySafePreWrite(t *testing.T) {
	f := newFixture(t)
	s := makeStubIO("fix the bug", "❯ fix the bug")
	s.io.Session.AwaitReadyForPrompt = func(_ ReadyOpts, done func(Readiness)) {
		done(Readiness{GateState: GateState{Kind: "timeout"}, Waited: 12 * time.Second,
			Last: GateState{Kind: "warming", Reason: "composer-unpainted"}})
	}
	r := f.settle(t, f.deliverClaudeAsync(s.io))
	assert.Equal(t, DeliveryResult{Stage: StageBeforeWrite, Code: CodeNotReady, RetrySafe: true, Disposition: RetrySameSession,
		Message: "Claude session s1 prompt input is still warming (composer-unpainted)"}, r)
	assert.Empty(t, s.writes)
}

// readinessDisposition is the it.each of "maps readiness state to an
// explicit session disposition" (AC-N44..AC-N46).
func readinessDisposition(t *testing.T, state GateState, want string) {
	f := newFixture(t)
	s := makeStubIO("fix the bug", "❯ fix the bug")
	s.io.Session.AwaitReadyForPrompt = func(_ ReadyOpts, done func(Readiness)) { done(Readiness{GateState: state}) }
	r := f.settle(t, f.deliverClaudeAsync(s.io))
	assert.False(t, r.OK)
	assert.True(t, r.RetrySafe)
	assert.Equal(t, want, r.Disposition)
	assert.False(t, r.PromptWritten)
	assert.Empty(t, s.writes)
}

// TestACN44_BlockedTrustDialogRetriesAfterResolve is AC-N44, upstream
// "maps readiness state to an explicit session disposition" row blocked
// claude.trust-dialog -> retry-after-resolve.
func TestACN44_BlockedTrustDialogRetriesAfterResolve(t *testing.T) {
	readinessDisposition(t, GateState{Kind: "blocked", Condition: "claude.trust-dialog", Resolvable: true}, RetryAfterResolve)
}

// TestACN45_HumanDraftRetriesAfterResolve is AC-N45, the row occupied
// human-draft -> retry-after-resolve.
func TestACN45_HumanDraftRetriesAfterResolve(t *testing.T) {
	readinessDisposition(t, GateState{Kind: "occupied", Reason: "human-draft"}, RetryAfterResolve)
}

// TestACN46_ExitedSessionUnusable is AC-N46, the row terminal exited ->
// session-unusable.
func TestACN46_ExitedSessionUnusable(t *testing.T) {
	readinessDisposition(t, GateState{Kind: "terminal", Reason: "exited"}, SessionUnusable)
}

// TestACN47_ReadinessChargedToAcceptanceBudget is AC-N47, upstream
// "charges readiness time against the later acceptance budget": 10 s of
// readiness leaves 18 s of the 28 s budget for acceptance.
func TestACN47_ReadinessChargedToAcceptanceBudget(t *testing.T) {
	f := newFixture(t)
	f.run(time.Second)
	s := makeStubIO("fix the bug", "❯ fix the bug")
	s.io.Session.AwaitReadyForPrompt = func(o ReadyOpts, done func(Readiness)) {
		assert.Equal(t, f.k.Elapsed()+ReadyBudget, o.DeadlineAt, "readiness gets at most 12 s")
		f.m.env.After(10*time.Second, func() { done(Readiness{GateState: GateState{Kind: "ready"}, Waited: 10 * time.Second}) })
	}
	timeout := time.Duration(-1)
	s.io.Session.ArmPromptAcceptance = func(_ string, o AcceptanceOpts) (*AcceptanceWaiter, error) {
		timeout = o.Timeout
		return SettledWaiter(Acceptance{Kind: "user", AcceptedAt: 123}), nil
	}
	r := f.settle(t, f.deliverClaudeAsync(s.io))
	assert.True(t, r.OK)
	assert.Equal(t, 18*time.Second, timeout)
}

// TestACN48_ShortPromptAbsorbedBeforeSeparateEnter is AC-N48, upstream
// "short single-line prompts prove composer absorption before a separate
// Enter".
func TestACN48_ShortPromptAbsorbedBeforeSeparateEnter(t *testing.T) {
	f := newFixture(t)
	s := makeStubIO("fix the bug", "❯ fix the bug")
	r := f.settle(t, f.deliverClaudeAsync(s.io))
	assert.True(t, r.OK)
	assert.Equal(t, "user", r.Acceptance.Kind)
	assert.Equal(t, []string{"fix the bug", "\r"}, s.writes)
	assert.Positive(t, s.snaps, "the screen was read")
}

// TestACN49_ShortMultilineConfirmsViaInlineTail is AC-N49, upstream "short
// MULTILINE prompts (incl. dictated <stt>) confirm via the INLINE tail".
func TestACN49_ShortMultilineConfirmsViaInlineTail(t *testing.T) {
	f := newFixture(t)
	prompt := "line one\nline two"
	s := makeStubIO(prompt, "❯ line one line two")
	r := f.settle(t, f.deliverClaudeAsync(s.io))
	assert.True(t, r.OK)
	assert.Equal(t, "user", r.Acceptance.Kind)
	assert.Equal(t, []string{"\x1b[200~" + prompt + "\x1b[201~", "\r"}, s.writes)
}

// TestACN50_BigPasteConfirmsViaPlaceholder is AC-N50, upstream "big pastes
// confirm via the [Pasted text #N] placeholder (collapse path)".
func TestACN50_BigPasteConfirmsViaPlaceholder(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("x", 150)
	s := makeStubIO(long, "❯ [Pasted text #1]")
	r := f.settle(t, f.deliverClaudeAsync(s.io))
	assert.True(t, r.OK)
	assert.Equal(t, []string{"\x1b[200~" + long + "\x1b[201~", "\r"}, s.writes)
}

// TestACN51_SecondPasteIgnoresStalePlaceholder is AC-N51, upstream "a
// SECOND paste ignores the first paste's stale placeholder (baseline
// count)".
func TestACN51_SecondPasteIgnoresStalePlaceholder(t *testing.T) {
	f := newFixture(t)
	prompt := "second one\nmore text"
	s := makeStubIO(prompt, "")
	s.io.Session.SnapshotScreen = func() string {
		s.snaps++
		if s.snaps <= 2 {
			return "[Pasted text #1]" // the baseline, and the first read after the paste
		}
		return "[Pasted text #1] ❯ second one more text"
	}
	r := f.settle(t, f.deliverClaudeAsync(s.io))
	assert.True(t, r.OK)
	assert.Equal(t, []string{"\x1b[200~" + prompt + "\x1b[201~", "\r"}, s.writes)
	assert.GreaterOrEqual(t, s.snaps, 3, "it did not confirm on the stale #1")
}

// TestACN52_PasteNeverAbsorbedWithholdsEnter is AC-N52, upstream
// "paste-like prompts still fail loudly when NEITHER signal ever appears
// (Enter withheld)".
func TestACN52_PasteNeverAbsorbedWithholdsEnter(t *testing.T) {
	f := newFixture(t)
	s := makeStubIO("line one\nline two", "")
	res := f.deliverClaudeAsync(s.io)
	f.run(2100 * time.Millisecond)
	require.NotNil(t, res(), "settled within 2.1 s")
	assert.False(t, res().OK)
	assert.Equal(t, []string{"\x1b[200~line one\nline two\x1b[201~"}, s.writes, "no Enter after an unconfirmed paste")
}

// TestACN53_NoSnapshotProbeFailsBeforeWriting is AC-N53, upstream "fails
// visibly when the session has no snapshotScreen probe".
func TestACN53_NoSnapshotProbeFailsBeforeWriting(t *testing.T) {
	f := newFixture(t)
	s := makeStubIO("line one\nline two", "")
	s.io.Session.SnapshotScreen = nil
	r := f.settle(t, f.deliverClaudeAsync(s.io))
	assert.False(t, r.OK)
	assert.Equal(t, CodeMissingCapability, r.Code)
	assert.Empty(t, s.writes, "nothing pasted if it cannot be confirmed")
}

// TestACN54_AcceptanceTimeoutAfterEnterNotRetrySafe is AC-N54, upstream
// "reports post-Enter acceptance timeout as unsafe to retry".
func TestACN54_AcceptanceTimeoutAfterEnterNotRetrySafe(t *testing.T) {
	f := newFixture(t)
	s := makeStubIO("hello", "")
	calls := 0
	s.io.Session.SnapshotScreen = func() string {
		calls++
		if calls == 1 {
			return "❯"
		}
		return "❯ hello"
	}
	s.io.Session.ArmPromptAcceptance = func(string, AcceptanceOpts) (*AcceptanceWaiter, error) {
		return SettledWaiter(Acceptance{Kind: "timeout"}), nil
	}
	r := f.settle(t, f.deliverClaudeAsync(s.io))
	assert.Equal(t, DeliveryResult{Stage: StageAfterEnter, Code: CodeAcceptanceTimeout, Disposition: DoNotRetry,
		PromptWritten: true, EnterWritten: true, Message: "Claude session s1 did not record prompt acceptance"}, r)
	assert.Equal(t, []string{"hello", "\r"}, s.writes)
}

// TestACN55_ImagePillsBeforeEnterThenJSONL is AC-N55, upstream "waits for
// image pills before Enter and then requires JSONL acceptance".
func TestACN55_ImagePillsBeforeEnterThenJSONL(t *testing.T) {
	f := newFixture(t)
	s := makeStubIO("", "")
	s.io.ImagePaths = []string{"/tmp/a.png"}
	s.io.Session.SnapshotScreen = func() string {
		s.snaps++
		if s.snaps == 1 {
			return "❯"
		}
		return "❯ [Image #1]"
	}
	var opts AcceptanceOpts
	armedAfter := -1
	s.io.Session.ArmPromptAcceptance = func(_ string, o AcceptanceOpts) (*AcceptanceWaiter, error) {
		opts, armedAfter = o, len(s.writes)
		return SettledWaiter(Acceptance{Kind: "user", AcceptedAt: 123}), nil
	}
	r := f.settle(t, f.deliverClaudeAsync(s.io))
	assert.True(t, r.OK)
	assert.Equal(t, []string{"\x1b[200~/tmp/a.png\x1b[201~", "\r"}, s.writes)
	assert.Equal(t, 1, armedAfter, "acceptance armed after the pills, before Enter")
	assert.True(t, opts.RequiresImage)
	assert.Equal(t, 1, opts.ExpectedImageCount)
}

// TestACN56_TextAndImagesOneTransaction is AC-N56, upstream "keeps text and
// image writes in one acknowledged main-owned transaction".
func TestACN56_TextAndImagesOneTransaction(t *testing.T) {
	f := newFixture(t)
	s := makeStubIO("line one\nline two", "")
	s.io.ImagePaths = []string{"/tmp/a.png"}
	screens := []string{"❯", "❯ line one line two", "❯ line one line two", "❯ line one line two [Image #1]"}
	s.io.Session.SnapshotScreen = func() string {
		if len(screens) == 0 {
			return "❯ line one line two [Image #1]"
		}
		x := screens[0]
		screens = screens[1:]
		return x
	}
	r := f.settle(t, f.deliverClaudeAsync(s.io))
	assert.True(t, r.OK)
	assert.Equal(t, []string{"\x1b[200~line one\nline two\x1b[201~", " ", "\x1b[200~/tmp/a.png\x1b[201~", "\r"}, s.writes)
}

// TestACN57_DiagnosticSinkNotAwaited is AC-N57, upstream "does not await a
// diagnostic sink before writing". Expressed differently: the sink is a
// plain call with nothing to await, so what is checked is that the
// delivery writes and succeeds with the sink called at every stage, in
// order.
func TestACN57_DiagnosticSinkNotAwaited(t *testing.T) {
	f := newFixture(t)
	s := makeStubIO("hello", "❯ hello")
	var events []string
	s.io.Record = func(e string) { events = append(events, e) }
	r := f.settle(t, f.deliverClaudeAsync(s.io))
	assert.True(t, r.OK)
	assert.Equal(t, []string{"hello", "\r"}, s.writes)
	assert.Equal(t, []string{"acceptance-armed", "prompt-written", "prompt-absorbed via=inline", "enter-written", "acceptance-user"}, events)
}
