package browser

import (
	"fmt"
	"strings"

	"github.com/orchsim/orchsim/sim"
)

// Native popups: child windows a native desktop page opens (window.open, a
// target=_blank link), which the desktop announces on its browser channel
// and the server turns into sessions of the opener's thread, driven over
// their own desktop connection (ServerBrowser.ts, index:70905931248:
// openNativePopup, createTab's desktop-popup branch, confirmNativePopupClosed,
// manager.open's desktopPopup close, closeIdleAgentTabs, the connectedHosts
// probe loop, reportLoaded(tab, true); the newest stored
// ServerBrowser.test.ts, index:70867653086, where its assertions need a
// newer version: an opener whose connection dropped is reconnected even
// when it is a desktop-root, which that source's session filter predates).
//
// This builds on the native page base (native.go): a popup is a NativePage
// of Kind NativePopup whose ID is the popupId and whose ThreadID and TabID
// are its opener's (the source key the channel announces it under); its
// published session is Tab.
//
//   - NativePopupCreated (the channel's popups stream): a popup already
//     known is not opened twice; if its close was requested it is closed
//     again (a re-announcement after reconnect retries it). A new one waits
//     for its opener's page (the tab, the opening in progress, or, for a
//     session whose connection dropped, a reconnection); an opener that is
//     no desktop page, on another host, closing or at its agent's tab limit
//     refuses it (the popup is closed, never listed), as does a popup that
//     closed meanwhile (then nothing is sent). Else the popup's session is
//     listed and announced: same thread, the opener's automation owner,
//     profile and desktop host, not revealed, backingPage desktop-popup,
//     the opener kept, and the opener's hosting routing (its verified
//     origins, copied: they outlive the opener, SB-N43);
//     then its page connects: bindPopup once (a bound child keeps its key
//     across reconnects), the desktop connection (Host.Setup), its control
//     session (NativePopups.CDP); a popup that closed during that setup is
//     never registered. The page registered samples its navigation: a page
//     that loaded before it was attached reports Success with its title,
//     unless a navigation started or failed while the title was read.
//   - NativePopupClosed (closedPopups): the window is gone, its session
//     goes; for a popup not yet listed, it is never listed.
//   - Closing (manager close, the agent's close, the idle sweep) sends
//     closePopup; the close intent holds until it is answered: closed
//     retires the session; close-canceled (the page's beforeunload kept it)
//     clears the intent, resets the idle deadline and drops the
//     beforeunload dialog; a host that cannot be reached, or whose answer
//     was lost, keeps the session and the intent. A popup is never
//     discarded offline (unlike a root): its window may live on.
//   - ConnectNativeHost probes every popup of the host: absent confirms it
//     closed; present with a close intent replays the close (the
//     outstanding request id, when its answer was lost); an unavailable
//     probe changes nothing; a popup announced during the probe is not
//     part of it.

// CmdBindPopup is the bindPopup channel command: the popup's server key
// (its own session's thread and tab), its popupId and opener tab.
const CmdBindPopup = "bindPopup"

// PopupBinding is one bindPopup call: the popup session's thread and tab,
// the host, the popupId and the opener's tab.
type PopupBinding struct {
	ThreadID, TabID, HostID, PopupID, OpenerTabID string
}

// NativePopups holds the hooks and records of native popups.
type NativePopups struct {
	// CDP is the popup page's control session setup (newCDPSession),
	// after its desktop connection (Host.Setup); done ends it. nil: at once.
	CDP func(p *NativePage, done func())
	// Title answers a read of t's page title; nil answers at once with the
	// host's Title ("test page" when that is "").
	Title func(t *Tab, answer func(title string))
	// Bindings are the bindPopup calls, in order.
	Bindings []PopupBinding

	state map[*NativePage]*nativeState
}

// nativeState is what the server keeps of a native page beyond the base:
// whether the popup was bound, and its navigation sequence (report's).
type nativeState struct {
	bound bool
	seq   int
}

func (b *ServerBrowser) nativeStateOf(p *NativePage) *nativeState {
	if b.NativePopups.state == nil {
		b.NativePopups.state = map[*NativePage]*nativeState{}
	}
	s := b.NativePopups.state[p]
	if s == nil {
		s = &nativeState{}
		b.NativePopups.state[p] = s
	}
	return s
}

