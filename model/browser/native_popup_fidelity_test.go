package browser

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Native desktop POPUP cases of the newest stored ServerBrowser.test.ts
// (index:70867653086), on the sb harness with a native host standing in for
// the test's DesktopBrowserChannel mock (nativeSB, native_roots_fidelity_test.go):
// the opener is agent-a's native root; NativePopupCreated and
// NativePopupClosed are the mock's "created" and "closed" popup events,
// ConnectNativeHost its "host-connected"; h.Sent(CmdClosePopup) stands for
// popupClosures, NativePopups.Bindings for popupBindings.

const signin = "https://signin.example.test/"

// announce has h announce popup id of opener's page and returns the session
// it opened (the manager's "opened" event for a tab other than the
// opener's), or nil.
func (w *sb) announce(h *NativeHost, opener *Tab, id, url string) *Tab {
	before := len(w.b.NativeOpened())
	w.b.NativePopupCreated(h, opener.ThreadID, opener.TabID, id, url)
	w.run(time.Millisecond)
	opened := w.b.NativeOpened()
	if len(opened) == before {
		return nil
	}
	return w.b.Tab(sbThread, opened[len(opened)-1])
}

// evaluate runs evaluate on tab as cred and returns the reply.
func (w *sb) evaluate(cred string, tab *Tab, value string) *reply {
	r := w.as(cred, OpEvaluate, onTab(tab, func(r *Request) { r.Value = value }))
	w.run(2 * time.Second)
	require.True(w.t, r.done)
	return r
}

func (w *sb) sessionIDs() []string { return tabIDs(w.b.Tabs()) }

// published returns the session events published for tabID (the manager's
// navigated and failed events), recording them from now on.
func (w *sb) published(tabID string) []SessionEvent {
	if w.b.Events == nil {
		w.b.Events = &SessionEvents{}
	}
	var out []SessionEvent
	for _, e := range w.b.Events.List {
		if e.TabID == tabID {
			out = append(out, e)
		}
	}
	return out
}

// managerClose is manager.close of tab's session; it returns the outcome and
// the PreviewNativeCloseError reason once answered ("" before).
func (w *sb) managerClose(tab *Tab) *answer {
	got := &answer{}
	w.b.ManagerCloseNative(tab, func(o, why string) { *got = answer{o, why, true} })
	return got
}

