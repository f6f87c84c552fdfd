package browser

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

// Constants from ServerBrowser.ts (164d7dbe) and the #23021 report.
const (
	// AgentTabLimit is AGENT_TAB_LIMIT: tabs per agent-session (owner) key.
	AgentTabLimit = 8
	// ServerTabLimit is SERVER_TAB_LIMIT: tabs per server.
	ServerTabLimit = 32
	// AgentTabIdle is AGENT_TAB_IDLE_MS: an unwatched agent tab closes after
	// this long without an agent request.
	AgentTabIdle = 30 * time.Minute
	// IdleSweepInterval is IDLE_SWEEP_INTERVAL: the sweep period.
	IdleSweepInterval = time.Minute
	// DesktopAttachTimeout is DESKTOP_ATTACH_TIMEOUT: how long a new tab
	// waits for the desktop app's webview before going headless.
	DesktopAttachTimeout = 10 * time.Second
)

// Mutants of the preview host: deliberately wrong "fixes" the invariants
// must catch.
const (
	// HumanControlIgnored lets agent work run while a human controls the tab.
	HumanControlIgnored model.Mutant = "human-control-ignored"
	// SweepIgnoresViewers lets the idle sweep close watched and
	// desktop-rendered tabs.
	SweepIgnoresViewers model.Mutant = "sweep-ignores-viewers"
)

func init() {
	model.RegisterMutant(model.MutantInfo{Name: HumanControlIgnored, Group: catalog.PreviewTab,
		Doc:        "agent work runs on a tab while a human viewer controls it",
		Scenario:   "tab-ownership",
		Invariants: []string{"human-control-exclusive"}})
	model.RegisterMutant(model.MutantInfo{Name: SweepIgnoresViewers, Group: catalog.PreviewTab,
		Doc:        "the idle sweep also closes watched and desktop-rendered agent tabs",
		Scenario:   "tab-ownership",
		Invariants: []string{"sweep-spares-watched-tabs"}})
}

// RegainTab is the liveness obligation a thread opens when it is refused on
// its own agent tab: it must be able to act on that tab again (or the tab
// closes) before the heal phase ends.
const RegainTab = "thread-regains-its-tabs"

func init() {
	sim.DeclareObligation(sim.ObligationInfo{Name: RegainTab, Group: string(catalog.PreviewTab),
		Property: "a thread refused on its own agent tab can act on it again, or the tab closes",
		Source:   "seed report 000_993d1fdfc50e8ec7 (t3code#23021)"})
}

// TabEntity names a tab in the obligation ledger.
func TabEntity(threadID, tabID string) string { return "thread " + threadID + " tab " + tabID }

// Preview operations the tools send.
const (
	OpOpen     = "open"
	OpNavigate = "navigate"
	OpClick    = "click"
	OpSnapshot = "snapshot"
	OpClose    = "close"
	// OpStatus and OpEvaluate are used by the fidelity cases (FIDELITY.md
	// §2); the worlds' agents do not send them.
	OpStatus   = "status"
	OpEvaluate = "evaluate"
	// OpType and OpPress are the agent's keyboard input (preview_type,
	// preview_press).
	OpType  = "type"
	OpPress = "press"
)

// SharedKeyboardMessage is the execution error an agent's type or press on
// a shared desktop page (Tab.Shared) answers. Upstream's exact text is in
// no stored ServerBrowser.ts (the stored one, 164d7dbe, predates shared
// native pages); the newest stored test file (index:70867653086, "shared
// native pages reject agent keyboard input while allowing a controlling
// viewer") requires it to name preview_open({reuseExistingTab:false}) and
// the returned tabId, which this text does.
const SharedKeyboardMessage = "This tab is shared with a person's desktop panel, so agent keyboard input is refused. " +
	"Open your own tab with preview_open({reuseExistingTab:false}) and pass its returned tabId."

// IsRead reports whether op only reads (status, snapshot, waitFor, ping).
func IsRead(op string) bool { return op == OpSnapshot || op == OpStatus }

// More constants of ServerBrowser.ts (164d7dbe).
const (
	// NavigationTimeout is NAVIGATION_TIMEOUT_MS: the page default timeout,
	// and the timeout of a viewer's navigation (wait-until "commit").
	NavigationTimeout = 15 * time.Second
	// ReadinessNone is navigate's readiness "none": answer once the
	// navigation has started; its commit is tracked by the tab's control.
	ReadinessNone = "none"
	// InvalidSelector is PreviewAutomationInvalidSelectorError (a stale or
	// unknown element ref).
	InvalidSelector = "InvalidSelectorError"
	// Ignored is what a refused viewer input (read-only viewer, resize of a
	// desktop page) amounts to: nothing.
	Ignored = "ignored"
)

// UnattachedFillViewport is UNATTACHED_FILL_VIEWPORT, the viewport of a
// headless page no operating viewer sized.
var UnattachedFillViewport = Viewport{Width: 1280, Height: 800}

// Viewport is a page viewport in CSS pixels.
type Viewport struct{ Width, Height int }

// Tab is one ServerTab.
type Tab struct {
	ThreadID  string
	TabID     string
	Control   *Control
	CreatedAt time.Duration
	UsedAt    time.Duration
	Viewers   []string
	Desktop   bool // the desktop app renders the page (exempt from the sweep)
	URL       string

	// OpenerTabID is the tab whose page opened this one (a popup).
	OpenerTabID string
	// ProfileID is the session's browser profile ("" for none: no client
	// reported profiles); a popup keeps its opener's. Context is what its
	// headless page asked the browser contexts for (zero for a desktop page).
	ProfileID string
	Context   ContextRequest
	// Reveal is the manager session's reveal flag (false for agent tabs).
	Reveal bool
	// Viewport is the page viewport (UnattachedFillViewport until an
	// operating viewer resizes a headless page).
	Viewport Viewport
	// Page lists what happened on the page, in order (navigation committed,
	// agent acted, human typed, ...), for the fidelity cases.
	Page []string
	// LastViewerNavigation is how the last viewer navigation was issued.
	LastViewerNavigation ViewerNavigation
	// DesktopEndpoint: a viewer stream is connected to the desktop's own
	// page; DesktopPageClosed: the desktop closed that page.
	DesktopEndpoint   bool
	DesktopPageClosed bool
	// Shared: a desktop page shown in a person's panel that the preview
	// manager opened with an automation owner (OpenShared; backingPage
	// "desktop"): its agent may read and navigate it but not type into it.
	Shared bool
	// DesktopHostID is the desktop host whose page backs the tab, for a
	// tab opened from a desktop profile catalogue ("" otherwise;
	// desktopprofiles.go). GotoURLs are the URLs agent opens and
	// navigations sent the page (page.goto), in order.
	DesktopHostID string
	GotoURLs      []string
	// Native is the native desktop page behind the session (native.go),
	// or nil.
	Native          *NativePage
	nativePresented bool

	// Loading: a main-frame navigation is in progress.
	Loading bool
	// Downloads are the tab's finished downloads, newest last.
	Downloads []Download
	// Uploads are the files set on the page, in order.
	Uploads []Upload
	// DialogAnswers are the pending dialogs' answers (accept true), in order.
	DialogAnswers []bool
	// TitleReads counts status reads of the page title (skipped while a
	// dialog is pending); Gotos counts agent navigations issued.
	TitleReads int
	Gotos      int
	// Clicks counts agent clicks that reached the page.
	Clicks int

	readOnly    []string
	refs        []elementRef
	nextRef     int
	inflight    []*inflightAction
	queues      []*viewerQueue
	ended       []*viewerQueue
	dialog      *pendingDialog
	fileChooser *openChooser
	// loadErr is the latest main-frame navigation's failure; loadSeen is
	// false until the server saw a navigation at all (undefined upstream).
	loadErr       *LoadError
	loadSeen      bool
	requestURL    string // the main-frame navigation the tab tracks
	page          pageState
	opening       []func(string)
	closedPending bool
	hosting       *tabHosting // preview hosting state (hosting.go)
	surf          *TabSurface // the newest version's surfaces (Surfaces)
}

