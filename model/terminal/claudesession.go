package terminal

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// ClaudeSession's prompt gate and durable prompt acceptance, from agent-code
// src/providers/claude/runtime/claudeSession.ts@428aed2d
// (derivePromptGateState, publishPromptGate, awaitReadyForPrompt,
// armPromptAcceptance, resolvePromptAcceptance). A Claude Backend owns one;
// its headless screen is the Backend itself.

// Condition is one entry of a provider's condition snapshot: its kind, how
// many actions it advertises and, for a Codex approval, how many options
// its modal shows (0: metadata only, the modal has gone).
type Condition struct {
	Kind    string
	Actions int
	Options int
}

// ClaudeHeadless is what the gate reads of ClaudeCodeHeadless: the cached
// composer classification ("empty", "drafted" or "unpainted"), the
// condition snapshot (first blocking condition first) and the screen.
type ClaudeHeadless interface {
	ComposerState() string
	Conditions() []Condition
	Screen() string
}

// ClaudeReadyTimeout is awaitReadyForPrompt's default timeout
// (claudeSession.ts@428aed2d).
const ClaudeReadyTimeout = 12 * time.Second

// ClaudeAcceptanceDefault is armPromptAcceptance's default timeout
// (claudeSession.ts@428aed2d).
const ClaudeAcceptanceDefault = 10 * time.Second

// ClaudeSession is the gate and acceptance state of one Claude session.
type ClaudeSession struct {
	env *envClock
	// Headless is nil before start() and after stop().
	Headless ClaudeHeadless
	// Exited: the process exited.
	Exited bool
	// TailAttached and ReplayQuiesced are transcriptTailAttached and
	// transcriptReplayQuiesced.
	TailAttached, ReplayQuiesced bool
	// TranscriptID is transcriptSessionId: the resume id, or a fresh id
	// (--session-id) distinct per session.
	TranscriptID string
	// OnInputReadiness, when set, receives the input-readiness edges the
	// gate publishes (ready on entering ready, provider-not-ready on leaving).
	OnInputReadiness func(ready bool, reason string)
	resume           bool
	state            GateState
	listeners        []*func(GateState)
	waiters          []*acceptanceWaiter
	cursor           int
	replayTimer      sim.Timer
}

type envClock struct {
	now   func() time.Duration
	after func(time.Duration, func()) sim.Timer
}

type acceptanceWaiter struct {
	prompts        map[string]bool
	afterCursor    int
	armedAt        time.Duration
	requiresImage  bool
	expectedImages int // -1: not given
	w              *AcceptanceWaiter
	timer          sim.Timer
	settle         func(Acceptance)
}

// NewClaudeSession is new ClaudeSession({resumeSessionId}): resume "" is a
// fresh session with a fresh transcript id numbered seq (randomUUID
// upstream; ids come from counters here, never from crypto).
func NewClaudeSession(now func() time.Duration, after func(time.Duration, func()) sim.Timer, resume string, seq int) *ClaudeSession {
	cs := &ClaudeSession{env: &envClock{now: now, after: after}, state: GateState{Kind: "terminal", Reason: "no-headless"},
		resume: resume != "", TranscriptID: resume}
	if resume == "" {
		cs.TranscriptID = fmt.Sprintf("transcript-%d", seq)
	}
	return cs
}

// Start is what start() does to the gate once the transcript tail is
// attached: a fresh session has no history and is quiesced at once; a
// resumed one arms the 250 ms replay quiet window.
func (cs *ClaudeSession) Start(h ClaudeHeadless) {
	cs.Headless = h
	cs.TailAttached = true
	cs.ReplayQuiesced = !cs.resume
	if cs.ReplayQuiesced {
		cs.Refresh()
		return
	}
	cs.ArmReplayQuietWindow()
}

