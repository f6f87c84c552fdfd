package invariants

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/orchsim/orchsim/sim"
)

// The checkers fed every event skip their per-event scans with a kept bound
// (attachBalance's unsettled count and earliest mismatch, wedgedReplaced's
// earliest deadline), keep their sessions in an index and their recent steps
// in a ring, and noReapLive prunes work no kill can be judged against. These
// tests hold each to the scan it replaced (the ref* copies below, the
// checkers as they were): the same verdict, message included, after every
// event of random streams and at their end.

type refChecker interface {
	Observe(ev *sim.Event) *sim.Violation
}

type pair struct {
	name     string
	got, ref func() refChecker
	// whats, when set, are the event shapes terminalEvent draws from.
	whats []int
}

var fastPairs = []pair{
	{PTYAttachBalanced, func() refChecker { return &attachBalance{} }, func() refChecker { return &refAttachBalance{} }, nil},
	{WedgedSpawnReplaced, func() refChecker { return &wedgedReplaced{} }, func() refChecker { return &refWedgedReplaced{} }, nil},
	// Mostly work, so that begin prunes, and kills to judge it.
	{NoReapOfLiveWork, func() refChecker { return &noReapLive{} }, func() refChecker { return &refNoReapLive{} },
		[]int{2, 4, 8, 9, 9, 10, 12, 12, 12, 12, 12, 13, 13, 13, 13, 13}},
}

// terminalEvent draws one event of the vocabulary the three checkers read
// (and some they do not), over few sessions, panes and backends so that
// steps meet.
func terminalEvent(t *rapid.T, at time.Duration, whats []int) *sim.Event {
	pick := func(label string, xs ...string) string { return rapid.SampledFrom(xs).Draw(t, label) }
	session := pick("session", "s1", "s2", "s3")
	pane := pick("pane", "p1", "p2", "p3", "p4", "p5")
	backend := pick("backend", "b1", "b2", "b3", "b4")
	ev := &sim.Event{At: at}
	attrs := []sim.Attr{sim.A("session", session)}
	what := rapid.IntRange(0, 17)
	if whats != nil {
		what = rapid.SampledFrom(whats)
	}
	switch what.Draw(t, "what") {
	case 0:
		ev.Actor, ev.Kind, ev.Outcome = "main", "pty.attach", pick("outcome", "attached", "attached", "refused")
		attrs = append(attrs, sim.A("pane", pane), sim.A("count", pick("count", "-1", "0", "1", "1", "2", "3")))
	case 1:
		ev.Actor, ev.Kind, ev.Outcome = "main", "pty.detach", pick("outcome", "detached", "ignored")
		attrs = append(attrs, sim.A("pane", pane), sim.A("count", pick("count", "0", "0", "1", "2")))
	case 2, 3:
		ev.Actor, ev.Kind, ev.Outcome = "pane/"+pane, "pane.attach", pick("outcome", "attached", "attached", "late-ignored", "failed")
	case 4:
		ev.Actor, ev.Kind = "pane/"+pane, "pane.unmount"
	case 5:
		ev.Actor, ev.Kind = "pane/"+pane, "pane.mount"
		attrs = append(attrs, sim.A("view", pick("view", "terminal", "feed")))
	case 6:
		ev.Actor, ev.Kind = pick("actor", "fault", "fault", "main"), "host.resume"
		attrs = append(attrs, sim.A("slept", pick("slept", "0s", "2s", "45s", "10m0s", "bad")))
	case 7:
		ev.Actor, ev.Kind, ev.Outcome = pick("actor", "main", "main", "renderer"), "start", pick("outcome", "live", "live", "failed")
		attrs = append(attrs, sim.A("backend", backend))
	case 8:
		ev.Actor, ev.Kind, ev.Outcome = pick("actor", "agent/"+backend, "main"), "screen", pick("outcome", "composer", "booting")
		attrs = append(attrs, sim.A("backend", backend))
	case 9:
		ev.Actor, ev.Kind, ev.Outcome = "agent/"+backend, "prompt", pick("outcome", "shown", "answered")
		attrs = append(attrs, sim.A("backend", backend))
	case 10:
		ev.Actor, ev.Kind, ev.Outcome = pick("actor", "main", "main", "renderer"), "kill", pick("outcome", "killed", "ignored")
		attrs = append(attrs, sim.A("backend", backend), sim.A("cause", pick("cause", "detached-idle", "detached-idle", "owner")))
	case 11:
		ev.Actor, ev.Kind, ev.Outcome = "main", "exit", "0"
		attrs = append(attrs, sim.A("backend", backend))
	case 12, 13:
		ev.Actor, ev.Kind = "agent/"+backend, pick("kind", "turn.start", "turn.end", "turn.end", "bg.start", "bg.end", "bg.end")
		attrs = append(attrs, sim.A("backend", backend), sim.A("job", pick("job", "j1", "j2")))
	default:
		ev.Actor, ev.Kind = pick("actor", "renderer", "user", "main"), pick("kind", "wake", "type", "pty.write", "spawn")
	}
	ev.Attrs = attrs
	return ev
}

