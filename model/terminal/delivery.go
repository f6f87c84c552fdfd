package terminal

import (
	"fmt"
	"strings"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// Prompt delivery as agent-code runs it (Config.PromptProtocol): main's
// deliverPromptToAgent reserves the session (src/main/sessionManager.ts
// @428aed2d) and runs the provider's own protocol, Claude's
// (src/providers/claude/runtime/promptDelivery.ts@428aed2d: readiness wait
// charged to one 28 s budget, composer absorption before a separate Enter,
// image pills, durable JSONL acceptance) or Codex's
// (src/providers/codex/runtime/promptDelivery.ts@428aed2d: a 15 s readiness
// poll, then paste and Enter in one write). Every await of the upstream code
// continues in a zero-delay kernel event, as a resolved promise continues in
// a microtask, so other work can land between two stages exactly where it
// can upstream.

// Delivery budgets of promptDelivery.ts@428aed2d (Claude) and
// codex/runtime/promptDelivery.ts@428aed2d.
const (
	// ConfirmTimeout is CONFIRM_TIMEOUT_MS: how long the text may take to
	// show in the composer.
	ConfirmTimeout = 2 * time.Second
	// ConfirmPoll is CONFIRM_POLL_INTERVAL_MS.
	ConfirmPoll = 10 * time.Millisecond
	// ImageConfirmTimeout is IMAGE_CONFIRM_TIMEOUT_MS: how long image pills
	// may take to render.
	ImageConfirmTimeout = 5 * time.Second
	// DeliveryTimeout is DELIVERY_TIMEOUT_MS: one budget for readiness,
	// absorption and acceptance.
	DeliveryTimeout = 28 * time.Second
	// ReadyBudget is READY_BUDGET_MS: the readiness wait's share of it.
	ReadyBudget = 12 * time.Second
	// AcceptanceTimeout is ACCEPTANCE_TIMEOUT_MS: the JSONL acceptance
	// wait's cap (longer than JsonlTailer's 15 s watchdog).
	AcceptanceTimeout = 20 * time.Second
	// CodexReadyDeadline is deliverCodexPrompt's readiness deadline.
	CodexReadyDeadline = 15 * time.Second
	// CodexReadyPoll is its poll interval.
	CodexReadyPoll = 50 * time.Millisecond
)

// Delivery stages, codes and dispositions (PromptDeliveryResult,
// src/shared/types/providerConfig.ts@428aed2d).
const (
	StageReservation = "reservation"
	StageBeforeWrite = "before-write"
	StageAbsorption  = "absorption"
	StageAfterEnter  = "after-enter"
	StageSessionExit = "session-exit"

	CodeInFlight          = "delivery-in-flight"
	CodeNotReady          = "not-ready"
	CodeMissingCapability = "missing-capability"
	CodeWriteFailed       = "write-failed"
	CodeAbsorptionTimeout = "absorption-timeout"
	CodeAcceptanceTimeout = "acceptance-timeout"
	CodeSessionExited     = "session-exited"
	CodeTransportFailed   = "transport-failed"

	RetrySameSession  = "retry-same-session"
	RetryAfterResolve = "retry-after-resolve"
	SessionUnusable   = "session-unusable"
	DoNotRetry        = "do-not-retry"
)

// GateState is PromptGateState: Kind is ready, warming (Reason
// replay-pending or composer-unpainted), blocked (Condition, Resolvable),
// occupied (Reason human-draft) or terminal (Reason exited or no-headless).
type GateState struct {
	Kind, Reason, Condition string
	Resolvable              bool
}

// Readiness is PromptReadinessOutcome: ready (Waited), timeout (Waited and
// the last warming state) or a non-warming GateState.
type Readiness struct {
	GateState
	Waited time.Duration
	Last   GateState
}

// ReadyOpts are awaitReadyForPrompt's options: an absolute deadline in
// virtual time (0: none), else a timeout from now, and a poll interval.
type ReadyOpts struct {
	DeadlineAt, Timeout, Poll time.Duration
}

// Acceptance is PromptAcceptanceOutcome: user (AcceptedAt, EntryID), queue
// (AcceptedAt), timeout, cancelled or session-exited.
type Acceptance struct {
	Kind       string
	AcceptedAt time.Duration
	EntryID    string
}

// AcceptanceOpts are armPromptAcceptance's options.
type AcceptanceOpts struct {
	Timeout            time.Duration
	Aliases            []string
	RequiresImage      bool
	ExpectedImageCount int // -1: not given
}

// AcceptanceWaiter is PromptAcceptanceWaiter: it settles once; Then runs f
// when it has (at once if it already has); Cancel settles it cancelled.
type AcceptanceWaiter struct {
	settled bool
	outcome Acceptance
	then    []func(Acceptance)
	cancel  func()
}

// SettledWaiter returns a waiter already settled with a (Promise.resolve).
func SettledWaiter(a Acceptance) *AcceptanceWaiter {
	return &AcceptanceWaiter{settled: true, outcome: a}
}

// NewWaiter returns a pending waiter and the function that settles it.
func NewWaiter() (*AcceptanceWaiter, func(Acceptance)) {
	w := &AcceptanceWaiter{}
	return w, w.finish
}

func (w *AcceptanceWaiter) finish(a Acceptance) {
	if w.settled {
		return
	}
	w.settled, w.outcome = true, a
	then := w.then
	w.then = nil
	for _, f := range then {
		f(a)
	}
}

// Then calls f with the outcome once settled.
func (w *AcceptanceWaiter) Then(f func(Acceptance)) {
	if w.settled {
		f(w.outcome)
		return
	}
	w.then = append(w.then, f)
}

// Cancel settles the waiter cancelled (a no-op once settled).
func (w *AcceptanceWaiter) Cancel() {
	if w.cancel != nil {
		w.cancel()
		return
	}
	w.finish(Acceptance{Kind: "cancelled"})
}

// Settled reports the outcome, if settled.
func (w *AcceptanceWaiter) Settled() (Acceptance, bool) { return w.outcome, w.settled }

// ConditionResult is ResolveConditionResult: OK, or a Reason (aborted,
// no-session, no-resolver) and the step it failed at.
type ConditionResult struct {
	OK                   bool
	Reason, FailedAtStep string
}

// PromptSurface is what a delivery protocol may use of a session
// (AgentSession's optional capabilities; nil is a capability the session
// lacks, as a method that is not a function upstream). Write is the raw
// PTY write; an error is a write that threw (node-pty's boundary is not
// transactional: some bytes may have crossed).
type PromptSurface struct {
	SnapshotScreen          func() string
	AwaitReadyForPrompt     func(o ReadyOpts, done func(Readiness))
	IsPromptAcceptanceReady func() bool
	ArmPromptAcceptance     func(prompt string, o AcceptanceOpts) (*AcceptanceWaiter, error)
	ResolveCondition        func(done func(ConditionResult))
	Write                   func(data string) error
}

// PromptIO is PromptDeliveryIo: the session's surface, the prompt, image
// paths, the manager's identity-checked write (false: not written; an
// error: the write threw) and a diagnostic sink (never awaited).
type PromptIO struct {
	SessionID  string
	Prompt     string
	ImagePaths []string
	Write      func(data string) (bool, error)
	Session    *PromptSurface
	Record     func(event string)
}

func (io *PromptIO) record(event string) {
	if io.Record != nil {
		io.Record(event)
	}
}

// DeliveryResult is PromptDeliveryResult: OK with its acceptance, or a
// failure with its stage, code, disposition and what was written.
type DeliveryResult struct {
	OK                          bool
	Acceptance                  Acceptance
	Stage, Code, Disposition    string
	RetrySafe                   bool
	PromptWritten, EnterWritten bool
	Message                     string
}

// deliveryDone receives a protocol's result, or the error it threw.
type deliveryDone func(DeliveryResult, error)

// failWith returns the settle-with-failure step of a delivery that ends in
// done: upstream's failure({stage, code, retrySafe, disposition,
// promptWritten, enterWritten, message}).
func failWith(done deliveryDone) func(stage, code string, retrySafe bool, disposition string, prompt, enter bool, msg string) {
	return func(stage, code string, retrySafe bool, disposition string, prompt, enter bool, msg string) {
		done(DeliveryResult{Stage: stage, Code: code, RetrySafe: retrySafe, Disposition: disposition,
			PromptWritten: prompt, EnterWritten: enter, Message: msg}, nil)
	}
}

// submitEnter writes the separate Enter once the prompt is absorbed and
// waits for Claude's acceptance; a refused write fails the delivery after
// its prompt was written ("Could not submit <what> to session ..."), not
// retry-safe. Shared by the text and image paths (promptDelivery.ts@428aed2d).
func (m *Manager) submitEnter(io *PromptIO, acceptance *AcceptanceWaiter, what string, done deliveryDone) {
	ok, err := io.Write("\r")
	if err != nil {
		done(DeliveryResult{}, err)
		return
	}
	if !ok {
		acceptance.Cancel()
		failWith(done)(StageAfterEnter, CodeWriteFailed, false, DoNotRetry, true, false,
			fmt.Sprintf("Could not submit %s to session %s", what, io.SessionID))
		return
	}
	io.record("enter-written")
	m.awaitAcceptance(io, acceptance, done)
}

// later continues f in a zero-delay event: an await of a settled promise.
func (m *Manager) later(f func()) { m.env.After(0, f) }

func remainingBudget(now, deadline, cap time.Duration) time.Duration {
	if r := deadline - now; r < cap {
		cap = r
	}
	if cap < 0 {
		return 0
	}
	return cap
}

func notReadyDisposition(kind string) string {
	switch kind {
	case "timeout":
		return RetrySameSession
	case "blocked", "occupied":
		return RetryAfterResolve
	}
	return SessionUnusable
}

func describeReadiness(r Readiness) string {
	switch r.Kind {
	case "timeout":
		return "still warming (" + r.Last.Reason + ")"
	case "blocked":
		return "blocked by " + r.Condition
	case "occupied":
		return "occupied by a human draft"
	}
	return "unavailable (" + r.Reason + ")"
}

// deliverClaudePrompt is deliverClaudePrompt: the main-owned Claude
// delivery state machine. Success waits for the JSONL entry that says
// Claude accepted Enter, not for the screen.
func (m *Manager) deliverClaudePrompt(io *PromptIO, done deliveryDone) {
	deadline := m.env.Now() + DeliveryTimeout
	fail := failWith(done)
	s := io.Session
	if s.ArmPromptAcceptance == nil {
		fail(StageBeforeWrite, CodeMissingCapability, true, SessionUnusable, false, false,
			fmt.Sprintf("Claude session %s cannot observe prompt acceptance", io.SessionID))
		return
	}
	afterReady := func() {
		if len(io.ImagePaths) > 0 {
			m.deliverClaudeImagePrompt(io, deadline, done)
			return
		}
		m.deliverClaudeText(io, deadline, done)
	}
	if s.AwaitReadyForPrompt != nil && !m.app.Profile().Has(DeliverWithoutReadiness) {
		budget := deadline
		if b := m.env.Now() + ReadyBudget; b < budget {
			budget = b
		}
		s.AwaitReadyForPrompt(ReadyOpts{DeadlineAt: budget}, func(r Readiness) {
			m.later(func() {
				if r.Kind != "ready" {
					fail(StageBeforeWrite, CodeNotReady, true, notReadyDisposition(r.Kind), false, false,
						fmt.Sprintf("Claude session %s prompt input is %s", io.SessionID, describeReadiness(r)))
					return
				}
				afterReady()
			})
		})
		return
	}
	if s.IsPromptAcceptanceReady != nil && !m.app.Profile().Has(DeliverWithoutReadiness) && !s.IsPromptAcceptanceReady() {
		// The synchronous fallback of a capability-skewed session.
		fail(StageBeforeWrite, CodeNotReady, true, RetrySameSession, false, false,
			fmt.Sprintf("Claude session %s transcript replay has not quiesced", io.SessionID))
		return
	}
	afterReady()
}

func (m *Manager) deliverClaudeText(io *PromptIO, deadline time.Duration, done deliveryDone) {
	s := io.Session
	fail := failWith(done)
	if s.SnapshotScreen == nil {
		fail(StageBeforeWrite, CodeMissingCapability, true, SessionUnusable, false, false,
			fmt.Sprintf("Claude session %s has no direct screen snapshot", io.SessionID))
		return
	}
	baseline := s.SnapshotScreen()
	// Armed before any prompt bytes, so an acceptance cannot race past it.
	acceptance, err := s.ArmPromptAcceptance(io.Prompt, AcceptanceOpts{
		Timeout: remainingBudget(m.env.Now(), deadline, AcceptanceTimeout), ExpectedImageCount: -1})
	if err != nil {
		done(DeliveryResult{}, err)
		return
	}
	io.record("acceptance-armed")
	paste := IsPasteLike(io.Prompt)
	bytes := io.Prompt
	if paste {
		bytes = "\x1b[200~" + io.Prompt + "\x1b[201~"
	}
	// Text first, proven in the active composer, then Enter as its own
	// write (Claude 2.1.209 swallowed a coalesced CR).
	ok, err := io.Write(bytes)
	if err != nil {
		done(DeliveryResult{}, err)
		return
	}
	if !ok {
		acceptance.Cancel()
		fail(StageBeforeWrite, CodeWriteFailed, true, SessionUnusable, false, false,
			fmt.Sprintf("Could not write prompt to session %s", io.SessionID))
		return
	}
	io.record(map[bool]string{true: "paste-written", false: "prompt-written"}[paste])
	if m.app.Profile().Has(EnterBeforeAbsorbed) {
		// The mutant: no absorption proof before Enter.
		if ok, err := io.Write("\r"); err != nil || !ok {
			done(DeliveryResult{Stage: StageAfterEnter, Code: CodeWriteFailed, Disposition: DoNotRetry, PromptWritten: true}, err)
			return
		}
		m.awaitAcceptance(io, acceptance, done)
		return
	}
	screen := func() string {
		if s.SnapshotScreen == nil {
			return ""
		}
		return s.SnapshotScreen()
	}
	m.pollPasteAbsorbed(screen, baseline, io.Prompt, remainingBudget(m.env.Now(), deadline, ConfirmTimeout), ConfirmPoll, func(a absorbed) {
		m.later(func() {
			if a.Via == "" {
				acceptance.Cancel()
				// The bytes are editable in the composer: a retry would
				// duplicate them.
				fail(StageAbsorption, CodeAbsorptionTimeout, false, DoNotRetry, true, false,
					fmt.Sprintf("Claude session %s did not visibly absorb the prompt", io.SessionID))
				return
			}
			io.record(map[bool]string{true: "paste-absorbed", false: "prompt-absorbed"}[paste] + " via=" + a.Via)
			m.submitEnter(io, acceptance, "prompt", done)
		})
	})
}

func (m *Manager) deliverClaudeImagePrompt(io *PromptIO, deadline time.Duration, done deliveryDone) {
	s := io.Session
	fail := failWith(done)
	if s.SnapshotScreen == nil {
		fail(StageBeforeWrite, CodeMissingCapability, true, SessionUnusable, false, false,
			fmt.Sprintf("Claude session %s has no direct screen snapshot", io.SessionID))
		return
	}
	screen := func() string {
		if s.SnapshotScreen == nil {
			return ""
		}
		return s.SnapshotScreen()
	}
	paths := strings.Join(io.ImagePaths, "\n")
	separator := ""
	if io.Prompt != "" && !strings.ContainsAny(io.Prompt[len(io.Prompt)-1:], " \t\r\n") {
		separator = " "
	}
	raw := io.Prompt + separator + paths
	written := io.Prompt != ""
	writeImages := func() {
		baseline := s.SnapshotScreen()
		ok, err := io.Write("\x1b[200~" + paths + "\x1b[201~")
		if err != nil {
			done(DeliveryResult{}, err)
			return
		}
		if !ok {
			stage, disposition := StageBeforeWrite, SessionUnusable
			if written {
				stage, disposition = StageAbsorption, DoNotRetry
			}
			fail(stage, CodeWriteFailed, !written, disposition, written, false,
				fmt.Sprintf("Could not paste image paths to session %s", io.SessionID))
			return
		}
		m.pollClaudeImagesAbsorbed(screen, baseline, len(io.ImagePaths), remainingBudget(m.env.Now(), deadline, ImageConfirmTimeout), ConfirmPoll, func(a absorbed) {
			m.later(func() {
				if a.Via == "" {
					fail(StageAbsorption, CodeAbsorptionTimeout, false, DoNotRetry, true, false,
						fmt.Sprintf("Claude session %s did not render all image attachments", io.SessionID))
					return
				}
				io.record("images-absorbed")
				// Armed at the pre-Enter boundary with what is left of the
				// shared budget, not a fresh 20 s.
				acceptance, err := s.ArmPromptAcceptance(io.Prompt, AcceptanceOpts{
					Timeout: remainingBudget(m.env.Now(), deadline, AcceptanceTimeout), Aliases: []string{raw},
					RequiresImage: io.Prompt == "", ExpectedImageCount: len(io.ImagePaths)})
				if err != nil {
					done(DeliveryResult{}, err)
					return
				}
				io.record("acceptance-armed")
				m.submitEnter(io, acceptance, "image prompt", done)
			})
		})
	}
	if io.Prompt == "" {
		writeImages()
		return
	}
	afterText := func() {
		if separator != "" {
			ok, err := io.Write(separator)
			if err != nil {
				done(DeliveryResult{}, err)
				return
			}
			if !ok {
				fail(StageAbsorption, CodeWriteFailed, false, DoNotRetry, true, false,
					fmt.Sprintf("Could not separate image paths in session %s", io.SessionID))
				return
			}
		}
		writeImages()
	}
	if !IsPasteLike(io.Prompt) {
		ok, err := io.Write(io.Prompt)
		if err != nil {
			done(DeliveryResult{}, err)
			return
		}
		if !ok {
			fail(StageBeforeWrite, CodeWriteFailed, true, SessionUnusable, false, false,
				fmt.Sprintf("Could not write image prompt text to session %s", io.SessionID))
			return
		}
		afterText()
		return
	}
	baseline := s.SnapshotScreen()
	ok, err := io.Write("\x1b[200~" + io.Prompt + "\x1b[201~")
	if err != nil {
		done(DeliveryResult{}, err)
		return
	}
	if !ok {
		fail(StageBeforeWrite, CodeWriteFailed, true, SessionUnusable, false, false,
			fmt.Sprintf("Could not write image prompt text to session %s", io.SessionID))
		return
	}
	m.pollPasteAbsorbed(screen, baseline, io.Prompt, remainingBudget(m.env.Now(), deadline, ConfirmTimeout), ConfirmPoll, func(a absorbed) {
		m.later(func() {
			if a.Via == "" {
				fail(StageAbsorption, CodeAbsorptionTimeout, false, DoNotRetry, true, false,
					fmt.Sprintf("Claude session %s did not absorb image prompt text", io.SessionID))
				return
			}
			afterText()
		})
	})
}

// awaitAcceptance waits for the armed acceptance and maps it
// (acceptanceResult).
func (m *Manager) awaitAcceptance(io *PromptIO, w *AcceptanceWaiter, done deliveryDone) {
	w.Then(func(a Acceptance) {
		m.later(func() {
			if a.Kind == "user" || a.Kind == "queue" {
				io.record("acceptance-" + a.Kind)
				done(DeliveryResult{OK: true, Acceptance: a}, nil)
				return
			}
			io.record("uncertain " + a.Kind)
			r := DeliveryResult{Stage: StageAfterEnter, Code: CodeAcceptanceTimeout, Disposition: DoNotRetry,
				PromptWritten: true, EnterWritten: true,
				Message: fmt.Sprintf("Claude session %s did not record prompt acceptance", io.SessionID)}
			if a.Kind == "session-exited" {
				r.Stage, r.Code = StageSessionExit, CodeSessionExited
				r.Message = fmt.Sprintf("Claude session %s exited before accepting the prompt", io.SessionID)
			}
			done(r, nil)
		})
	})
}

// deliverCodexPrompt is deliverCodexPrompt: readiness before the paste
// (bytes written on Codex's startup or trust chrome vanish), then paste and
// Enter in one write, acknowledged by the transport.
func (m *Manager) deliverCodexPrompt(io *PromptIO, done deliveryDone) {
	s := io.Session
	if s.AwaitReadyForPrompt == nil {
		done(DeliveryResult{Stage: StageBeforeWrite, Code: CodeMissingCapability, RetrySafe: true, Disposition: SessionUnusable,
			Message: fmt.Sprintf("Codex session %s has no readiness probe (headless unavailable?)", io.SessionID)}, nil)
		return
	}
	await := s.AwaitReadyForPrompt
	if m.app.Profile().Has(DeliverWithoutReadiness) {
		await = func(_ ReadyOpts, done func(Readiness)) { done(Readiness{GateState: GateState{Kind: "ready"}}) }
	}
	await(ReadyOpts{DeadlineAt: m.env.Now() + CodexReadyDeadline, Poll: CodexReadyPoll}, func(r Readiness) {
		m.later(func() {
			if r.Kind != "ready" {
				done(DeliveryResult{Stage: StageBeforeWrite, Code: CodeNotReady, RetrySafe: true, Disposition: notReadyDisposition(r.Kind),
					Message: fmt.Sprintf("Codex session %s was not ready for prompt delivery (%s)", io.SessionID, r.Kind)}, nil)
				return
			}
			ok, err := io.Write("\x1b[200~" + io.Prompt + "\x1b[201~\r")
			if err != nil {
				done(DeliveryResult{}, err)
				return
			}
			if !ok {
				done(DeliveryResult{Stage: StageBeforeWrite, Code: CodeWriteFailed, RetrySafe: true, Disposition: SessionUnusable,
					Message: fmt.Sprintf("Could not submit orchestration prompt to Codex session %s", io.SessionID)}, nil)
				return
			}
			done(DeliveryResult{OK: true, Acceptance: Acceptance{Kind: "transport", AcceptedAt: m.env.Now()}}, nil)
		})
	})
}

// describeDelivery renders a result for the trace: ok via=user, or the
// failure's stage, code and disposition.
func describeDelivery(r DeliveryResult) []sim.Attr {
	if r.OK {
		return []sim.Attr{sim.A("accepted", r.Acceptance.Kind)}
	}
	return []sim.Attr{sim.A("stage", r.Stage), sim.A("code", r.Code), sim.A("disposition", r.Disposition),
		sim.A("prompt-written", b2s(r.PromptWritten)), sim.A("enter-written", b2s(r.EnterWritten))}
}

// DeliverPromptToAgent is deliverPromptToAgent: main's per-session
// delivery reservation around the provider's protocol. A second delivery
// while one holds the reservation is refused before any byte; every write
// the protocol makes is identity-checked against the registry entry it
// began with, so a delayed Enter never reaches a replacement backend of
// the same id; a protocol that throws is reported by how far it got
// (retry-safe only if nothing was attempted). done is called once.
func (m *Manager) DeliverPromptToAgent(session, prompt string, images []string, record func(string), done func(DeliveryResult)) {
	if m.reserved[session] {
		m.emit("delivery", "refused", sim.A("session", session), sim.A("stage", StageReservation), sim.A("code", CodeInFlight))
		done(DeliveryResult{Stage: StageReservation, Code: CodeInFlight, RetrySafe: true, Disposition: RetrySameSession,
			Message: fmt.Sprintf("A prompt delivery is already in flight for session %s", session)})
		return
	}
	b := m.sess(session).entry
	if b == nil {
		m.emit("delivery", "refused", sim.A("session", session), sim.A("stage", StageBeforeWrite), sim.A("code", CodeNotReady),
			sim.A("reason", "no-entry"))
		done(DeliveryResult{Stage: StageBeforeWrite, Code: CodeNotReady, RetrySafe: true, Disposition: SessionUnusable,
			Message: fmt.Sprintf("Cannot deliver prompt: %s is not a live agent session", session)})
		return
	}
	m.reserved[session] = true
	m.deliverySeq++
	id := m.env.Str().Join("d", m.deliverySeq)
	m.emit("delivery", "reserved", sim.A("session", session), sim.A("backend", b.ID), sim.A("delivery", id))
	promptWritten, enterWritten := false, false
	var release func(DeliveryResult, error)
	io := &PromptIO{SessionID: session, Prompt: prompt, ImagePaths: images, Session: b.promptSurface(), Record: record,
		Write: func(data string) (bool, error) {
			if m.sess(session).entry != b {
				m.emit("delivery.write", "refused", sim.A("session", session), sim.A("backend", b.ID), sim.A("delivery", id),
					sim.A("data", describeBytes(data)), sim.A("why", "entry-replaced"))
				return false, nil
			}
			// Marked before crossing the boundary: a thrown write may
			// have reached the child.
			if data == "\r" || strings.HasSuffix(data, "\r") {
				enterWritten = true
			}
			if data != "\r" {
				promptWritten = true
			}
			m.emit("delivery.write", "written", sim.A("session", session), sim.A("backend", b.ID), sim.A("delivery", id),
				sim.A("data", describeBytes(data)))
			return true, b.promptSurface().Write(data)
		}}
	// The manager awaits the protocol (return await ... finally): its
	// result, a throw included, is handled after the protocol's own call
	// returns, so the reservation is still held by then.
	finish := func(r DeliveryResult, err error) { m.later(func() { release(r, err) }) }
	release = func(r DeliveryResult, err error) {
		if err != nil {
			r = DeliveryResult{Code: CodeTransportFailed, RetrySafe: !promptWritten && !enterWritten,
				PromptWritten: promptWritten, EnterWritten: enterWritten,
				Message: "Prompt delivery failed unexpectedly: " + err.Error()}
			switch {
			case enterWritten:
				r.Stage = StageAfterEnter
			case promptWritten:
				r.Stage = StageAbsorption
			default:
				r.Stage = StageBeforeWrite
			}
			r.Disposition = DoNotRetry
			if r.RetrySafe {
				r.Disposition = SessionUnusable
			}
		}
		delete(m.reserved, session)
		outcome := "delivered"
		if !r.OK {
			outcome = "failed"
		}
		m.emit("delivery", outcome, append([]sim.Attr{sim.A("session", session), sim.A("backend", b.ID), sim.A("delivery", id)},
			describeDelivery(r)...)...)
		done(r)
	}
	switch b.Kind {
	case Claude:
		m.deliverClaudePrompt(io, finish)
	case Codex:
		m.deliverCodexPrompt(io, finish)
	default:
		m.deliverOpencodePrompt(io, b, finish)
	}
}

// deliverOpencodePrompt is deliverOpencodePrompt: the prompt goes over
// OpenCode's HTTP transport (deliverPromptText), which exists once the
// runtime has started; no PTY bytes are written.
func (m *Manager) deliverOpencodePrompt(io *PromptIO, b *Backend, done deliveryDone) {
	if !b.Live() {
		done(DeliveryResult{Stage: StageBeforeWrite, Code: CodeMissingCapability, RetrySafe: true, Disposition: SessionUnusable,
			Message: fmt.Sprintf("opencode session %s has no HTTP prompt delivery (runtime not started?)", io.SessionID)}, nil)
		return
	}
	m.later(func() {
		if !b.Live() {
			done(DeliveryResult{Stage: StageAfterEnter, Code: CodeTransportFailed, Disposition: DoNotRetry, PromptWritten: true,
				Message: fmt.Sprintf("opencode prompt delivery failed for session %s", io.SessionID)}, nil)
			return
		}
		b.beginTurn("feed")
		done(DeliveryResult{OK: true, Acceptance: Acceptance{Kind: "transport", AcceptedAt: m.env.Now()}}, nil)
	})
}

// DeliveryInFlight is isDeliveryInFlight: a delivery holds session's
// reservation.
func (m *Manager) DeliveryInFlight(session string) bool { return m.reserved[session] }

// ResolveCondition is resolveCondition: a condition resolver writes its
// own keystrokes, so it is refused (aborted) while a delivery holds the
// reservation; otherwise the session's resolver runs, if it has one.
func (m *Manager) ResolveCondition(session string, done func(ConditionResult)) {
	if m.reserved[session] {
		done(ConditionResult{Reason: "aborted", FailedAtStep: "prompt delivery in progress"})
		return
	}
	b := m.sess(session).entry
	if b == nil {
		done(ConditionResult{Reason: "no-session"})
		return
	}
	s := b.promptSurface()
	if s.ResolveCondition == nil {
		done(ConditionResult{Reason: "no-resolver"})
		return
	}
	s.ResolveCondition(done)
}

// describeBytes renders written bytes for the trace: paste, text or enter
// and the text's length.
func describeBytes(data string) string {
	switch {
	case data == "\r":
		return "enter"
	case strings.HasPrefix(data, "\x1b[200~") && strings.HasSuffix(data, "\r"):
		return fmt.Sprintf("paste+enter(%d)", len(data)-13)
	case strings.HasPrefix(data, "\x1b[200~"):
		return fmt.Sprintf("paste(%d)", len(data)-12)
	}
	return fmt.Sprintf("text(%d)", len(data))
}
