package browser

import (
	"fmt"

	"github.com/orchsim/orchsim/sim"
)

// Native desktop pages: pages the desktop app creates and announces over
// its browser channel, which the server then drives (the newest stored
// ServerBrowser.test.ts, index:70867653086, its channel mock and its real
// DesktopBrowserChannel cases; the stored ServerBrowser.ts,
// index:70905931248, has the popup half of it: openNativePopup,
// confirmNativePopupClosed, the connectedHosts probe loop, isPresented).
//
// This file is the BASE every kind of native page shares; native_root.go
// (roots the server asks the desktop for) and the popup files build on it.
// What the base offers:
//
//   - NativePage: the page's identity (Kind, ID, Host, ThreadID, TabID),
//     its published session (Tab, nil until published and after close),
//     whether its window exists (Rendered), its close intent
//     (CloseRequested plus the outstanding close request id), Closed, and
//     the navigation it reported before publication (Nav).
//   - NativeHost (native_host.go): the desktop on the channel: Connected,
//     Presented, answer hooks (Create, Setup, Accept, Publish, Close,
//     Probe), the commands it was sent (Commands, Sent, SentIDs), and
//     Disconnect (every answer still due fails host-unavailable).
//   - ServerBrowser.AddNativeHost / NativePages / NativeOf.
//   - closeNative (native_close.go): a close with intent: an unreachable
//     page (host offline, or its window gone) is discarded at once and its
//     session retired; a reachable one gets a close command whose answer
//     retires it (closed), clears the intent (close-canceled, a veto) or
//     keeps the intent for the reconnect (host-unavailable).
//   - ConnectNativeHost (native_close.go): host reconnect reconciliation:
//     published roots are published again, reconcileRoots tells the host
//     which creations the server still holds, and pages that need it are
//     probed: absent confirms the close (the session goes, its capacity is
//     freed), present replays an outstanding close with its original
//     request id, unavailable changes nothing. needsProbe is per kind.
//   - confirmNativeClosed: the page's window is gone: the session goes.
//   - Presentation: NativePresentation (the host's presentation changed)
//     and status's nativePresented, visible and streamViewers.

// NativeKind is what created a native page.
type NativeKind int

const (
	// NativeRoot is a root the server asked the desktop to create
	// (backingPage "desktop-root", desktopRootId).
	NativeRoot NativeKind = iota
	// NativePopup is a child window a native page opened (backingPage
	// "desktop-popup", desktopPopupId).
	NativePopup
)

func (k NativeKind) String() string {
	if k == NativePopup {
		return "popup"
	}
	return "root"
}

// NavStatus is a session's PreviewNavStatus: Tag Success, Loading or
// LoadFailed, with the URL, the title and, for LoadFailed, the Chromium
// code and description.
type NavStatus struct {
	Tag         string
	URL         string
	Title       string
	Code        int
	Description string
}

// NativePage is one native page. See the file comment for what each part
// is for.
type NativePage struct {
	Kind NativeKind
	// ID is the rootId or popupId the desktop knows the page by.
	ID   string
	Host *NativeHost
	// ThreadID and TabID are the page's channel key: a root's own tab, a
	// popup's opener tab.
	ThreadID, TabID string
	// Tab is the published session (nil before publication and once the
	// page is closed).
	Tab *Tab
	// URL and ProfileID are what the page was created with.
	URL, ProfileID string
	// Rendered: the host still has the page's window (the mock's
	// desktopTabs); a probe of an unrendered page answers absent.
	Rendered bool
	// CloseRequested is the close intent: a close was sent and neither
	// answered closed nor vetoed.
	CloseRequested bool
	// Closed: the page is retired (closed, confirmed gone, discarded or
	// failed before publication).
	Closed bool
	// Nav is the navigation the page reported (kept from before
	// publication).
	Nav NavStatus

	creating     bool // a root's creation is in progress
	canceled     bool // its open gave up (timeout); the late page is discarded
	creation     int  // the createRoot request id
	closeRequest int  // the outstanding close's request id (0: none)
	pending      *Tab // a root's tab before publication
}

// nativeRegistry is the server's native pages and the hosts it knows.
type nativeRegistry struct {
	hosts   []*NativeHost
	pages   []*NativePage
	request int
	// opened are the sessions announced (the manager's "opened" events
	// for native pages), by tab id, in order.
	opened []string
}

// AddNativeHost returns the connected host id, registering it.
func (b *ServerBrowser) AddNativeHost(id string) *NativeHost {
	h := &NativeHost{ID: id, Connected: true, Presented: map[string]bool{}, b: b}
	b.native.hosts = append(b.native.hosts, h)
	return h
}

