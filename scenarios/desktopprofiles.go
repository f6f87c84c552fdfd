package scenarios

import (
	"time"

	"github.com/orchsim/orchsim/model/browser"
	"github.com/orchsim/orchsim/sim"
)

// Desktop profile catalogues of a T3 world's server tabs (a dimension drawn
// from its own stream, desktop-profiles, so the other draws keep their
// places; on in half the worlds that set T3World.PageLifecycle, as chaos
// does, and whose agents use the preview tools):
//   - each server process's desktop channel has one remote desktop,
//     desktop-b, whose catalogue lists Work (the default) and Personal; an
//     agent's new tab opens as desktop-b's native page on Work, and the
//     tabs an agent holds there pin its later opens to desktop-b (the
//     caller's retained desktop owner, model/browser/desktopprofiles.go);
//   - desktop-b disconnects 1 to 20 min after it connected (outside the
//     heal phase) and comes back 5 s to 3 min later: meanwhile its pages are
//     detached (the sessions stay), a call on one waits for the page and
//     fails, an open that needs desktop-b is refused RemoteUnavailable
//     instead of opening elsewhere, and an agent with no tab there opens a
//     headless tab (no catalogue answers).

// desktopActor is the stream and the shrinker's name of the dimension.
const desktopActor = "desktop-profiles"

// desktopB is the dimension's remote desktop and its catalogue.
var desktopB = browser.DesktopCatalogue{HostID: "desktop-b", DefaultID: "work",
	Profiles: []browser.BrowserProfile{{ID: "work", Name: "Work"}, {ID: "personal", Name: "Personal"}}}

func (w *T3World) startDesktopProfiles() {
	if !w.PageLifecycle || w.Repertoire.Orchestrator && !w.Repertoire.Preview {
		return
	}
	r := w.env.Rand(desktopActor)
	if !r.Chance("enable", sim.Per(1, 2)) || !w.env.Enabled(desktopActor) {
		return
	}
	w.deskRand = r
	w.env.Emit("world", desktopActor, "", sim.A("host", desktopB.HostID), sim.A("away-after", "1m-20m"), sim.A("back-after", "5s-3m"))
}

// wireDesktopProfiles gives a new server process's browser the channel and
// schedules desktop-b's departures and returns.
func (w *T3World) wireDesktopProfiles(b *browser.ServerBrowser) {
	r := w.deskRand
	if r == nil {
		return
	}
	b.Desktops = &browser.DesktopChannel{Hosts: []browser.DesktopCatalogue{desktopB}}
	current := func() bool { return w.srv != nil && w.srv.Browser == b }
	var leave, back func() // bound once per process, not per departure
	leave = func() {
		if !current() {
			return
		}
		if w.env.Healing {
			return
		}
		b.DesktopHostGone(desktopB.HostID)
		w.env.After(r.Duration("back-after", 5*time.Second, 3*time.Minute), back)
	}
	back = func() {
		if !current() {
			return
		}
		b.DesktopHostBack(desktopB)
		w.env.After(r.Duration("away-after", time.Minute, 20*time.Minute), leave)
	}
	w.env.After(r.Duration("away-after", time.Minute, 20*time.Minute), leave)
}