func verdict(v *sim.Violation) string {
	if v == nil {
		return ""
	}
	return v.Invariant + ": " + v.Message
}

func TestFedEveryEvent_JudgeAsTheScanDid(t *testing.T) {
	// Steps of a nanosecond and of the bounds themselves put events on a
	// deadline and just past it.
	steps := rapid.SampledFrom([]time.Duration{0, time.Nanosecond, time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond,
		AttachSettle, AttachSettle, 1200 * time.Millisecond, 5 * time.Second, WedgeReplaceBy, WedgeReplaceBy, 40 * time.Second, 6 * time.Minute})
	for _, p := range fastPairs {
		t.Run(p.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				got, ref := p.got(), p.ref()
				var at time.Duration
				var log []string
				n := rapid.IntRange(0, 300).Draw(t, "events")
				for i := range n {
					at += steps.Draw(t, "step")
					ev := terminalEvent(t, at, p.whats)
					ev.Seq = uint64(i)
					log = append(log, fmt.Sprintf("%v %s %s %s %v", ev.At, ev.Actor, ev.Kind, ev.Outcome, ev.Attrs))
					g, r := verdict(got.Observe(ev)), verdict(ref.Observe(ev))
					if g != r {
						t.Fatalf("event %d judged %q, the scan %q; events:\n%s", i, g, r, strings.Join(log, "\n"))
					}
				}
				end := at + steps.Draw(t, "end")
				gf, gok := got.(sim.Finisher)
				rf, rok := ref.(sim.Finisher)
				if gok != rok {
					t.Fatalf("Finisher %v, the scan's %v", gok, rok)
				}
				if gok {
					if g, r := verdict(gf.Finish(end)), verdict(rf.Finish(end)); g != r {
						t.Fatalf("Finish judged %q, the scan %q; events:\n%s", g, r, strings.Join(log, "\n"))
					}
				}
			})
		})
	}
}

// A pruned checker still judges a kill against work still running and work
// that ended less than ReapIdleAfter before it, after begin has pruned many
// times meanwhile, and keeps only about the last ReapIdleAfter's work.
func TestNoReapLive_PruneKeepsLiveAndRecentWork(t *testing.T) {
	n := &noReapLive{}
	ev := func(at time.Duration, actor, kind, outcome string, attrs ...sim.Attr) *sim.Event {
		return &sim.Event{At: at, Actor: actor, Kind: kind, Outcome: outcome, Attrs: attrs}
	}
	b := func(id string) sim.Attr { return sim.A("backend", id) }
	turn := func(at time.Duration, backend string) {
		n.Observe(ev(at, "agent/"+backend, "turn.start", "", b(backend)))
		n.Observe(ev(at+time.Second, "agent/"+backend, "turn.end", "", b(backend)))
	}
	kill := func(at time.Duration, backend string) *sim.Violation {
		return n.Observe(ev(at, "main", "kill", "killed", sim.A("session", "s"), b(backend), sim.A("cause", "detached-idle")))
	}
	n.Observe(ev(0, "agent/b1", "turn.start", "", b("b1"))) // runs all along
	for i := range 200 {
		turn(time.Duration(i)*10*time.Second, "b2")
	}
	ended := 199*10*time.Second + time.Second
	if len(n.work) > 64 {
		t.Fatalf("%d pieces of work kept after 200 turns, 10 s apart: want about the last 5 min's", len(n.work))
	}
	later := ended + ReapIdleAfter - time.Minute
	for i := range 40 { // b3's turns: begin prunes again
		turn(later+time.Duration(i)*time.Millisecond, "b3")
	}
	if v := kill(later+time.Second, "b2"); v == nil || !strings.Contains(v.Message, "idle less than") {
		t.Fatalf("a kill 4 min after b2's last turn judged %v, want idle less than 5 min", v)
	}
	if v := kill(later+2*time.Second, "b1"); v == nil || !strings.Contains(v.Message, "still running") {
		t.Fatalf("a kill during b1's turn judged %v, want still running", v)
	}
}

