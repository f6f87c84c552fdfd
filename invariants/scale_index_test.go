package invariants

import (
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/orchsim/orchsim/sim"
)

// The scans that the indexes of childOwed, awakeIdle, staleCleanup,
// oneCredential and the probe counter's open delegated tasks replaced,
// kept here as they were: over any sequence of their events each indexed
// checker must report the same violations, with the same messages, at the
// same events.

type scanServed struct{ session, thread string }

type scanChildOwed struct {
	children []owedChild
	attached []scanServed
	settled  map[string]bool
}

func (c *scanChildOwed) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Kind == "server.start":
		c.attached = c.attached[:0]
	case ev.Actor == "psm" && (ev.Kind == "session.opened" || ev.Kind == "session.attach"):
		c.attached = append(c.attached, scanServed{ev.Get("providerSessionId"), ev.Get("thread")})
	case ev.Actor == "psm" && ev.Kind == "session.detach":
		for i, s := range c.attached {
			if s.session == ev.Get("providerSessionId") && s.thread == ev.Get("thread") {
				c.attached = append(c.attached[:i], c.attached[i+1:]...)
				break
			}
		}
	case isToolEvent(ev) && ev.Kind == "delegate_task" && (ev.Outcome == "accepted" || ev.Outcome == "replayed"):
		task := resultField(ev.Get("result"), "task")
		if task == "" || c.settled[task] {
			return nil
		}
		for _, o := range c.children {
			if o.task == task {
				return nil
			}
		}
		c.children = append(c.children, owedChild{parent: ev.Get("thread"), task: task, since: ev.At})
	case ev.Actor == "orchestrator" && ev.Kind == "task.settled":
		c.settled[ev.Get("task")] = true
		for i, o := range c.children {
			if o.task == ev.Get("task") {
				c.children = append(c.children[:i], c.children[i+1:]...)
				break
			}
		}
	case ev.Actor == "psm" && ev.Kind == "session.release":
		session := ev.Get("providerSessionId")
		var threads []string
		for i := 0; i < len(c.attached); {
			if c.attached[i].session == session {
				threads = append(threads, c.attached[i].thread)
				c.attached = append(c.attached[:i], c.attached[i+1:]...)
				continue
			}
			i++
		}
		if ev.Get("reason") != "idle_timeout" {
			return nil
		}
		for _, t := range threads {
			for _, o := range c.children {
				if o.parent == t {
					return violation(NoIdleReleaseWhileChildOwed,
						"provider session %s was released for idleness at %s while its thread %s was owed the result of delegated task %s, accepted at %s and still running: the parent is waiting, not idle, and the child's report-back has no live session",
						session, at(ev.At), t, o.task, at(o.since))
				}
			}
		}
	}
	return nil
}

type scanSeen struct {
	session string
	at      time.Duration
}

type scanAwakeIdle struct {
	awakeIdle // its sleeps and asleep
	seen      []scanSeen
}

func (a *scanAwakeIdle) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Actor == "fault" && ev.Kind == "host.suspend":
		if d, err := time.ParseDuration(ev.Get("for")); err == nil {
			a.sleeps = append(a.sleeps, sleepSpan{ev.At, d})
		}
	case ev.Actor == "psm" && (ev.Kind == "session.opened" || ev.Kind == "session.attach" || ev.Kind == "turn.start" || ev.Kind == "turn.terminal"):
		session := ev.Get("providerSessionId")
		for i := range a.seen {
			if a.seen[i].session == session {
				a.seen[i].at = ev.At
				return nil
			}
		}
		a.seen = append(a.seen, scanSeen{session, ev.At})
	case ev.Actor == "psm" && ev.Kind == "session.release":
		session := ev.Get("providerSessionId")
		for i, s := range a.seen {
			if s.session != session {
				continue
			}
			a.seen = append(a.seen[:i], a.seen[i+1:]...)
			slept := a.asleep(s.at, ev.At)
			if ev.Get("reason") == "idle_timeout" && slept > 0 && ev.At-s.at-slept < IdleThreshold {
				return violation(IdleCountsAwakeTime,
					"provider session %s was released for idleness at %s, %s after its last activity at %s, of which the host slept %s: only %s of awake time without activity, under the 30 min threshold",
					session, at(ev.At), ev.At-s.at, at(s.at), slept, ev.At-s.at-slept)
			}
			return nil
		}
	}
	return nil
}

