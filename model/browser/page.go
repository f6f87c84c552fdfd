package browser

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// Page lifecycle of a server tab (ServerBrowser.ts @ 164d7dbe, read whole,
// and ServerBrowserPage.ts @ ddd54bc2 for parseNetError and the click's
// pointer): page dialogs that hold an action, the headless context launch
// (which can fail), main-frame load failures, the desktop withdrawing its
// page's debugger (the session stays, viewers reconnect), each viewer's
// bounded output queue and its backlog replacement, page downloads, file
// choosers, clipboard copies and the agent's pointer.

// Constants of ServerBrowser.ts @ 164d7dbe.
const (
	// ViewerOutputLimit is VIEWER_OUTPUT_LIMIT: a viewer's output queue
	// holds this many items ("dropping" strategy).
	ViewerOutputLimit = 64
	// ClipboardGesture is CLIPBOARD_GESTURE_MS: a page copy reaches the
	// controlling viewer only this soon after its last input.
	ClipboardGesture = 5 * time.Second
	// ClipboardTextLimit is CLIPBOARD_TEXT_LIMIT (characters of a copy).
	ClipboardTextLimit = 1024 * 1024
	// DownloadLimit is DOWNLOAD_LIMIT: finished downloads kept per tab, the
	// oldest evicted first.
	DownloadLimit = 20
	// DownloadMaxBytes is DOWNLOAD_MAX_BYTES: a larger file is discarded.
	DownloadMaxBytes = 1024 * 1024 * 1024
	// AgentCursorMove is AGENT_CURSOR_MOVE_MS: the agent's pointer glides
	// this long to its target before acting.
	AgentCursorMove = 160 * time.Millisecond
	// AgentCursorClickLead is AGENT_CURSOR_CLICK_LEAD_MS: the click pulse
	// shows this long before the press.
	AgentCursorClickLead = 40 * time.Millisecond
	// DialogTextLimit is the 4000-character cut dialogStatus applies to a
	// dialog's message and default value.
	DialogTextLimit = 4000
	// ErrorPageURL is the URL of Chromium's error page; a tab showing it
	// reports its load error.
	ErrorPageURL = "chrome-error://chromewebdata/"
	// AbortedNavigationGrace is how long an aborted main-frame navigation
	// keeps the tab loading while a download may still explain it (the
	// 5 s the newest stored ServerBrowser.test.ts, index:70867653086,
	// advances its timers by; that version's source was not read).
	AbortedNavigationGrace = 5 * time.Second
	// ViewerReconnectDelay is how soon a viewer told "reconnect" attaches
	// again (a model choice: the web client reconnects its stream at once;
	// the delay is its round trip).
	ViewerReconnectDelay = time.Second
)

// More outcomes and operations of the page lifecycle.
const (
	// ReasonDialogPending is the dialogPending refusal: a browser dialog
	// is pending on the tab.
	ReasonDialogPending = "dialogPending"
	// ExecutionError is PreviewAutomationExecutionError (no dialog or file
	// picker open, a relative upload path, several files for a
	// single-file picker, a failed navigation).
	ExecutionError = "ExecutionError"
	// LaunchError is ServerBrowserLaunchError: the headless browser
	// context could not start.
	LaunchError = "LaunchError"
	// OpDialog is preview_dialog: accept or dismiss the pending dialog,
	// outside the tab's queue.
	OpDialog = "dialog"
	// OpUpload is preview_upload: files for a file input or the page's
	// open file picker.
	OpUpload = "upload"
	// InputDialog is a controlling viewer answering the page's dialog.
	InputDialog = "dialog"
)