// inflightAction is an agent action in progress on the page, ended early
// (closed) if the tab closes under it.
type inflightAction struct{ end func(outcome string) }

// ViewerNavigation is how a viewer's navigation is issued to the page.
type ViewerNavigation struct {
	Method    string
	WaitUntil string
	Timeout   time.Duration
}

type elementRef struct {
	ref   string
	epoch int
}

// CanOperate reports whether viewer may operate the tab (attached without
// canOperate: read-only).
func (t *Tab) CanOperate(viewer string) bool {
	for _, v := range t.readOnly {
		if v == viewer {
			return false
		}
	}
	for _, v := range t.Viewers {
		if v == viewer {
			return true
		}
	}
	return false
}

func (t *Tab) log(what string) { t.Page = append(t.Page, what) }

// Watched reports whether a viewer streams the tab.
func (t *Tab) Watched() bool { return len(t.Viewers) > 0 }

// Request is what the broker sends the host.
type Request struct {
	ThreadID       string // from the caller's credential, never from arguments
	TabID          string // explicit tab id, or ""
	AgentSessionID string // the owner key
	Op             string
	URL            string
	// ReuseExistingTab is open's reuseExistingTab (default true).
	ReuseExistingTab bool
	// Readiness is navigate's readiness ("" or ReadinessNone).
	Readiness string
	// Ref is click's element ref from a snapshot ("" for none).
	Ref string
	// Value is what evaluate's script evaluates to.
	Value string
	// Hold is how long the page takes for evaluate or a navigation to
	// commit (set by harnesses; 0 draws the usual action time).
	Hold time.Duration
	// Dialog, for evaluate or click: the page opens this dialog when the
	// action runs, and the action waits for it to be resolved.
	Dialog *Dialog
	// Box, for click: the target element's bounding box (the agent's
	// pointer glides to its centre).
	Box *Box
	// Accept is dialog's accept (false dismisses).
	Accept bool
	// Paths and Locator are upload's files and file input.
	Paths   []string
	Locator string
	// LoadFailure, for navigate: the page's main-frame request fails with
	// this Chromium error text.
	LoadFailure string
	// ProfileID is open's profileId: a reported profile's id or name (any
	// case); "" picks the reported default.
	ProfileID string
	// ProfileName is openWithProfile's profileName (an exact name).
	ProfileName string
	// Timeout is the broker's timeoutMs (0: none): a native root open
	// answers ErrTimeout at Timeout (native_root.go), a hosted navigation
	// at handleRequest's deadline (hostDeadline; hosting_nav.go). Cancel, if set, is the
	// caller's interruption (its fiber interrupted) of a hosted navigation.
	Timeout time.Duration
	Cancel  *Signal
	SurfaceRequest
}

// Result is the host's answer.
type Result struct {
	Outcome string // OK or a reason
	TabID   string
	// TabThread is the thread of the tab the request resolved to, if any.
	TabThread string
	// Owner is the owner key of that tab.
	Owner string
	// Available is navigate's result with readiness none: the page is
	// available before the navigation commits.
	Available bool
	// Ref is a snapshot's element ref; Value evaluate's result.
	Ref   string
	Value string
	// Tabs is status's list of the thread's tabs the caller may see.
	Tabs []TabStatus
	// Message is a refusal's or an execution error's text.
	Message string
	// Status and snapshot: the pending dialog, the open file picker, the
	// finished downloads and why the page failed to load (nil: none).
	Dialog      *Dialog
	FileChooser *FileChooser
	Downloads   []Download
	LoadError   *LoadError
	// Profiles and DefaultProfileID are open's and status's profile
	// catalogue (profileStatus): the built-ins and no default id until a
	// client reports profiles.
	Profiles         []BrowserProfile
	DefaultProfileID string
	// URL is the page's URL after a hosted navigation or open.
	URL string
	// ProfileID and ProfileName are the tab's profile and its name in its
	// desktop's catalogue (catalogue opens and status of such a tab);
	// Detail the refusal's detail reason (tab-mismatch, unknown,
	// ambiguous, root-unsupported); Control the tab's control as status
	// reports it under VersionIndex70905931248 (desktopprofiles.go,
	// threadtabs.go).
	ProfileID   string
	ProfileName string
	Detail      string
	Control     *ControlStatus
	// NativePresented, Visible and StreamViewers are status's presentation
	// of a native page's tab (native.go): the host shows it in a native
	// slot; it is presented or streamed; how many viewers stream it.
	NativePresented bool
	Visible         bool
	StreamViewers   int
	SurfaceResult
}

// TabStatus is one tab in a status result.
type TabStatus struct {
	TabID       string
	OpenerTabID string
	URL         string
	ProfileID   string
	// Owner (human, agent or unclaimed), OwnedByCaller and Visible (a
	// streamed viewer attached) are set under VersionIndex70905931248
	// (threadtabs.go) and by the native status of a thread with no live
	// tab (native_close.go).
	Owner         string
	OwnedByCaller bool
	Visible       bool
}