// --- the checkers as they were (the slow path) ---

type refPtyBalance struct {
	session    string
	count      int
	consumers  []string
	since      time.Duration // start of the current mismatch, -1 when balanced
	sinceAwake time.Duration // the same start on the awake clock
	notes      []refNote     // recent attach/detach steps, for messages (formatted only then)
}

type refAttachBalance struct {
	sessions []*refPtyBalance
	clock    awakeClock // AttachSettle is main's, counted in awake time
}

func (a *refAttachBalance) get(session string) *refPtyBalance {
	for _, s := range a.sessions {
		if s.session == session {
			return s
		}
	}
	s := &refPtyBalance{session: session, since: -1}
	a.sessions = append(a.sessions, s)
	return s
}

// refNote is one attach/detach step, kept unformatted: formatting every step
// of every run cost more than the rest of the checker.
// A step of main's (main set) keeps its kind, outcome and count, and its
// what is built from them only when a message is.
type refNote struct {
	what, pane string
	at         time.Duration
	main       bool
	kind       string
	outcome    string
	count      string
}

func (n refNote) String() string {
	what := n.what
	if n.main {
		what = "main " + n.kind + " (" + n.outcome + ", count " + n.count + ") for pane"
	}
	return fmt.Sprintf("%s %s at %s", what, n.pane, at(n.at))
}

// mainNote notes one of main's attach/detach steps.
func (s *refPtyBalance) mainNote(ev *sim.Event) {
	s.note(ev, "")
	n := &s.notes[len(s.notes)-1]
	n.main, n.kind, n.outcome, n.count = true, ev.Kind, ev.Outcome, ev.Get("count")
}

func (s *refPtyBalance) note(ev *sim.Event, what string) {
	pane := ev.Get("pane")
	if pane == "" {
		pane = paneID(ev)
	}
	if len(s.notes) == 4 {
		copy(s.notes, s.notes[1:])
		s.notes = s.notes[:3]
	}
	s.notes = append(s.notes, refNote{what: what, pane: pane, at: ev.At})
}

func refJoinNotes(ns []refNote) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = n.String()
	}
	return strings.Join(parts, "; ")
}

func (a *refAttachBalance) Observe(ev *sim.Event) *sim.Violation {
	a.clock.observe(ev)
	var s *refPtyBalance
	switch {
	case ev.Actor == "main" && (ev.Kind == "pty.attach" && ev.Outcome == "attached" || ev.Kind == "pty.detach"):
		s = a.get(ev.Get("session"))
		s.count = atoi(ev.Get("count"))
		s.mainNote(ev)
		if s.count < 0 {
			return violation(PTYAttachBalanced, "session %s: attach count went negative (%d) at %s", s.session, s.count, at(ev.At))
		}
	case ev.Kind == "pane.attach" && ev.Outcome == "attached":
		s = a.get(ev.Get("session"))
		s.consumers = append(s.consumers, paneID(ev))
		s.note(ev, "attached pane")
	case ev.Kind == "pane.attach" && ev.Outcome == "late-ignored":
		s = a.get(ev.Get("session"))
		s.note(ev, "late attach ignored by unmounted pane")
	case ev.Kind == "pane.unmount":
		s = a.get(ev.Get("session"))
		for i, c := range s.consumers {
			if c == paneID(ev) {
				s.consumers = append(s.consumers[:i], s.consumers[i+1:]...)
				s.note(ev, "unmounted attached pane")
				break
			}
		}
	}
	if s != nil {
		if s.count != len(s.consumers) {
			if s.since < 0 {
				s.since, s.sinceAwake = ev.At, a.clock.awake(ev.At)
			}
		} else {
			s.since = -1
		}
	}
	return a.overdue(ev.At, false)
}