// netErrorCodes is NET_ERROR_CODES of ServerBrowserPage.ts @ ddd54bc2.
var netErrorCodes = map[string]int{
	"ERR_FAILED": -2, "ERR_TIMED_OUT": -7, "ERR_CONNECTION_CLOSED": -100, "ERR_CONNECTION_RESET": -101,
	"ERR_CONNECTION_REFUSED": -102, "ERR_NAME_NOT_RESOLVED": -105, "ERR_INTERNET_DISCONNECTED": -106,
	"ERR_ADDRESS_UNREACHABLE": -109, "ERR_CERT_AUTHORITY_INVALID": -202, "ERR_EMPTY_RESPONSE": -324,
}

var netErrorName = regexp.MustCompile(`ERR_[A-Z_]+`)

// LoadError is PreviewAutomationLoadError: why the latest main-frame
// navigation failed.
type LoadError struct {
	URL         string
	Code        int
	Description string
}

// ParseNetError is parseNetError: the ERR_ name in errorText (or the whole
// text) and its Chromium code (-2 when unknown).
func ParseNetError(errorText string) (code int, description string) {
	description = errorText
	if m := netErrorName.FindString(errorText); m != "" {
		description = m
	}
	code, ok := netErrorCodes[description]
	if !ok {
		code = -2
	}
	return code, description
}

// Dialog is a page dialog (confirm, alert, prompt) as status and the
// control message show it.
type Dialog struct {
	Type, Message, DefaultValue string
}

type pendingDialog struct {
	Dialog
	// resolve ends the action the dialog holds (nil: it holds none).
	resolve func(accept bool)
}

// FileChooser is an open file picker as status shows it.
type FileChooser struct {
	Multiple bool
	Accept   string
}

type openChooser struct {
	id string
	FileChooser
}

// Download is a finished page download of a tab.
type Download struct {
	ID        string
	FileName  string
	SizeBytes int64
	URL       string
}

// Box is an element's bounding box in CSS pixels.
type Box struct{ X, Y, Width, Height int }

// Output is one item of a viewer's output queue (ServerBrowserViewerOutput).
// Tag is frame, viewport, control, clipboard, pointer, fileChooser,
// fileChooserClosed, download, gone or reconnect; the other fields are the
// tag's.
type Output struct {
	Tag string
	// control: Controller is you, another-viewer, agent or unclaimed
	// (upstream's names); Generation the control epoch; Dialog the pending
	// dialog or nil.
	CanOperate bool
	Controller string
	Generation int
	Dialog     *Dialog
	// viewport.
	Width, Height int
	// clipboard.
	Text string
	// pointer: Phase move or click, at X, Y, with a server-wide Sequence.
	Phase    string
	X, Y     int
	Sequence int
	// fileChooser, fileChooserClosed, download: ID.
	ID       string
	Multiple bool
	Accept   string
	FileName string
	Size     int64
}

// viewerQueue is one viewer's bounded output queue.
type viewerQueue struct {
	viewer string
	items  []Output
	// inputAt is the viewer's last dispatched input (ViewerState.inputAt).
	inputAt time.Duration
	hasIn   bool
	// acked counts frames released back to Chromium when dropped.
	acked int
}

// push is ViewerState.push: offer; when full a frame is dropped (and
// acked), and state a stalled viewer cannot miss (gone, control,
// fileChooser) replaces the backlog, a control followed by the
// controller's open picker.
func (q *viewerQueue) push(t *Tab, o Output) {
	if len(q.items) < ViewerOutputLimit {
		q.items = append(q.items, o)
		return
	}
	switch o.Tag {
	case "frame":
		q.acked++
	case "gone", "control", "fileChooser":
		dropped := q.items
		q.items = []Output{o}
		if o.Tag == "control" && t.fileChooser != nil && t.Control.Owner == q.viewer {
			q.items = append(q.items, t.chooserOutput())
		}
		for _, d := range dropped {
			if d.Tag == "frame" {
				q.acked++
			}
		}
	}
}

func (t *Tab) queue(viewer string) *viewerQueue {
	for _, q := range t.queues {
		if q.viewer == viewer {
			return q
		}
	}
	// A stream that ended keeps what it was last told (gone, reconnect)
	// for its reader.
	for _, q := range t.ended {
		if q.viewer == viewer {
			return q
		}
	}
	return nil
}