// TestSBN42_NativePopupKeepsAgentProfileAndOpener is SB-N42, upstream "a
// popup keeps its agent, profile, and opener page (native: %s)", the native
// row (SB-N16 is the headless one): the popup is a desktop-popup session
// with the opener's owner and profile on the opener's host, not revealed,
// driven over its own desktop connection (no headless context), bound
// once with its popupId and opener; another agent session cannot act on
// it; status reports its native presentation; a detached popup page
// reconnects without binding again; a repeated announcement opens
// nothing; status lists it with its opener; nothing navigated either page;
// the window's close ends its session only, and the server sent no close.
func TestSBN42_NativePopupKeepsAgentProfileAndOpener(t *testing.T) {
	w, h := nativeSB(t, "local", "work")
	opener := w.openRoot()
	popup := w.announce(h, opener, "popup-native", signin)
	require.NotNil(t, popup, "opened")
	assert.Equal(t, opener.Control.AgentID, popup.Control.AgentID, "automationOwner")
	assert.False(t, popup.Reveal)
	assert.Equal(t, "desktop-popup", popup.BackingPage())
	assert.Equal(t, "work", popup.ProfileID)
	assert.Equal(t, "local", popup.Native.Host.ID)
	assert.Equal(t, "evaluated", w.evaluate("agent-a", popup, "evaluated").Value)
	assert.Equal(t, ReasonAgentMismatch, w.evaluate("agent-b", popup, "foreign").Outcome)
	assert.Zero(t, w.b.ContextsLaunched, "no headless context")
	assert.Equal(t, 2, w.b.DesktopConnections, "the opener's and the popup's own")
	assert.Equal(t, []PopupBinding{{ThreadID: sbThread, TabID: popup.TabID, HostID: "local", PopupID: "popup-native",
		OpenerTabID: opener.TabID}}, w.b.NativePopups.Bindings)
	assert.Equal(t, "popup-native", popup.Native.ID, "desktopPopupId")

	h.Presented[popup.TabID] = true
	shown := w.as("agent-a", OpStatus, onTab(popup, nil))
	assert.True(t, shown.Visible && shown.NativePresented)
	assert.Zero(t, shown.StreamViewers)
	delete(h.Presented, popup.TabID)
	hidden := w.as("agent-a", OpStatus, onTab(popup, nil))
	assert.False(t, hidden.Visible || hidden.NativePresented)

	w.b.AttachViewer(popup, "reader", false)
	w.b.DesktopWithdraw(popup)
	assert.NotEmpty(t, tags(popup.Output("reader"), "reconnect"), "the viewer reconnects")
	h.Presented[popup.TabID] = true
	attached := ""
	w.b.AttachViewerAsync(popup, "reader-2", false, func(o string) { attached = o })
	w.run(time.Millisecond)
	require.Equal(t, OK, attached)
	assert.True(t, w.as("agent-a", OpStatus, onTab(popup, nil)).NativePresented)
	assert.Len(t, w.b.NativePopups.Bindings, 1, "a bound popup is not bound again")
	assert.Equal(t, 3, w.b.DesktopConnections)
	assert.Nil(t, w.announce(h, opener, "popup-native", signin), "a repeated announcement opens no second tab")
	assert.Len(t, w.b.Tabs(), 2)

	status := w.as("agent-a", OpStatus, onTab(opener, nil))
	assert.Equal(t, []TabStatus{{TabID: opener.TabID, ProfileID: "work"},
		{TabID: popup.TabID, OpenerTabID: opener.TabID, ProfileID: "work"}}, status.Tabs)
	assert.Zero(t, opener.Gotos, "the opener is not navigated")
	assert.Zero(t, popup.Gotos, "nor the popup")
	w.b.NativePopupClosed(h, sbThread, opener.TabID, "popup-native")
	assert.Equal(t, []string{opener.TabID}, w.sessionIDs(), "closing the window ends the popup's session only")
	assert.Equal(t, []TabStatus{{TabID: opener.TabID, ProfileID: "work"}}, w.as("agent-a", OpStatus, onTab(opener, nil)).Tabs)
	assert.Zero(t, w.b.PagesClosed)
	assert.Empty(t, h.Sent(CmdClosePopup), "the server closed nothing")
}

// TestSBN44_UnboundPopupReconnectsRetainedOpener is SB-N44, upstream "an
// unbound native popup reconnects its retained opener without a pending
// tab": the opener's page was taken back (its viewer told to reconnect);
// a popup it announces reconnects the opener from its session and opens
// as a desktop-popup on host-a with the opener's profile and owner; it is
// driven on a third desktop connection; no headless context, no close,
// one binding to the opener.
func TestSBN44_UnboundPopupReconnectsRetainedOpener(t *testing.T) {
	w, h := nativeSB(t, "host-a", "work")
	opener := w.openRoot()
	w.b.AttachViewer(opener, "viewer", false)
	w.b.DesktopWithdraw(opener)
	require.NotEmpty(t, tags(opener.Output("viewer"), "reconnect"))
	require.False(t, opener.HasPage())
	popup := w.announce(h, opener, "unbound-after-disconnect", signin)
	require.NotNil(t, popup)
	assert.Equal(t, "desktop-popup", popup.BackingPage())
	assert.Equal(t, "host-a", popup.Native.Host.ID)
	assert.Equal(t, "work", popup.ProfileID)
	assert.Equal(t, OwnerKey(w.env.Profile, sbEnv, "agent-a", sbThread), popup.Control.AgentID)
	assert.True(t, opener.HasPage(), "the opener reconnected")
	assert.Equal(t, "evaluated", w.evaluate("agent-a", popup, "evaluated").Value)
	assert.Equal(t, 3, w.b.DesktopConnections)
	assert.Zero(t, w.b.ContextsLaunched)
	assert.Empty(t, h.Sent(CmdClosePopup))
	require.Len(t, w.b.NativePopups.Bindings, 1)
	assert.Equal(t, "host-a", w.b.NativePopups.Bindings[0].HostID)
	assert.Equal(t, opener.TabID, w.b.NativePopups.Bindings[0].OpenerTabID)
}

