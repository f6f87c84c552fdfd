package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// MaxDiagramEvents bounds the events a diagram draws: a longer trace keeps
// its first DiagramHead and last MaxDiagramEvents-DiagramHead events (the
// violation is the last) with a note saying how many were left out. Mermaid
// refuses diagrams over 50,000 characters, and nobody reads more anyway;
// long failing runs are shrunk before drawing (see Story).
const (
	MaxDiagramEvents = 150
	DiagramHead      = 50
)

// gapNote is the smallest silence between two drawn events that gets a
// note of its own: a sequence diagram has no time axis, and the stories
// the harness finds turn on idle timeouts and expiries.
const gapNote = time.Minute

// wrapWidth is the width, in characters, at which message text wraps.
const wrapWidth = 56

// participant is one Mermaid participant: a component of the modelled
// system, standing for one or more lanes (all users are "user"; an agent
// and its MCP client are one participant).
type participant struct {
	key   string // grouping key: "user", "agent/thread-a", "psm", ...
	id    string // Mermaid identifier
	label string
	rank  int
	first int // index of the first drawn line that names it
}

// participantKey maps a lane to its participant's key.
func participantKey(lane string) string {
	switch {
	case lane == "user" || strings.HasPrefix(lane, "user/") || strings.HasPrefix(lane, "viewer/"):
		return "user"
	case strings.HasPrefix(lane, "mcp-client/"):
		return "agent/" + strings.TrimPrefix(lane, "mcp-client/")
	case lane == "app":
		return "main"
	}
	return lane
}

// participantNames maps well-known keys to Mermaid ids and labels.
var participantNames = map[string][2]string{
	"user":           {"user", "user"},
	"psm":            {"psm", "provider session manager"},
	"mcp-registry":   {"registry", "credential registry"},
	"server-browser": {"browser", "browser host"},
	"desktop":        {"desktop", "desktop app"},
	"orchestrator":   {"orch", "orchestrator"},
	"server":         {"server", "server + store"},
	"renderer":       {"renderer", "renderer"},
	"main":           {"mainproc", "main process"},
}

func newParticipant(key string, terminal map[string]bool) *participant {
	p := &participant{key: key, rank: laneRank(key, terminal)}
	switch {
	case participantNames[key][0] != "":
		p.id, p.label = participantNames[key][0], participantNames[key][1]
	case strings.HasPrefix(key, "agent/"):
		name := strings.TrimPrefix(key, "agent/")
		p.id, p.label = "agent_"+ident(name), "agent "+plain(name)
	case strings.HasPrefix(key, "pane/"):
		name := strings.TrimPrefix(key, "pane/")
		p.id, p.label = "pane_"+ident(name), "pane "+plain(name)
	default:
		p.id, p.label = "x_"+ident(key), plain(key)
	}
	return p
}

// ident makes s a safe Mermaid identifier (letters, digits, underscores).
func ident(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// plain makes s safe where Mermaid decodes no entity codes (participant
// aliases, the title): characters that end or escape a statement go.
func plain(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ';', '#', '%', '"', '<', '>', '`', '{', '}', '\n', '\r', ':':
			return ' '
		}
		return r
	}, s)
}

// titleText makes s safe as a diagram title (no entity codes there).
func titleText(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ';', '#', '%', '"', '<', '>', '`', '{', '}', '\n', '\r':
			return ' '
		}
		return r
	}, s)
}

// escaper writes, as Mermaid entity codes (decimal), every character that
// would end a statement (;), start an entity (#), a comment or directive
// (%), or be read as markup (< > " ` { }) in message and note text.
var escaper = strings.NewReplacer(
	"#", "#35;", ";", "#59;", "%", "#37;", "\"", "#34;", "<", "#60;", ">", "#62;",
	"`", "#96;", "{", "#123;", "}", "#125;", "\n", " ", "\r", " ",
)

// Escape returns s as safe Mermaid message or note text.
func Escape(s string) string { return escaper.Replace(s) }