// NativePopupOf returns the known popup (h, thread, opener tab, popupId)
// that is not retired, or nil (nativePopups' key).
func (b *ServerBrowser) NativePopupOf(h *NativeHost, threadID, openerTabID, popupID string) *NativePage {
	for _, p := range b.native.pages {
		if p.Kind == NativePopup && !p.Closed && p.Host == h && p.ThreadID == threadID && p.TabID == openerTabID && p.ID == popupID {
			return p
		}
	}
	return nil
}

// desktopHostOf is the id of the desktop host whose page backs t: a
// native page's host, a desktop-profile tab's DesktopHostID, or "local"
// for another desktop tab; ok is false for a headless tab.
func desktopHostOf(t *Tab) (id string, ok bool) {
	switch {
	case t.Native != nil:
		return t.Native.Host.ID, true
	case t.DesktopHostID != "":
		return t.DesktopHostID, true
	}
	return LocalDesktopHost, t.Desktop
}

// NativePopupCreated is host h announcing that the page of thread's tab
// openerTabID opened popup popupID at url (the channel's popups stream).
func (b *ServerBrowser) NativePopupCreated(h *NativeHost, threadID, openerTabID, popupID, url string) {
	if p := b.NativePopupOf(h, threadID, openerTabID, popupID); p != nil {
		b.env.Emit("desktop/"+h.ID, "native.popup-announce", "known", sim.A("thread", threadID), sim.A("tab", openerTabID),
			sim.A("close-requested", boolText(p.CloseRequested)))
		if p.CloseRequested {
			b.emitNative(p, "popup-close-retry", "")
			b.closePopup(p, "retry", func(string, string) {})
		}
		return
	}
	// The lifecycle is recorded before the opener is awaited: the window
	// can close while its source is still setting up.
	p := &NativePage{Kind: NativePopup, ID: popupID, Host: h, ThreadID: threadID, TabID: openerTabID, URL: url, Rendered: true}
	b.native.pages = append(b.native.pages, p)
	b.emitNative(p, "popup-announce", "new")
	opener := b.Tab(threadID, openerTabID)
	if opener == nil {
		b.refusePopup(p, "no-opener")
		return
	}
	if host, desktop := desktopHostOf(opener); !desktop || host != h.ID {
		// Only a desktop page of the announcing host is reconnected for it.
		b.refusePopup(p, "no-opener")
		return
	}
	b.ensurePage(opener, "popup", func(string) {
		switch {
		case p.Closed:
			b.refusePopup(p, "closed")
		case b.Tab(opener.ThreadID, opener.TabID) != opener || opener.pageless():
			b.refusePopup(p, "no-opener")
		case opener.Control.AgentID != "" && (b.nativeSessions(opener.ThreadID, opener.Control.AgentID) >= AgentTabLimit ||
			b.live() >= ServerTabLimit):
			b.refusePopup(p, "tab-limit")
		default:
			b.publishPopup(p, opener)
		}
	})
}

// refusePopup is a popup the server will not make a session of: its close
// is requested and, unless its window already closed, closePopup is sent.
func (b *ServerBrowser) refusePopup(p *NativePage, why string) {
	b.emitNative(p, "popup-refused", why)
	p.CloseRequested = true
	if !p.Closed {
		b.closePopup(p, "refused", func(string, string) {})
	}
}

