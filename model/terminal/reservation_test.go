package terminal

// Fidelity cases of agent-code src/main/sessionManager.promptDelivery.test.ts
// @428aed2d ("SessionManager prompt delivery reservation"), AC-N17..AC-N22:
// main's reservation around the provider protocols (delivery.go), with a
// structural session installed in the registry as upstream installs one.

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stubSession installs a live backend of kind for id whose delivery surface
// is s, and returns it.
func (f *fixture) stubSession(id string, kind Kind, s *PromptSurface) *Backend {
	b := &Backend{m: f.m, ID: id + "#stub", Session: id, Kind: kind, actor: "agent/" + id, state: live, composer: true,
		rand: f.m.env.Rand("agent/" + id)}
	b.surface = s
	f.m.sess(id).entry = b
	return b
}

// deliver calls DeliverPromptToAgent and returns a reader of its result.
func (f *fixture) deliver(id, prompt string) func() *DeliveryResult {
	var got *DeliveryResult
	f.m.DeliverPromptToAgent(id, prompt, nil, nil, func(r DeliveryResult) { got = &r })
	return func() *DeliveryResult { return got }
}

// rawWrite is manager.write: it reports whether main took the write (false:
// refused while a delivery holds the session).
func (f *fixture) rawWrite(id string, seq int) bool {
	f.m.Write(id, "p1", []Chunk{{Seq: seq, Key: KeyEnter}})
	evs := f.events("pty.write")
	return len(evs) > 0 && firstWord(evs[len(evs)-1]) != "refused"
}

func firstWord(s string) string {
	for i, c := range s {
		if c == ' ' {
			return s[:i]
		}
	}
	return s
}

// TestACN17_OverlappingDeliveryRefusedBeforeBytes is AC-N17, upstream
// "rejects an overlapping delivery before the second prompt writes bytes".
func TestACN17_OverlappingDeliveryRefusedBeforeBytes(t *testing.T) {
	f := newFixture(t)
	screen := "❯"
	var writes []string
	w, accept := NewWaiter()
	f.stubSession("s1", Claude, &PromptSurface{
		SnapshotScreen:      func() string { return screen },
		ArmPromptAcceptance: func(string, AcceptanceOpts) (*AcceptanceWaiter, error) { return w, nil },
		Write: func(d string) error {
			writes = append(writes, d)
			if d != "\r" {
				screen = "❯ " + d
			}
			return nil
		}})
	first := f.deliver("s1", "first")
	assert.False(t, f.rawWrite("s1", 1), "a raw key is refused")
	assert.False(t, f.rawWrite("s1", 2), "a raw paste+Enter is refused")
	second := f.deliver("s1", "second")
	require.NotNil(t, second())
	assert.Equal(t, DeliveryResult{Stage: StageReservation, Code: CodeInFlight, RetrySafe: true, Disposition: RetrySameSession,
		Message: "A prompt delivery is already in flight for session s1"}, *second())
	f.run(time.Second)
	assert.Equal(t, []string{"first", "\r"}, writes, "the reservation spans both writes")
	assert.Nil(t, first(), "first waits for acceptance")
	accept(Acceptance{Kind: "user", AcceptedAt: 123})
	f.run(time.Second)
	require.NotNil(t, first())
	assert.True(t, first().OK)
}

// TestACN18_NoDelayedEnterIntoReplacement is AC-N18, upstream "never sends
// delayed Enter into a replacement session with the same id".
func TestACN18_NoDelayedEnterIntoReplacement(t *testing.T) {
	f := newFixture(t)
	snaps := 0
	var oldWrites, newWrites []string
	f.stubSession("s1", Claude, &PromptSurface{
		SnapshotScreen: func() string {
			snaps++
			if snaps == 1 {
				return "❯"
			}
			return "❯ line one line two"
		},
		ArmPromptAcceptance: func(string, AcceptanceOpts) (*AcceptanceWaiter, error) {
			return SettledWaiter(Acceptance{Kind: "user", AcceptedAt: 123}), nil
		},
		Write: func(d string) error { oldWrites = append(oldWrites, d); return nil }})
	res := f.deliver("s1", "line one\nline two")
	f.stubSession("s1", Claude, &PromptSurface{Write: func(d string) error { newWrites = append(newWrites, d); return nil }})
	f.run(time.Second)
	require.NotNil(t, res())
	assert.False(t, res().OK)
	assert.Equal(t, CodeWriteFailed, res().Code)
	assert.Equal(t, []string{"\x1b[200~line one\nline two\x1b[201~"}, oldWrites)
	assert.Empty(t, newWrites, "the replacement never gets the Enter")
}