// ServerBrowser is the in-process browser host (preferred host).
type ServerBrowser struct {
	env   *model.Env
	rand  *sim.Rand
	epoch string
	tabs  []*Tab
	// byThread groups tabs by thread, in tabs' order: tabs[:grouped] are
	// in it, later ones join on the next threadTabs (tabs are appended in
	// many places; dropTab takes a grouped tab out). Looked up only.
	byThread map[string][]*Tab
	grouped  int
	nextTab  int
	sweep    sim.Timer
	dead     bool
	// DesktopFor says whether the desktop app will render a new tab of
	// thread, and after how long it attaches (<= DesktopAttachTimeout).
	DesktopFor func(threadID string) (bool, time.Duration)
	// ContextLaunch says whether launching a session's headless context
	// succeeds and how long it takes (nil: at once). Used by OpenSession
	// and by a session whose page is gone.
	ContextLaunch func(threadID, tabID string) (ok bool, after time.Duration)
	// DesktopLoadFailure is the desktop channel's loadFailure: a desktop
	// tab's load failure from before the server connected (nil: none).
	DesktopLoadFailure func(threadID, tabID string) *LoadError
	// DialogFor, in the worlds, says which dialog (if any) an agent's
	// click opens; the click's queue slot is held until it is resolved.
	DialogFor func(threadID, tabID string) *Dialog
	// NavigationFailure, in the worlds, says which Chromium error (if
	// any) an agent's navigation fails with.
	NavigationFailure func(threadID, tabID string) string
	// ViewerReconnect: viewers told to reconnect attach again after
	// ViewerReconnectDelay (the web client's behaviour).
	ViewerReconnect bool
	// ProfileFor, in the worlds, is the profile (an id or a name) an
	// agent's open names when the request names none (nil: none). With it
	// set, opens trace the context a new headless page asks for
	// (tab.context) and refused profiles (tab.profile-unknown).
	ProfileFor func(threadID string) string
	// OnRender, in the worlds, hears that the desktop app now renders t.
	OnRender func(t *Tab)
	// ContextsLaunched, PagesClosed, DesktopConnections and
	// EndpointReleases count headless contexts launched, pages discarded
	// after their session closed, connections to a desktop page and the
	// desktop endpoints let go.
	ContextsLaunched   int
	PagesClosed        int
	DesktopConnections int
	EndpointReleases   int

	nextDownload, nextChooser, pointerSeq int
	// reported is the latest profile catalogue a client reported (nil:
	// none; ReportProfiles).
	reported *reportedProfiles
	// HostingHooks: preview hosting (hosting.go); nil Hosting keeps
	// 164d7dbe's navigation.
	HostingHooks

	// Version is the ServerBrowser.ts version the host follows
	// (version.go; zero: 164d7dbe). Desktops is the desktop browser
	// channel's profile side (nil: none modelled; desktopprofiles.go).
	// Events, when set, records the preview manager's published session
	// events (sessionevents.go).
	Version  Version
	Desktops *DesktopChannel
	Events   *SessionEvents
	nav      map[*Tab]*navTrack
	// NativeRootFor is the desktop an agent's new tab of thread opens on
	// as a native root (the desktop channel's profile catalogue for the
	// caller, supporting native roots) and its profile; a nil host opens
	// as before (native_root.go).
	NativeRootFor func(threadID string) (host *NativeHost, profileID string)
	native        nativeRegistry
	// NativePopups holds the native popups' hooks and records
	// (native_popup.go).
	NativePopups NativePopups
	// Surfaces turns on the newest stored version's native surfaces,
	// captures, recordings and viewport sizing (surface.go); nil keeps
	// 164d7dbe's behaviour.
	Surfaces *Surfaces
}

const actor = "server-browser"

// NewServerBrowser starts the host of server process incarnation with a
// fresh serverEpoch and its idle sweep. The epoch is random upstream (a
// UUID); here it also carries the incarnation, so tab ids of different
// processes never collide even when draws repeat.
func NewServerBrowser(env *model.Env, incarnation int) *ServerBrowser {
	b := &ServerBrowser{env: env, rand: env.Rand(actor)}
	b.epoch = fmt.Sprintf("%d%s", incarnation, b.rand.Hex("server-epoch", 3))
	b.sweep = env.Clock.AfterFunc(IdleSweepInterval, b.onSweep)
	return b
}

// Kill stops a host whose server process died; its tabs die with it.
func (b *ServerBrowser) Kill() {
	b.dead = true
	b.sweep.Stop()
	b.killNative()
	for _, t := range b.tabs {
		t.Control.Close()
		b.env.Obligations.Discharge(RegainTab, TabEntity(t.ThreadID, t.TabID))
	}
	b.tabs, b.byThread, b.grouped = nil, nil, 0
}

// Tabs returns the open tabs in creation order.
func (b *ServerBrowser) Tabs() []*Tab { return b.tabs }

// ThreadTabs returns the open tabs of threadID in creation order: those of
// Tabs whose ThreadID is threadID (a world of 1,000 threads has thousands
// of tabs). The slice is the browser's: read it before the tabs change.
func (b *ServerBrowser) ThreadTabs(threadID string) []*Tab { return b.threadTabs(threadID) }

func (b *ServerBrowser) threadTabs(threadID string) []*Tab {
	for ; b.grouped < len(b.tabs); b.grouped++ {
		t := b.tabs[b.grouped]
		if b.byThread == nil {
			b.byThread = map[string][]*Tab{}
		}
		b.byThread[t.ThreadID] = append(b.byThread[t.ThreadID], t)
	}
	return b.byThread[threadID]
}

// dropTab removes tabs[i], from its thread's group too.
func (b *ServerBrowser) dropTab(i int) {
	t := b.tabs[i]
	b.tabs = append(b.tabs[:i], b.tabs[i+1:]...)
	if i < b.grouped {
		b.grouped--
		g := b.byThread[t.ThreadID]
		if j := slices.Index(g, t); j >= 0 {
			b.byThread[t.ThreadID] = slices.Delete(g, j, j+1)
		}
	}
}

// Tab returns the tab (threadID, tabID), or nil.
func (b *ServerBrowser) Tab(threadID, tabID string) *Tab {
	for _, t := range b.threadTabs(threadID) {
		if t.TabID == tabID {
			return t
		}
	}
	return nil
}

func (b *ServerBrowser) tabByID(tabID string) *Tab {
	for _, t := range b.tabs {
		if t.TabID == tabID {
			return t
		}
	}
	return nil
}

func (b *ServerBrowser) onSweep() {
	if b.dead {
		return
	}
	b.sweepIdle()
	b.sweep.Reset(IdleSweepInterval)
}

