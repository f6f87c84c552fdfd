package provider

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// scanHeldElsewhere is heldElsewhere as it was: a walk of every entry.
func scanHeldElsewhere(m *Manager, e *Entry, c ThreadCred) string {
	if m.reserve[reservationKey(c.ThreadID, c.CredID)] > 0 {
		return "reserved"
	}
	for _, o := range m.entries {
		if o == e {
			continue
		}
		if o.Attached(c.ThreadID) {
			return "thread attached to " + o.Incarnation
		}
		if oc, ok := o.Cred(c.ThreadID); ok && oc.CredID == c.CredID {
			return "recorded by " + o.Incarnation
		}
	}
	return ""
}

// heldElsewhere by the threads' touched entries answers what the walk of
// every entry answered, for live and released entries and every thread
// and credential seen, over opens of shared and single-thread sessions,
// attaches, detaches (plain and terminal), restarts in place, crashes,
// closes, releases, idle timeouts and a shutdown.
func TestHeldElsewhere_MatchesScan(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		f := newFx(t, 10*time.Minute)
		pickSession := rapid.SampledFrom([]string{"s1", "s2", "s3", "s4"})
		threads := []string{"t1", "t2", "t3"}
		pickThread := rapid.SampledFrom(threads)
		var seen []*Entry
		for step := range rapid.IntRange(0, 50).Draw(rt, "steps") {
			es := f.m.Entries()
			pickEntry := func(label string) *Entry {
				if len(es) == 0 {
					return nil
				}
				return es[rapid.IntRange(0, len(es)-1).Draw(rt, label)]
			}
			switch rapid.IntRange(0, 8).Draw(rt, "op") {
			case 0, 1, 2:
				f.open(pickSession.Draw(rt, "session"), pickThread.Draw(rt, "thread"), rapid.SampledFrom([]string{"codex", "claudeAgent"}).Draw(rt, "instance"))
			case 3:
				f.run(rapid.SampledFrom([]time.Duration{openTime, time.Second, 11 * time.Minute}).Draw(rt, "run"))
			case 4:
				if e := pickEntry("crashed"); e != nil {
					f.m.Crash(e)
				}
			case 5:
				if e := pickEntry("detached"); e != nil {
					f.m.Detach(e, pickThread.Draw(rt, "detach-thread"), rapid.Bool().Draw(rt, "terminal"))
				}
			case 6:
				if e := pickEntry("restarted"); e != nil && len(e.attached) > 0 && !e.Busy() { // as ChangeRuntimeOptions calls it
					f.m.RestartInPlace(e, "test")
				}
			case 7:
				if e := pickEntry("released"); e != nil {
					_ = f.m.Release(e, ReasonIdleTimeout, "")
				}
			case 8:
				if rapid.IntRange(0, 9).Draw(rt, "shutdown") == 0 {
					f.m.Shutdown()
				}
			}
			for _, e := range f.m.Entries() {
				if !slices.Contains(seen, e) {
					seen = append(seen, e)
				}
			}
			var creds []string
			for _, e := range seen {
				for _, c := range e.creds {
					creds = append(creds, c.CredID)
				}
			}
			creds = append(creds, "no-such-cred")
			for _, e := range seen {
				for _, th := range threads {
					for _, cred := range creds {
						c := ThreadCred{ThreadID: th, CredID: cred}
						if got, want := f.m.heldElsewhere(e, c), scanHeldElsewhere(f.m, e, c); got != want {
							rt.Fatalf("step %d: heldElsewhere(%s, %s/%s) = %q, the walk %q", step, e.Incarnation, th, cred, got, want)
						}
					}
				}
			}
		}
	})
}