func (a *refAttachBalance) overdue(now time.Duration, end bool) *sim.Violation {
	for _, s := range a.sessions {
		if s.since < 0 || a.clock.awake(now)-s.sinceAwake <= AttachSettle {
			continue
		}
		panes := "none"
		if len(s.consumers) > 0 {
			panes = strings.Join(s.consumers, ",")
		}
		what := "holds"
		if s.count == 0 {
			what = "forwards nothing with"
		}
		suffix := ""
		if end {
			suffix = " (run ended)"
		}
		return violation(PTYAttachBalanced,
			"session %s: main %s %d PTY reference(s) but attached panes are [%s] since %s, still at %s%s; recent: %s",
			s.session, what, s.count, panes, at(s.since), at(now), suffix, refJoinNotes(s.notes))
	}
	return nil
}

func (a *refAttachBalance) Finish(end time.Duration) *sim.Violation { return a.overdue(end, true) }

type refSpawnWatch struct {
	session, backend string
	live             time.Duration
	shown            time.Duration // -1 until a pane shows the session
	shownBy          string
	// slept is the host sleep since it went live: the bound is awake time.
	slept time.Duration
}

func (w *refSpawnWatch) deadline() time.Duration {
	if w.shown > w.live {
		return w.shown + WedgeReplaceBy + w.slept
	}
	return w.live + WedgeReplaceBy + w.slept
}

type refWedgedReplaced struct {
	mounted []paneOf // mounted panes
	watch   []*refSpawnWatch
}

func (w *refWedgedReplaced) shownBy(session string) string {
	for _, m := range w.mounted {
		if m.session == session {
			return m.pane
		}
	}
	return ""
}

func (w *refWedgedReplaced) drop(backend string) {
	for i, s := range w.watch {
		if s.backend == backend {
			w.watch = append(w.watch[:i], w.watch[i+1:]...)
			return
		}
	}
}

func (w *refWedgedReplaced) Observe(ev *sim.Event) *sim.Violation {
	if slept, ok := hostSlept(ev); ok {
		// The 31 s are awake time: main's deadline timer is monotonic and
		// stops while the host sleeps, so every bound moves by the sleep.
		for _, s := range w.watch {
			s.slept += slept
		}
	}
	switch {
	case ev.Actor == "main" && ev.Kind == "start" && ev.Outcome == "live":
		s := &refSpawnWatch{session: ev.Get("session"), backend: ev.Get("backend"), live: ev.At, shown: -1}
		if p := w.shownBy(s.session); p != "" {
			s.shown, s.shownBy = ev.At, p
		}
		w.watch = append(w.watch, s)
	case becameInteractive(ev), backendGone(ev):
		w.drop(ev.Get("backend"))
	case ev.Kind == "pane.mount":
		w.mounted = append(w.mounted, paneOf{paneID(ev), ev.Get("session")})
		for _, s := range w.watch {
			if s.session == ev.Get("session") && s.shown < 0 {
				s.shown, s.shownBy = ev.At, paneID(ev)
			}
		}
	case ev.Kind == "pane.unmount":
		for i, m := range w.mounted {
			if m == (paneOf{paneID(ev), ev.Get("session")}) {
				w.mounted = append(w.mounted[:i], w.mounted[i+1:]...)
				break
			}
		}
	}
	for _, s := range w.watch {
		if s.shown >= 0 && ev.At > s.deadline() {
			return w.fail(s, ev.At, false)
		}
	}
	return nil
}

func (w *refWedgedReplaced) fail(s *refSpawnWatch, now time.Duration, end bool) *sim.Violation {
	shown := "no pane showed it"
	if s.shown >= 0 {
		shown = fmt.Sprintf("pane %s showed it from %s", s.shownBy, at(s.shown))
	}
	when := "still alive at"
	if end {
		when = "still alive when the run ended at"
	}
	due := s.deadline()
	awake := ""
	if s.slept > 0 {
		awake = fmt.Sprintf(" of awake time, the host having slept %s", s.slept)
	}
	return violation(WedgedSpawnReplaced,
		"backend %s of session %s went live at %s and never painted its composer or a prompt; %s; it was due to be stopped by %s (%s after live and shown%s) and was %s %s",
		s.backend, s.session, at(s.live), shown, at(due), WedgeReplaceBy, awake, when, at(now))
}

func (w *refWedgedReplaced) Finish(end time.Duration) *sim.Violation {
	for _, s := range w.watch {
		if s.shown >= 0 && end > s.deadline() || s.shown < 0 && end > s.live+WedgeReplaceBy+s.slept {
			return w.fail(s, end, true)
		}
	}
	return nil
}