// sweepIdle drops agent tabs that nobody watches, the desktop does not
// render, and no agent request used for AgentTabIdle.
func (b *ServerBrowser) sweepIdle() {
	b.sweepPopups()
	now := b.env.Now()
	ignoresViewers := b.env.Profile.Has(SweepIgnoresViewers) // a map lookup: once a sweep, not once a tab
	for i := 0; i < len(b.tabs); {
		t := b.tabs[i]
		if t.isNativePopup() {
			i++ // closed through the manager by sweepPopups
			continue
		}
		exempt := (t.Watched() || t.Desktop) && !ignoresViewers
		// The sweep walks the live tabs: a session without its page is
		// not one.
		if t.Control.AgentID != "" && !exempt && !t.pageless() && now-t.UsedAt > AgentTabIdle {
			b.removeAt(i)
			b.env.Emit(actor, "tab.swept", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID),
				sim.A("idle", (now-t.UsedAt).Round(time.Second).String()))
			continue
		}
		i++
	}
}

func (b *ServerBrowser) removeAt(i int) {
	t := b.tabs[i]
	b.dropTab(i)
	if t.page == pageOpening {
		t.closedPending = true // closedPendingTabs: the open discards its page
	}
	for _, q := range t.queues {
		q.push(t, Output{Tag: "gone"})
	}
	t.ended = t.queues
	t.Control.Close()
	b.surfaceDrop(t, false)
	// Closing the page ends the action in progress on it.
	inflight := t.inflight
	t.inflight = nil
	for _, a := range inflight {
		a.end(ReasonClosed)
	}
	b.env.Obligations.Discharge(RegainTab, TabEntity(t.ThreadID, t.TabID))
}

func (b *ServerBrowser) remove(t *Tab) {
	for i, x := range b.tabs {
		if x == t {
			b.removeAt(i)
			return
		}
	}
}

func (b *ServerBrowser) owned(threadID, key string) []*Tab {
	var out []*Tab
	for _, t := range b.threadTabs(threadID) {
		if t.Control.AgentID == key && !t.pageless() {
			out = append(out, t)
		}
	}
	return out
}

// live counts the tabs with a page or opening one (tabs + pendingTabs).
func (b *ServerBrowser) live() int {
	n := 0
	for _, t := range b.tabs {
		if t.page != pageNone {
			n++
		}
	}
	return n
}

func (b *ServerBrowser) markUsed(threadID, key string) {
	now := b.env.Now()
	for _, t := range b.threadTabs(threadID) {
		if t.Control.AgentID == key {
			t.UsedAt = now
		}
	}
}

// Handle serves one broker request and calls reply with the outcome when it
// is decided: when the action starts, or at once for a refusal. Outcome
// events are the caller's to trace.
func (b *ServerBrowser) Handle(req Request, reply func(Result)) { b.HandleTo(req, HandlerFunc(reply)) }

// Handler gets the outcome of a request Handle serves. The server's call
// object implements it, so a request needs no closure to be answered.
type Handler interface {
	Handled(Result)
}

// HandlerFunc is a function as a Handler.
type HandlerFunc func(Result)

// Handled calls f.
func (f HandlerFunc) Handled(r Result) { f(r) }

// HandleTo is Handle answering to h. Closures that outlive the call copy
// req where they need it, so that req itself stays on the stack.
func (b *ServerBrowser) HandleTo(req Request, h Handler) {
	ignore := b.env.Profile.Has(model.IgnoreTabOwner)
	thread, agentSession := req.ThreadID, req.AgentSessionID
	finish := func(r Result) {
		b.markUsed(thread, agentSession)
		h.Handled(r)
	}
	if b.dead {
		h.Handled(Result{Outcome: ReasonInterrupted})
		return
	}
	if req.AgentSessionID == "" {
		finish(Result{Outcome: ReasonInterrupted})
		return
	}
	if b.Desktops != nil && (req.Op == OpOpen || req.Op == OpOpenWithProfile || req.Op == OpProfiles) {
		b.desktopOpen(req, finish)
		return
	}
	if req.Op == OpOpen {
		b.open(req, finish)
		return
	}
	if req.Op == OpStatus && req.TabID == "" && b.nativeStatusWithoutTab(req, finish) {
		return
	}
	tab, refusal := b.requireTab(req, ignore)
	if tab == nil {
		finish(Result{Outcome: refusal})
		return
	}
	if req.Op == OpClose && tab.Native != nil {
		b.agentCloseNative(tab, req, refusal, finish)
		return
	}
	if req.Op == OpClose && tab.Desktop && tab.page == pageNone {
		// An offline desktop root (its desktop withdrew the page) is
		// retired by its owner's close without reconnecting it first, and
		// stops counting against the tab limit; another session's close is
		// refused and retires nothing (the newest stored test file,
		// index:70867653086, "explicit %s close retires an offline root
		// without reopening it or consuming tab capacity"; at 164d7dbe
		// findTab reopened it first).
		res := Result{TabID: tab.TabID, TabThread: tab.ThreadID, Owner: tab.Control.AgentID, Outcome: refusal}
		if refusal == "" {
			b.remove(tab)
			res.Outcome = OK
		}
		finish(res)
		return
	}
	if tab.pageless() {
		// findTab: an explicit tab whose page is gone is opened again
		// (ensureTab) before the request runs; a failed open is no tab.
		again := req
		b.ensurePage(tab, "agent", func(outcome string) {
			if outcome != OK || tab.pageless() {
				finish(Result{Outcome: TabNotFound})
				return
			}
			b.HandleTo(again, h)
		})
		return
	}
	res := Result{TabID: tab.TabID, TabThread: tab.ThreadID, Owner: tab.Control.AgentID}
	if refusal != "" {
		res.Outcome = refusal
		finish(res)
		return
	}
	tab.Control.IgnoreHuman = b.env.Profile.Has(HumanControlIgnored)
	if b.serveSurfaced(tab, req, ignore, res, finish) {
		return
	}
	switch {
	case req.Op == OpDialog:
		// Resolved outside the serial queue (the action waiting on it
		// holds the queue), with the owner check and human control.
		if tab.Control.Owner != "" && !tab.Control.IgnoreHuman {
			res.Outcome = ReasonHumanControl
			finish(res)
			return
		}
		if !b.resolveDialog(tab, req.Accept) {
			res.Outcome, res.Message = ExecutionError, "No dialog is pending."
			finish(res)
			return
		}
		res.Outcome = OK
		b.fillStatus(tab, &res)
		finish(res)
		return
	case req.Op == OpClick && req.Ref == "" && req.Box == nil && req.Dialog == nil && b.DialogFor != nil:
		b.worldClick(tab, req, ignore, res, finish)
		return
	case req.Op == OpClose:
		// close is not queued behind the tab's actions (MODEL.md §9): after
		// requireTab's owner check, a human controller refuses it; else the
		// tab closes at once, ending the action in progress.
		if tab.Control.Owner != "" && !tab.Control.IgnoreHuman {
			res.Outcome = ReasonHumanControl
			finish(res)
			return
		}
		b.remove(tab)
		res.Outcome = OK
		finish(res)
		return
	case tab.Shared && (req.Op == OpType || req.Op == OpPress):
		// Refused before the page is touched (no locator, no keyboard, no
		// paint lease), and the session stays (index:70867653086).
		res.Outcome, res.Message = ExecutionError, SharedKeyboardMessage
		finish(res)
		return
	case req.Op == OpStatus:
		res.Outcome = OK
		res.Tabs = b.status(req.ThreadID, req.AgentSessionID, ignore)
		b.fillStatus(tab, &res)
		b.nativeStatus(tab, &res)
		b.profileStatus(&res)
		b.desktopStatus(tab, req.AgentSessionID, &res)
		finish(res)
		return
	case req.Op == OpNavigate && b.Hosting != nil:
		b.hostedNavigate(tab, req, ignore, res, finish)
		return
	case req.Op == OpEvaluate || req.Op == OpNavigate && (req.Readiness == ReadinessNone || req.LoadFailure != "") ||
		req.Op == OpClick && (req.Ref != "" || req.Box != nil || req.Dialog != nil) || req.Op == OpUpload:
		b.act(tab, req, ignore, res, finish)
		return
	}
	if req.Op == OpNavigate && b.remoteNavigation(tab, &req, res, finish) {
		return
	}
	// run outlives the call: copies, so that req and res stay on the stack
	rq, rs := req, res
	run := func() (string, time.Duration) {
		if tab.dialog != nil {
			return ReasonDialogPending, 0
		}
		switch rq.Op {
		case OpNavigate:
			tab.Gotos++
			tab.GotoURLs = append(tab.GotoURLs, rq.URL)
			if b.NavigationFailure != nil {
				if e := b.NavigationFailure(tab.ThreadID, tab.TabID); e != "" {
					b.failNavigation(tab, rq.URL, e, &rs)
					return ExecutionError, b.rand.Duration("action-time", 5*time.Millisecond, 1500*time.Millisecond)
				}
			}
			b.PageRequest(tab, rq.URL)
			tab.URL, tab.Loading = rq.URL, false
		case OpSnapshot:
			rs.Ref = b.ref(tab)
			rs.LoadError = b.LoadErrorOf(tab)
		case OpType, OpPress:
			tab.log("agent " + rq.Op)
		}
		return OK, b.rand.Duration("action-time", 5*time.Millisecond, 1500*time.Millisecond)
	}
	if IsRead(rq.Op) {
		rs.Outcome, _ = run()
		finish(rs)
		return
	}
	tab.Control.Agent(rq.AgentSessionID, ignore, b.leasedRun(tab, &rs, run), func(outcome string) {
		rs.Outcome = outcome
		finish(rs)
	})
}

