package report

import (
	"fmt"
	"html"
	"math/bits"
	"sort"
	"strings"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// Timeline geometry, in CSS pixels.
const (
	laneHeight  = 30
	axisHeight  = 46
	labelWidth  = 230
	eventStep   = 14 // every event gets its own column
	edgePadding = 24
	tickSpacing = 110 // between two time labels, except after a break
	tailRoom    = 260 // room after the last event for the violation label
)

// gapWidth is the extra width a silence of d adds to the time axis: 5 px
// per doubling of its length in milliseconds, interpolated linearly inside
// a doubling, in integers only so every platform draws the same page
// (1 ms: 7 px, 1 s: 51, 1 min: 81, 30 min: 105, 24 h: 133).
func gapWidth(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	v := uint64(d/time.Millisecond) + 1
	n := bits.Len64(v) // 2^(n-1) <= v < 2^n
	lo := uint64(1) << (n - 1)
	return 2 + 5*(n-1) + int(5*(v-lo)/lo)
}

// breakGap is the smallest silence drawn as a break in the time axis.
const breakGap = time.Minute

// maxFamilyLanes is the most lanes one family of actors (pane/..., agent/...)
// gets; a larger family shares one lane, "pane/*" (a long desktop run mounts
// hundreds of short-lived panes). The event's own actor is in its details.
const maxFamilyLanes = 12

// laneNamer returns the lane of an actor: its own, or its family's shared
// lane when the family is larger than maxFamilyLanes.
func laneNamer(trace []sim.Event, steps []step) func(string) string {
	members := map[string]map[string]bool{}
	note := func(name string) {
		if i := strings.IndexByte(name, '/'); i > 0 {
			fam := name[:i]
			if members[fam] == nil {
				members[fam] = map[string]bool{}
			}
			members[fam][name] = true
		}
	}
	for i := range trace {
		note(trace[i].Actor)
		note(steps[i].from)
		note(steps[i].to)
	}
	return func(name string) string {
		if i := strings.IndexByte(name, '/'); i > 0 && len(members[name[:i]]) > maxFamilyLanes {
			return name[:i] + "/*"
		}
		return name
	}
}

// lane is one swimlane: one actor (or a component that only handled
// messages, such as the browser host).
type lane struct {
	name  string
	rank  int
	first int
	y     int // centre line
}

// HTML renders r as one self-contained HTML page: a header with the
// verdict, the violation and the replay command; a swimlane timeline with
// one lane per actor, virtual time on the horizontal axis (every event its
// own column, silences widening the axis by their logarithm, a minute or
// more drawn as a labelled break), arrows to the component that handled
// each event, hover details per event and the violation marked across all
// lanes; and the full event table. It fetches nothing: CSS, script and SVG
// are inline. The output is deterministic.
func HTML(r *Run) []byte {
	trace := r.Trace
	terminal := terminalSessions(trace)
	steps := make([]step, len(trace))
	for i := range trace {
		steps[i] = route(&trace[i])
	}
	laneOf := laneNamer(trace, steps)
	lanes := map[string]*lane{}
	addLane := func(name string, at int) {
		if name == "" {
			return
		}
		name = laneOf(name)
		if lanes[name] == nil {
			lanes[name] = &lane{name: name, rank: laneRank(name, terminal), first: at}
		}
	}
	for i := range trace {
		s := steps[i]
		addLane(trace[i].Actor, i)
		switch s.role {
		case roleMessage, roleCall, roleAnswer, roleSelf:
			addLane(s.from, i)
			addLane(s.to, i)
		}
	}
	laneByActor := func(name string) *lane { return lanes[laneOf(name)] }
	order := make([]*lane, 0, len(lanes))
	for _, l := range lanes {
		order = append(order, l)
	}
	sort.Slice(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		if a.first != b.first {
			return a.first < b.first
		}
		return a.name < b.name
	})
	for i, l := range order {
		l.y = axisHeight + i*laneHeight + laneHeight/2
	}
	height := axisHeight + len(order)*laneHeight + 8

	// Columns.
	xs := make([]int, len(trace))
	x := edgePadding
	for i := range trace {
		if i > 0 {
			x += eventStep + gapWidth(trace[i].At-trace[i-1].At)
		}
		xs[i] = x
	}
	width := x + edgePadding + tailRoom
	if len(trace) == 0 {
		width = 600
	}
	viol, trigger := -1, -1
	for i := range trace {
		if trace[i].Actor == "invariant" {
			viol = i
			if r := steps[max(i-1, 0)].role; i > 0 && trace[i-1].At == trace[i].At && r != roleWorld && r != rolePhase {
				trigger = i - 1
			}
			break
		}
	}

	var b strings.Builder
	esc := html.EscapeString
	title := fmt.Sprintf("orchsim %s seed %d: %s", r.Scenario, r.Seed, r.verdict())
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.WriteString("<meta name=\"generator\" content=\"orchsim report\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n", esc(title), htmlCSS)

	// Header.
	b.WriteString("<header>\n")
	verdictClass := "ok"
	if r.Violation != nil {
		verdictClass = "violation"
	}
	fmt.Fprintf(&b, "<h1>%s <span class=\"seed\">seed %d</span> <span id=\"verdict\" class=\"verdict %s\">%s</span></h1>\n",
		esc(r.Scenario), r.Seed, verdictClass, esc(r.verdict()))
	b.WriteString("<dl class=\"meta\">\n")
	meta := [][2]string{{"profile", r.Profile}, {"strategy", r.Strategy}, {"horizon", r.Horizon.String()},
		{"events", fmt.Sprint(r.Events)}, {"virtual time", r.Virtual.String()}, {"fingerprint", r.Fingerprint}}
	if len(r.Off) > 0 {
		meta = append(meta, [2]string{"switched off", strings.Join(r.Off, ", ")})
	}
	if r.ShrunkFrom > 0 {
		meta = append(meta, [2]string{"shrunk from", fmt.Sprintf("%d events", r.ShrunkFrom)})
	}
	for _, m := range meta {
		fmt.Fprintf(&b, "<div><dt>%s</dt><dd>%s</dd></div>\n", esc(m[0]), esc(m[1]))
	}
	b.WriteString("</dl>\n")
	if r.Replay != "" {
		fmt.Fprintf(&b, "<p class=\"replay\">Reproduce: <code id=\"replay-cmd\">%s</code> <button type=\"button\" id=\"copy\">copy</button></p>\n", esc(r.Replay))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", esc(n))
	}
	if v := r.Violation; v != nil {
		fmt.Fprintf(&b, "<section id=\"violation\" class=\"violation-box\">\n<h2>Violated: <code>%s</code> at %s</h2>\n<p>%s</p>\n",
			esc(v.Invariant), esc(sim.FormatT(v.At)), esc(v.Message))
		if trigger >= 0 {
			fmt.Fprintf(&b, "<p class=\"trigger\">Triggered by: <code>%s</code></p>\n", esc(trace[trigger].Describe()))
		}
		if nr := r.NoReturn; nr != nil {
			what := "the start of the run"
			for i := range trace {
				if int64(trace[i].Seq) == nr.Seq && trace[i].Actor != "invariant" {
					what = trace[i].Describe()
					break
				}
			}
			fmt.Fprintf(&b, "<p class=\"noreturn\">Point of no return (after this event the failure was certain): <a href=\"#e%d\"><code>%s</code></a> (%s)</p>\n",
				nr.Seq, esc(what), esc(nr.Text))
		}
		if len(r.Known) > 0 {
			b.WriteString("<p class=\"known\">Known bugs this invariant catches, off in this run:")
			for i, k := range r.Known {
				if i > 0 {
					b.WriteString(";")
				}
				fmt.Fprintf(&b, " <code>%s</code>", esc(k.Switch))
				for _, rep := range k.Reports {
					fmt.Fprintf(&b, " <a href=\"%s\">%s</a>", esc(rep.URL()), esc(string(rep)))
				}
			}
			b.WriteString("</p>\n")
		}
		if g := r.Group; g != nil && len(g.Switches) == 0 {
			fmt.Fprintf(&b, "<p class=\"group\">Group: <code>%s</code>, <strong>new</strong>: no known fix switch, alone or together, makes this run pass</p>\n", esc(g.Invariant))
		} else if g != nil {
			fmt.Fprintf(&b, "<p class=\"group\">Group: <code>%s</code> fixed by", esc(g.Invariant))
			for _, sw := range g.Switches {
				fmt.Fprintf(&b, " <code>%s</code>", esc(sw))
			}
			b.WriteString("; reproduces")
			for _, rep := range g.Reports {
				fmt.Fprintf(&b, " <a href=\"%s\">%s</a>", esc(rep.URL()), esc(string(rep)))
			}
			b.WriteString("</p>\n")
		}
		b.WriteString("</section>\n")
	}
	b.WriteString("</header>\n<main>\n")

	// Legend.
	b.WriteString(`<p class="legend"><span class="k msg"></span>call or message (line to the component that handled it) <span class="k self"></span>step inside a component <span class="k timer"></span>timer fired <span class="k fault"></span>injected fault <span class="k viol"></span>violation · hover an event for its details, click to find it in the table</p>` + "\n")

	// Timeline: a fixed column of lane labels and a scrolling SVG.
	fmt.Fprintf(&b, "<div class=\"chart\" id=\"chart\" data-lanes=\"%d\" data-events=\"%d\">\n", len(order), len(trace))
	fmt.Fprintf(&b, "<svg class=\"labels\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"lanes\">\n",
		labelWidth, height, labelWidth, height)
	fmt.Fprintf(&b, "<text class=\"axis-title\" x=\"8\" y=\"%d\">virtual time →</text>\n", axisHeight-18)
	for i, l := range order {
		fmt.Fprintf(&b, "<g class=\"lane-label\" data-lane=\"%s\"><rect class=\"band%d\" x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\"/>",
			esc(l.name), i%2, l.y-laneHeight/2, labelWidth, laneHeight)
		name, sub := l.name, laneSubtitle(l.name, terminal)
		fmt.Fprintf(&b, "<text x=\"8\" y=\"%d\">%s", l.y+4, esc(name))
		if sub != "" {
			fmt.Fprintf(&b, " <tspan class=\"sub\">%s</tspan>", esc(sub))
		}
		b.WriteString("</text></g>\n")
	}
	b.WriteString("</svg>\n<div class=\"scroll\" id=\"scroll\">\n")
	fmt.Fprintf(&b, "<svg class=\"timeline\" id=\"timeline\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"timeline\">\n",
		width, height, width, height)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>` + "\n")
	for i, l := range order {
		fmt.Fprintf(&b, "<g class=\"lane\" data-lane=\"%s\"><rect class=\"band%d\" x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\"/><line class=\"laneline\" x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/></g>\n",
			esc(l.name), i%2, l.y-laneHeight/2, width, laneHeight, l.y, width, l.y)
	}
	// Axis: breaks for long silences, then time labels.
	fmt.Fprintf(&b, "<line class=\"axis\" x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", axisHeight-4, width, axisHeight-4)
	for i := 1; i < len(trace); i++ {
		d := trace[i].At - trace[i-1].At
		if d < breakGap {
			continue
		}
		x0, x1 := xs[i-1]+eventStep/2, xs[i]-eventStep/2
		fmt.Fprintf(&b, "<g class=\"break\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/><text x=\"%d\" y=\"%d\">+%s</text></g>\n",
			x0, axisHeight-4, x1-x0, height-axisHeight, (x0+x1)/2, axisHeight-8, esc(shortDuration(d)))
	}
	lastTick := -tickSpacing
	var lastAt time.Duration = -1
	for i := range trace {
		afterBreak := i > 0 && trace[i].At-trace[i-1].At >= breakGap
		if trace[i].At == lastAt || xs[i]-lastTick < tickSpacing && !afterBreak {
			continue
		}
		lastTick, lastAt = xs[i], trace[i].At
		fmt.Fprintf(&b, "<g class=\"tick\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/><text x=\"%d\" y=\"%d\">%s</text></g>\n",
			xs[i], axisHeight-10, xs[i], height, xs[i], axisHeight-26, esc(sim.FormatT(trace[i].At)))
	}
	// Arrows first, so markers sit on top of them.
	for i, s := range steps {
		if s.from == s.to {
			continue
		}
		var from, to *lane
		switch s.role {
		case roleMessage, roleCall, roleAnswer:
			from, to = laneByActor(s.from), laneByActor(s.to)
		case roleFault:
			from, to = laneByActor(trace[i].Actor), laneByActor(s.to)
		}
		if from == nil || to == nil || from == to {
			continue
		}
		cls := "link"
		switch s.role {
		case roleAnswer:
			cls = "link answer"
		case roleFault:
			cls = "link faultlink"
		}
		if i == trigger {
			cls += " trigger"
		}
		dy := 6
		if to.y < from.y {
			dy = -6
		}
		fmt.Fprintf(&b, "<line class=\"%s\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" marker-end=\"url(#arrow)\"/>\n",
			cls, xs[i], from.y+dy, xs[i], to.y-dy)
	}
	if viol >= 0 {
		v := xs[viol]
		fmt.Fprintf(&b, "<g class=\"violation-marker\" id=\"violation-marker\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/><text x=\"%d\" y=\"%d\">VIOLATED %s</text></g>\n",
			v, axisHeight-4, v, height, v+8, axisHeight+12, esc(trace[viol].Kind))
	}
	for i := range trace {
		ev := &trace[i]
		l := laneByActor(ev.Actor)
		cls := roleClass(steps[i].role)
		if i == trigger {
			cls += " trigger"
		}
		fmt.Fprintf(&b, "<g class=\"ev %s\" data-seq=\"%d\" data-lane=\"%s\" tabindex=\"0\"><title>%s</title>%s</g>\n",
			cls, ev.Seq, esc(ev.Actor), esc(ev.Describe()), marker(steps[i].role, xs[i], l.y))
	}
	b.WriteString("</svg>\n</div>\n</div>\n")
	b.WriteString("<aside id=\"details\" class=\"details\"><em>Hover an event in the timeline to see its details here.</em></aside>\n")

	// The event table.
	b.WriteString("<h2>Events</h2>\n<table id=\"events\">\n<thead><tr><th>virtual time</th><th>#</th><th>actor</th><th>kind</th><th>attributes</th><th>outcome</th></tr></thead>\n<tbody>\n")
	for i := range trace {
		ev := &trace[i]
		cls := roleClass(steps[i].role)
		if i == trigger {
			cls += " trigger"
		}
		if nr := r.NoReturn; nr != nil && int64(ev.Seq) == nr.Seq {
			cls += " noreturn"
		}
		fmt.Fprintf(&b, "<tr id=\"e%d\" class=\"%s\"><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>", ev.Seq, cls,
			esc(sim.FormatT(ev.At)), ev.Seq, esc(ev.Actor), esc(ev.Kind))
		for _, a := range ev.Attrs {
			fmt.Fprintf(&b, "<span class=\"attr\"><b>%s</b>=%s</span> ", esc(a.Key), esc(a.Value))
		}
		fmt.Fprintf(&b, "</td><td>%s</td></tr>\n", esc(ev.Outcome))
	}
	b.WriteString("</tbody>\n</table>\n</main>\n")
	fmt.Fprintf(&b, "<script>\n%s</script>\n</body>\n</html>\n", htmlScript)
	return []byte(b.String())
}

// roleClass is the CSS class of a role.
func roleClass(r role) string {
	switch r {
	case roleMessage, roleCall, roleAnswer:
		return "msg"
	case roleTimer:
		return "timer"
	case roleFault:
		return "fault"
	case roleWorld, rolePhase:
		return "world"
	case roleViolation:
		return "viol"
	case roleNote:
		return "note"
	}
	return "self"
}

// marker draws an event's shape: a circle for calls and steps, a diamond
// for a fault, a square for a timer, a large ring for the violation.
func marker(r role, x, y int) string {
	switch r {
	case roleFault:
		return fmt.Sprintf("<path d=\"M%d,%d l7,7 l-7,7 l-7,-7 z\"/>", x, y-7)
	case roleTimer:
		return fmt.Sprintf("<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\"/>", x-5, y-5)
	case roleViolation:
		return fmt.Sprintf("<circle cx=\"%d\" cy=\"%d\" r=\"9\"/>", x, y)
	case roleWorld, rolePhase:
		return fmt.Sprintf("<circle cx=\"%d\" cy=\"%d\" r=\"3\"/>", x, y)
	}
	return fmt.Sprintf("<circle cx=\"%d\" cy=\"%d\" r=\"5\"/>", x, y)
}

// laneSubtitle says what component a lane is, when its name does not.
func laneSubtitle(name string, terminal map[string]bool) string {
	switch {
	case name == "psm":
		return "provider sessions"
	case name == "mcp-registry":
		return "credentials"
	case name == "server-browser":
		return "browser host"
	case name == "server":
		return "server + store"
	case name == "main":
		return "main process"
	case name == "app":
		return "desktop app"
	case strings.HasPrefix(name, "viewer/"):
		return "human"
	case strings.HasPrefix(name, "agent/") && terminal[strings.TrimPrefix(name, "agent/")]:
		return "backend"
	case name == "fault":
		return "injected"
	}
	return ""
}

// shortDuration renders a silence compactly: 29m58s, 1h5m, 350ms.
func shortDuration(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	case d >= time.Second:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Millisecond).String()
}

const htmlCSS = `:root { --fg: #1d2330; --muted: #667085; --bg: #ffffff; --band0: #f6f8fb; --band1: #eef2f7;
  --msg: #2f6fdb; --self: #7a8699; --timer: #8a4fd0; --fault: #e07b00; --viol: #d11f2f; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header, main { padding: 12px 20px; }
header { border-bottom: 1px solid #dde3ea; }
h1 { font-size: 20px; margin: 4px 0 8px; }
h1 .seed { color: var(--muted); font-weight: normal; }
h2 { font-size: 16px; margin: 16px 0 8px; }
.verdict { font-size: 14px; padding: 2px 8px; border-radius: 10px; vertical-align: middle; }
.verdict.violation { background: var(--viol); color: #fff; }
.verdict.ok { background: #1f8a4c; color: #fff; }
.meta { display: flex; flex-wrap: wrap; gap: 4px 20px; margin: 0; }
.meta div { display: flex; gap: 6px; }
.meta dt { color: var(--muted); }
.meta dd { margin: 0; font-family: ui-monospace, Menlo, Consolas, monospace; }
.replay code, .trigger code, td { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
.replay code { background: #f1f3f6; padding: 3px 6px; border-radius: 4px; }
.note { color: var(--muted); margin: 4px 0; }
.violation-box { border: 2px solid var(--viol); background: #fff1f2; border-radius: 6px; padding: 8px 12px; margin-top: 10px; }
.violation-box h2 { color: var(--viol); margin: 0 0 4px; }
.violation-box p { margin: 4px 0; }
.legend { color: var(--muted); font-size: 12px; }
.legend .k { display: inline-block; width: 10px; height: 10px; border-radius: 5px; margin: 0 4px 0 12px; vertical-align: middle; }
.k.msg { background: var(--msg); } .k.self { background: var(--self); } .k.timer { background: var(--timer); border-radius: 0; }
.k.fault { background: var(--fault); transform: rotate(45deg); border-radius: 0; } .k.viol { background: var(--viol); }
.chart { display: flex; border: 1px solid #dde3ea; border-radius: 6px; overflow: hidden; }
.labels { flex: none; border-right: 1px solid #dde3ea; background: #fff; }
.scroll { overflow-x: auto; flex: 1; }
svg text { font: 12px ui-monospace, Menlo, Consolas, monospace; fill: var(--fg); }
.lane-label .sub { fill: var(--muted); font-size: 11px; }
.axis-title { fill: var(--muted); }
.band0 { fill: var(--band0); } .band1 { fill: var(--band1); }
.laneline { stroke: #d5dbe3; stroke-width: 1; }
.axis { stroke: #98a2b3; }
.tick line { stroke: #c9d1db; stroke-dasharray: 2 3; }
.tick text { fill: var(--muted); font-size: 11px; }
.break rect { fill: #fff8e6; stroke: #e9c46a; stroke-dasharray: 4 3; }
.break text { fill: #8a6d1f; font-size: 11px; text-anchor: middle; }
.link { stroke: var(--msg); stroke-width: 1.2; opacity: .55; }
.link.answer { stroke-dasharray: 4 3; }
.link.faultlink { stroke: var(--fault); stroke-dasharray: 2 2; }
.link.trigger { stroke: var(--viol); opacity: 1; stroke-width: 2; }
.arrowhead { fill: #7a8699; }
.ev { cursor: pointer; }
.ev.msg circle { fill: var(--msg); } .ev.self circle, .ev.note circle { fill: var(--self); }
.ev.world circle { fill: #b0b8c4; } .ev.timer rect { fill: var(--timer); } .ev.fault path { fill: var(--fault); }
.ev.viol circle { fill: var(--viol); stroke: #fff; stroke-width: 2; }
.ev.trigger circle, .ev.trigger rect, .ev.trigger path { stroke: var(--viol); stroke-width: 3; }
.ev:hover circle, .ev:hover rect, .ev:hover path, .ev.sel circle, .ev.sel rect, .ev.sel path { stroke: #111; stroke-width: 2; }
.violation-marker line { stroke: var(--viol); stroke-width: 2; }
.violation-marker text { fill: var(--viol); font-weight: bold; }
.details { position: sticky; top: 0; background: #fffdf5; border: 1px solid #eadfb8; border-radius: 6px; padding: 8px 12px; margin: 10px 0;
  font: 12px/1.5 ui-monospace, Menlo, Consolas, monospace; white-space: pre-wrap; min-height: 3em; z-index: 1; }
table { border-collapse: collapse; width: 100%; }
th { text-align: left; color: var(--muted); font-weight: normal; border-bottom: 1px solid #dde3ea; padding: 4px 6px; }
td { border-bottom: 1px solid #f0f2f5; padding: 2px 6px; vertical-align: top; }
td .attr { white-space: nowrap; }
td .attr b { font-weight: normal; color: var(--muted); }
tr.fault td { background: #fff4e5; } tr.timer td { background: #f6effd; }
tr.viol td { background: #ffe3e6; color: var(--viol); font-weight: bold; } tr.trigger td { background: #ffeef0; } tr.noreturn td { border-bottom: 3px solid var(--viol); } .noreturn code { font-weight: bold; }
tr.hl td { outline: 2px solid var(--msg); }
`

const htmlScript = `(function () {
  "use strict";
  var details = document.getElementById("details");
  function row(seq) { return document.getElementById("e" + seq); }
  function show(g) {
    var r = row(g.getAttribute("data-seq"));
    if (!r) { return; }
    var names = ["virtual time", "#", "actor", "kind", "attributes", "outcome"];
    var lines = [];
    for (var i = 0; i < r.cells.length; i++) {
      var t = r.cells[i].textContent.trim();
      if (t !== "") { lines.push(names[i] + ": " + t); }
    }
    details.textContent = lines.join("\n");
  }
  var evs = document.querySelectorAll(".ev");
  for (var i = 0; i < evs.length; i++) {
    evs[i].addEventListener("mouseenter", function () { show(this); });
    evs[i].addEventListener("focus", function () { show(this); });
    evs[i].addEventListener("click", function () {
      show(this);
      var sel = document.querySelectorAll(".sel, .hl");
      for (var j = 0; j < sel.length; j++) { sel[j].classList.remove("sel"); sel[j].classList.remove("hl"); }
      this.classList.add("sel");
      var r = row(this.getAttribute("data-seq"));
      if (r) { r.classList.add("hl"); r.scrollIntoView({ block: "center" }); }
    });
  }
  var copy = document.getElementById("copy");
  if (copy) {
    copy.addEventListener("click", function () {
      var text = document.getElementById("replay-cmd").textContent;
      if (navigator.clipboard) { navigator.clipboard.writeText(text).catch(function () {}); }
    });
  }
  // Bring the violation into view: it is where the story ends.
  var v = document.getElementById("violation-marker");
  var scroll = document.getElementById("scroll");
  if (v && scroll) {
    var x = v.querySelector("line").getAttribute("x1") | 0;
    scroll.scrollLeft = Math.max(0, x - scroll.clientWidth * 0.6);
    var t = document.querySelector(".ev.viol");
    if (t) { show(t); }
  }
})();
`