// ArmReplayQuietWindow is armTranscriptReplayQuietWindow: (re)start the
// 250 ms window after which the replay counts as quiesced.
func (cs *ClaudeSession) ArmReplayQuietWindow() {
	if !cs.TailAttached || cs.ReplayQuiesced {
		return
	}
	if cs.replayTimer != nil {
		cs.replayTimer.Stop()
	}
	cs.replayTimer = cs.env.after(ClaudeReplayQuiesce, func() {
		cs.replayTimer = nil
		if cs.Exited {
			return
		}
		cs.ReplayQuiesced = true
		cs.Refresh()
	})
}

// Derive is derivePromptGateState, in its order: exited, no headless, a
// blocking condition, a human draft (never time-bounded: typing never
// clears the composer), replay pending, composer unpainted, ready.
func (cs *ClaudeSession) Derive() GateState {
	if cs.Exited {
		return GateState{Kind: "terminal", Reason: "exited"}
	}
	if cs.Headless == nil {
		return GateState{Kind: "terminal", Reason: "no-headless"}
	}
	if cond := cs.Headless.Conditions(); len(cond) > 0 {
		return GateState{Kind: "blocked", Condition: cond[0].Kind, Resolvable: cond[0].Actions > 0}
	}
	composer := cs.Headless.ComposerState()
	if composer == "drafted" {
		return GateState{Kind: "occupied", Reason: "human-draft"}
	}
	if !cs.TailAttached || !cs.ReplayQuiesced {
		return GateState{Kind: "warming", Reason: "replay-pending"}
	}
	if composer == "unpainted" {
		return GateState{Kind: "warming", Reason: "composer-unpainted"}
	}
	return GateState{Kind: "ready"}
}

// State is promptGateState, the state last published.
func (cs *ClaudeSession) State() GateState { return cs.state }

// Publish is publishPromptGate: an unchanged state is not published; a
// change reaches every prompt-gate listener, and input readiness moves on
// entering or leaving ready.
func (cs *ClaudeSession) Publish(next GateState) GateState {
	if next == cs.state {
		return cs.state
	}
	wasReady := cs.state.Kind == "ready"
	cs.state = next
	for _, l := range append([]*func(GateState){}, cs.listeners...) {
		(*l)(next)
	}
	if cs.OnInputReadiness != nil {
		switch {
		case next.Kind == "ready":
			cs.OnInputReadiness(true, "ready")
		case wasReady:
			cs.OnInputReadiness(false, "provider-not-ready")
		}
	}
	return next
}

// Refresh is refreshPromptGate: derive once, publish.
func (cs *ClaudeSession) Refresh() GateState { return cs.Publish(cs.Derive()) }

// ListenerCount is listenerCount('prompt-gate').
func (cs *ClaudeSession) ListenerCount() int { return len(cs.listeners) }

// IsPromptAcceptanceReady is isPromptAcceptanceReady.
func (cs *ClaudeSession) IsPromptAcceptanceReady() bool { return cs.Refresh().Kind == "ready" }

func (cs *ClaudeSession) off(l *func(GateState)) {
	for i, x := range cs.listeners {
		if x == l {
			cs.listeners = append(cs.listeners[:i:i], cs.listeners[i+1:]...)
			return
		}
	}
}