// ref hands out a fresh element ref, valid until the control's epoch
// changes (snapshot refs are revoked by every owner change).
func (b *ServerBrowser) ref(t *Tab) string {
	// Refs of an older epoch can never be valid again: drop them, and keep
	// the newest few of the current one.
	kept := t.refs[:0]
	for _, r := range t.refs {
		if r.epoch == t.Control.Epoch {
			kept = append(kept, r)
		}
	}
	if len(kept) >= maxRefs {
		kept = append(kept[:0], kept[len(kept)-maxRefs+1:]...)
	}
	t.nextRef++
	r := fmt.Sprintf("e%d", t.nextRef)
	t.refs = append(kept, elementRef{ref: r, epoch: t.Control.Epoch})
	return r
}

const maxRefs = 64

func (t *Tab) refValid(ref string) bool {
	for _, r := range t.refs {
		if r.ref == ref {
			return r.epoch == t.Control.Epoch
		}
	}
	return false
}

func (b *ServerBrowser) status(threadID, key string, ignoreOwner bool) []TabStatus {
	if b.Version >= VersionIndex70905931248 {
		return b.threadStatus(threadID, key)
	}
	var out []TabStatus
	for _, t := range b.threadTabs(threadID) {
		if !t.pageless() && (ignoreOwner || t.Control.MayAct(key)) {
			out = append(out, TabStatus{TabID: t.TabID, OpenerTabID: t.OpenerTabID, URL: t.URL, ProfileID: t.ProfileID})
		}
	}
	return out
}

func (b *ServerBrowser) hold(req Request) time.Duration {
	if req.Hold > 0 {
		return req.Hold
	}
	return b.rand.Duration("action-time", 5*time.Millisecond, 1500*time.Millisecond)
}

// act runs the agent actions of the fidelity cases under control.agent,
// answering when the action completes: evaluate (after its hold, or when
// the tab closes under it), click with an element ref (a stale ref is
// InvalidSelectorError and touches nothing), navigate with readiness none
// (answers at once, available; the commit is tracked).
func (b *ServerBrowser) act(tab *Tab, req Request, ignore bool, res Result, finish func(Result)) {
	tab.Control.Submit(Item{Kind: ItemAgent, Actor: req.AgentSessionID, IgnoreOwner: ignore,
		Run: func(done func(string)) {
			if tab.dialog != nil {
				done(ReasonDialogPending)
				return
			}
			if done = b.leaseAct(tab, &res, done); done == nil {
				return
			}
			switch {
			case req.Op == OpUpload:
				res.Outcome, res.Message = b.uploadFiles(tab, req.Paths, req.Locator)
				done(res.Outcome)
			case req.Op == OpClick && req.Ref != "":
				if !tab.refValid(req.Ref) {
					done(InvalidSelector)
					return
				}
				tab.log("agent clicked " + req.Ref)
				done(OK)
			case req.Op == OpClick:
				press := func() {
					if tab.Control.Closed {
						done(ReasonClosed)
						return
					}
					tab.Clicks++
					tab.log("agent clicked")
					if req.Dialog != nil {
						b.holdOnDialog(tab, *req.Dialog, func(o, v string) { res.Value = v; done(o) })
						return
					}
					done(OK)
				}
				if req.Box != nil {
					b.pointer(tab, *req.Box, true, press)
					return
				}
				press()
			case req.Op == OpNavigate && req.LoadFailure != "":
				tab.Gotos++
				b.failNavigation(tab, req.URL, req.LoadFailure, &res)
				done(ExecutionError)
			case req.Op == OpNavigate:
				settle := tab.Control.Track()
				b.env.After(b.hold(req), func() {
					if !tab.Control.Closed {
						tab.URL = req.URL
						tab.log("navigation committed")
					}
					settle("")
				})
				res.Available = true
				done(OK)
			case req.Dialog != nil:
				b.holdOnDialog(tab, *req.Dialog, func(o, v string) { res.Value = v; done(o) })
			default:
				ended := false
				a := &inflightAction{}
				end := func(outcome string) {
					if ended {
						return
					}
					ended = true
					for i, x := range tab.inflight {
						if x == a {
							tab.inflight = append(tab.inflight[:i], tab.inflight[i+1:]...)
							break
						}
					}
					done(outcome)
				}
				a.end = end
				tab.inflight = append(tab.inflight, a)
				b.env.After(b.hold(req), func() {
					if ended {
						return
					}
					tab.log("agent acted")
					res.Value = req.Value
					end(OK)
				})
			}
		},
		Done: func(outcome string) {
			res.Outcome = outcome
			finish(res)
		}})
}