// TestSBN45_FailedPopupClosesRetainSessionAndRetry is SB-N45, upstream
// "failed native popup closes retain their session and retry after
// reconnect": a close while the host is unreachable fails unavailable,
// sends nothing and keeps both sessions; the popup's re-announcement after
// reconnect retries the close, which its page vetoes; an agent close vetoed
// with a beforeunload dialog up is an execution error, drops the dialog,
// keeps the session and the popup usable; the eventual close retires the
// session without another tab or binding: three closes in all.
func TestSBN45_FailedPopupClosesRetainSessionAndRetry(t *testing.T) {
	w, h := nativeSB(t, "local", "default")
	opener := w.openRoot()
	popup := w.announce(h, opener, "close-after-reconnect", signin)
	require.NotNil(t, popup)
	require.Equal(t, OK, w.evaluate("agent-a", popup, "evaluated").Outcome)
	h.Connected = false // closePopup fails host-unavailable
	offline := w.managerClose(popup)
	require.True(t, offline.done)
	assert.Equal(t, NativeCloseError, offline.outcome)
	assert.Equal(t, NativeCloseUnavailable, offline.msg)
	assert.Empty(t, h.Sent(CmdClosePopup))
	assert.Len(t, w.b.Tabs(), 2)

	h.Connected = true
	h.Close = func(_ *NativePage, _ int, answer func(string)) { answer(NativeCloseCanceled) }
	assert.Nil(t, w.announce(h, opener, "close-after-reconnect", signin), "the living window re-announces itself")
	require.Len(t, h.Sent(CmdClosePopup), 1, "the re-announcement retried the close")
	assert.Equal(t, opener.TabID, h.Sent(CmdClosePopup)[0].TabID)
	assert.Equal(t, "close-after-reconnect", h.Sent(CmdClosePopup)[0].ID)

	w.b.PageDialog(popup, Dialog{Type: "beforeunload", Message: "Leave this page?"}, nil)
	canceled := w.as("agent-a", OpClose, onTab(popup, nil))
	require.True(t, canceled.done)
	assert.Equal(t, ExecutionError, canceled.Outcome)
	assert.Nil(t, w.as("agent-a", OpStatus, onTab(popup, nil)).Dialog, "the veto drops the beforeunload dialog")
	assert.Len(t, w.b.Tabs(), 2)
	assert.Equal(t, "evaluated", w.evaluate("agent-a", popup, "evaluated").Value)

	h.Close = nil
	closed := w.managerClose(popup)
	require.True(t, closed.done)
	assert.Equal(t, OK, closed.outcome)
	assert.Len(t, h.Sent(CmdClosePopup), 3)
	assert.Len(t, w.b.NativePopups.Bindings, 1)
	assert.Equal(t, []string{opener.TabID}, w.sessionIDs())
}

