package terminal

import (
	"time"

	"github.com/orchsim/orchsim/sim"
)

// Key is what one input chunk typed into a terminal does to the TUI.
type Key string

// Keys. Text grows the composer draft; Enter submits it (or picks the
// highlighted option of a prompt); Clear empties the composer (Ctrl-U);
// Answer picks an option of a prompt and is plain text without one.
const (
	KeyText   Key = "text"
	KeyEnter  Key = "enter"
	KeyClear  Key = "clear"
	KeyAnswer Key = "answer"
)

// Chunk is one input chunk (one xterm onData call), numbered per pane.
type Chunk struct {
	Seq int
	Key Key
}

type backendState int

const (
	starting backendState = iota
	live
	stopped
)

// Backend is one generation of a provider process behind a headless PTY: a
// Claude, Codex or OpenCode TUI. It derives and publishes its input
// readiness the way its provider does (MODEL.md C3), runs turns that print
// output and sometimes ask for permission, and may wedge before painting its
// composer.
type Backend struct {
	m       *Manager
	ID      string
	Session string
	Kind    Kind
	Cwd     string
	Resume  bool
	actor   string
	rand    *sim.Rand
	state   backendState
	// wedged: the process started but its composer never paints.
	wedged bool
	// composer: the composer has painted (Codex/OpenCode: the latch).
	composer bool
	// prompted: a prompt has been on screen at least once.
	prompted bool
	prompt   bool
	draft    int
	// replaying: a resumed Claude session whose transcript replay has not
	// quiesced.
	replaying bool
	// published is the readiness last published (Claude publishes edges).
	published bool
	busy      bool
	stepping  bool
	steps     int
	liveAt    time.Duration
	// held are the writes main holds until the composer paints
	// (HoldInputUntilComposer).
	held []heldWrite
	// activeAt is the idle clock's last activity; jobs are the running
	// background jobs (reaper.go).
	activeAt time.Duration
	jobs     []*job
	jobSeq   int
	bg       *sim.Rand
	stepFn   func() // step, bound once
	// Teardown (lifecycle.go): created once its provider was constructed;
	// stops counts stop() calls, stopRequested the first (requestEntryStop),
	// stopBeforeSettle a stop requested while starting, postStop the
	// post-start stop; stopGate/stopHeld/onStopped block a stop for a test.
	created, stopRequested, stopBeforeSettle, postStop bool
	stops                                              int
	stopGate, stopHeld                                 bool
	onStopped                                          []func()
	// tmux is a terminal session's tmux session name and whether this
	// generation created it.
	tmux        string
	tmuxCreated bool
	// startAt is when the provider was constructed (provider.start.*).
	startAt time.Duration
	// cs and cx are the provider session's prompt gate (Claude) and
	// readiness poll (Codex); surface, when set, replaces the surface they
	// give the delivery protocols (tests install upstream's stubs there).
	cs      *ClaudeSession
	cx      *CodexSession
	surface *PromptSurface
	// view is what the composer shows of written prompt text (inline text
	// or paste placeholders); pastes counts the placeholders, images the
	// image pills; pending counts writes not yet absorbed.
	view    string
	text    string
	pastes  int
	images  int
	pending int
	// absorbDue is when the last written text is absorbed: the PTY hands
	// Claude its input in order, so a later write is never shown before an
	// earlier one (hunt 2, docs/findings.md: a retry's paste drawn faster
	// than a slow first one overtook it).
	absorbDue time.Duration
	// jsonl draws when a submitted prompt's transcript entry is ingested.
	jsonl *sim.Rand

	// claudeScreen is Claude's screen for claudeView (backendScreen.Screen).
	claudeScreen, claudeView string
	claudeShown              bool
	// codexScreen is Codex's composer screen for codexView, the same way.
	codexScreen, codexView string
	codexShown             bool
	// providerSurface is the surface cs or cx gives (promptSurface), made
	// once: its functions read the session's state when called.
	providerSurface *PromptSurface
}

// heldWrite is one pane write main holds for a backend.
type heldWrite struct {
	pane   string
	chunks []Chunk
	at     time.Duration
}