// TestACN19_ReservationReleasedWhenSetupThrows is AC-N19, upstream
// "releases the reservation when provider setup throws".
func TestACN19_ReservationReleasedWhenSetupThrows(t *testing.T) {
	f := newFixture(t)
	screen, attempts := "❯", 0
	f.stubSession("s1", Claude, &PromptSurface{
		SnapshotScreen: func() string { return screen },
		ArmPromptAcceptance: func(string, AcceptanceOpts) (*AcceptanceWaiter, error) {
			attempts++
			if attempts == 1 {
				return nil, errors.New("probe failed")
			}
			return SettledWaiter(Acceptance{Kind: "user", AcceptedAt: 123}), nil
		},
		Write: func(d string) error {
			if d != "\r" {
				screen = "❯ " + d
			}
			return nil
		}})
	first := f.deliver("s1", "first")
	f.run(time.Second)
	require.NotNil(t, first())
	assert.False(t, first().OK)
	assert.True(t, first().RetrySafe)
	assert.False(t, first().PromptWritten)
	assert.False(t, first().EnterWritten)
	second := f.deliver("s1", "second")
	f.run(time.Second)
	require.NotNil(t, second())
	assert.True(t, second().OK, "the reservation was released")
}

// TestACN20_ThrowingWriteCountsAsWrittenAndBlocksConditions is AC-N20,
// upstream "treats a throwing PTY prompt write as potentially written and
// blocks condition interleaving".
func TestACN20_ThrowingWriteCountsAsWrittenAndBlocksConditions(t *testing.T) {
	f := newFixture(t)
	w, _ := NewWaiter()
	resolved := 0
	f.stubSession("s1", Claude, &PromptSurface{
		SnapshotScreen:      func() string { return "❯" },
		ArmPromptAcceptance: func(string, AcceptanceOpts) (*AcceptanceWaiter, error) { return w, nil },
		ResolveCondition:    func(done func(ConditionResult)) { resolved++; done(ConditionResult{OK: true}) },
		Write:               func(string) error { return errors.New("pty boundary failed") }})
	res := f.deliver("s1", "possibly written")
	var cond *ConditionResult
	f.m.ResolveCondition("s1", func(r ConditionResult) { cond = &r })
	require.NotNil(t, cond)
	assert.Equal(t, ConditionResult{Reason: "aborted", FailedAtStep: "prompt delivery in progress"}, *cond)
	assert.Zero(t, resolved, "the session's resolver never ran")
	f.run(time.Second)
	require.NotNil(t, res())
	assert.False(t, res().OK)
	assert.False(t, res().RetrySafe)
	assert.True(t, res().PromptWritten, "a thrown write may have crossed")
	assert.False(t, res().EnterWritten, "Enter was never attempted")
}

// TestACN21_ThrownPasteWriteAtAbsorptionStage is AC-N21, upstream "reports
// a thrown pre-Enter paste write at the absorption stage".
func TestACN21_ThrownPasteWriteAtAbsorptionStage(t *testing.T) {
	f := newFixture(t)
	f.stubSession("s1", Claude, &PromptSurface{
		SnapshotScreen: func() string { return "❯" },
		ArmPromptAcceptance: func(string, AcceptanceOpts) (*AcceptanceWaiter, error) {
			return SettledWaiter(Acceptance{Kind: "cancelled"}), nil
		},
		Write: func(string) error { return errors.New("pty boundary failed") }})
	res := f.deliver("s1", "line one\nline two")
	f.run(time.Second)
	require.NotNil(t, res())
	assert.False(t, res().OK)
	assert.Equal(t, StageAbsorption, res().Stage)
	assert.False(t, res().RetrySafe)
	assert.True(t, res().PromptWritten)
	assert.False(t, res().EnterWritten)
}

// TestACN22_EveryRawWriteBlockedWhileReserved is AC-N22, upstream "blocks
// every external write while a delivery holds the reservation": a Codex
// session blocked by its trust dialog answers retry-after-resolve, and the
// reservation is released at once so the dialog's keys get through.
func TestACN22_EveryRawWriteBlockedWhileReserved(t *testing.T) {
	f := newFixture(t)
	f.stubSession("s1", Codex, &PromptSurface{
		SnapshotScreen: func() string { return "" },
		AwaitReadyForPrompt: func(_ ReadyOpts, done func(Readiness)) {
			done(Readiness{GateState: GateState{Kind: "blocked", Condition: "codex.trust-dialog", Resolvable: true}})
		},
		Write: func(string) error { return nil }})
	res := f.deliver("s1", "queued prompt")
	assert.False(t, f.rawWrite("s1", 1), "refused while reserved")
	f.run(time.Second)
	require.NotNil(t, res())
	assert.False(t, res().OK)
	assert.Equal(t, CodeNotReady, res().Code)
	assert.Equal(t, RetryAfterResolve, res().Disposition)
	assert.True(t, f.rawWrite("s1", 2), "released: the dialog's keys get through")
}