// Output returns and clears what viewer's output queue holds (Queue.clear).
func (t *Tab) Output(viewer string) []Output {
	q := t.queue(viewer)
	if q == nil {
		return nil
	}
	out := q.items
	q.items = nil
	return out
}

// FramesAcked is how many frames viewer's queue dropped and acked.
func (t *Tab) FramesAcked(viewer string) int {
	if q := t.queue(viewer); q != nil {
		return q.acked
	}
	return 0
}

// StallViewer fills viewer's output the way a viewer that stopped reading
// leaves it: item, up to the limit.
func (t *Tab) StallViewer(viewer string, item Output) {
	if q := t.queue(viewer); q != nil {
		for len(q.items) < ViewerOutputLimit {
			q.items = append(q.items, item)
		}
	}
}

func (t *Tab) controllerName(viewer string) string {
	switch {
	case t.Control.Owner == viewer:
		return "you"
	case t.Control.Owner != "":
		return "another-viewer"
	case t.Control.AgentID != "":
		return "agent"
	}
	return "unclaimed"
}

// DialogShown returns the pending dialog, or nil.
func (t *Tab) DialogShown() *Dialog {
	if t.dialog == nil {
		return nil
	}
	d := t.dialog.Dialog
	d.Message, d.DefaultValue = cut(d.Message, DialogTextLimit), cut(d.DefaultValue, DialogTextLimit)
	return &d
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// broadcastControl pushes every viewer its control message.
func (t *Tab) broadcastControl() {
	for _, q := range t.queues {
		q.push(t, Output{Tag: "control", CanOperate: t.CanOperate(q.viewer), Controller: t.controllerName(q.viewer),
			Generation: t.Control.Epoch, Dialog: t.DialogShown()})
	}
}

func (t *Tab) broadcastViewport() {
	for _, q := range t.queues {
		v := t.ShownViewport()
		q.push(t, Output{Tag: "viewport", Width: v.Width, Height: v.Height})
	}
}

func (t *Tab) controller() *viewerQueue {
	if t.Control.Owner == "" {
		return nil
	}
	return t.queue(t.Control.Owner)
}

func (t *Tab) chooserOutput() Output {
	return Output{Tag: "fileChooser", ID: t.fileChooser.id, Multiple: t.fileChooser.Multiple, Accept: t.fileChooser.Accept}
}

// pushFileChooser offers the open picker to the controlling viewer.
func (t *Tab) pushFileChooser() {
	if q := t.controller(); q != nil && t.fileChooser != nil {
		q.push(t, t.chooserOutput())
	}
}

func (t *Tab) closeFileChooser() {
	open := t.fileChooser
	if open == nil {
		return
	}
	t.fileChooser = nil
	for _, q := range t.queues {
		q.push(t, Output{Tag: "fileChooserClosed", ID: open.id})
	}
}

// --- dialogs ------------------------------------------------------------

// PageDialog is the page opening a dialog (the page's "dialog" event):
// it is pending until resolved, and every viewer's control message shows
// it. resolve, if not nil, ends the action the dialog holds.
func (b *ServerBrowser) PageDialog(t *Tab, d Dialog, resolve func(accept bool)) {
	t.dialog = &pendingDialog{Dialog: d, resolve: resolve}
	b.env.Emit(actor, "page.dialog", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID), sim.A("type", d.Type))
	t.broadcastControl()
}

