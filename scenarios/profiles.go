package scenarios

import (
	"time"

	"github.com/orchsim/orchsim/model/browser"
	"github.com/orchsim/orchsim/sim"
)

// Browser profiles of a T3 world's server tabs (a dimension drawn from its
// own stream, browser-profiles, so the other draws keep their places; on in
// half the worlds that set T3World.PageLifecycle, as chaos does, and whose
// agents use the preview tools):
//   - each server process starts with no profile catalogue (upstream keeps
//     reportedProfiles in the process: ServerBrowser.ts, index:70905931248),
//     and a client reports one (Work, the default) 1 s to 10 min later, as
//     a desktop reconnecting to the new process would;
//   - of the agents' opens, a sixth name Work (by name, in lower case), a
//     sixth Incognito, and a sixth (outside the heal phase) a profile
//     nobody reported, which is refused and opens nothing; the rest name
//     none and get the reported default, or throwaway storage before a
//     catalogue arrived.

// profileActor is the stream and the shrinker's name of the dimension.
const profileActor = "browser-profiles"

// workProfile is the one user profile the dimension's client reports.
var workProfile = []browser.BrowserProfile{{ID: "profile-work", Name: "Work"}}

func (w *T3World) startProfiles() {
	if !w.PageLifecycle || w.Repertoire.Orchestrator && !w.Repertoire.Preview {
		return
	}
	r := w.env.Rand(profileActor)
	if !r.Chance("enable", sim.Per(1, 2)) || !w.env.Enabled(profileActor) {
		return
	}
	w.profRand = r
	w.env.Emit("world", profileActor, "", sim.A("catalogue", "Work"), sim.A("report-after", "1s-10m"))
}

// wireProfiles sets the dimension's hooks on a new server process's browser.
func (w *T3World) wireProfiles(b *browser.ServerBrowser) {
	r := w.profRand
	if r == nil {
		return
	}
	w.env.After(r.Duration("report-after", time.Second, 10*time.Minute), func() {
		if w.srv != nil && w.srv.Browser == b {
			b.ReportProfiles(workProfile, "profile-work")
		}
	})
	b.ProfileFor = func(string) string {
		switch r.IntN("profile", 6) {
		case 0:
			return "work"
		case 1:
			return browser.IncognitoProfileID
		case 2:
			if !w.env.Healing {
				return "Personal"
			}
		}
		return ""
	}
}