// TestSBN46_VetoLostOfflineClearsIntentWithoutReplacing is SB-N46, upstream
// "a native veto lost offline clears pending close intent without replacing
// its popup": the host receives the close, vetoes it, and disconnects
// before its answer arrives: the close fails unavailable. On reconnect the
// popup is probed (present) and the very same close (its request id) is
// replayed; its veto clears the intent: the session stays as it was and
// usable. A re-announcement then sends nothing and binds nothing; another
// popup still opens; a deliberate close gets a fresh request id and, closed,
// ends the session.
func TestSBN46_VetoLostOfflineClearsIntentWithoutReplacing(t *testing.T) {
	w, h := nativeSB(t, "host-a", "work")
	opener := w.openRoot()
	popup := w.announce(h, opener, "veto-offline", signin)
	require.NotNil(t, popup)
	require.Equal(t, OK, w.evaluate("agent-a", popup, "ready").Outcome)
	owner := popup.Control.AgentID
	var vetoes []int
	h.Close = func(_ *NativePage, request int, answer func(string)) { vetoes = append(vetoes, request) }
	closing := w.managerClose(popup)
	require.Len(t, h.Sent(CmdClosePopup), 1)
	original := h.Sent(CmdClosePopup)[0]
	assert.False(t, closing.done, "the host has not answered")
	h.Disconnect()
	require.True(t, closing.done)
	assert.Equal(t, NativeCloseError, closing.outcome)
	assert.Equal(t, NativeCloseUnavailable, closing.msg)

	h.Close = func(_ *NativePage, _ int, answer func(string)) { answer(NativeCloseCanceled) }
	mark := len(h.Commands)
	w.b.ConnectNativeHost(h)
	var after []string
	for _, c := range h.Commands[mark:] {
		if c.Type == CmdProbePopup || c.Type == CmdClosePopup {
			after = append(after, c.Type)
		}
	}
	assert.Equal(t, []string{CmdProbePopup, CmdClosePopup}, after, "probe, then the replayed close")
	closes := h.Sent(CmdClosePopup)
	require.Len(t, closes, 2)
	assert.Equal(t, original, closes[1], "the same command, its original request id")
	assert.False(t, popup.Native.CloseRequested, "the veto cleared the intent")
	assert.Same(t, popup, w.b.Tab(sbThread, popup.TabID))
	assert.Equal(t, "desktop-popup", popup.BackingPage())
	assert.Equal(t, "host-a", popup.Native.Host.ID)
	assert.Equal(t, "work", popup.ProfileID)
	assert.Equal(t, owner, popup.Control.AgentID)
	assert.Equal(t, "evaluated", w.evaluate("agent-a", popup, "evaluated").Value)

	mark = len(h.Commands)
	assert.Nil(t, w.announce(h, opener, "veto-offline", signin))
	next := w.announce(h, opener, "next-owned-popup", signin)
	require.NotNil(t, next, "the following popup opens")
	for _, c := range h.Commands[mark:] {
		assert.NotEqual(t, "veto-offline", c.ID, "nothing sent for the re-announced popup: %s", c.Type)
	}
	n := 0
	for _, bnd := range w.b.NativePopups.Bindings {
		if bnd.PopupID == "veto-offline" {
			n++
		}
	}
	assert.Equal(t, 1, n)

	h.Close = nil
	explicit := w.managerClose(popup)
	require.True(t, explicit.done)
	assert.Equal(t, OK, explicit.outcome)
	fresh := h.Sent(CmdClosePopup)
	require.Len(t, fresh, 3)
	assert.NotEqual(t, original.Request, fresh[2].Request, "a deliberate close is a new request")
	w.b.NativePopupClosed(h, sbThread, opener.TabID, "veto-offline")
	assert.Nil(t, w.b.Tab(sbThread, popup.TabID))
	assert.Equal(t, []int{original.Request}, vetoes, "the first hook held the original close")
}

// TestSBN50_ReconnectReconcilesUnannouncedPopup is SB-N50, upstream
// "reconnect reconciles a retained unannounced popup without closing other
// identities (%s)" (absent, present, unavailable): no close was requested;
// another host's reconnect probes nothing; host-a's probes the popup; a
// popup announced during that probe opens and is not part of it. Absent
// ends the probed popup's session; present and unavailable keep it; the
// new popup stays with its profile and owner; nothing is closed and one
// probe was sent.
func TestSBN50_ReconnectReconcilesUnannouncedPopup(t *testing.T) {
	for _, presence := range []string{"absent", "present", "unavailable"} {
		t.Run(presence, func(t *testing.T) {
			w, h := nativeSB(t, "host-a", "work")
			other := w.b.AddNativeHost("other-host")
			opener := w.openRoot()
			popup := w.announce(h, opener, "ordinary-offline-close", signin)
			require.NotNil(t, popup)
			require.Equal(t, OK, w.evaluate("agent-a", popup, "ready").Outcome)
			var answer func(bool, string)
			h.Probe = func(p *NativePage, a func(bool, string)) {
				if p.Kind == NativePopup {
					answer = a
					return
				}
				a(p.Rendered, "")
			}
			w.b.ConnectNativeHost(other)
			assert.Empty(t, other.Sent(CmdProbePopup))
			w.b.ConnectNativeHost(h)
			require.NotNil(t, answer, "the probe entered")
			probes := h.Sent(CmdProbePopup)
			require.Len(t, probes, 1)
			assert.Equal(t, NativeCommand{Type: CmdProbePopup, ThreadID: sbThread, TabID: opener.TabID, ID: "ordinary-offline-close",
				Request: probes[0].Request}, probes[0])

			fresh := w.announce(h, opener, "new-during-probe", signin)
			require.NotNil(t, fresh)
			require.Equal(t, OK, w.evaluate("agent-a", fresh, "ready").Outcome)
			switch presence {
			case "absent":
				answer(false, "")
			case "present":
				answer(true, "")
			default:
				answer(false, NativeHostUnavailable)
			}
			w.run(time.Millisecond)
			assert.Equal(t, presence != "absent", w.b.Tab(sbThread, popup.TabID) != nil)
			kept := w.b.Tab(sbThread, fresh.TabID)
			require.NotNil(t, kept)
			assert.Equal(t, "work", kept.ProfileID)
			assert.Equal(t, popup.Control.AgentID, kept.Control.AgentID)
			assert.Empty(t, h.Sent(CmdClosePopup))
			assert.Len(t, h.Sent(CmdProbePopup), 1)
		})
	}
}