// resolveDialog is resolveDialog: accept or dismiss the pending dialog,
// which ends the action it holds; refs are invalidated and the viewers
// told. It reports false when no dialog is pending.
func (b *ServerBrowser) resolveDialog(t *Tab, accept bool) bool {
	d := t.dialog
	if d == nil {
		return false
	}
	t.DialogAnswers = append(t.DialogAnswers, accept)
	t.dialog = nil
	t.refs = nil
	b.env.Emit(actor, "page.dialog-resolved", fmt.Sprint(accept), sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
	if d.resolve != nil {
		d.resolve(accept)
	}
	t.broadcastControl()
	return true
}

// holdOnDialog runs an action that opens dialog d and waits for it: the
// action ends with "true"/"false" when the dialog is resolved, or closed
// if the tab closes first.
func (b *ServerBrowser) holdOnDialog(t *Tab, d Dialog, done func(outcome, value string)) {
	ended := false
	a := &inflightAction{}
	end := func(outcome, value string) {
		if ended {
			return
		}
		ended = true
		t.dropInflight(a)
		done(outcome, value)
	}
	a.end = func(outcome string) { end(outcome, "") }
	t.inflight = append(t.inflight, a)
	b.PageDialog(t, d, func(accept bool) { end(OK, fmt.Sprint(accept)) })
}

func (t *Tab) dropInflight(a *inflightAction) {
	for i, x := range t.inflight {
		if x == a {
			t.inflight = append(t.inflight[:i], t.inflight[i+1:]...)
			return
		}
	}
}

// --- load failures ------------------------------------------------------

// PageRequest is a main-frame navigation request the server sees: the tab
// is loading and its load error, if any, is cleared.
func (b *ServerBrowser) PageRequest(t *Tab, url string) {
	t.Loading = true
	t.loadErr, t.loadSeen = nil, true
	t.requestURL = url
	b.navigationStarted(t, url)
	b.reportNative(t, NavStatus{Tag: "Loading", URL: cut(url, 2048)})
}

// PageRequestFailed is that request failing with Chromium's errorText: the
// tab stops loading and records why (an aborted request, ERR_ABORTED, is
// no load failure).
//
// From the newest stored test file (index:70867653086): a failure of a
// request other than the navigation the tab tracks (one that predates it)
// leaves the newer navigation loading; an aborted navigation no download
// explains stops loading after AbortedNavigationGrace.
func (b *ServerBrowser) PageRequestFailed(t *Tab, url, errorText string) {
	if t.requestURL != "" && url != t.requestURL {
		return
	}
	if strings.Contains(errorText, "ERR_ABORTED") {
		b.navigationAborted(t, url)
		downloads := b.nextDownload
		b.env.After(AbortedNavigationGrace, func() {
			if t.requestURL == url && b.nextDownload == downloads {
				t.Loading = false
			}
		})
		return
	}
	t.Loading = false
	code, desc := ParseNetError(errorText)
	t.loadErr, t.loadSeen = &LoadError{URL: cut(url, 2048), Code: code, Description: desc}, true
	b.reportNative(t, NavStatus{Tag: "LoadFailed", URL: cut(url, 2048), Code: code, Description: desc})
	b.env.Emit(actor, "page.load-failed", desc, sim.A("thread", t.ThreadID), sim.A("tab", t.TabID),
		sim.A("viewers", fmt.Sprint(len(t.Viewers))))
}

// PageShows sets the URL the page shows (ErrorPageURL for the browser's
// error page).
func (b *ServerBrowser) PageShows(t *Tab, url string) { t.URL = url }

// LoadErrorOf is loadErrorOf: why the tab shows the error page; nil when it
// does not show it. A desktop tab whose load the server never saw takes
// the desktop's own report (DesktopLoadFailure).
func (b *ServerBrowser) LoadErrorOf(t *Tab) *LoadError {
	if !strings.HasPrefix(t.URL, "chrome-error://") {
		return nil
	}
	if t.loadSeen || !t.Desktop {
		return t.loadErr
	}
	if b.DesktopLoadFailure != nil {
		return b.DesktopLoadFailure(t.ThreadID, t.TabID)
	}
	return nil
}

// --- clipboard, downloads, file choosers --------------------------------

// PageClipboard is the page reporting a copy (the clipboard binding): it
// reaches only the controlling viewer, and only within ClipboardGesture of
// that viewer's last input.
func (b *ServerBrowser) PageClipboard(t *Tab, text string) {
	q := t.controller()
	if q == nil || !q.hasIn || b.env.Now()-q.inputAt > ClipboardGesture {
		return
	}
	q.push(t, Output{Tag: "clipboard", Text: cut(text, ClipboardTextLimit)})
}

// DownloadEvent is a page download as Chromium reports it.
type DownloadEvent struct {
	FileName string
	URL      string
	Size     int64
	// Failed: download.failure() reports a failure.
	Failed bool
	// SaveTime is how long saving the file takes.
	SaveTime time.Duration
}

// PageDownload is saveDownload: a download that did not fail is saved;
// once saved (unless the tab is closing or the file is over
// DownloadMaxBytes) it is listed for the agent, the oldest beyond
// DownloadLimit evicted, and offered to the controlling viewer only.
func (b *ServerBrowser) PageDownload(t *Tab, d DownloadEvent) {
	if d.Failed {
		b.settleAborted(t, b.downloadNavigation(t, d.URL), d.URL, nil)
		return
	}
	b.nextDownload++
	id := fmt.Sprintf("download-%d", b.nextDownload)
	nav := b.downloadNavigation(t, d.URL)
	b.env.After(d.SaveTime, func() {
		if t.Control.Closed || d.Size > DownloadMaxBytes {
			b.settleAborted(t, nav, d.URL, nil)
			return
		}
		name := cut(d.FileName, 255)
		if name == "" {
			name = "download"
		}
		t.Downloads = append(t.Downloads, Download{ID: id, FileName: name, SizeBytes: d.Size, URL: cut(d.URL, 2048)})
		if n := len(t.Downloads) - DownloadLimit; n > 0 {
			t.Downloads = append([]Download(nil), t.Downloads[n:]...)
		}
		saved := t.Downloads[len(t.Downloads)-1]
		// A tab whose own address was the file shows it in place; only
		// otherwise is it offered to the controlling viewer.
		if !b.shownInTab(t, nav) {
			if q := t.controller(); q != nil {
				q.push(t, Output{Tag: "download", ID: id, FileName: name, Size: d.Size})
			}
		}
		b.settleAborted(t, nav, d.URL, &saved)
	})
}

// DesktopReturns is the desktop giving back a page it took (devtools
// closed): the server drives it again at once, without waiting for a
// viewer or an agent (the newest stored test file, index:70867653086).
func (b *ServerBrowser) DesktopReturns(t *Tab) {
	if t.Desktop && t.page == pageNone && b.Tab(t.ThreadID, t.TabID) == t {
		b.ensurePage(t, "desktop", func(string) {})
	}
}

// OpenDownload is openDownload: the finished download id of a live tab.
func (b *ServerBrowser) OpenDownload(threadID, tabID, id string) (Download, bool) {
	if t := b.Tab(threadID, tabID); t != nil && !t.pageless() {
		for _, d := range t.Downloads {
			if d.ID == id {
				return d, true
			}
		}
	}
	return Download{}, false
}

// FileChooserEvent is a page opening its file picker; AcceptAfter is how
// long reading the input's accept attribute takes.
type FileChooserEvent struct {
	Multiple    bool
	Accept      string
	AcceptAfter time.Duration
}

// PageFileChooser is offerFileChooser: once the accept attribute is read,
// a newer picker replaces an unanswered one (closing it for every viewer),
// and the picker is offered to the controlling viewer.
func (b *ServerBrowser) PageFileChooser(t *Tab, c FileChooserEvent) {
	offer := func() {
		if t.Control.Closed {
			return
		}
		t.closeFileChooser()
		b.nextChooser++
		t.fileChooser = &openChooser{id: fmt.Sprintf("chooser-%d", b.nextChooser),
			FileChooser: FileChooser{Multiple: c.Multiple, Accept: cut(c.Accept, 1024)}}
		t.pushFileChooser()
	}
	if c.AcceptAfter > 0 {
		b.env.After(c.AcceptAfter, offer)
		return
	}
	offer()
}

// OpenFileChooser returns the tab's open picker, or nil.
func (t *Tab) OpenFileChooser() *FileChooser {
	if t.fileChooser == nil {
		return nil
	}
	c := t.fileChooser.FileChooser
	return &c
}

// AnswerFileChooser is answerFileChooser: a viewer's uploaded files for the
// open picker chooserID (only the first for a single-file picker; none
// cancels it), which then closes. False when that picker is gone.
func (b *ServerBrowser) AnswerFileChooser(threadID, tabID, chooserID string, files []string) bool {
	t := b.Tab(threadID, tabID)
	if t == nil || t.pageless() || t.fileChooser == nil || t.fileChooser.id != chooserID {
		return false
	}
	if len(files) > 0 {
		if !t.fileChooser.Multiple {
			files = files[:1]
		}
		t.Uploads = append(t.Uploads, Upload{Files: files})
	}
	t.closeFileChooser()
	return true
}

// Upload is files set on the page: on a file input (Locator) or the open
// picker (Locator "").
type Upload struct {
	Locator string
	Files   []string
	// Payloads are the files' bytes, for a remote desktop page, which
	// cannot open the environment's paths (Files is empty then).
	Payloads []FilePayload
}

// upload is uploadFiles: absolute paths only; a locator sets a file
// input's files; else the open picker takes them (one only for a
// single-file picker) and closes.
func (t *Tab) upload(paths []string, locator string) (string, string) {
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") {
			return ExecutionError, "Upload paths must be absolute: " + p
		}
	}
	if locator != "" {
		t.Uploads = append(t.Uploads, Upload{Locator: locator, Files: paths})
		return OK, ""
	}
	open := t.fileChooser
	switch {
	case open == nil:
		return ExecutionError, "No file picker is open. Click the page's upload control first, or pass the file input's locator."
	case len(paths) > 1 && !open.Multiple:
		return ExecutionError, "This file picker accepts one file."
	}
	if len(paths) > 0 {
		t.Uploads = append(t.Uploads, Upload{Files: paths})
	}
	t.closeFileChooser()
	return OK, ""
}