type scanStaleCleanup struct {
	issuedFor map[string]string
	live      map[string]bool
	recorded  []record
}

func (s *scanStaleCleanup) record(inc, thread, cred string) {
	for i := range s.recorded {
		if s.recorded[i].incarnation == inc && s.recorded[i].thread == thread {
			s.recorded[i].cred = cred
			return
		}
	}
	s.recorded = append(s.recorded, record{inc, thread, cred})
}

func (s *scanStaleCleanup) recordedBy(inc, thread string) string {
	for _, r := range s.recorded {
		if r.incarnation == inc && r.thread == thread {
			return r.cred
		}
	}
	return ""
}

func (s *scanStaleCleanup) Observe(ev *sim.Event) *sim.Violation {
	switch ev.Kind {
	case "server.start":
		s.live = map[string]bool{}
		s.recorded = s.recorded[:0]
	case "credential.issue":
		s.issuedFor[ev.Get("cred")] = ev.Get("for")
	case "session.open":
		if ev.Outcome == "" {
			s.live[ev.Get("incarnation")] = true
		} else {
			delete(s.live, ev.Get("incarnation"))
		}
	case "session.opened", "session.attach":
		s.record(ev.Get("incarnation"), ev.Get("thread"), ev.Get("cred"))
	case "session.release":
		delete(s.live, ev.Get("incarnation"))
	case "credential.revoke", "slot.clear":
		stale, ok := strings.CutPrefix(ev.Get("cause"), "cleanup:")
		if !ok {
			return nil
		}
		cred, thread := ev.Get("cred"), ev.Get("thread")
		own := s.recordedBy(stale, thread)
		if cred == own {
			return nil
		}
		if inc := s.issuedFor[cred]; inc != stale && s.live[inc] {
			return violation(StaleCleanupSparesReplacement,
				"clean-up of released session %s did %s of credential %s of thread %s at %s, but that credential was issued for live session %s (the released session recorded %s)",
				stale, ev.Kind, cred, thread, at(ev.At), inc, orNone(own))
		}
		for _, r := range s.recorded {
			if r.cred == cred && r.incarnation != stale && s.live[r.incarnation] {
				return violation(StaleCleanupSparesReplacement,
					"clean-up of released session %s did %s of credential %s of thread %s at %s, but live session %s holds it",
					stale, ev.Kind, cred, thread, at(ev.At), r.incarnation)
			}
		}
	}
	return nil
}

type scanOneCredential struct{ live []liveCred }

func (o *scanOneCredential) Observe(ev *sim.Event) *sim.Violation {
	switch ev.Kind {
	case "server.start":
		o.live = o.live[:0]
	case "credential.revoke", "credential.expire":
		cred := ev.Get("cred")
		for i, c := range o.live {
			if c.cred == cred {
				o.live = append(o.live[:i], o.live[i+1:]...)
				break
			}
		}
	case "credential.issue":
		thread, caps := ev.Get("thread"), ev.Get("caps")
		for _, c := range o.live {
			if c.thread != thread {
				continue
			}
			why := ""
			if strings.Contains(c.caps, "preview") && !strings.Contains(caps, "preview") {
				why = ", so the old token still drives the preview tools after the thread's browser access was withdrawn"
			}
			return violation(OneLiveCredentialPerThread,
				"thread %s was issued credential %s (%s, for %s) at %s while its credential %s (%s, issued at %s) was still live: the prepare did not revoke the thread's credentials first%s",
				thread, ev.Get("cred"), caps, ev.Get("for"), at(ev.At), c.cred, c.caps, at(c.issued), why)
		}
		o.live = append(o.live, liveCred{cred: ev.Get("cred"), thread: thread, caps: caps, issued: ev.At})
	}
	return nil
}

// scanOpenTasks is the probe counter's list of accepted, unsettled tasks.
type scanOpenTasks struct{ tasks []string }

func (s *scanOpenTasks) observe(ev *sim.Event) {
	switch {
	case isToolEvent(ev) && ev.Kind == "delegate_task" && ev.Outcome == "accepted":
		if task := resultField(ev.Get("result"), "task"); task != "" {
			s.tasks = append(s.tasks, task)
		}
	case ev.Kind == "task.settled":
		s.tasks = slices.DeleteFunc(s.tasks, func(t string) bool { return t == ev.Get("task") })
	}
}