// refWork is one piece of a backend's live refWork: a turn, a prompt or a
// background job, from start to end (end < 0 while it runs).
type refWork struct {
	backend, what string
	job           string // a background job's id ("" for a turn or a prompt)
	start, end    time.Duration
}

// label names the refWork in a message: "turn", "prompt", "background job J".
func (w refWork) label() string {
	if w.what == "background job" {
		return w.what + " " + w.job
	}
	return w.what
}

type refNoReapLive struct {
	refWork  []refWork // bounded: ended refWork older than ReapIdleAfter is dropped
	attached []paneOf  // attached panes
}

// ObservedKinds implements sim.KindObserver.
func (*refNoReapLive) ObservedKinds() []string { return refNoReapLiveKinds }

var refNoReapLiveKinds = joinKinds([]string{"turn.start", "turn.end", "prompt", "bg.start", "bg.end", "pane.attach", "pane.unmount", "kill"}, backendGoneKinds)

func (n *refNoReapLive) begin(backend, what, job string, at time.Duration) {
	n.refWork = append(n.refWork, refWork{backend: backend, what: what, job: job, start: at, end: -1})
}

func (n *refNoReapLive) finish(backend, what, job string, at time.Duration) {
	for i := range n.refWork {
		if w := &n.refWork[i]; w.backend == backend && w.what == what && w.job == job && w.end < 0 {
			w.end = at
			return
		}
	}
}

func (n *refNoReapLive) Observe(ev *sim.Event) *sim.Violation {
	backend := ev.Get("backend")
	switch {
	case isAgent(ev) && ev.Kind == "turn.start":
		n.begin(backend, "turn", "", ev.At)
	case isAgent(ev) && ev.Kind == "turn.end":
		n.finish(backend, "turn", "", ev.At)
	case isAgent(ev) && ev.Kind == "prompt" && ev.Outcome == "shown":
		n.begin(backend, "prompt", "", ev.At)
	case isAgent(ev) && ev.Kind == "prompt" && ev.Outcome == "answered":
		n.finish(backend, "prompt", "", ev.At)
	case isAgent(ev) && ev.Kind == "bg.start":
		n.begin(backend, "background job", ev.Get("job"), ev.At)
	case isAgent(ev) && ev.Kind == "bg.end":
		n.finish(backend, "background job", ev.Get("job"), ev.At)
	case ev.Kind == "pane.attach" && ev.Outcome == "attached":
		n.attached = append(n.attached, paneOf{paneID(ev), ev.Get("session")})
	case ev.Kind == "pane.unmount":
		for i, a := range n.attached {
			if a == (paneOf{paneID(ev), ev.Get("session")}) {
				n.attached = append(n.attached[:i], n.attached[i+1:]...)
				break
			}
		}
	case ev.Actor == "main" && ev.Kind == "kill" && ev.Outcome == "killed" && ev.Get("cause") == "detached-idle":
		return n.judge(ev)
	case backendGone(ev):
		n.forget(backend)
	}
	return nil
}

func (n *refNoReapLive) forget(backend string) {
	kept := n.refWork[:0]
	for _, w := range n.refWork {
		if w.backend != backend {
			kept = append(kept, w)
		}
	}
	n.refWork = kept
}

func (n *refNoReapLive) judge(ev *sim.Event) *sim.Violation {
	session, backend := ev.Get("session"), ev.Get("backend")
	defer n.forget(backend)
	for _, a := range n.attached {
		if a.session == session {
			return violation(NoReapOfLiveWork, "the idle reaper killed backend %s of session %s at %s while pane %s was attached to it",
				backend, session, at(ev.At), a.pane)
		}
	}
	for _, w := range n.refWork {
		if w.backend != backend {
			continue
		}
		if w.end < 0 {
			return violation(NoReapOfLiveWork, "the idle reaper killed backend %s of session %s at %s while its %s, running since %s, was still running",
				backend, session, at(ev.At), w.label(), at(w.start))
		}
		if ev.At-w.end < ReapIdleAfter {
			return violation(NoReapOfLiveWork, "the idle reaper killed backend %s of session %s at %s, %s after its %s (from %s) ended at %s: idle less than %s",
				backend, session, at(ev.At), ev.At-w.end, w.label(), at(w.start), at(w.end), ReapIdleAfter)
		}
	}
	return nil
}