// TestSBN51_ReconnectResolvesPendingPopupClose is SB-N51, upstream "host
// reconnect resolves a pending popup close without a live popup
// announcement": a close while the host is unreachable fails and keeps both
// sessions; the window closes offline; the host's reconnect, with no
// announcement, probes it absent and the session goes; one binding, no
// close sent.
func TestSBN51_ReconnectResolvesPendingPopupClose(t *testing.T) {
	w, h := nativeSB(t, "local", "default")
	opener := w.openRoot()
	popup := w.announce(h, opener, "gone-while-offline", signin)
	require.NotNil(t, popup)
	require.Equal(t, OK, w.evaluate("agent-a", popup, "popupReady").Outcome)
	h.Disconnect()
	unavailable := w.managerClose(popup)
	require.True(t, unavailable.done)
	assert.Equal(t, NativeCloseError, unavailable.outcome)
	assert.Len(t, w.b.Tabs(), 2)
	popup.Native.Rendered = false // the window closed offline
	w.b.ConnectNativeHost(h)
	w.run(time.Millisecond)
	assert.Equal(t, []string{opener.TabID}, w.sessionIDs())
	assert.Len(t, w.b.NativePopups.Bindings, 1)
	assert.Empty(t, h.Sent(CmdClosePopup))
}

// TestSBN52_PopupLoadedBeforeAttachmentPublishesNavigation is SB-N52,
// upstream "a native popup loaded before attachment publishes its current
// navigation": the desktop loaded the popup's page while the server
// connected to it; once registered, the session reports Success with that
// URL and the page's title; the server navigated nothing (the desktop's
// own load is the page's only navigation).
func TestSBN52_PopupLoadedBeforeAttachmentPublishesNavigation(t *testing.T) {
	w, h := nativeSB(t, "local", "default")
	opener := w.openRoot()
	url := "https://signin.example.test/completed"
	loads := 0
	h.Setup = func(p *NativePage, done func()) {
		if p.Kind == NativePopup {
			loads++
			w.b.PageShows(p.Tab, url)
		}
		done()
	}
	w.published("")
	popup := w.announce(h, opener, "already-loaded", url)
	require.NotNil(t, popup)
	var success []SessionEvent
	for _, e := range w.published(popup.TabID) {
		if e.Type == EventNavigated && e.Status == "Success" {
			success = append(success, e)
		}
	}
	require.Len(t, success, 1)
	assert.Equal(t, SessionEvent{Type: EventNavigated, ThreadID: sbThread, TabID: popup.TabID, Status: "Success", URL: url,
		Title: "test page"}, success[0])
	assert.Equal(t, NavStatus{Tag: "Success", URL: url, Title: "test page"}, popup.Native.Nav)
	assert.Equal(t, 1, loads)
	assert.Zero(t, popup.Gotos)
}