// wrap joins words into lines of at most width characters (a longer word
// stays whole), escapes them and joins the lines with Mermaid's <br/>.
func wrap(words []string, width int) string {
	var lines []string
	var cur strings.Builder
	for _, w := range words {
		if w == "" {
			continue
		}
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	for i := range lines {
		lines[i] = Escape(lines[i])
	}
	return strings.Join(lines, "<br/>")
}

// diagram accumulates a sequence diagram: its body lines refer to
// participants by key and are resolved to ids once all are known.
type diagram struct {
	terminal map[string]bool
	parts    map[string]*participant
	body     []line
}

// line is one body line: pattern with a %s verb per participant (by key)
// followed by text, taken as is; or, with span, a note over every
// participant whose text is text; or, with no keys, text alone.
type line struct {
	pattern string
	keys    []string
	text    string
	span    bool
}

func (d *diagram) use(lane string) string {
	key := participantKey(lane)
	if d.parts[key] == nil {
		p := newParticipant(key, d.terminal)
		p.first = len(d.body)
		d.parts[key] = p
	}
	return key
}

// add appends pattern (one %s per lane) followed by text.
func (d *diagram) add(pattern, text string, lanes ...string) {
	keys := make([]string, len(lanes))
	for i, l := range lanes {
		keys[i] = d.use(l)
	}
	d.body = append(d.body, line{pattern: pattern, keys: keys, text: text})
}

// raw appends a line that names no participant.
func (d *diagram) raw(text string) { d.body = append(d.body, line{text: text}) }

// wide adds a note over every participant (gaps, elisions).
func (d *diagram) wide(text string) { d.body = append(d.body, line{text: text, span: true}) }

// arrow draws one step as Mermaid lines.
func (d *diagram) step(s step) {
	ev := s.ev
	t := sim.FormatT(ev.At)
	withOutcome := func(words []string) []string {
		if ev.Outcome != "" {
			words = append(words, "→", ev.Outcome)
		}
		return words
	}
	switch s.role {
	case roleWorld:
		d.raw("%% " + strings.ReplaceAll(ev.Describe(), "\n", " "))
	case rolePhase:
		d.wide(wrap(append([]string{t, ev.Actor}, withOutcome(label(ev))...), 80))
	case roleFault:
		words := append([]string{t, "fault:"}, withOutcome(label(ev, s.to))...)
		d.add("Note over %s: ", wrap(words, wrapWidth), s.to)
	case roleTimer:
		words := append([]string{t, "timer:"}, withOutcome(label(ev, s.to))...)
		d.add("Note over %s: ", wrap(words, wrapWidth), s.to)
	case roleNote:
		words := append([]string{t, ev.Actor}, withOutcome(label(ev, s.to))...)
		d.add("Note over %s: ", wrap(words, wrapWidth), s.to)
	case roleCall:
		words := append([]string{t}, label(ev, s.from, s.to)...)
		d.add("%s->>%s: ", wrap(words, wrapWidth), s.from, s.to)
		switch {
		case s.lost:
			d.add("%s--x%s: ", wrap([]string{ev.Outcome, "(answer lost)"}, wrapWidth), s.to, s.from)
		case ev.Outcome != "":
			d.add("%s-->>%s: ", wrap([]string{ev.Outcome}, wrapWidth), s.to, s.from)
		}
	case roleAnswer:
		words := append([]string{t}, withOutcome(label(ev, s.from, s.to))...)
		d.add("%s-->>%s: ", wrap(words, wrapWidth), s.from, s.to)
	default: // roleMessage, roleSelf
		words := append([]string{t}, withOutcome(label(ev, s.from, s.to))...)
		d.add("%s->>%s: ", wrap(words, wrapWidth), s.from, s.to)
	}
}

// violation draws the violated invariant highlighted, together with the
// event that triggered it (the event just before, at the same instant).
func (d *diagram) violation(v, trigger *step) {
	d.raw("rect rgb(255, 221, 221)")
	var over []string
	if trigger != nil {
		d.step(*trigger)
		over = []string{trigger.from, trigger.to}
		if trigger.role == roleFault || trigger.role == roleTimer || trigger.role == roleNote {
			over = []string{trigger.to}
		}
	}
	ev := v.ev
	words := append([]string{"VIOLATED", ev.Kind, "at", sim.FormatT(ev.At) + ":"},
		strings.Fields(strings.TrimPrefix(ev.Outcome, "VIOLATED: "))...)
	text := wrap(words, 64)
	switch {
	case len(over) == 0:
		d.wide(text)
	case len(over) == 1 || participantKey(over[0]) == participantKey(over[1]):
		d.add("Note over %s: ", text, over[0])
	default:
		d.add("Note over %s,%s: ", text, over[0], over[1])
	}
	d.raw("end")
}

// Mermaid renders r as a Mermaid sequence diagram (GitHub renders it in a
// ```mermaid block). Participants are the components of the modelled
// system; each event is an arrow from its actor to the component that
// handled it (tool calls come back with their outcome), faults and timer
// fires are notes, silences of a minute or more are wide notes, the set-up
// events are comments, and the violation is a red block with the event
// that triggered it. A trace longer than MaxDiagramEvents is cut in the
// middle. The output is deterministic and ends with a newline.
func Mermaid(r *Run) []byte {
	d := &diagram{terminal: terminalSessions(r.Trace), parts: map[string]*participant{}}
	trace := r.Trace
	viol := -1
	for i := range trace {
		if trace[i].Actor == "invariant" {
			viol = i
			break
		}
	}
	keep := func(i int) bool { return true }
	if n := len(trace); n > MaxDiagramEvents {
		tail := n - (MaxDiagramEvents - DiagramHead)
		keep = func(i int) bool { return i < DiagramHead || i >= tail }
	}
	var prev *sim.Event
	for i := range trace {
		ev := &trace[i]
		if !keep(i) {
			if keep(i - 1) {
				n := len(trace) - MaxDiagramEvents
				d.wide(Escape(fmt.Sprintf("… %d events from %s to %s not drawn (orchsim replay/run --format text or --html show them) …",
					n, sim.FormatT(ev.At), sim.FormatT(trace[i+n-1].At))))
			}
			prev = nil
			continue
		}
		if prev != nil && ev.At-prev.At >= gapNote {
			d.wide(Escape(fmt.Sprintf("⋯ %s later ⋯", (ev.At - prev.At).Round(time.Millisecond))))
		}
		prev = ev
		s := route(ev)
		s.lost = s.role == roleCall && i+1 < len(trace) && answerLost(ev, &trace[i+1])
		switch {
		case i == viol:
			var trig *step
			if i > 0 && keep(i-1) && trace[i-1].At == ev.At && trace[i-1].Actor != "invariant" {
				t := route(&trace[i-1])
				if t.role != roleWorld && t.role != rolePhase {
					trig = &t
				}
			}
			d.violation(&s, trig)
		case i+1 == viol && ev.At == trace[viol].At && s.role != roleWorld && s.role != rolePhase:
			// Drawn inside the violation's block.
		default:
			d.step(s)
		}
		if nr := r.NoReturn; nr != nil && int64(ev.Seq) == nr.Seq {
			d.wide(Escape("⚑ " + NoReturnLine + " (" + nr.Text + ")"))
		}
	}
	return d.render(r)
}

// render writes the header, the participants in order and the body.
func (d *diagram) render(r *Run) []byte {
	parts := make([]*participant, 0, len(d.parts))
	for _, p := range d.parts {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool {
		if parts[i].rank != parts[j].rank {
			return parts[i].rank < parts[j].rank
		}
		if parts[i].first != parts[j].first {
			return parts[i].first < parts[j].first
		}
		return parts[i].key < parts[j].key
	})
	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	title := fmt.Sprintf("%s seed %d (%s) - %s", r.Scenario, r.Seed, r.Profile, r.verdict())
	b.WriteString("    title " + titleText(title) + "\n")
	fmt.Fprintf(&b, "    %%%% orchsim %s seed=%d profile=%s strategy=%s horizon=%s", r.Scenario, r.Seed, r.Profile, r.Strategy, r.Horizon)
	if len(r.Off) > 0 {
		fmt.Fprintf(&b, " off=%s", strings.Join(r.Off, ","))
	}
	fmt.Fprintf(&b, " events=%d fingerprint=%s\n", r.Events, r.Fingerprint)
	if r.ShrunkFrom > 0 {
		fmt.Fprintf(&b, "    %%%% shrunk from %d events: this is the minimal run that still violates %s\n", r.ShrunkFrom, r.Violation.Invariant)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "    %%%% %s\n", strings.ReplaceAll(n, "\n", " "))
	}
	if r.Replay != "" {
		fmt.Fprintf(&b, "    %%%% replay: %s\n", r.Replay)
	}
	for _, p := range parts {
		fmt.Fprintf(&b, "    participant %s as %s\n", p.id, p.label)
	}
	if len(parts) == 0 { // an empty run still parses
		b.WriteString("    participant server as server + store\n")
		parts = append(parts, newParticipant("server", d.terminal))
	}
	first, last := parts[0].id, parts[len(parts)-1].id
	indent := "    "
	for _, l := range d.body {
		switch {
		case l.span && first == last:
			fmt.Fprintf(&b, "%sNote over %s: %s\n", indent, first, l.text)
		case l.span:
			fmt.Fprintf(&b, "%sNote over %s,%s: %s\n", indent, first, last, l.text)
		case len(l.keys) == 0:
			if l.text == "end" {
				indent = "    "
			}
			b.WriteString(indent + l.text + "\n")
			if strings.HasPrefix(l.text, "rect ") {
				indent = "        "
			}
		default:
			ids := make([]any, len(l.keys))
			for i, k := range l.keys {
				ids[i] = d.parts[k].id
			}
			b.WriteString(indent + fmt.Sprintf(l.pattern, ids...) + l.text + "\n")
		}
	}
	return []byte(b.String())
}