// NativeHosts returns the hosts added, in order.
func (b *ServerBrowser) NativeHosts() []*NativeHost { return b.native.hosts }

// NativePages returns the native pages, retired ones included, in creation
// order.
func (b *ServerBrowser) NativePages() []*NativePage { return b.native.pages }

// NativeOpened returns the tab ids of the native sessions announced as
// opened, in order.
func (b *ServerBrowser) NativeOpened() []string { return b.native.opened }

// NativeOf returns the native page of t, or nil.
func (b *ServerBrowser) NativeOf(t *Tab) *NativePage {
	if t == nil {
		return nil
	}
	return t.Native
}

// BackingPage is the session snapshot's backingPage: desktop-root,
// desktop-popup, desktop (a desktop-rendered page) or server (headless).
func (t *Tab) BackingPage() string {
	switch {
	case t.Native != nil && t.Native.Kind == NativeRoot:
		return "desktop-root"
	case t.Native != nil:
		return "desktop-popup"
	case t.Desktop:
		return "desktop"
	}
	return "server"
}

func (b *ServerBrowser) nextNativeRequest() int {
	b.native.request++
	return b.native.request
}

func (b *ServerBrowser) emitNative(p *NativePage, what, outcome string) {
	b.env.Emit(actor, "native."+what, outcome, sim.A("thread", p.ThreadID), sim.A("tab", p.TabID),
		sim.A("kind", p.Kind.String()), sim.A("host", p.Host.ID))
}

func (b *ServerBrowser) command(p *NativePage, typ string, request int) NativeCommand {
	return NativeCommand{Type: typ, ThreadID: p.ThreadID, TabID: p.TabID, ID: p.ID, Request: request}
}

// confirmNativeClosed is nativeClosedConfirmed: the page's window is gone,
// so its session goes (its connection let go) and its capacity is freed.
func (b *ServerBrowser) confirmNativeClosed(p *NativePage) {
	if p.Closed {
		return
	}
	p.Closed, p.CloseRequested, p.closeRequest = true, false, 0
	t := p.Tab
	p.Tab = nil
	b.emitNative(p, "closed", "")
	b.settleIntent(p)
	if t == nil || b.Tab(t.ThreadID, t.TabID) != t {
		return
	}
	if !t.pageless() {
		t.DesktopEndpoint = false
		b.EndpointReleases++
	}
	b.remove(t)
}

// NativePresentation is the host's presentation of tabID changing (the
// channel's presentations stream): a registered page takes the host's
// current state; a page still connecting samples it when it registers.
func (b *ServerBrowser) NativePresentation(h *NativeHost, tabID string) {
	for _, p := range b.native.pages {
		if p.Host == h && p.Tab != nil && p.Tab.TabID == tabID && !p.Tab.pageless() {
			p.Tab.nativePresented = h.Presented[tabID]
		}
	}
}

// nativeStatus fills status's presentation of a native page's tab:
// nativePresented is the host's (isPresented, read as status is built),
// visible is presented or streamed, streamViewers the viewers.
func (b *ServerBrowser) nativeStatus(t *Tab, res *Result) {
	if t.Native == nil {
		return
	}
	t.nativePresented = t.Native.Host.Presented[t.TabID]
	res.NativePresented = t.nativePresented
	res.StreamViewers = len(t.Viewers)
	res.Visible = t.nativePresented || len(t.Viewers) > 0
}

// nativeSessions counts the agent's sessions of thread for the tab limit:
// its live tabs and its published native roots whose connection dropped
// (their windows may be alive); a root that failed or was discarded
// counts no more.
func (b *ServerBrowser) nativeSessions(threadID, key string) int {
	n := 0
	for _, t := range b.threadTabs(threadID) {
		if t.Control.AgentID == key && (!t.pageless() || t.Native != nil) {
			n++
		}
	}
	return n
}

// TabLimitMessage is assertTabCapacity's refusal text (ServerBrowser.ts,
// index:70905931248).
var TabLimitMessage = fmt.Sprintf("Too many server browser tabs are open (%d per agent session, %d per server). "+
	"Close one with t3_preview_close or reuse one from preview_status tabs.", AgentTabLimit, ServerTabLimit)

// MsgAnotherSession is requireTab's agentMismatch text in the newer
// version (ServerBrowser.ts, index:70905931248).
const MsgAnotherSession = "This tab belongs to another agent session. You can read it, but open your own tab to act."