// publishPopup lists and announces p's session (manager.open with
// desktopPopup) and connects its page (the opened event's ensureTab).
func (b *ServerBrowser) publishPopup(p *NativePage, opener *Tab) {
	b.nextTab++
	now := b.env.Now()
	t := &Tab{ThreadID: opener.ThreadID, TabID: fmt.Sprintf("tab_%d_%s", b.nextTab, b.epoch), CreatedAt: now, UsedAt: now,
		OpenerTabID: opener.TabID, Desktop: true, Viewport: UnattachedFillViewport, ProfileID: opener.ProfileID,
		Reveal: opener.Control.AgentID == "", page: pageNone, Native: p, DesktopHostID: p.Host.ID}
	t.Control = NewControl(opener.Control.AgentID, b.env.After)
	p.Tab, p.ProfileID = t, opener.ProfileID
	if opener.hosting != nil {
		// The popup keeps its opener's routing: the origins the opener
		// verified map its environment URLs back to their local ones, even
		// once the opener is gone.
		b.hostingOf(t).verified = append([]verifiedOrigin(nil), opener.hosting.verified...)
	}
	b.tabs = append(b.tabs, t)
	b.native.opened = append(b.native.opened, t.TabID)
	b.env.Emit(actor, "native.popup-published", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID),
		sim.A("opener", opener.TabID), sim.A("host", p.Host.ID))
	b.ensurePage(t, "opened", func(outcome string) {
		// ensureTab: a popup page that failed to start closes its session.
		if outcome != OK && !p.Closed {
			b.closePopup(p, "failed", func(string, string) {})
		}
	})
}

// connectPopup is createTab for a popup's session: bindPopup unless the
// popup is bound, the desktop connection, its control session; a popup
// that closed meanwhile is never registered (TabNotFound). A page
// registered samples its navigation.
func (b *ServerBrowser) connectPopup(t *Tab, by string, settle func(string)) {
	p := t.Native
	if p.Closed || !p.Host.Connected || !p.Rendered {
		t.page = pageNone
		settle(ErrRemoteUnavailable)
		return
	}
	st := b.nativeStateOf(p)
	if !st.bound {
		opener := p.TabID
		b.NativePopups.Bindings = append(b.NativePopups.Bindings,
			PopupBinding{ThreadID: t.ThreadID, TabID: t.TabID, HostID: p.Host.ID, PopupID: p.ID, OpenerTabID: opener})
		p.Host.send(NativeCommand{Type: CmdBindPopup, ThreadID: t.ThreadID, TabID: t.TabID, ID: p.ID})
	}
	gone := func() bool {
		if p.Closed || b.Tab(t.ThreadID, t.TabID) != t {
			b.emitNative(p, "popup-unregistered", "")
			return true
		}
		return false
	}
	b.setupNative(p, func() {
		if gone() {
			t.page = pageNone
			settle(TabNotFound)
			return
		}
		b.DesktopConnections++
		st.bound = true
		cdp := b.NativePopups.CDP
		if cdp == nil {
			cdp = func(_ *NativePage, done func()) { done() }
		}
		cdp(p, func() {
			if gone() {
				t.page = pageNone
				b.EndpointReleases++
				settle(TabNotFound)
				return
			}
			t.page = pageLive
			b.freshControl(t)
			t.nativePresented = p.Host.Presented[t.TabID]
			b.env.Emit(actor, "tab.connect", "native-popup", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID), sim.A("by", by))
			settle(OK)
			// The page may have loaded before its listeners existed.
			b.reportLoaded(t, true)
		})
	})
}

// closePopup sends p's close (closePopup) and handles its answer; done gets
// OK once the popup is retired, or NativeCloseError with its reason; by
// names why it closes, for the trace: idle (the sweep), retry (a
// re-announcement), reconnect (the host's probe), refused (no session was
// made of it), failed (its page did not start), "" (manager or agent). A
// close whose answer was lost keeps its request id, so the next close of
// the popup replays it; an answered one frees it.
func (b *ServerBrowser) closePopup(p *NativePage, by string, done func(outcome, reason string)) {
	if p.Closed {
		done(OK, "")
		return
	}
	p.CloseRequested = true
	h := p.Host
	if !h.Connected {
		b.emitNative(p, "close-lost", NativeHostUnavailable)
		done(NativeCloseError, NativeCloseUnavailable)
		return
	}
	if p.closeRequest == 0 {
		p.closeRequest = b.nextNativeRequest()
	}
	request := p.closeRequest
	h.send(b.command(p, CmdClosePopup, request))
	b.emitNative(p, "close", by)
	b.askClose(p, request, done, func(result string) {
		if result == NativeCloseCanceled {
			// The veto answered the page's beforeunload dialog.
			if t := p.Tab; t != nil && t.dialog != nil && t.dialog.Type == "beforeunload" {
				t.dialog = nil
				t.broadcastControl()
			}
			b.emitNative(p, "close-canceled", by)
			done(NativeCloseError, NativeCloseCanceledWhy)
			return
		}
		b.emitNative(p, "close-lost", result)
		done(NativeCloseError, NativeCloseUnavailable)
	})
}