// --- the agent's pointer ------------------------------------------------

// pointer is pointerFor: viewers (and a desktop tab's own window) see the
// agent's pointer glide to the centre of box, then, for a click, pulse;
// then the action runs. An unwatched headless tab pays no glide.
func (b *ServerBrowser) pointer(t *Tab, box Box, click bool, then func()) {
	if len(t.Viewers) == 0 && !t.Desktop {
		then()
		return
	}
	x, y := box.X+box.Width/2, box.Y+box.Height/2
	show := func(phase string) {
		b.pointerSeq++
		for _, q := range t.queues {
			q.push(t, Output{Tag: "pointer", Phase: phase, X: x, Y: y, Sequence: b.pointerSeq})
		}
	}
	show("move")
	b.env.After(AgentCursorMove, func() {
		if !click {
			then()
			return
		}
		show("click")
		b.env.After(AgentCursorClickLead, then)
	})
}

// --- context launch and the desktop's page ------------------------------

// pageState is where a session's page is.
type pageState int

const (
	pageLive    pageState = iota // the tab has its page
	pageNone                     // no page: its launch failed, or the desktop took it back
	pageOpening                  // a launch (or the desktop connection) is in progress
)

func (t *Tab) pageless() bool { return t.page != pageLive }

// HasPage reports whether the session has its page (a ServerTab upstream).
func (t *Tab) HasPage() bool { return !t.pageless() }

