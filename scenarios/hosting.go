package scenarios

import (
	"strings"
	"time"

	"github.com/orchsim/orchsim/model/browser"
	"github.com/orchsim/orchsim/sim"
)

// Preview hosting of a T3 world's server tabs (model/browser/hosting.go; a
// dimension drawn from its own stream, preview-hosting, so the other draws
// keep their places; on in half the worlds that set T3World.PageLifecycle,
// as chaos does, and whose agents use the preview tools):
//   - every agent navigation (navigate, and open with a URL) is prepared by
//     hosting first, holding the tab's queue: 5 ms to 500 ms, or for a
//     quarter of them 1 s to 30 s, hosting restoring the preview's local
//     listener first (Hosting.ts @ 02c58f29 waits READY_TIMEOUT_MS, 30 s,
//     for it);
//   - half the preparations find an origin hosting manages; of those, three
//     quarters carry a one-use credential the tab's own context exchanges
//     for a browser session (5 ms to 1 s) before the page moves, and outside
//     the heal phase a tenth fail (the identity check, bootstrap_failed);
//   - outside the heal phase a twelfth of the exchanges fail.
//   - a person watching a tab whose page still sits preparing 5 s into a
//     slow preparation takes control half the time (outside the heal
//     phase), as at a look (10 s to 10 min, then released).
//
// A human who takes control of the tab meanwhile interrupts the
// preparation; an exchange in flight drains first (the takeover waits).

// HostingReadyTimeout is READY_TIMEOUT_MS of Hosting.ts @ 02c58f29: the
// longest a preparation waits for the preview's listener.
const HostingReadyTimeout = 30 * time.Second

// stuckAfter is how long a person watches a page preparing before they
// may take over (a model choice).
const stuckAfter = 5 * time.Second

// hostingActor is the stream and the shrinker's name of the dimension.
const hostingActor = "preview-hosting"

func (w *T3World) startHosting() {
	if !w.PageLifecycle || w.Repertoire.Orchestrator && !w.Repertoire.Preview {
		return
	}
	r := w.env.Rand(hostingActor)
	if !r.Chance("enable", sim.Per(1, 2)) || !w.env.Enabled(hostingActor) {
		return
	}
	w.hostRand = r
	w.env.Emit("world", hostingActor, "", sim.A("managed", "1/2"), sim.A("credentials", "3/4"),
		sim.A("prepare", "5ms-500ms, 1/4 1s-30s"), sim.A("exchange", "5ms-1s"))
}

// wireHosting sets the dimension's hooks on a new server process's browser.
func (w *T3World) wireHosting(b *browser.ServerBrowser) {
	r := w.hostRand
	if r == nil {
		return
	}
	b.Hosting = func(in browser.HostingInput) browser.HostingAnswer {
		a := browser.HostingAnswer{Hold: r.Duration("prepare", 5*time.Millisecond, 500*time.Millisecond)}
		if r.Chance("restore", sim.Per(1, 4)) {
			a.Hold = r.Duration("restore-time", time.Second, HostingReadyTimeout)
			if a.Hold > stuckAfter {
				w.env.After(stuckAfter, func() { w.takeStuckTab(b, in.ThreadID) })
			}
		}
		if !strings.HasPrefix(in.URL, "http://localhost:") || !r.Chance("managed", sim.Per(1, 2)) {
			return a
		}
		if !w.env.Healing && r.Chance("prepare-fails", sim.Per(1, 10)) {
			a.Failure = browser.HostingBootstrapFailed
			return a
		}
		a.Managed = true
		if r.Chance("credential", sim.Per(3, 4)) {
			a.BootstrapToken = "one-use-" + r.Hex("credential-id", 4)
		}
		return a
	}
	b.SessionExchange = func(string, string, string) (time.Duration, string) {
		hold := r.Duration("exchange", 5*time.Millisecond, time.Second)
		if !w.env.Healing && r.Chance("exchange-fails", sim.Per(1, 12)) {
			return hold, "browser-session exchange rejected"
		}
		return hold, ""
	}
}

// takeStuckTab is a watching person taking over a tab of thread whose page
// is still preparing an agent's navigation.
func (w *T3World) takeStuckTab(b *browser.ServerBrowser, threadID string) {
	if w.srv == nil || w.srv.Browser != b || w.env.Healing {
		return
	}
	r := w.hostRand
	for _, t := range b.Tabs() {
		if t.ThreadID != threadID || !t.Preparing() || !t.Watched() || t.Control.Owner != "" {
			continue
		}
		if !r.Chance("take-stuck", sim.Per(1, 2)) {
			return
		}
		viewer := t.Viewers[0]
		if !b.TakeControl(t, viewer) {
			return
		}
		w.env.After(r.Duration("stuck-hold", 10*time.Second, 10*time.Minute), func() {
			if w.srv != nil && w.srv.Browser == b {
				b.ReleaseControl(t, viewer)
			}
		})
		return
	}
}