// AwaitReadyForPrompt is awaitReadyForPrompt: ready at once, a
// non-warming state at once (blocked, occupied, terminal: a human or the
// lifecycle must act, so no clock is spent), or wait on gate transitions
// (no polling: one listener, one parse per transition for every waiter)
// until ready, a non-warming state or the deadline.
func (cs *ClaudeSession) AwaitReadyForPrompt(o ReadyOpts, done func(Readiness)) {
	started := cs.env.now()
	deadline := o.DeadlineAt
	if deadline == 0 {
		t := o.Timeout
		if t == 0 {
			t = ClaudeReadyTimeout
		}
		deadline = started + t
	}
	initial := cs.Refresh()
	switch initial.Kind {
	case "ready":
		done(Readiness{GateState: initial})
		return
	case "warming":
	default:
		done(Readiness{GateState: initial})
		return
	}
	settled := false
	last := initial
	var timer sim.Timer
	var listener func(GateState)
	l := &listener
	finish := func(r Readiness) {
		if settled {
			return
		}
		settled = true
		if timer != nil {
			timer.Stop()
		}
		cs.off(l)
		done(r)
	}
	listener = func(s GateState) {
		if s.Kind == "warming" {
			last = s
			return
		}
		if s.Kind == "ready" {
			finish(Readiness{GateState: s, Waited: cs.env.now() - started})
			return
		}
		finish(Readiness{GateState: s})
	}
	// Subscribe before rechecking: a transition between the first read and
	// the subscription is not missed.
	cs.listeners = append(cs.listeners, l)
	remaining := deadline - cs.env.now()
	if remaining < 0 {
		remaining = 0
	}
	timer = cs.env.after(remaining, func() {
		finish(Readiness{GateState: GateState{Kind: "timeout"}, Waited: cs.env.now() - started, Last: last})
	})
	listener(cs.Refresh())
}

// canonicalizeAcceptedPrompt normalizes line endings and trims trailing
// white space (Claude trims it), keeping interior text as is.
func canonicalizeAcceptedPrompt(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.TrimRight(s, " \t\n\f\v\u00a0\u2028\u2029")
}

var trailingImagePillRE = regexp.MustCompile(`\s*\[Image #\d+\]\s*$`)

// stripTrailingClaudeImagePills removes exactly count trailing "[Image #N]"
// pills, or reports false when there are fewer.
func stripTrailingClaudeImagePills(s string, count int) (string, bool) {
	for i := 0; i < count; i++ {
		next := trailingImagePillRE.ReplaceAllString(s, "")
		if next == s {
			return "", false
		}
		s = next
	}
	return s, true
}

// ArmPromptAcceptance is armPromptAcceptance: register a waiter for the
// JSONL entry that accepts prompt (or an alias), after the current ingest
// cursor and not timestamped before now; it times out after o.Timeout (the
// default 10 s when 0) and settles session-exited at once on an exited
// session.
func (cs *ClaudeSession) ArmPromptAcceptance(prompt string, o AcceptanceOpts) *AcceptanceWaiter {
	pw := &acceptanceWaiter{prompts: map[string]bool{canonicalizeAcceptedPrompt(prompt): true}, afterCursor: cs.cursor,
		armedAt: cs.env.now(), requiresImage: o.RequiresImage, expectedImages: o.ExpectedImageCount}
	for _, a := range o.Aliases {
		pw.prompts[canonicalizeAcceptedPrompt(a)] = true
	}
	w, finish := NewWaiter()
	pw.w = w
	settle := func(a Acceptance) {
		if _, done := w.Settled(); done {
			return
		}
		if pw.timer != nil {
			pw.timer.Stop()
		}
		for i, x := range cs.waiters {
			if x == pw {
				cs.waiters = append(cs.waiters[:i:i], cs.waiters[i+1:]...)
				break
			}
		}
		finish(a)
	}
	w.cancel = func() { settle(Acceptance{Kind: "cancelled"}) }
	pw.settle = settle
	cs.waiters = append(cs.waiters, pw)
	timeout := o.Timeout
	if timeout == 0 {
		timeout = ClaudeAcceptanceDefault
	}
	pw.timer = cs.env.after(timeout, func() { settle(Acceptance{Kind: "timeout"}) })
	if cs.Exited {
		settle(Acceptance{Kind: "session-exited"})
	}
	return w
}

// ContentBlock is one block of a structured user message: text (Text) or
// image (Type "image" or "image_url"), or another kind (tool_result).
type ContentBlock struct {
	Type, Text string
}