// requireTab resolves the tab a request targets. It returns the tab and a
// refusal to report against it (agentMismatch), or nil and the refusal.
func (b *ServerBrowser) requireTab(req Request, ignoreOwner bool) (*Tab, string) {
	if b.Version >= VersionIndex70905931248 {
		return b.requireThreadTab(req, ignoreOwner)
	}
	var tab *Tab
	if req.TabID != "" {
		if ignoreOwner {
			tab = b.tabByID(req.TabID)
		} else {
			tab = b.Tab(req.ThreadID, req.TabID)
		}
	} else {
		owned := b.owned(req.ThreadID, req.AgentSessionID)
		if len(owned) > 1 {
			return nil, ReasonTabRequired
		}
		if len(owned) == 1 {
			tab = owned[0]
		}
	}
	if tab == nil {
		return nil, TabNotFound
	}
	if !ignoreOwner && !tab.Control.MayAct(req.AgentSessionID) {
		return tab, ReasonAgentMismatch
	}
	return tab, ""
}

func (b *ServerBrowser) open(req Request, finish func(Result)) {
	requested := req.ProfileID
	if requested == "" && b.ProfileFor != nil {
		requested = b.ProfileFor(req.ThreadID)
	}
	profile, msg, known := b.resolveOpenProfile(requested)
	if !known {
		if b.ProfileFor != nil {
			b.env.Emit(actor, "tab.profile-unknown", requested, sim.A("thread", req.ThreadID))
		}
		// The upstream test observes PreviewAutomationUnknownProfileError
		// through the broker as an execution error whose reason is the
		// message (ServerBrowser.test.ts, index:70867653086); no tab opens.
		finish(Result{Outcome: ExecutionError, Message: msg})
		return
	}
	if req.ReuseExistingTab {
		owned := b.owned(req.ThreadID, req.AgentSessionID)
		if len(owned) > 1 && req.TabID == "" {
			finish(Result{Outcome: ReasonTabRequired})
			return
		}
		var t *Tab
		if req.TabID != "" {
			t = b.Tab(req.ThreadID, req.TabID)
		} else if len(owned) == 1 {
			t = owned[0]
		}
		if t != nil && !t.pageless() {
			if t.dialog != nil {
				// The existing tab's dialog refuses the open before its
				// navigation.
				finish(Result{Outcome: ReasonDialogPending, TabID: t.TabID, TabThread: t.ThreadID, Owner: t.Control.AgentID,
					Message: "A browser dialog is pending. Read preview_status and use preview_dialog first."})
				return
			}
			if b.Hosting != nil && req.URL != "" {
				res := Result{TabID: t.TabID, TabThread: t.ThreadID, Owner: t.Control.AgentID}
				b.profileStatus(&res)
				b.hostedNavigate(t, req, b.env.Profile.Has(model.IgnoreTabOwner), res, finish)
				return
			}
			if req.URL != "" {
				t.Gotos++
			}
			t.URL = req.URL
			res := Result{Outcome: OK, TabID: t.TabID, TabThread: t.ThreadID, Owner: t.Control.AgentID}
			b.profileStatus(&res)
			b.openReveal(t, req, &res)
			finish(res)
			return
		}
	}
	if b.Hosting != nil && req.URL != "" {
		b.prepareOpen(req, "", b.open, finish) // opens a blank tab once prepared
		return
	}
	b.sweepIdle()
	if b.NativeRootFor != nil {
		if h, native := b.NativeRootFor(req.ThreadID); h != nil {
			if native == "" {
				native = profile // the catalogue names no default: the resolved one
			}
			b.openNativeRoot(req, h, native, finish)
			return
		}
	}
	if len(b.owned(req.ThreadID, req.AgentSessionID)) >= AgentTabLimit || b.live() >= ServerTabLimit {
		finish(Result{Outcome: ReasonTabLimit})
		return
	}
	b.nextTab++
	now := b.env.Now()
	t := &Tab{ThreadID: req.ThreadID, TabID: fmt.Sprintf("tab_%d_%s", b.nextTab, b.epoch), CreatedAt: now, UsedAt: now, URL: req.URL,
		Viewport: UnattachedFillViewport, ProfileID: profile}
	t.Control = NewControl(req.AgentSessionID, b.env.After)
	b.tabs = append(b.tabs, t)
	desktop := false
	if b.DesktopFor != nil {
		if ok, after := b.DesktopFor(req.ThreadID); ok {
			desktop = true
			b.env.After(after, func() {
				if b.dead || t.Control.Closed {
					return
				}
				t.Desktop = true
				b.env.Emit("desktop", "tab.render", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
				b.surfaceRendered(t)
				if b.OnRender != nil {
					b.OnRender(t)
				}
			})
		}
	}
	if !desktop {
		// A headless page's context is keyed by the chosen profile
		// (createTab); a page the desktop renders asks for none.
		t.Context = contextFor(t)
		if b.ProfileFor != nil {
			b.env.Emit(actor, "tab.context", t.Context.ProfileID, sim.A("thread", t.ThreadID), sim.A("tab", t.TabID),
				sim.A("isolated", fmt.Sprint(t.Context.Isolated)), sim.A("reported", fmt.Sprint(b.reported != nil)))
		}
	}
	res := Result{Outcome: OK, TabID: t.TabID, TabThread: t.ThreadID, Owner: t.Control.AgentID}
	b.profileStatus(&res)
	b.openReveal(t, req, &res)
	finish(res)
}

// Watch attaches a streamed viewer to a tab; Unwatch detaches it (and a
// disconnecting viewer releases control).
func (b *ServerBrowser) Watch(t *Tab, viewer string) { b.attach(t, viewer, true, false) }

// attach adds viewer with its output queue; with mayTake an operating
// viewer of a tab no agent owns and no human controls takes control. Then,
// as attachViewer does, every viewer gets its control message, the
// controller its open picker, and the new viewer the viewport and a still
// frame.
func (b *ServerBrowser) attach(t *Tab, viewer string, canOperate, mayTake bool) {
	for _, v := range t.Viewers {
		if v == viewer {
			return
		}
	}
	t.Viewers = append(t.Viewers, viewer)
	if !canOperate {
		t.readOnly = append(t.readOnly, viewer)
	}
	q := &viewerQueue{viewer: viewer}
	t.queues = append(t.queues, q)
	b.surfaceAttach(t, viewer)
	b.env.Emit(viewer, "viewer.attach", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
	if mayTake && canOperate && t.Control.AgentID == "" && t.Control.Owner == "" {
		b.TakeControl(t, viewer)
	}
	t.broadcastControl()
	t.pushFileChooser()
	t.broadcastViewport()
	q.push(t, Output{Tag: "frame"})
}

// Unwatch detaches viewer from t, releasing control if it held it.
func (b *ServerBrowser) Unwatch(t *Tab, viewer string) {
	for i, v := range t.Viewers {
		if v == viewer {
			t.Viewers = append(t.Viewers[:i], t.Viewers[i+1:]...)
			for j, q := range t.queues {
				if q.viewer == viewer {
					t.queues = append(t.queues[:j], t.queues[j+1:]...)
					break
				}
			}
			if t.Control.Release(viewer) {
				b.env.Emit(viewer, "control.release", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
			}
			t.broadcastControl()
			b.surfaceDetach(t, viewer)
			b.env.Emit(viewer, "viewer.detach", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
			return
		}
	}
}

// TakeControl lets viewer take over t; it traces the outcome.
func (b *ServerBrowser) TakeControl(t *Tab, viewer string) bool {
	ok := t.Control.Take(viewer)
	out := "ok"
	if !ok {
		out = "refused"
	}
	t.broadcastControl()
	b.env.Emit(viewer, "control.take", out, sim.A("thread", t.ThreadID), sim.A("tab", t.TabID), sim.A("epoch", fmt.Sprint(t.Control.Epoch)))
	return ok
}

// ReleaseControl returns control of t from viewer.
func (b *ServerBrowser) ReleaseControl(t *Tab, viewer string) bool {
	ok := t.Control.Release(viewer)
	if ok {
		b.env.Emit(viewer, "control.release", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
	}
	t.broadcastControl()
	return ok
}

// OwnerKey is the broker's hostAssignmentKey, sent to the host as
// agentSessionId and stored as the tab owner: environmentId NUL credential
// providerSessionId NUL threadId as reported (#23021), environmentId NUL
// threadId with the stable-tab-owner fix.
func OwnerKey(p model.Profile, environmentID, credentialID, threadID string) string {
	if p.Fixed(model.StableTabOwner) {
		return environmentID + "\x00" + threadID
	}
	return environmentID + "\x00" + credentialID + "\x00" + threadID
}

// ShowKey renders an owner key for traces, NUL shown as '/'.
func ShowKey(k string) string { return strings.ReplaceAll(k, "\x00", "/") }

// Viewer-side API of the fidelity cases (FIDELITY.md §2): viewers that may
// or may not operate, their inputs, popups, and tabs a human opened. The
// worlds' viewers use Watch, TakeControl and ReleaseControl above.

// AttachViewer attaches a streamed viewer. A read-only viewer (canOperate
// false) only watches. An operating viewer of a tab no agent owns and no
// human controls takes control at once. A desktop-rendered tab streams
// from the desktop's own page.
func (b *ServerBrowser) AttachViewer(t *Tab, viewer string, canOperate bool) {
	if t.Desktop {
		t.DesktopEndpoint = true
	}
	b.attach(t, viewer, canOperate, true)
}

// ViewerState is the control message a viewer's output carries, plus the
// viewport it streams at and where the stream comes from.
type ViewerState struct {
	CanOperate bool
	// Controller is "you", "human" (another viewer), "agent" (an agent
	// owns the tab and no human controls it) or "none".
	Controller string
	Viewport   Viewport
	// Endpoint is "desktop" (the desktop's own page) or "headless".
	Endpoint string
}

// StateFor returns what viewer sees.
func (b *ServerBrowser) StateFor(t *Tab, viewer string) ViewerState {
	s := ViewerState{CanOperate: t.CanOperate(viewer), Viewport: t.ShownViewport(), Endpoint: "headless"}
	if t.Desktop {
		s.Endpoint = "desktop"
	}
	switch {
	case t.Control.Owner == viewer:
		s.Controller = "you"
	case t.Control.Owner != "":
		s.Controller = "human"
	case t.Control.AgentID != "":
		s.Controller = "agent"
	default:
		s.Controller = "none"
	}
	return s
}

// Viewer input kinds.
const (
	InputTakeControl    = "takeControl"
	InputReleaseControl = "releaseControl"
	InputText           = "text"
	InputKey            = "key"
	InputResize         = "resize"
	InputNavigate       = "navigate"
)

// ViewerInput is one input from a viewer's stream.
type ViewerInput struct {
	Kind string
	Text string
	// Viewport is resize's size.
	Viewport Viewport
	// Method is navigate's method (goto, goBack, goForward, reload).
	Method string
	// Hold is how long the page takes (typing, or a navigation to commit).
	Hold time.Duration
	// Key and Modifiers are key's key and modifier bits (CDP: 2 Ctrl,
	// 4 Meta, 8 Shift).
	Key       string
	Modifiers int
	// Accept is dialog's answer.
	Accept bool
	// URL is navigate's (goto's) URL; IgnoreCache makes reload a hard
	// reload. Both matter with hosting only (hosting_nav.go).
	URL         string
	IgnoreCache bool
	// X and Y are mouse's position; Setting is viewport's setting.
	X, Y    int
	Setting *ViewportSetting
}

// EditingCommand is editingCommand: the editing command a Cmd (Meta) or
// Ctrl shortcut carries ("" for none): copy and cut for either, selectAll,
// undo and redo (with Shift) for Cmd only.
func EditingCommand(key string, modifiers int) string {
	m := modifiers & 0b0111
	if m != 2 && m != 4 {
		return ""
	}
	switch strings.ToLower(key) {
	case "c":
		return "copy"
	case "x":
		return "cut"
	}
	if m != 4 {
		return ""
	}
	switch strings.ToLower(key) {
	case "a":
		return "selectAll"
	case "z":
		if modifiers&8 != 0 {
			return "redo"
		}
		return "undo"
	}
	return ""
}

// Input handles a viewer's input. A read-only viewer's inputs are ignored
// (done(Ignored)). takeControl and releaseControl answer once the queue has
// drained behind them; text and key are human actions; resize is queued
// system work, ignored for a desktop page; navigate is a human action that
// answers at once, its commit tracked until handoff (issued wait-until
// commit with the navigation timeout).
func (b *ServerBrowser) Input(t *Tab, viewer string, in ViewerInput, done func(outcome, msg string)) {
	if !t.CanOperate(viewer) {
		done(Ignored, "")
		return
	}
	c := t.Control
	reply := done
	done = func(o, m string) {
		if o != OK {
			// Rejected ownership cannot mutate the page; the viewer's
			// controls are refreshed.
			t.broadcastControl()
		}
		reply(o, m)
	}
	if b.surfaceInput(t, viewer, in, done) {
		return
	}
	dispatched := func() {
		if q := t.queue(viewer); q != nil {
			q.inputAt, q.hasIn = b.env.Now(), true
		}
	}
	switch in.Kind {
	case InputTakeControl:
		c.TakeWait(viewer, func(o, m string) {
			if o == OK {
				t.pushFileChooser()
			}
			done(o, m)
		})
		t.broadcastControl()
	case InputReleaseControl:
		c.ReleaseWait(viewer, done)
		t.broadcastControl()
	case InputDialog:
		if c.Owner == viewer {
			if b.resolveDialog(t, in.Accept) {
				done(OK, "")
			} else {
				done(ExecutionError, "No dialog is pending.")
			}
			return
		}
		c.Submit(Item{Kind: ItemHuman, Actor: viewer, Run: func(finish func(string)) { dispatched(); finish(OK) },
			Done: func(o string) { done(o, "") }})
	case InputText, InputKey:
		c.Submit(Item{Kind: ItemHuman, Actor: viewer,
			Run: func(finish func(string)) {
				dispatched()
				if in.Kind == InputKey && in.Key != "" {
					if cmd := EditingCommand(in.Key, in.Modifiers); cmd != "" {
						t.log("human key " + in.Key + " command " + cmd)
					} else {
						t.log("human key " + in.Key)
					}
					finish(OK)
					return
				}
				b.env.After(in.Hold, func() {
					if !c.Closed {
						t.log("human typed " + in.Text)
					}
					finish(OK)
				})
			},
			Done: func(o string) { done(o, "") }})
	case InputResize:
		if t.Desktop {
			done(Ignored, "")
			return
		}
		c.Submit(Item{Kind: ItemSystem,
			Run:  func(finish func(string)) { t.Viewport = in.Viewport; t.broadcastViewport(); finish(OK) },
			Done: func(o string) { done(o, "") }})
	case InputNavigate:
		if b.Hosting != nil {
			b.hostedViewerNavigation(t, viewer, in, done)
			return
		}
		c.Submit(Item{Kind: ItemHuman, Actor: viewer,
			Run: func(finish func(string)) {
				dispatched()
				t.LastViewerNavigation = ViewerNavigation{Method: in.Method, WaitUntil: "commit", Timeout: NavigationTimeout}
				settle := c.TrackUntilHandoff()
				b.env.After(in.Hold, func() {
					if !c.Closed {
						t.log("navigation committed")
					}
					settle("")
				})
				finish(OK)
			},
			Done: func(o string) { done(o, "") }})
	default:
		done(Ignored, "")
	}
}

// Popup is a page of t opening a popup: it becomes a tab of the same
// thread with the same automation owner, not revealed, with t as opener.
func (b *ServerBrowser) Popup(opener *Tab) *Tab {
	b.nextTab++
	now := b.env.Now()
	t := &Tab{ThreadID: opener.ThreadID, TabID: fmt.Sprintf("tab_%d_%s", b.nextTab, b.epoch), CreatedAt: now, UsedAt: now,
		OpenerTabID: opener.TabID, Viewport: UnattachedFillViewport, ProfileID: opener.ProfileID}
	t.Control = NewControl(opener.Control.AgentID, b.env.After)
	// adoptPopup: the popup's session keeps its opener's profile.
	t.Context = contextFor(t)
	b.tabs = append(b.tabs, t)
	// A popup from a person's click is shown to that person (the newest
	// stored test file, index:70867653086).
	if q := opener.controller(); q != nil {
		q.push(opener, Output{Tag: "popup", ID: t.TabID})
	}
	return t
}

// PageClosed is the page of t closing by itself (a popup closing): its
// session goes.
func (b *ServerBrowser) PageClosed(t *Tab) { b.remove(t) }

// OpenUnowned is the preview manager opening a server-runtime tab with no
// automation owner (a human's tab); with desktop the desktop app renders it.
func (b *ServerBrowser) OpenUnowned(threadID, url string, desktop bool) *Tab {
	b.nextTab++
	now := b.env.Now()
	t := &Tab{ThreadID: threadID, TabID: fmt.Sprintf("tab_%d_%s", b.nextTab, b.epoch), CreatedAt: now, UsedAt: now,
		URL: url, Reveal: true, Desktop: desktop, Viewport: UnattachedFillViewport}
	t.Control = NewControl("", b.env.After)
	b.tabs = append(b.tabs, t)
	if desktop {
		// createTab connects to the desktop's page (connectDesktop).
		b.DesktopConnections++
		t.DesktopEndpoint = true
	}
	return t
}

// OpenShared is the preview manager opening a desktop page for a person
// with an automation owner (manager.open with desktopHostId and
// automationOwner, index:70867653086): the desktop renders it, it is
// revealed, and owner's agent may act on it, except for keyboard input
// (SharedKeyboardMessage).
func (b *ServerBrowser) OpenShared(threadID, url, owner string) *Tab {
	t := b.OpenUnowned(threadID, url, true)
	t.Control = NewControl(owner, b.env.After)
	t.Shared = true
	return t
}

// ManagerClose is the preview manager closing t's session: the session
// goes and a desktop stream endpoint is released; the desktop's own page
// is the desktop's to close.
func (b *ServerBrowser) ManagerClose(t *Tab) {
	if t.Native != nil {
		b.ManagerCloseNative(t, nil)
		return
	}
	t.DesktopEndpoint = false
	b.remove(t)
}
