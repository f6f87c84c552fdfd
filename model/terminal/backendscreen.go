package terminal

import (
	"fmt"
	"strings"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// A backend's TUI as the delivery protocols see it: the screen its
// headless renders, the composer classification and the condition
// snapshot, and what PTY bytes written by a delivery do to it.

// ClaudeCollapseLines and ClaudeCollapseChars are where Claude collapses a
// paste into a "[Pasted text #N]" placeholder instead of inlining it
// (pasteConfirm.ts@428aed2d, measured: multiline of 4 or more lines, or a
// single line over ~800 characters).
const (
	ClaudeCollapseLines = 4
	ClaudeCollapseChars = 800
)

// The condition snapshots a backend can show (shared: gate reads them on
// every readiness derivation).
var (
	codexApprovalShown    = []Condition{{Kind: "codex.approval", Actions: 1, Options: 2}}
	claudePermissionShown = []Condition{{Kind: "claude.permission", Actions: 1}}
)

// backendScreen is a Backend seen as ClaudeCodeHeadless or CodexHeadless.
type backendScreen struct{ b *Backend }

// ComposerState classifies the composer: unpainted before the TUI paints
// it, drafted while the user's keys or written text are in it, else empty.
func (s backendScreen) ComposerState() string {
	b := s.b
	switch {
	case !b.composer:
		return "unpainted"
	case b.draft > 0 || b.text != "":
		// Text a delivery left in the composer is a draft too: the next
		// delivery must not type into it.
		return "drafted"
	}
	return "empty"
}

// Conditions is the condition snapshot: a permission prompt (Claude) or a
// command approval whose modal is on screen (Codex).
func (s backendScreen) Conditions() []Condition {
	b := s.b
	if !b.prompt {
		return nil
	}
	if b.Kind == Codex {
		return codexApprovalShown
	}
	return claudePermissionShown
}

// claudeChrome is Claude's chrome divider, strings.Repeat("─", 40) (a constant: the
// screen is rendered at every paste-absorption poll).
const claudeChrome = "────────────────────────────────────────"

// Screen renders the screen: Claude's composer line ("❯ " and what it
// shows) under a chrome divider; Codex's composer marker and model footer,
// or its startup, working or approval screen.
func (s backendScreen) Screen() string {
	b := s.b
	if b.state != live {
		return ""
	}
	if b.Kind == Codex {
		switch {
		case !b.composer:
			return "Starting Codex…"
		case b.prompt:
			return "Allow command?\n  1. Yes  2. No"
		case b.busy:
			return "• Working (3s • esc to interrupt)"
		}
		if !b.codexShown || b.codexView != b.view {
			// Rendered again only when the composer's text changed (a
			// readiness poll reads it every 50 ms).
			b.codexScreen, b.codexView, b.codexShown = "› "+b.view+"\n  gpt-5 high · "+b.Cwd, b.view, true
		}
		return b.codexScreen
	}
	if !b.composer {
		return ""
	}
	if !b.claudeShown || b.claudeView != b.view {
		// Rendered again only when the composer's text changed.
		b.claudeScreen, b.claudeView, b.claudeShown = claudeChrome+"\n❯ "+b.view+"\n"+claudeChrome, b.view, true
	}
	return b.claudeScreen
}

// promptSurface is what the delivery protocols may use of b.
func (b *Backend) promptSurface() *PromptSurface {
	switch {
	case b.surface != nil:
		return b.surface
	case b.providerSurface != nil:
		return b.providerSurface
	case b.cs != nil:
		b.providerSurface = b.cs.Surface(b.ptyWrite)
		return b.providerSurface
	case b.cx != nil:
		b.providerSurface = b.cx.Surface(b.ptyWrite)
		return b.providerSurface
	}
	return &PromptSurface{Write: b.ptyWrite}
}

// ptyWrite applies bytes a delivery wrote: text and pastes reach the
// composer after the TUI absorbs them (1 ms to Config.AbsorbMax, and never
// before text written earlier: the PTY is a byte stream); an Enter
// arriving while a paste is still being absorbed is swallowed into it (the
// ~100 ms paste accumulator); an Enter on a composer holding text submits
// it, and Claude's transcript records the submission (a user entry, or a
// queue-operation while a turn runs) some milliseconds later. Codex
// records a paste followed by Enter in one write as a submission. Keys
// written while a permission prompt is on screen never reach the composer.
func (b *Backend) ptyWrite(data string) error {
	if b.state != live || !b.composer {
		b.emit("input.misplaced", "", sim.A("data", describeBytes(data)), sim.A("why", "composer-unpainted"))
		return nil
	}
	enter := strings.HasSuffix(data, "\r")
	body := strings.TrimSuffix(data, "\r")
	body = strings.TrimSuffix(strings.TrimPrefix(body, "\x1b[200~"), "\x1b[201~")
	if body != "" {
		if b.prompt {
			b.emit("input.misplaced", "", sim.A("data", describeBytes(data)), sim.A("why", "prompt-on-screen"))
			return nil
		}
		if b.Kind == Codex && enter {
			b.text, b.view = body, NormalizeWhitespace(body)
			b.submit()
			return nil
		}
		b.pending++
		maxAbsorb := b.m.cfg.AbsorbMax
		if maxAbsorb <= 0 {
			maxAbsorb = 30 * time.Millisecond
		}
		gen := b.ID
		now := b.m.env.Now()
		due := now + b.rand.Duration("absorb", time.Millisecond, maxAbsorb)
		if due < b.absorbDue {
			due = b.absorbDue // in order: after the text written before it
		}
		b.absorbDue = due
		b.m.env.After(due-now, func() {
			if b.state != live || b.ID != gen {
				return
			}
			b.pending--
			b.absorb(body)
		})
		return nil
	}
	if !enter {
		return nil
	}
	if b.pending > 0 {
		b.emit("input.swallowed", "", sim.A("why", "paste-accumulating"))
		return nil
	}
	if b.text != "" && !b.prompt {
		b.submit()
	}
	return nil
}

// absorb shows written text in the composer: inlined, or collapsed into a
// placeholder when big; an image path becomes an image pill.
func (b *Backend) absorb(body string) {
	b.text += body
	switch {
	case strings.HasPrefix(body, "/") && strings.HasSuffix(body, ".png"):
		b.images++
		b.view += fmt.Sprintf(" [Image #%d]", b.images)
	case strings.Count(body, "\n")+1 >= ClaudeCollapseLines || len(body) > ClaudeCollapseChars:
		b.pastes++
		b.view += fmt.Sprintf("[Pasted text #%d]", b.pastes)
	default:
		b.view += NormalizeWhitespace(body)
	}
	b.emit("composer", "absorbed", sim.A("view", fmt.Sprint(len(b.view))))
	b.publish()
}

// submit sends the composer's text: a turn starts (or queues behind the
// running one) and Claude's JSONL records it.
func (b *Backend) submit() {
	text, busy := b.text, b.busy
	b.text, b.view, b.images = "", "", 0
	b.emit("prompt.submitted", map[bool]string{true: "queued", false: "user"}[busy], sim.A("chars", fmt.Sprint(len(text))))
	b.beginTurn("feed")
	b.publish()
	if b.cs == nil {
		return
	}
	if b.jsonl == nil {
		b.jsonl = b.m.env.Rand("agent/" + b.Session + "/jsonl")
	}
	e := JSONLEntry{Type: "user", Role: "user", Content: text, Stamped: true}
	if busy {
		e = JSONLEntry{Type: "queue-operation", Operation: "enqueue", Content: text, Stamped: true}
	}
	gen := b.ID
	b.m.env.After(b.jsonl.Duration("jsonl", 5*time.Millisecond, 300*time.Millisecond), func() {
		if b.state != live || b.ID != gen {
			return
		}
		e.Timestamp = b.m.env.Now()
		b.emit("jsonl", e.Type)
		b.cs.Ingest(e)
	})
}
