package browser

import "github.com/orchsim/orchsim/sim"

// Published session events: what the preview manager publishes of a
// server tab's navigation (ServerBrowser.ts index:70905931248: report and
// settleAbortedNavigation, which the manager's reportStatus publishes as
// "navigated" or, for a load failure, "failed"). A tab opened straight to
// a file the browser cannot show has no page to show: its aborted
// navigation settles as a load failure that carries the downloaded file,
// and the file is not offered to the controlling viewer as well.

// Session event types.
const (
	EventNavigated = "navigated"
	EventFailed    = "failed"
)

// SessionEvent is one published session event: the tab, the navigation
// status (Loading, Success or LoadFailed), its URL, a loaded page's Title
// and, for an aborted navigation that was a download, the file
// (Download's ID and FileName).
type SessionEvent struct {
	Type            string
	ThreadID, TabID string
	Status, URL     string
	Title           string
	Code            int
	Description     string
	Download        *Download
}

// navTrack is a tab's navigation generation (navigationGeneration) and
// its latest aborted main-frame navigation (abortedNavigation).
type navTrack struct {
	generation    int
	abortedURL    string
	abortedGen    int
	abortedActive bool
}

func (b *ServerBrowser) track(t *Tab) *navTrack {
	if b.nav == nil {
		b.nav = map[*Tab]*navTrack{}
	}
	n := b.nav[t]
	if n == nil {
		n = &navTrack{}
		b.nav[t] = n
	}
	return n
}

// SessionEvents records published session events, in order.
type SessionEvents struct{ List []SessionEvent }

// publish records e when the host records events (the worlds do not).
func (b *ServerBrowser) publish(e SessionEvent) {
	if b.Events == nil {
		return
	}
	b.Events.List = append(b.Events.List, e)
	b.env.Emit(actor, "session."+e.Type, e.Status, sim.A("thread", e.ThreadID), sim.A("tab", e.TabID))
}

// navigationStarted is a main-frame request: a new generation, no aborted
// navigation pending, and the tab published as loading it.
func (b *ServerBrowser) navigationStarted(t *Tab, url string) {
	n := b.track(t)
	n.generation++
	n.abortedActive = false
	b.publish(SessionEvent{Type: EventNavigated, ThreadID: t.ThreadID, TabID: t.TabID, Status: "Loading", URL: cut(url, 2048)})
}

// navigationAborted records the current navigation's ERR_ABORTED; if no
// download explains it within AbortedNavigationGrace it settles without
// one.
func (b *ServerBrowser) navigationAborted(t *Tab, url string) {
	n := b.track(t)
	n.abortedURL, n.abortedGen, n.abortedActive = url, n.generation, true
	gen := n.generation
	b.env.After(AbortedNavigationGrace, func() {
		if n.abortedActive && n.abortedGen == gen && !t.Control.Closed {
			n.abortedActive = false
			b.settleAborted(t, gen, url, nil)
		}
	})
}

// downloadNavigation is the generation of the aborted navigation a
// download of url explains (consuming it), or -1.
func (b *ServerBrowser) downloadNavigation(t *Tab, url string) int {
	n := b.track(t)
	if !n.abortedActive || n.abortedURL != url {
		return -1
	}
	n.abortedActive = false
	return n.abortedGen
}

// shownInTab reports whether a download saved for navigation gen is
// shown by the tab itself: its navigation is still the current one and
// the page shows nothing (about:blank).
func (b *ServerBrowser) shownInTab(t *Tab, gen int) bool {
	return gen >= 0 && b.track(t).generation == gen && t.URL == ""
}

// settleAborted is settleAbortedNavigation: unless a newer navigation
// owns the status, the tab stops loading; a blank tab publishes the
// aborted navigation as a load failure (code -3, with the file when a
// download explained it).
func (b *ServerBrowser) settleAborted(t *Tab, gen int, url string, offered *Download) {
	if gen < 0 || b.track(t).generation != gen {
		return
	}
	t.Loading = false
	if t.URL != "" {
		return
	}
	b.publish(SessionEvent{Type: EventFailed, ThreadID: t.ThreadID, TabID: t.TabID, Status: "LoadFailed", URL: cut(url, 2048),
		Code: -3, Description: "ERR_ABORTED", Download: offered})
}
