package terminal

import (
	"regexp"
	"strings"
	"time"
	"unicode"
)

// Claude paste-commit detection, ported from agent-code
// src/shared/claude/pasteConfirm.ts@428aed2d (the one implementation the
// desktop composer and main's prompt delivery share). Claude's TUI buffers
// bracketed-paste bytes on a ~100 ms accumulator, so an Enter written
// inside that window is swallowed as more paste; delivery sends Enter only
// after the active composer visibly committed the text, either as a
// "[Pasted text #N]" placeholder (a paste Claude collapses) or as the
// inlined tail of the text (everything smaller). Screens are plain text,
// as ClaudeCodeHeadless.getScreen returns them.

// ClaudePasteThreshold is CLAUDE_PASTE_THRESHOLD: below this length, and
// with no newline, a prompt is plain text; above it (or with a newline) it
// is a bracketed paste (pasteConfirm.ts@428aed2d).
const ClaudePasteThreshold = 100

// IsPasteLike is isPasteLike: does text take the bracketed-paste route?
func IsPasteLike(text string) bool {
	return strings.ContainsAny(text, "\r\n") || len([]rune(text)) > ClaudePasteThreshold
}

var (
	pastePlaceholderRE = regexp.MustCompile(`\[Pasted text #\d+`)
	imagePlaceholderRE = regexp.MustCompile(`\[Image #\d+\]`)
	composerPromptRE   = regexp.MustCompile(`^\s*❯(\s|$)`)
)

// isClaudeDivider is the chrome divider predicate: ten or more box-drawing
// rule characters making up at least 80% of the line's non-space text.
func isClaudeDivider(line string) bool {
	// Every rule character is encoded as 0xE2 0x94-0x96 ..: a line without
	// that byte has no divider; Claude's own chrome is one.
	if line == claudeChrome {
		return true
	}
	if strings.IndexByte(line, 0xE2) < 0 {
		return false
	}
	dividers, nonSpace := 0, 0
	for _, r := range line {
		switch r {
		case '─', '━', '═', '▔':
			dividers++
		}
		if !unicode.IsSpace(r) {
			nonSpace++
		}
	}
	return dividers >= 10 && float64(dividers) >= float64(nonSpace)*0.8
}

// ExtractActiveClaudeComposer is extractActiveClaudeComposer: the editable
// composer region of a Claude screen, from the first "❯" line after the last
// chrome divider that has one, up to the next divider; without a "❯" line,
// the last 12 lines. Searching the whole screen would match scrollback (an
// earlier message with the same tail or an old placeholder).
func ExtractActiveClaudeComposer(screen string) string {
	lines := strings.Split(screen, "\n")
	start := -1
	for divider := len(lines) - 1; divider >= 0 && start < 0; divider-- {
		if !isClaudeDivider(lines[divider]) {
			continue
		}
		end := len(lines)
		for i := divider + 1; i < len(lines); i++ {
			if isClaudeDivider(lines[i]) {
				end = i
				break
			}
		}
		for i := divider + 1; i < end; i++ {
			if composerPromptRE.MatchString(lines[i]) {
				start = i
				break
			}
		}
	}
	if start < 0 {
		for i := len(lines) - 1; i >= 0; i-- {
			if composerPromptRE.MatchString(lines[i]) {
				start = i
				break
			}
		}
	}
	if start < 0 {
		from := len(lines) - 12
		if from < 0 {
			from = 0
		}
		return strings.Join(lines[from:], "\n")
	}
	end := len(lines)
	for i := start + 1; i < len(lines); i++ {
		if isClaudeDivider(lines[i]) {
			end = i
			break
		}
	}
	return strings.Join(lines[start:end], "\n")
}

// PlaceholderCount counts "[Pasted text #N" placeholders on screen.
func PlaceholderCount(screen string) int {
	return len(pastePlaceholderRE.FindAllStringIndex(screen, -1))
}

// ImagePlaceholderCount counts "[Image #N]" pills on screen.
func ImagePlaceholderCount(screen string) int {
	return len(imagePlaceholderRE.FindAllStringIndex(screen, -1))
}

// NormalizeWhitespace replaces every run of white space by one space.
func NormalizeWhitespace(s string) string {
	var b strings.Builder
	b.Grow(len(s)) // the result is never longer, bar invalid UTF-8
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// PasteTailNeedle is pasteTailNeedle: the last 24 characters of the
// whitespace-normalized, trimmed payload ("" for a blank one).
func PasteTailNeedle(payload string) string {
	norm := []rune(strings.TrimSpace(NormalizeWhitespace(payload)))
	if len(norm) > 24 {
		norm = norm[len(norm)-24:]
	}
	return string(norm)
}

// PasteAbsorbedVia is pasteAbsorbedVia: has this paste visibly committed in
// composer, given the placeholder count and whether the tail was already
// there before it was written? "placeholder", "inline" or "" (not yet).
func PasteAbsorbedVia(composer, tail string, baseCount int, tailAlreadyPresent bool) string {
	if PlaceholderCount(composer) > baseCount {
		return "placeholder"
	}
	if tail != "" && !tailAlreadyPresent && strings.Contains(NormalizeWhitespace(composer), tail) {
		return "inline"
	}
	return ""
}

// absorbed is PasteAbsorbedOutcome: Via is "" for a timeout.
type absorbed struct {
	Via    string
	Waited time.Duration
}

// pollPasteAbsorbed is pollPasteAbsorbed: it reads getScreen at once and
// then every interval until the paste of payload has committed against the
// baseline screen (read before the paste was written) or timeout has
// passed, and calls done once.
func (m *Manager) pollPasteAbsorbed(getScreen func() string, baselineScreen, payload string, timeout, interval time.Duration, done func(absorbed)) {
	tail := PasteTailNeedle(payload)
	base := ExtractActiveClaudeComposer(baselineScreen)
	baseCount := PlaceholderCount(base)
	already := tail != "" && strings.Contains(NormalizeWhitespace(base), tail)
	// The verdict is a function of the screen alone: a poll that reads the
	// screen of the last one reuses its verdict (most polls do).
	var lastScreen, lastVia string
	seen := false
	m.poll(func() string {
		screen := getScreen()
		if !seen || screen != lastScreen {
			lastScreen, lastVia, seen = screen, PasteAbsorbedVia(ExtractActiveClaudeComposer(screen), tail, baseCount, already), true
		}
		return lastVia
	},
		timeout, interval, done)
}

// pollClaudeImagesAbsorbed is pollClaudeImagesAbsorbed: it polls until the
// active composer shows expected more image pills than the baseline.
func (m *Manager) pollClaudeImagesAbsorbed(getScreen func() string, baselineScreen string, expected int, timeout, interval time.Duration, done func(absorbed)) {
	base := ImagePlaceholderCount(ExtractActiveClaudeComposer(baselineScreen))
	m.poll(func() string {
		if ImagePlaceholderCount(ExtractActiveClaudeComposer(getScreen())) >= base+expected {
			return "placeholder"
		}
		return ""
	}, timeout, interval, done)
}

// poll runs check at once and then every interval (setTimeout) until it
// names a signal or timeout has passed since the first check.
func (m *Manager) poll(check func() string, timeout, interval time.Duration, done func(absorbed)) {
	started := m.env.Now()
	var tick func()
	tick = func() {
		if via := check(); via != "" {
			done(absorbed{Via: via, Waited: m.env.Now() - started})
			return
		}
		if m.env.Now()-started >= timeout {
			done(absorbed{})
			return
		}
		m.env.After(interval, tick)
	}
	tick()
}