// TestSBN53_SampleDoesNotOverwriteInterveningNavigation is SB-N53, upstream
// "sampling an attached popup does not overwrite intervening %s navigation"
// (Loading, LoadFailed): the popup's page loaded before it was attached;
// while the server reads its title for the sample, a navigation starts
// (Loading) or fails (LoadFailed); the stale title that then comes back
// reports nothing: the session keeps the newer status, and for LoadFailed
// the error page's load keeps it too.
func TestSBN53_SampleDoesNotOverwriteInterveningNavigation(t *testing.T) {
	for _, next := range []string{"Loading", "LoadFailed"} {
		t.Run(next, func(t *testing.T) {
			w, h := nativeSB(t, "local", "default")
			opener := w.openRoot()
			h.Setup = func(p *NativePage, done func()) {
				if p.Kind == NativePopup {
					w.b.PageShows(p.Tab, signin)
				}
				done()
			}
			w.published("")
			var titles []func(string)
			w.b.NativePopups.Title = func(_ *Tab, answer func(string)) { titles = append(titles, answer) }
			popup := w.announce(h, opener, "navigation-during-sample", signin)
			require.NotNil(t, popup)
			require.Len(t, titles, 1, "the sample is reading the title")
			if next == "Loading" {
				w.b.PageRequest(popup, signin)
			} else {
				w.b.PageRequestFailed(popup, signin, "net::ERR_CONNECTION_REFUSED")
			}
			titles[0]("stale title")
			events := w.published(popup.TabID)
			require.NotEmpty(t, events)
			last := events[len(events)-1]
			assert.Equal(t, next, last.Status, "the navigated or failed event")
			if next == "LoadFailed" {
				assert.Equal(t, EventFailed, last.Type)
			} else {
				assert.Equal(t, EventNavigated, last.Type)
			}
			assert.Equal(t, next, popup.Native.Nav.Tag, "the session's navStatus")
			for _, e := range events {
				assert.NotEqual(t, "Success", e.Status, "the stale sample published nothing")
			}
			if next == "LoadFailed" {
				w.b.PageLoad(popup)
				for _, answer := range titles[1:] {
					answer("error page")
				}
				assert.Equal(t, "LoadFailed", popup.Native.Nav.Tag, "the error page's load keeps the failure")
			}
		})
	}
}

// TestSBN54_PopupClosedDuringOpenerReconnectNoPhantom is SB-N54, upstream
// "a native popup closed during opener reconnect never creates a phantom
// tab": the opener's page was taken back and a viewer is reconnecting it;
// while that connection is held, a popup is announced and its window
// closes; once the opener is back, no popup session exists, nothing was
// bound or closed, and the thread has the opener's session only.
func TestSBN54_PopupClosedDuringOpenerReconnectNoPhantom(t *testing.T) {
	w, h := nativeSB(t, "local", "default")
	opener := w.openRoot()
	w.b.AttachViewer(opener, "viewer", false)
	w.b.DesktopWithdraw(opener)
	require.NotEmpty(t, tags(opener.Output("viewer"), "reconnect"))
	var release func()
	h.Setup = func(_ *NativePage, done func()) { release = done }
	connected := ""
	w.b.AttachViewerAsync(opener, "viewer", false, func(o string) { connected = o })
	require.NotNil(t, release, "the opener's reconnection is held")
	assert.Nil(t, w.announce(h, opener, "closed-before-source", signin), "the popup waits for its source")
	w.b.NativePopupClosed(h, sbThread, opener.TabID, "closed-before-source")
	h.Setup = nil
	release()
	w.run(time.Millisecond)
	require.Equal(t, OK, connected)
	assert.Equal(t, []TabStatus{{TabID: opener.TabID, ProfileID: "default"}}, w.as("agent-a", OpStatus, onTab(opener, nil)).Tabs)
	assert.Empty(t, w.b.NativePopups.Bindings)
	assert.Empty(t, h.Sent(CmdClosePopup))
	assert.Equal(t, []string{opener.TabID}, w.sessionIDs())
	assert.Equal(t, []string{opener.TabID}, w.b.NativeOpened(), "no popup was announced as opened")
}

// TestSBN57_IdleCloseVetoResetsDeadline is SB-N57, upstream "a native
// idle-close veto resets the deadline without blocking deliberate closure":
// the opener is watched, so only the popup can idle out; 31 minutes after
// its last use the sweep closes it and its page vetoes: one close; the veto
// restarted its idle time, so the next three sweeps close nothing; the
// popup still evaluates; the agent's close then goes through (two closes)
// and the session is gone.
func TestSBN57_IdleCloseVetoResetsDeadline(t *testing.T) {
	w, h := nativeSB(t, "local", "default")
	opener := w.openRoot()
	w.b.AttachViewer(opener, "watcher", false)
	popup := w.announce(h, opener, "idle-veto", signin)
	require.NotNil(t, popup)
	require.Equal(t, OK, w.evaluate("agent-a", popup, "ready").Outcome)
	h.Close = func(_ *NativePage, _ int, answer func(string)) { answer(NativeCloseCanceled) }
	w.run(31 * time.Minute)
	assert.Len(t, h.Sent(CmdClosePopup), 1, "the idle close, vetoed")
	w.run(3 * time.Minute)
	assert.Len(t, h.Sent(CmdClosePopup), 1, "the veto reset the idle deadline")
	assert.Equal(t, "evaluated", w.evaluate("agent-a", popup, "evaluated").Value)
	h.Close = nil
	closed := w.as("agent-a", OpClose, onTab(popup, nil))
	require.True(t, closed.done)
	assert.Equal(t, OK, closed.Outcome)
	assert.Len(t, h.Sent(CmdClosePopup), 2)
	assert.Nil(t, w.b.Tab(sbThread, popup.TabID))
	assert.Same(t, opener, w.b.Tab(sbThread, opener.TabID))
}