// scaleIndexEvent draws one event of the kinds these checkers read, over
// few threads, sessions, credentials, incarnations and tasks, so that
// every key is re-used, re-attached, revoked twice and settled twice.
func scaleIndexEvent(t *rapid.T, at time.Duration) *sim.Event {
	pick := func(label string, xs ...string) string { return rapid.SampledFrom(xs).Draw(t, label) }
	kind := pick("kind", "server.start", "session.open", "session.opened", "session.attach", "session.detach",
		"session.release", "turn.start", "turn.terminal", "host.suspend", "delegate_task", "task.settled",
		"credential.issue", "credential.revoke", "credential.expire", "slot.clear")
	ev := &sim.Event{At: at, Kind: kind, Actor: "psm"}
	attrs := []sim.Attr{sim.A("thread", pick("thread", "t1", "t2", "t3")),
		sim.A("providerSessionId", pick("session", "s1", "s2", "s3")),
		sim.A("cred", pick("cred", "c1", "c2", "c3", "c4")),
		sim.A("incarnation", pick("incarnation", "i1", "i2", "i3")),
		sim.A("reason", pick("reason", "idle_timeout", "stop")),
		sim.A("caps", pick("caps", "preview,tools", "tools")),
		sim.A("cause", pick("cause", "cleanup:i1", "cleanup:i2", "cleanup:i3", "stop"))}
	switch kind {
	case "host.suspend":
		ev.Actor = "fault"
		attrs = append(attrs, sim.A("for", pick("for", "10m0s", "45m0s", "2h0m0s")))
	case "delegate_task":
		ev.Actor = "agent/" + pick("agent", "t1", "t2")
		ev.Outcome = pick("outcome", "accepted", "replayed", "rejected")
		attrs = append(attrs, sim.A("result", pick("result", "task=k1", "task=k2 status=running", "task=k3", "status=failed")),
			sim.A("mode", pick("mode", "wait", "async")))
	case "task.settled":
		ev.Actor = "orchestrator"
		attrs = append(attrs, sim.A("task", pick("task", "k1", "k2", "k3")))
	case "session.open":
		ev.Outcome = pick("open", "", "failed")
	case "credential.issue":
		attrs = append(attrs, sim.A("for", pick("for", "i1", "i2", "i3")))
	}
	ev.Attrs = attrs
	return ev
}

// Ten rounds of rapid's default 100 cases: every violation path of the
// four checkers comes up (3,000 cases show each a few dozen times).
func TestScaleIndexes_AgreeWithTheScans(t *testing.T) {
	for range 10 {
		rapid.Check(t, scaleIndexesAgree)
	}
}

func scaleIndexesAgree(t *rapid.T) {
	type pair struct {
		name     string
		ix, scan interface {
			Observe(*sim.Event) *sim.Violation
		}
	}
	pairs := []*pair{
		{name: "childOwed", ix: newChildOwed(), scan: &scanChildOwed{settled: map[string]bool{}}},
		{name: "awakeIdle", ix: &awakeIdle{}, scan: &scanAwakeIdle{}},
		{name: "staleCleanup", ix: newStaleCleanup(), scan: &scanStaleCleanup{issuedFor: map[string]string{}, live: map[string]bool{}}},
		{name: "oneCredential", ix: newOneCredential(), scan: &scanOneCredential{}},
	}
	p := NewProbeCounter()
	var open scanOpenTasks
	now := time.Duration(0)
	for i := range rapid.IntRange(0, 120).Draw(t, "events") {
		now += rapid.SampledFrom([]time.Duration{0, time.Second, 5 * time.Minute, 20 * time.Minute, 50 * time.Minute}).Draw(t, "gap")
		ev := scaleIndexEvent(t, now)
		for _, pr := range pairs {
			got, want := pr.ix.Observe(ev), pr.scan.Observe(ev)
			if (got == nil) != (want == nil) || got != nil && *got != *want {
				t.Fatalf("%s, event %d (%s %s %v): indexed %v, scan %v", pr.name, i, ev.Actor, ev.Kind, ev.Attrs, got, want)
			}
		}
		p.waitChild(ev, func(string) {})
		open.observe(ev)
		if p.openTasks != len(open.tasks) {
			t.Fatalf("event %d: %d open delegated tasks counted, the list holds %d", i, p.openTasks, len(open.tasks))
		}
	}
}