// OpenSession is the preview manager opening a server-runtime session
// owned by owner ("" for a human's); its page launches in the background
// (ensureTab) and, if the launch fails, the tab exists only as a session.
func (b *ServerBrowser) OpenSession(threadID, url, owner string, desktop bool) *Tab {
	b.nextTab++
	now := b.env.Now()
	t := &Tab{ThreadID: threadID, TabID: fmt.Sprintf("tab_%d_%s", b.nextTab, b.epoch), CreatedAt: now, UsedAt: now,
		URL: url, Reveal: owner == "", Desktop: desktop, Viewport: UnattachedFillViewport, page: pageNone}
	t.Control = NewControl(owner, b.env.After)
	b.tabs = append(b.tabs, t)
	b.ensurePage(t, "manager", func(string) {})
	return t
}

// ensurePage is ensureTab: a session without its page gets one: the
// desktop's page again (a new connection) for a desktop tab, else a
// headless context launch (ContextLaunch), which may fail. A session
// closed while its page was opening discards the page (TabNotFound).
// Callers waiting on the same opening share it; by names who asked
// (traced with a desktop reconnection).
func (b *ServerBrowser) ensurePage(t *Tab, by string, done func(outcome string)) {
	switch t.page {
	case pageLive:
		done(OK)
		return
	case pageOpening:
		t.opening = append(t.opening, done)
		return
	}
	t.page = pageOpening
	t.opening = []func(string){done}
	settle := func(outcome string) {
		waiting := t.opening
		t.opening = nil
		for _, f := range waiting {
			f(outcome)
		}
	}
	if t.Desktop && t.Native != nil {
		b.connectNative(t, by, settle)
		return
	}
	if t.Desktop && b.hostAway(t) {
		b.awaitHost(t, by, settle)
		return
	}
	if t.Desktop {
		b.DesktopConnections++
		t.page = pageLive
		b.freshControl(t)
		b.env.Emit(actor, "tab.connect", "desktop", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID), sim.A("by", by))
		settle(OK)
		return
	}
	t.Context = contextFor(t)
	ok, after := true, time.Duration(0)
	if b.ContextLaunch != nil {
		ok, after = b.ContextLaunch(t.ThreadID, t.TabID)
	}
	finish := func() {
		if !ok {
			t.page = pageNone
			b.env.Emit(actor, "tab.launch", "failed", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
			settle(LaunchError)
			return
		}
		b.ContextsLaunched++
		if t.closedPending || b.dead {
			// createTab: the session closed while its page opened; the
			// page is closed again and the open reports no tab.
			t.page = pageNone
			b.PagesClosed++
			settle(TabNotFound)
			return
		}
		t.page = pageLive
		b.freshControl(t)
		settle(OK)
	}
	if after > 0 {
		b.env.After(after, finish)
		return
	}
	finish()
}