func newBackend(m *Manager, meta *Meta, gen int) *Backend {
	b := &Backend{m: m, ID: m.env.Str().Join(meta.ID+"#", gen), Session: meta.ID, Kind: meta.Kind, Cwd: meta.Cwd,
		Resume: meta.Resume || gen > 1, actor: m.env.Str().Concat("agent/", meta.ID)}
	b.rand = m.env.Rand(b.actor)
	now := m.env.Now
	after := func(d time.Duration, f func()) sim.Timer { return m.env.Clock.AfterFunc(d, f) }
	switch b.Kind {
	case Claude:
		resume := ""
		if b.Resume {
			resume = meta.ID
		}
		m.transcripts++
		b.cs = NewClaudeSession(now, after, resume, m.transcripts)
	case Codex:
		b.cx = NewCodexSession(now, after)
		b.cx.schedule = m.env.After
	}
	return b
}

// Live reports whether the process is running (start resolved, not stopped).
func (b *Backend) Live() bool { return b.state == live }

// Interactive reports whether the TUI has painted its composer or a prompt:
// a backend that never does is wedged.
func (b *Backend) Interactive() bool { return b.composer || b.prompted }

// Prompt reports whether a permission prompt is on screen.
func (b *Backend) Prompt() bool { return b.prompt }

// Draft returns the number of chunks in the composer.
func (b *Backend) Draft() int { return b.draft }

// Busy reports whether a turn is running.
func (b *Backend) Busy() bool { return b.busy }

func (b *Backend) emit(kind, outcome string, attrs ...sim.Attr) {
	if kind != "bg.start" && kind != "bg.end" {
		b.touch()
	}
	// On the stack: EmitPrefixed copies the attributes.
	b.m.env.EmitPrefixed(b.actor, kind, outcome, []sim.Attr{sim.A("session", b.Session), sim.A("backend", b.ID)}, attrs...)
}

// started is called when start() resolves: the provider publishes its first
// (not ready) readiness and the TUI begins to boot.
func (b *Backend) started() {
	b.state = live
	b.liveAt = b.m.env.Now()
	switch {
	case b.cs != nil:
		// The tail attaches before start() resolves; the replay window is
		// the backend's own (replaying, below).
		b.cs.Headless, b.cs.TailAttached, b.cs.ReplayQuiesced = backendScreen{b}, true, !b.Resume
	case b.cx != nil:
		b.cx.Headless = backendScreen{b}
	}
	switch {
	case b.Kind != Claude:
		b.m.setInputReadiness(b, false, "starting")
	case b.Resume:
		b.replaying = true
		b.m.setInputReadiness(b, false, "replaying-history")
	default:
		b.m.setInputReadiness(b, false, "provider-not-ready")
	}
	if b.Kind == Claude {
		if g, ok := b.promptGate(); ok {
			b.m.noteGate(b, g)
		}
	}
	if b.m.app.Profile().Has(HoldUntilStarted) {
		b.m.flushHeld(b)
	}
	paint := b.rand.Duration("paint", 500*time.Millisecond, 6*time.Second)
	b.m.env.After(paint, b.paint)
	if b.rand.Chance("crash", b.m.cfg.CrashChance) {
		b.m.env.After(b.rand.Duration("crash-after", time.Minute, 50*time.Minute), func() {
			if b.state == live {
				b.m.exited(b, 1, "crash")
			}
		})
	}
}

func (b *Backend) paint() {
	if b.state != live {
		return
	}
	if b.wedged {
		b.emit("boot", "wedged", sim.A("why", "composer never paints"))
		return
	}
	b.composer = true
	b.emit("screen", "composer")
	b.m.flushHeld(b)
	if b.replaying {
		b.m.env.After(b.rand.Duration("replay", 0, 2*time.Second)+ClaudeReplayQuiesce, func() {
			if b.state != live {
				return
			}
			b.replaying = false
			b.publish()
		})
	}
	b.publish()
}

// gate derives readiness: Claude's prompt gate (derivePromptGateState) in
// its order, or the Codex/OpenCode composerReady latch.
func (b *Backend) gate() (bool, string) {
	if b.state != live {
		return false, "exited"
	}
	if b.Kind != Claude {
		return b.composer, "ready"
	}
	// The replay quiet window is the backend's own (replaying, drawn after
	// the paint); the session's gate reads it.
	b.cs.ReplayQuiesced = !b.replaying
	switch st := b.cs.Derive(); st.Kind {
	case "ready":
		return true, "ready"
	case "blocked":
		return false, "blocked"
	case "occupied":
		return false, st.Reason
	case "warming":
		return false, st.Reason
	default:
		return false, "exited"
	}
}