// TestSBN43_ManagedRemotePopupRetainsRouting is SB-N43, upstream "a managed
// remote native popup retains routing when its opener closes during %s"
// (desktop attachment, CDP setup): the opener, a remote desktop's tab,
// navigated to a managed local URL (prepared with its environment URL, the
// origin verified). Its popup, announced at the environment URL, is
// listed; while the popup's page is being attached (or its control
// session set up) the opener's page closes. The popup still registers on
// the remote host and keeps the opener's routing: the agent's navigation
// to the environment URL and the viewer's reload are each prepared with
// the local URL and exchange the credential in the popup's own context,
// on the environment origin.
func TestSBN43_ManagedRemotePopupRetainsRouting(t *testing.T) {
	for _, stage := range []string{"desktop attachment", "CDP setup"} {
		t.Run(stage, func(t *testing.T) {
			w := newHosted(t, "fixture-desktop")
			h := w.b.AddNativeHost("fixture-desktop")
			opener := w.blank()
			require.True(t, opener.Desktop)
			prepared := w.recording(func(in HostingInput) HostingAnswer {
				if origin(in.URL) == "http://localhost:5173" {
					return HostingAnswer{Managed: true, BootstrapToken: oneUse}
				}
				return HostingAnswer{}
			})
			localURL := "http://localhost:5173/qa/opener"
			require.Equal(t, OK, w.navigate(opener, localURL).Outcome)
			popupLocal := "http://localhost:5173/qa/popup?mode=two#popup"
			popupBrowser := remoteOf(popupLocal)
			var release func()
			h.Setup = func(p *NativePage, done func()) {
				w.b.PageShows(p.Tab, popupBrowser) // the desktop loaded the popup's URL
				if stage == "desktop attachment" {
					release = done
					return
				}
				done()
			}
			if stage == "CDP setup" {
				w.b.NativePopups.CDP = func(_ *NativePage, done func()) { release = done }
			}
			popup := w.announce(h, opener, "managed-native-popup", popupBrowser)
			require.NotNil(t, popup, "opened")
			require.NotNil(t, release, "the popup's %s entered", stage)
			w.b.PageClosed(opener)
			require.Nil(t, w.b.Tab(sbThread, opener.TabID), "the opener closed")
			release()
			w.run(time.Millisecond)
			require.True(t, popup.HasPage(), "the popup registered")
			assert.Equal(t, "fixture-desktop", popup.DesktopHostID)
			require.Equal(t, OK, w.navigate(popup, popupBrowser).Outcome)
			w.controller(popup)
			w.input(popup, "viewer", ViewerInput{Kind: InputNavigate, Method: MethodReload})
			w.run(time.Second)
			assert.Equal(t, popupBrowser, popup.URL)
			popupPrepared := HostingInput{ThreadID: sbThread, URL: popupLocal, BrowserURL: popupBrowser}
			assert.Equal(t, []HostingInput{{ThreadID: sbThread, URL: localURL, BrowserURL: remoteOf(localURL)},
				popupPrepared, popupPrepared}, *prepared)
			var posts []BrowserSessionExchange
			for _, e := range w.b.Exchanges {
				if e.TabID == popup.TabID {
					posts = append(posts, e)
				}
			}
			require.Len(t, posts, 2, "navigate and reload each exchanged in the popup's context")
			assert.Equal(t, "http://environment.example.test:5173/api/auth/browser-session", posts[1].URL)
			assert.Equal(t, oneUse, posts[1].Credential)
		})
	}
}
