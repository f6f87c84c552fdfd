package terminal

import (
	"regexp"
	"strings"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// CodexSession's prompt readiness, from agent-code
// src/providers/codex/runtime/codexSession.ts@428aed2d (awaitReadyForPrompt,
// blockingCondition, markComposerReady) and codexReadyForPrompt.ts@428aed2d.

// CodexHeadless is what readiness reads of CodexHeadless: the screen and
// the condition snapshot (an idle session has none).
type CodexHeadless interface {
	Screen() string
	Conditions() []Condition
}

// CodexReadyTimeout is awaitReadyForPrompt's default timeout
// (codexSession.ts@428aed2d).
const CodexReadyTimeout = 10 * time.Second

var codexComposerRE = regexp.MustCompile(`(^|\n)›\s`)

// IsCodexReadyForPromptScreen is isCodexReadyForPromptScreen: the
// composer marker and the model footer are on screen and no known blocking
// screen is (trust dialog, working row, command approvals).
func IsCodexReadyForPromptScreen(screen string) bool {
	switch {
	case screen == "",
		strings.Contains(screen, "Do you trust the contents of this directory"),
		strings.Contains(screen, "Yes, continue") && strings.Contains(screen, "No, quit"),
		strings.Contains(screen, "Working ("),
		strings.Contains(screen, "Allow command") || strings.Contains(screen, "allow command"),
		strings.Contains(screen, "Approve") && strings.Contains(screen, "Deny"),
		strings.Contains(screen, "don't ask again"),
		!codexComposerRE.MatchString(screen):
		return false
	}
	return strings.Contains(screen, " · ")
}

// CodexSession is the readiness state of one Codex session.
type CodexSession struct {
	now   func() time.Duration
	after func(time.Duration, func()) sim.Timer
	// Headless is nil before start() and after stop().
	Headless CodexHeadless
	// Exited: the process exited.
	Exited bool
	// ComposerReady is the latch set at the first ready screen.
	ComposerReady bool
	// OnInputReadiness, when set, receives the latch's ready edge.
	OnInputReadiness func(ready bool, reason string)
	// schedule, when set, runs the readiness poll's ticks instead of after
	// (whose timer the poll never stops): the kernel's pooled Schedule.
	schedule func(time.Duration, func())
	// lastScreen and lastReady cache readyScreen's verdict: it is a
	// function of the screen, and a poll mostly reads the last one again.
	lastScreen string
	lastReady  bool
	haveLast   bool
}

// readyScreen is IsCodexReadyForPromptScreen(screen), cached for the last
// screen.
func (cs *CodexSession) readyScreen(screen string) bool {
	if !cs.haveLast || screen != cs.lastScreen {
		cs.lastScreen, cs.lastReady, cs.haveLast = screen, IsCodexReadyForPromptScreen(screen), true
	}
	return cs.lastReady
}

// NewCodexSession returns a Codex session on the given clock.
func NewCodexSession(now func() time.Duration, after func(time.Duration, func()) sim.Timer) *CodexSession {
	return &CodexSession{now: now, after: after}
}

// blockingCondition is blockingCondition: the trust dialog, or an approval
// whose modal is provably on screen (non-empty options; a denied
// approval's metadata outlives its modal and still advertises actions).
func (cs *CodexSession) blockingCondition() (Condition, bool) {
	if cs.Headless == nil {
		return Condition{}, false
	}
	conds := cs.Headless.Conditions()
	for _, c := range conds {
		if c.Kind == "codex.trust-dialog" {
			return c, true
		}
	}
	for _, c := range conds {
		if c.Kind == "codex.approval" && c.Options > 0 {
			return c, true
		}
	}
	return Condition{}, false
}

// AwaitReadyForPrompt is awaitReadyForPrompt: terminal at once without a
// headless or after exit; otherwise a poll (every o.Poll, default 50 ms)
// that answers blocked on the first tick a blocking condition is up (so
// the delivery reservation is released and the modal's keys land), ready
// (setting the latch) on a ready screen, terminal on exit, and timeout
// (composer-unpainted) at the deadline.
func (cs *CodexSession) AwaitReadyForPrompt(o ReadyOpts, done func(Readiness)) {
	poll := o.Poll
	if poll == 0 {
		poll = CodexReadyPoll
	}
	started := cs.now()
	deadline := o.DeadlineAt
	if deadline == 0 {
		t := o.Timeout
		if t == 0 {
			t = CodexReadyTimeout
		}
		deadline = started + t
	}
	if cs.Headless == nil {
		done(Readiness{GateState: GateState{Kind: "terminal", Reason: "no-headless"}})
		return
	}
	if cs.Exited {
		done(Readiness{GateState: GateState{Kind: "terminal", Reason: "exited"}})
		return
	}
	var tick func()
	tick = func() {
		switch {
		case cs.Exited:
			done(Readiness{GateState: GateState{Kind: "terminal", Reason: "exited"}})
			return
		case cs.Headless == nil:
			done(Readiness{GateState: GateState{Kind: "terminal", Reason: "no-headless"}})
			return
		}
		if c, ok := cs.blockingCondition(); ok {
			done(Readiness{GateState: GateState{Kind: "blocked", Condition: c.Kind, Resolvable: c.Actions > 0}})
			return
		}
		if screen := cs.Headless.Screen(); cs.readyScreen(screen) {
			cs.markComposerReady(screen)
			done(Readiness{GateState: GateState{Kind: "ready"}, Waited: cs.now() - started})
			return
		}
		if cs.now() >= deadline {
			done(Readiness{GateState: GateState{Kind: "timeout"}, Waited: cs.now() - started,
				Last: GateState{Kind: "warming", Reason: "composer-unpainted"}})
			return
		}
		if cs.schedule != nil {
			cs.schedule(poll, tick)
			return
		}
		cs.after(poll, tick)
	}
	tick()
}

// markComposerReady latches readiness at the first ready screen: the
// composer disappears while Codex works, and ordinary turns must not flap
// the renderer; only exit clears it.
func (cs *CodexSession) markComposerReady(screen string) {
	if cs.ComposerReady || cs.Exited || !cs.readyScreen(screen) {
		return
	}
	cs.ComposerReady = true
	if cs.OnInputReadiness != nil {
		cs.OnInputReadiness(true, "ready")
	}
}

// Surface is the session's PromptSurface over write (the PTY write).
func (cs *CodexSession) Surface(write func(string) error) *PromptSurface {
	return &PromptSurface{
		SnapshotScreen: func() string {
			if cs.Headless == nil {
				return ""
			}
			return cs.Headless.Screen()
		},
		AwaitReadyForPrompt: cs.AwaitReadyForPrompt,
		Write:               write,
	}
}