// NativePopupClosed is host h reporting that popup popupID of thread's tab
// openerTabID closed (closedPopups): its session goes; a popup not yet
// listed never will be.
func (b *ServerBrowser) NativePopupClosed(h *NativeHost, threadID, openerTabID, popupID string) {
	if p := b.NativePopupOf(h, threadID, openerTabID, popupID); p != nil {
		p.Rendered = false
		b.confirmNativeClosed(p)
	}
}

// sweepPopups is closeIdleAgentTabs for native popups: an agent's popup
// with its page that nobody watches and no agent request used for
// AgentTabIdle is closed through the manager (its close may be vetoed).
func (b *ServerBrowser) sweepPopups() {
	now := b.env.Now()
	var idle []*Tab
	for _, t := range b.tabs {
		if t.Native != nil && t.Native.Kind == NativePopup && t.Control.AgentID != "" && !t.Watched() &&
			!t.pageless() && now-t.UsedAt > AgentTabIdle {
			idle = append(idle, t)
		}
	}
	for _, t := range idle {
		b.env.Emit(actor, "tab.idle-close", "native-popup", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
		b.closePopup(t.Native, "idle", func(string, string) {})
	}
}

// isNativePopup reports whether t is a native popup's session.
func (t *Tab) isNativePopup() bool { return t.Native != nil && t.Native.Kind == NativePopup }

// reportNative is report for a navigation status s of t: a native page's
// session takes it (Nav) and its sequence moves on, so a sample in
// progress no longer owns the status; a load failure is published as
// failed and a loaded page as navigated (a started navigation is
// published by navigationStarted).
func (b *ServerBrowser) reportNative(t *Tab, s NavStatus) {
	if t.Native != nil {
		b.nativeStateOf(t.Native).seq++
		t.Native.Nav = s
		b.env.Emit(actor, "native.nav", s.Tag, sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
	}
	e := SessionEvent{Type: EventNavigated, ThreadID: t.ThreadID, TabID: t.TabID, Status: s.Tag, URL: s.URL,
		Code: s.Code, Description: s.Description, Title: s.Title}
	switch s.Tag {
	case "LoadFailed":
		e.Type = EventFailed
	case "Loading":
		return
	}
	b.publish(e)
}

// reportLoaded is reportLoaded: a native page that shows a page (not
// blank, not the error page) reports Success with its title, unless,
// while the title was read, the page started or failed a navigation, moved
// to another URL or closed. sample is the first read of a page that may
// have loaded before its listeners existed: a page still loading reports
// nothing then.
func (b *ServerBrowser) reportLoaded(t *Tab, sample bool) {
	url := t.URL
	if t.Native == nil || url == "" || url == "about:blank" || strings.HasPrefix(url, "chrome-error://") {
		return
	}
	if sample && t.Loading {
		return
	}
	st := b.nativeStateOf(t.Native)
	seq := st.seq
	read := b.NativePopups.Title
	if read == nil {
		read = func(t *Tab, answer func(string)) { answer(t.Native.Host.Title) }
	}
	read(t, func(title string) {
		if title == "" {
			title = "test page"
		}
		if b.Tab(t.ThreadID, t.TabID) != t || t.pageless() || t.Loading || t.loadErr != nil || st.seq != seq || t.URL != url {
			b.env.Emit(actor, "native.nav", "superseded", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
			return
		}
		b.reportNative(t, NavStatus{Tag: "Success", URL: cut(url, 2048), Title: cut(title, 512)})
	})
}

// PageLoad is the page's load event: it is no longer loading and, for a
// native page, reports what it shows (reportLoaded).
func (b *ServerBrowser) PageLoad(t *Tab) {
	t.Loading = false
	b.reportLoaded(t, false)
}
