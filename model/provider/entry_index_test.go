package provider

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Entry's index answers what a scan of Entries did (the first live entry
// with the id), over opens of the same sessions by several threads,
// crashes, closes, releases, idle timeouts and a shutdown.
func TestEntry_AnswersAsTheScanDid(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		f := newFx(t, 10*time.Minute)
		sessions := []string{"s1", "s2", "s3"}
		pickSession := rapid.SampledFrom(sessions)
		pickThread := rapid.SampledFrom([]string{"t1", "t2", "t3"})
		check := func(step int) {
			for _, id := range sessions {
				var want *Entry
				for _, e := range f.m.Entries() {
					if e.ID == id {
						want = e
						break
					}
				}
				if got := f.m.Entry(id); got != want {
					rt.Fatalf("step %d: Entry(%s) = %p, the scan finds %p", step, id, got, want)
				}
			}
		}
		for step := range rapid.IntRange(0, 40).Draw(rt, "steps") {
			switch rapid.IntRange(0, 6).Draw(rt, "op") {
			case 0, 1:
				f.open(pickSession.Draw(rt, "session"), pickThread.Draw(rt, "thread"), "codex")
			case 2:
				f.run(rapid.SampledFrom([]time.Duration{openTime, time.Second, 11 * time.Minute}).Draw(rt, "run"))
			case 3:
				if e := f.m.Entry(pickSession.Draw(rt, "crashed")); e != nil {
					f.m.Crash(e)
				}
			case 4:
				_ = f.m.Close(pickSession.Draw(rt, "closed"))
			case 5:
				if es := f.m.Entries(); len(es) > 0 {
					_ = f.m.Release(es[rapid.IntRange(0, len(es)-1).Draw(rt, "released")], ReasonIdleTimeout, "")
				}
			case 6:
				if rapid.IntRange(0, 9).Draw(rt, "shutdown") == 0 {
					f.m.Shutdown()
				}
			}
			check(step)
		}
	})
}
