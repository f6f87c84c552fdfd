package invariants

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/orchsim/orchsim/sim"
)

// resume-binds-stored-native and resume-cursor-finds-conversation kept
// their per-thread rows by walking them; with the rows found by thread
// they must report the same violations, with the same messages, at the
// same events.

type scanStoredNative struct {
	last   []lastNative
	exists map[string]bool
}

func (s *scanStoredNative) Observe(ev *sim.Event) *sim.Violation {
	if ev.Actor != "psm" {
		return nil
	}
	switch ev.Kind {
	case "native.create":
		thread, native, instance := ev.Get("thread"), ev.Get("native"), ev.Get("instance")
		s.exists[native] = ev.Get("written") == "true"
		for i, l := range s.last {
			if l.thread != thread {
				continue
			}
			s.last[i] = lastNative{thread, native, instance, ev.At}
			if l.instance == instance && s.exists[l.native] {
				return violation(ResumeBindsStoredNative,
					"thread %s's provider session on %s created a new native conversation %s at %s while its conversation %s (last bound at %s) still exists: the model starts blank while the thread shows the old history",
					thread, instance, native, at(ev.At), l.native, at(l.at))
			}
			return nil
		}
		s.last = append(s.last, lastNative{thread, native, instance, ev.At})
	case "native.resume":
		if ev.Outcome != "resumed" {
			return nil
		}
		for i, l := range s.last {
			if l.thread == ev.Get("thread") {
				s.last[i] = lastNative{l.thread, ev.Get("native"), ev.Get("instance"), ev.At}
				return nil
			}
		}
		s.last = append(s.last, lastNative{ev.Get("thread"), ev.Get("native"), ev.Get("instance"), ev.At})
	case "native.turn":
		s.exists[ev.Get("native")] = true
	}
	return nil
}

// scanCursorFinds is cursorFinds with set walking the cursors.
type scanCursorFinds struct{ cursorFinds }

func (c *scanCursorFinds) Observe(ev *sim.Event) *sim.Violation {
	if ev.Actor == "psm" && (ev.Kind == "cursor.persist" || ev.Kind == "cursor.clear") {
		thread, native := ev.Get("thread"), ev.Get("native")
		if ev.Kind == "cursor.clear" {
			native = ""
		}
		for i := range c.cursors {
			if c.cursors[i].thread == thread {
				c.cursors[i] = cursorRow{thread, native, ev.At}
				return nil
			}
		}
		c.cursors = append(c.cursors, cursorRow{thread, native, ev.At})
		return nil
	}
	return c.cursorFinds.Observe(ev)
}

func TestNativeRows_AgreeWithTheScans(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		type checker interface {
			Observe(*sim.Event) *sim.Violation
		}
		pairs := [][2]checker{
			{&storedNative{exists: map[string]bool{}, lastAt: map[string]int{}}, &scanStoredNative{exists: map[string]bool{}}},
			{&cursorFinds{}, &scanCursorFinds{}},
		}
		pick := func(label string, xs ...string) string { return rapid.SampledFrom(xs).Draw(t, label) }
		now := time.Duration(0)
		for i := range rapid.IntRange(0, 120).Draw(t, "events") {
			now += rapid.SampledFrom([]time.Duration{0, time.Minute}).Draw(t, "gap")
			ev := &sim.Event{At: now, Actor: "psm", Kind: pick("kind", "native.create", "native.resume", "native.turn", "cursor.persist", "cursor.clear", "session.open")}
			ev.Outcome = pick("outcome", "resumed", "")
			ev.Attrs = []sim.Attr{sim.A("thread", pick("thread", "t1", "t2", "t3")), sim.A("native", pick("native", "n1", "n2", "n3")),
				sim.A("instance", pick("instance", "codex", "claudeAgent")), sim.A("written", pick("written", "true", "false")),
				sim.A("cause", pick("cause", "resume-missing", "")), sim.A("providerSessionId", "psess:t1")}
			for _, p := range pairs {
				got, want := p[0].Observe(ev), p[1].Observe(ev)
				if (got == nil) != (want == nil) || got != nil && *got != *want {
					t.Fatalf("event %d (%s %s %v): indexed %v, scan %v", i, ev.Kind, ev.Outcome, ev.Attrs, got, want)
				}
			}
		}
	})
}