// freshControl gives a (re)created page its own SessionControl, as
// createTab does: the owner stays, control and element refs start over.
func (b *ServerBrowser) freshControl(t *Tab) {
	if t.Control.Closed {
		t.Control = NewControl(t.Control.AgentID, b.env.After)
	}
	t.refs = nil
}

// AttachViewerAsync is attachViewer on a session that may have no page
// yet: the page is ensured first; done gets OK once attached, or
// TabNotFound (the session is gone, or closed while its page opened), or
// LaunchError.
func (b *ServerBrowser) AttachViewerAsync(t *Tab, viewer string, canOperate bool, done func(outcome string)) {
	if b.Tab(t.ThreadID, t.TabID) != t {
		done(TabNotFound)
		return
	}
	b.ensurePage(t, viewer, func(outcome string) {
		if outcome == OK {
			b.AttachViewer(t, viewer, canOperate)
		}
		done(outcome)
	})
}

// DesktopWithdraw is the desktop taking its page back (closed, swapped,
// crashed, or devtools opened: the debugger is withdrawn): the server lets
// go of the page (its endpoint is released, its control closed, ending the
// action in progress), every viewer is told to reconnect and its stream
// ends, and the session stays; the next viewer or explicit agent request
// connects again. Only a desktop tab with its page is affected.
func (b *ServerBrowser) DesktopWithdraw(t *Tab) {
	if !t.Desktop || t.pageless() {
		return
	}
	b.env.Emit("desktop", "tab.withdraw", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID),
		sim.A("viewers", fmt.Sprint(len(t.Viewers))))
	t.page = pageNone
	for _, q := range t.queues {
		q.push(t, Output{Tag: "reconnect"})
	}
	if t.Control.Owner != "" {
		// Closing the dropped tab's control ends the human's control too.
		b.env.Emit(t.Control.Owner, "control.release", "withdrawn", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
	}
	// What the dropped ServerTab held goes with it: the next page starts
	// with no dialog, picker, downloads or load state.
	t.dialog, t.fileChooser, t.Downloads = nil, nil, nil
	t.loadErr, t.loadSeen, t.Loading = nil, false, false
	viewers := t.Viewers
	t.ended = t.queues
	t.Viewers, t.readOnly, t.queues = nil, nil, nil
	t.Control.Close()
	b.surfaceDrop(t, true)
	inflight := t.inflight
	t.inflight = nil
	for _, a := range inflight {
		a.end(ReasonClosed)
	}
	t.DesktopEndpoint = false
	b.EndpointReleases++
	for _, v := range viewers {
		b.env.Emit(v, "viewer.detach", "reconnect", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
	}
	if b.ViewerReconnect {
		for _, v := range viewers {
			b.env.After(ViewerReconnectDelay, func() {
				if b.dead || b.Tab(t.ThreadID, t.TabID) != t {
					return
				}
				b.ensurePage(t, v, func(outcome string) {
					if outcome == OK {
						b.Watch(t, v)
					}
				})
			})
		}
	}
}

// fillStatus adds what statusWithTitle reports of the page: the pending
// dialog, the open picker, the downloads and the load error; the title is
// read only when the page has a URL and no dialog is pending.
func (b *ServerBrowser) fillStatus(t *Tab, res *Result) {
	res.Dialog = t.DialogShown()
	res.FileChooser = t.OpenFileChooser()
	res.Downloads = append([]Download(nil), t.Downloads...)
	res.LoadError = b.LoadErrorOf(t)
	if t.URL != "" && t.dialog == nil {
		t.TitleReads++
	}
	b.fillVisibility(t, res)
}

// failNavigation is a navigation whose main-frame request fails: the load
// error is recorded, the tab shows the error page, and the request fails
// with the error's description (navigate's ExecutionError).
func (b *ServerBrowser) failNavigation(t *Tab, url, errorText string, res *Result) {
	b.PageRequest(t, url)
	b.PageRequestFailed(t, url, errorText)
	t.URL = ErrorPageURL
	_, desc := ParseNetError(errorText)
	res.Message = "Navigation to " + url + " failed: " + desc
}

// worldClick is a worlds' click while page dialogs are on (DialogFor): it
// answers when it starts, as the worlds' tools do, but a dialog the click
// opens holds the tab's queue until it is resolved (or the tab closes).
func (b *ServerBrowser) worldClick(t *Tab, req Request, ignore bool, res Result, finish func(Result)) {
	replied := false
	t.Control.Submit(Item{Kind: ItemAgent, Actor: req.AgentSessionID, IgnoreOwner: ignore,
		Run: func(complete func(string)) {
			if t.dialog != nil {
				complete(ReasonDialogPending)
				return
			}
			replied = true
			res.Outcome = OK
			t.Clicks++
			took := b.rand.Duration("action-time", 5*time.Millisecond, 1500*time.Millisecond)
			d := b.DialogFor(t.ThreadID, t.TabID)
			finish(res)
			if d == nil {
				b.env.After(took, func() { complete(OK) })
				return
			}
			b.holdOnDialog(t, *d, func(o, _ string) { complete(o) })
		},
		Done: func(o string) {
			if !replied {
				res.Outcome = o
				finish(res)
			}
		}})
}