// stop marks the process gone: the provider session publishes its exit
// (Claude: terminal, every acceptance waiter session-exited).
func (b *Backend) stop() {
	b.state = stopped
	switch {
	case b.cs != nil && !b.cs.Exited:
		b.cs.Exit()
	case b.cx != nil:
		b.cx.Exited = true
	}
}

// publish emits readiness the provider's way: Claude emits ready:true on
// every transition into ready and ready:false only on a transition out of
// it; Codex and OpenCode emit ready:true once, when the latch is set.
func (b *Backend) publish() {
	ready, reason := b.gate()
	if b.Kind == Claude {
		if g, ok := b.promptGate(); ok {
			b.m.noteGate(b, g)
		}
	}
	if b.cs != nil && b.state == live {
		// The gate's transition reaches every awaitReadyForPrompt waiter.
		b.cs.Refresh()
	}
	if b.Kind != Claude {
		if ready && !b.published {
			b.published = true
			b.m.setInputReadiness(b, true, "ready")
		}
		return
	}
	if ready != b.published {
		b.published = ready
		b.m.setInputReadiness(b, ready, reason)
	}
}

// Input applies chunks written to the PTY to the TUI.
func (b *Backend) input(chunks []Chunk) {
	if b.state != live {
		return
	}
	if !b.composer {
		// A TUI that has not painted its composer takes no input: the keys
		// echo into the output area and are gone
		// (agent-orchestrator#3023).
		b.emit("input.misplaced", "", sim.A("seq", seqRange(b.m.env, chunks)), sim.A("why", "composer-unpainted"))
		return
	}
	submit := false
	for _, c := range chunks {
		switch {
		case b.prompt && (c.Key == KeyAnswer || c.Key == KeyEnter):
			b.prompt = false
			b.emit("prompt", "answered", sim.A("via", "terminal"))
		case b.prompt:
			// Keys typed at a permission prompt do not reach the composer.
		case c.Key == KeyText || c.Key == KeyAnswer:
			b.draft++
		case c.Key == KeyClear:
			b.draft = 0
		case c.Key == KeyEnter && b.draft > 0:
			b.draft = 0
			submit = true
		}
	}
	if submit {
		b.beginTurn("terminal")
	}
	if b.busy && !b.prompt && !b.stepping {
		b.scheduleStep()
	}
	b.publish()
}

// deliverPrompt is deliverPromptToAgent: a feed-mode Send lands only on a
// ready composer.
func (b *Backend) deliverPrompt() bool {
	if ready, _ := b.gate(); !ready {
		return false
	}
	b.beginTurn("feed")
	return true
}

// answer answers the prompt from the feed's prompt card.
func (b *Backend) answer() bool {
	if b.state != live || !b.prompt {
		return false
	}
	b.prompt = false
	b.emit("prompt", "answered", sim.A("via", "feed"))
	if b.busy && !b.stepping {
		b.scheduleStep()
	}
	b.publish()
	return true
}

// AskPermission puts a permission prompt on screen (a turn step does this at
// random; scripts call it).
func (b *Backend) AskPermission() {
	if b.state != live || b.prompt || !b.composer {
		return
	}
	b.prompt = true
	b.prompted = true
	b.emit("prompt", "shown")
	b.publish()
}

func (b *Backend) beginTurn(via string) {
	if b.busy {
		b.steps++
		return
	}
	b.busy = true
	b.steps = 1 + b.rand.IntN("steps", 6)
	b.emit("turn.start", "", sim.A("via", via))
	b.scheduleStep()
}

func (b *Backend) scheduleStep() {
	b.stepping = true
	if b.stepFn == nil {
		b.stepFn = b.step
	}
	b.m.env.After(b.rand.Duration("step", time.Second, 20*time.Second), b.stepFn)
}

func (b *Backend) step() {
	b.stepping = false
	if b.state != live || b.prompt {
		return
	}
	b.m.output(b, 1024*(1+b.rand.IntN("output-kb", 8)))
	b.maybeStartJob()
	if b.rand.Chance("ask", b.m.cfg.AskChance) {
		b.AskPermission()
		return
	}
	b.steps--
	if b.steps <= 0 {
		b.busy = false
		b.emit("turn.end", "")
		return
	}
	b.scheduleStep()
}