// JSONLEntry is one transcript entry as the tailer hands it over: a user
// message (Type "user", Role "user", Content or Blocks) or a queue
// operation (Type "queue-operation", Operation "enqueue", Content), with
// an optional timestamp (Stamped) and uuid.
type JSONLEntry struct {
	Type, Operation, Role string
	Content               string
	Blocks                []ContentBlock
	Structured            bool // Blocks is the content, not Content
	Stamped               bool
	Timestamp             time.Duration
	UUID                  string
}

// Ingest is the jsonl-entry handler: bump the ingest cursor and resolve
// waiters against the entry.
func (cs *ClaudeSession) Ingest(e JSONLEntry) {
	cs.cursor++
	cs.ResolvePromptAcceptance(e, cs.cursor)
}

// SetIngestCursor sets promptAcceptanceIngestCursor (tests).
func (cs *ClaudeSession) SetIngestCursor(n int) { cs.cursor = n }

// ResolvePromptAcceptance is resolvePromptAcceptance: an exact (canonical)
// user or enqueued payload after a waiter's cursor and not timestamped
// before it armed settles it; image waiters also count image blocks, and
// the trailing image pills Claude appends are stripped exactly.
func (cs *ClaudeSession) ResolvePromptAcceptance(e JSONLEntry, cursor int) {
	kind, content, ok := "", "", false
	images := 0
	switch {
	case e.Type == "queue-operation" && e.Operation == "enqueue":
		kind, content, ok = "queue", e.Content, true
	case e.Type == "user" && e.Role == "user":
		kind = "user"
		if !e.Structured {
			content, ok = e.Content, true
			break
		}
		var b strings.Builder
		for _, blk := range e.Blocks {
			switch blk.Type {
			case "text":
				b.WriteString(blk.Text)
			case "image", "image_url":
				images++
			}
		}
		content, ok = b.String(), true
	}
	if !ok {
		return
	}
	canonical := canonicalizeAcceptedPrompt(content)
	for _, pw := range append([]*acceptanceWaiter{}, cs.waiters...) {
		if cursor <= pw.afterCursor {
			continue
		}
		if e.Stamped && e.Timestamp < pw.armedAt {
			continue
		}
		if pw.requiresImage && kind == "user" && images == 0 {
			continue
		}
		if pw.expectedImages >= 0 && kind == "user" && images != pw.expectedImages {
			continue
		}
		pills := images
		if kind != "user" {
			pills = pw.expectedImages
			if pills < 0 {
				pills = 0
			}
		}
		match := pw.prompts[canonical]
		if !match && pills > 0 {
			if stripped, ok := stripTrailingClaudeImagePills(content, pills); ok {
				match = pw.prompts[canonicalizeAcceptedPrompt(stripped)]
			}
		}
		if !match {
			continue
		}
		a := Acceptance{Kind: kind, AcceptedAt: cs.env.now()}
		if kind == "user" {
			a.EntryID = e.UUID
		}
		pw.settle(a)
	}
}

// Exit is the exit handler: terminal exited, every waiter session-exited.
func (cs *ClaudeSession) Exit() {
	cs.Exited = true
	if cs.replayTimer != nil {
		cs.replayTimer.Stop()
		cs.replayTimer = nil
	}
	cs.Publish(GateState{Kind: "terminal", Reason: "exited"})
	for _, pw := range append([]*acceptanceWaiter{}, cs.waiters...) {
		pw.settle(Acceptance{Kind: "session-exited"})
	}
}

// Surface is the session's PromptSurface over write (the PTY write).
func (cs *ClaudeSession) Surface(write func(string) error) *PromptSurface {
	return &PromptSurface{
		SnapshotScreen: func() string {
			if cs.Headless == nil {
				return ""
			}
			return cs.Headless.Screen()
		},
		AwaitReadyForPrompt:     cs.AwaitReadyForPrompt,
		IsPromptAcceptanceReady: cs.IsPromptAcceptanceReady,
		ArmPromptAcceptance: func(p string, o AcceptanceOpts) (*AcceptanceWaiter, error) {
			return cs.ArmPromptAcceptance(p, o), nil
		},
		Write: write,
	}
}
