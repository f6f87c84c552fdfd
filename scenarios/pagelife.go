package scenarios

import (
	"time"

	"github.com/orchsim/orchsim/model/browser"
	"github.com/orchsim/orchsim/sim"
)

// The page lifecycle of a T3 world's server tabs (a dimension drawn from
// its own stream, page-lifecycle, so the other draws keep their places; on
// in half the worlds that set T3World.PageLifecycle, as chaos does, and
// whose agents use the preview tools):
//   - a quarter of the agents' clicks open a confirm dialog that holds the
//     click's place in the tab's queue (ServerBrowser.ts @ 164d7dbe: "A
//     click can be waiting for its dialog"); 2 s to 5 min later it is
//     answered, by the controlling viewer if a human has taken over
//     meanwhile (the control message shows the dialog), else by the tab's
//     agent with preview_dialog (as the dialogPending refusal tells it);
//   - a tenth of the agents' navigations fail with a Chromium net error,
//     and the tab shows the error page (loadError);
//   - the desktop app takes back half of the pages it renders, a minute
//     to 90 min after it mounted them (devtools opened, the webview
//     swapped): the server lets go of the page, its viewers reconnect, and
//     the agent's next call on the tab connects again.
// No new dialog or failure is drawn while the world heals.

// pageActor is the stream and the shrinker's name of the dimension.
const pageActor = "page-lifecycle"

// pageNetErrors are the net errors a failed navigation draws from
// (NET_ERROR_CODES of ServerBrowserPage.ts @ ddd54bc2).
var pageNetErrors = []string{"net::ERR_CONNECTION_REFUSED", "net::ERR_NAME_NOT_RESOLVED",
	"net::ERR_CERT_AUTHORITY_INVALID", "net::ERR_TIMED_OUT"}

func (w *T3World) startPageLifecycle() {
	if !w.PageLifecycle || w.Repertoire.Orchestrator && !w.Repertoire.Preview {
		return
	}
	r := w.env.Rand(pageActor)
	if !r.Chance("enable", sim.Per(1, 2)) || !w.env.Enabled(pageActor) {
		return
	}
	w.prand = r
	w.env.Emit("world", pageActor, "", sim.A("dialogs", "1/4"), sim.A("load-failures", "1/10"), sim.A("withdrawals", "1/2"))
}

// wirePage sets the dimension's hooks on a new server process's browser.
func (w *T3World) wirePage(b *browser.ServerBrowser) {
	r := w.prand
	if r == nil {
		return
	}
	b.ViewerReconnect = true
	b.DialogFor = func(threadID, tabID string) *browser.Dialog {
		if w.env.Healing || !r.Chance("dialog", sim.Per(1, 4)) {
			return nil
		}
		w.env.After(r.Duration("dialog-answer", 2*time.Second, 5*time.Minute), func() { w.answerDialog(b, threadID, tabID) })
		return &browser.Dialog{Type: "confirm", Message: "Leave this page? Changes you made may not be saved."}
	}
	b.NavigationFailure = func(threadID, tabID string) string {
		if w.env.Healing || !r.Chance("load-failure", sim.Per(1, 10)) {
			return ""
		}
		return pageNetErrors[r.IntN("load-error", len(pageNetErrors))]
	}
	b.OnRender = func(t *browser.Tab) {
		if !r.Chance("withdraw", sim.Per(1, 2)) {
			return
		}
		w.env.After(r.Duration("withdraw-after", time.Minute, 90*time.Minute), func() {
			if w.srv != nil && w.srv.Browser == b && b.Tab(t.ThreadID, t.TabID) == t {
				b.DesktopWithdraw(t)
			}
		})
	}
}

// answerDialog answers the tab's pending dialog: the controlling viewer
// does if a human controls the tab, else the tab's agent (preview_dialog).
func (w *T3World) answerDialog(b *browser.ServerBrowser, threadID, tabID string) {
	if w.srv == nil || w.srv.Browser != b {
		return // the process died, and its pages with it
	}
	t := b.Tab(threadID, tabID)
	if t == nil || t.DialogShown() == nil {
		return
	}
	accept := w.prand.Chance("dialog-accept", sim.Per(1, 2))
	if viewer := t.Control.Owner; viewer != "" {
		b.Input(t, viewer, browser.ViewerInput{Kind: browser.InputDialog, Accept: accept}, func(string, string) {})
		return
	}
	b.Handle(browser.Request{ThreadID: threadID, TabID: tabID, AgentSessionID: t.Control.AgentID, Op: browser.OpDialog,
		Accept: accept}, func(browser.Result) {})
}
