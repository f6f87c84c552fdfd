package browser

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The page-lifecycle cases of ServerBrowser.test.ts @ 164d7dbe (SB-N03..
// SB-N14), on the sb harness of fidelity_test.go.

func tags(out []Output, tag string) []Output {
	var got []Output
	for _, o := range out {
		if o.Tag == tag {
			got = append(got, o)
		}
	}
	return got
}

var confirmDelete = Dialog{Type: "confirm", Message: "Delete row?"}

// TestSBN03_PendingDialogReportedAndResolved is SB-N03, upstream "reports a
// pending dialog without evaluating the page and resolves it explicitly".
func TestSBN03_PendingDialogReportedAndResolved(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	nav := w.as("agent-a", OpNavigate, onTab(tab, func(r *Request) { r.URL = "http://localhost:5173" }))
	w.run(2 * time.Second)
	require.Equal(t, OK, nav.Outcome)
	blocked := w.as("agent-a", OpEvaluate, onTab(tab, func(r *Request) { r.Dialog = &confirmDelete }))
	w.run(time.Second)
	require.False(t, blocked.done, "the evaluation waits on its dialog")
	titles := tab.TitleReads
	status := w.as("agent-a", OpStatus, onTab(tab, nil))
	require.Equal(t, OK, status.Outcome)
	require.NotNil(t, status.Dialog)
	assert.Equal(t, "confirm", status.Dialog.Type)
	assert.Equal(t, "Delete row?", status.Dialog.Message)
	assert.Equal(t, titles, tab.TitleReads, "status does not read the title under a dialog")
	assert.Empty(t, tab.DialogAnswers, "the dialog is not dismissed")
	reuse := w.as("agent-a", OpOpen, onTab(tab, func(r *Request) { r.URL = "http://localhost:5173/other" }))
	assert.Equal(t, ReasonDialogPending, reuse.Outcome)
	assert.Equal(t, 1, tab.Gotos, "the refused open did not navigate")
	answered := w.as("agent-a", OpDialog, onTab(tab, func(r *Request) { r.Accept = true }))
	assert.Equal(t, OK, answered.Outcome)
	require.True(t, blocked.done)
	assert.Equal(t, OK, blocked.Outcome)
	assert.Equal(t, "true", blocked.Value, "the confirm returned true")
	assert.Equal(t, []bool{true}, tab.DialogAnswers, "accepted once")
	resolved := w.as("agent-a", OpStatus, onTab(tab, nil))
	assert.Nil(t, resolved.Dialog)
}

// TestSBN04_CloseWhileViewerOpensLeavesNoPage is SB-N04, upstream "closing
// a tab while a viewer is still opening it does not leave its page behind".
func TestSBN04_CloseWhileViewerOpensLeavesNoPage(t *testing.T) {
	w := newSB(t, reported)
	fail := true
	w.b.ContextLaunch = func(string, string) (bool, time.Duration) {
		if fail {
			return false, 0
		}
		return true, 10 * time.Millisecond // the gated launch
	}
	tab := w.b.OpenSession(sbThread, "", "", false)
	require.False(t, tab.HasPage(), "the background open failed: the tab exists only as a session")
	assert.Equal(t, 0, w.b.ContextsLaunched)
	fail = false
	var attached string
	w.b.AttachViewerAsync(tab, "viewer", false, func(o string) { attached = o })
	assert.Empty(t, attached, "the viewer waits on the launch")
	w.b.ManagerClose(tab)
	w.run(20 * time.Millisecond)
	assert.Equal(t, TabNotFound, attached)
	assert.Equal(t, 1, w.b.ContextsLaunched, "one context was launched")
	assert.Equal(t, 1, w.b.PagesClosed, "and its page closed")
	assert.Empty(t, w.b.Tabs())
}

// TestSBN05_CopiesReachOnlyTheControllerAfterInput is SB-N05, upstream
// "page copies reach only the controlling viewer right after its input".
func TestSBN05_CopiesReachOnlyTheControllerAfterInput(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	w.b.AttachViewer(tab, "watcher", false)
	w.b.AttachViewer(tab, "viewer", true)
	w.input(tab, "viewer", ViewerInput{Kind: InputTakeControl})
	w.run(time.Second)
	clipboard := func(v string) []Output { return tags(tab.Output(v), "clipboard") }
	w.b.PageClipboard(tab, "unprompted")
	assert.Empty(t, clipboard("viewer"), "a copy without a recent gesture stays on the server")
	w.input(tab, "viewer", ViewerInput{Kind: InputKey, Key: "c", Modifiers: 4})
	assert.Equal(t, "human key c command copy", tab.Page[len(tab.Page)-1])
	w.b.PageClipboard(tab, "copied")
	assert.Equal(t, []Output{{Tag: "clipboard", Text: "copied"}}, clipboard("viewer"))
	assert.Empty(t, clipboard("watcher"))
	w.run(ClipboardGesture + time.Millisecond)
	w.b.PageClipboard(tab, "late")
	assert.Empty(t, clipboard("viewer"), "past the gesture window")
}

// TestSBN06_DownloadSavedOfferedListed is SB-N06, upstream "a page download
// is saved, offered to the controller, and listed for the agent".
func TestSBN06_DownloadSavedOfferedListed(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	w.b.AttachViewer(tab, "viewer", true)
	w.input(tab, "viewer", ViewerInput{Kind: InputTakeControl})
	w.run(time.Second)
	tab.Output("viewer")
	w.b.PageDownload(tab, DownloadEvent{FileName: "report.csv", URL: "blob:http://localhost:5173/1", Size: 3, SaveTime: 50 * time.Millisecond})
	assert.Empty(t, tags(tab.Output("viewer"), "download"), "offered once saved")
	w.run(100 * time.Millisecond)
	offered := tags(tab.Output("viewer"), "download")
	require.Len(t, offered, 1)
	assert.Equal(t, "report.csv", offered[0].FileName)
	assert.Equal(t, int64(3), offered[0].Size)
	file, ok := w.b.OpenDownload(sbThread, tab.TabID, offered[0].ID)
	require.True(t, ok)
	assert.Equal(t, "report.csv", file.FileName)
	status := w.as("agent-a", OpStatus, onTab(tab, nil))
	require.Len(t, status.Downloads, 1)
	assert.Equal(t, "report.csv", status.Downloads[0].FileName)
	assert.Equal(t, int64(3), status.Downloads[0].SizeBytes)
	_, ok = w.b.OpenDownload(sbThread, tab.TabID, "guess")
	assert.False(t, ok)
}

// TestSBN07_FilePickerToControllerTakesUploads is SB-N07, upstream "a
// page's file picker goes to the controller and takes its uploaded files".
func TestSBN07_FilePickerToControllerTakesUploads(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	w.b.AttachViewer(tab, "viewer", true)
	w.input(tab, "viewer", ViewerInput{Kind: InputTakeControl})
	w.run(time.Second)
	w.b.PageFileChooser(tab, FileChooserEvent{Accept: ".csv"})
	offered := tags(tab.Output("viewer"), "fileChooser")
	require.Len(t, offered, 1)
	assert.False(t, offered[0].Multiple)
	assert.Equal(t, ".csv", offered[0].Accept)
	answer := func(id string) bool {
		return w.b.AnswerFileChooser(sbThread, tab.TabID, id, []string{"a.csv", "b.csv"})
	}
	assert.False(t, answer("other"))
	assert.True(t, answer(offered[0].ID))
	assert.Equal(t, []Upload{{Files: []string{"a.csv"}}}, tab.Uploads, "a single-file input receives the first file only")
	closed := tags(tab.Output("viewer"), "fileChooserClosed")
	require.Len(t, closed, 1)
	assert.Equal(t, offered[0].ID, closed[0].ID)
	assert.False(t, answer(offered[0].ID))
}

// TestSBN08_FilePickerReplacesStalledBacklog is SB-N08, upstream "a file
// picker replaces a stalled viewer backlog instead of being dropped".
func TestSBN08_FilePickerReplacesStalledBacklog(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	w.b.AttachViewer(tab, "viewer", true)
	w.input(tab, "viewer", ViewerInput{Kind: InputTakeControl})
	w.run(time.Second)
	w.b.PageFileChooser(tab, FileChooserEvent{Accept: ".csv", AcceptAfter: 10 * time.Millisecond})
	tab.Output("viewer")
	tab.StallViewer("viewer", Output{Tag: "viewport", Width: 1, Height: 1})
	w.run(20 * time.Millisecond)
	out := tab.Output("viewer")
	require.Len(t, out, 1, "the picker replaced the whole backlog")
	assert.Equal(t, "fileChooser", out[0].Tag)
	assert.Equal(t, ".csv", out[0].Accept)
}

// TestSBN09_ControlUpdatesReplaceBacklogInOrder is SB-N09, upstream
// "control updates replace a stalled viewer backlog in the order they
// happen".
func TestSBN09_ControlUpdatesReplaceBacklogInOrder(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	w.b.AttachViewer(tab, "viewer", true)
	tab.Output("viewer")
	tab.StallViewer("viewer", Output{Tag: "frame"})
	w.input(tab, "viewer", ViewerInput{Kind: InputTakeControl})
	w.run(time.Second)
	w.input(tab, "viewer", ViewerInput{Kind: InputReleaseControl})
	w.run(time.Second)
	var controls []string
	for _, o := range tags(tab.Output("viewer"), "control") {
		controls = append(controls, o.Controller)
	}
	require.NotEmpty(t, controls)
	assert.Equal(t, "you", controls[0])
	assert.NotEqual(t, "you", controls[len(controls)-1])
	assert.Equal(t, ViewerOutputLimit, tab.FramesAcked("viewer"), "the dropped frames were acked")
}

// TestSBN10_AgentAnswersPickerOrSetsInput is SB-N10, upstream "an agent
// answers the page's file picker or sets files on a file input".
func TestSBN10_AgentAnswersPickerOrSetsInput(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	upload := func(paths []string, locator string) *reply {
		r := w.as("agent-a", OpUpload, onTab(tab, func(r *Request) { r.Paths, r.Locator = paths, locator }))
		w.run(time.Second)
		return r
	}
	assert.Equal(t, ExecutionError, upload([]string{"/tmp/a.csv"}, "").Outcome, "no picker is open")
	w.b.PageFileChooser(tab, FileChooserEvent{Accept: ".csv"})
	status := w.as("agent-a", OpStatus, onTab(tab, nil))
	assert.Equal(t, &FileChooser{Multiple: false, Accept: ".csv"}, status.FileChooser)
	assert.Equal(t, ExecutionError, upload([]string{"/tmp/a.csv", "/tmp/b.csv"}, "").Outcome, "one file only")
	assert.Equal(t, OK, upload([]string{"/tmp/a.csv"}, "").Outcome)
	assert.Equal(t, []Upload{{Files: []string{"/tmp/a.csv"}}}, tab.Uploads)
	assert.Nil(t, w.as("agent-a", OpStatus, onTab(tab, nil)).FileChooser)
	assert.Equal(t, OK, upload([]string{"/tmp/b.csv"}, "input[type=file]").Outcome)
	assert.Equal(t, Upload{Locator: "input[type=file]", Files: []string{"/tmp/b.csv"}}, tab.Uploads[1])
	assert.Equal(t, ExecutionError, upload([]string{"b.csv"}, "input[type=file]").Outcome, "paths must be absolute")
}

// TestSBN11_ViewersSeeAgentPointer is SB-N11, upstream "viewers see the
// agent's pointer move to its target and click there".
func TestSBN11_ViewersSeeAgentPointer(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	w.b.AttachViewer(tab, "viewer", false)
	click := w.as("agent-a", OpClick, onTab(tab, func(r *Request) { r.Box = &Box{X: 100, Y: 40, Width: 80, Height: 20} }))
	w.run(AgentCursorMove)
	assert.False(t, click.done, "the press waits for the glide and the pulse")
	w.run(AgentCursorClickLead)
	require.True(t, click.done)
	assert.Equal(t, OK, click.Outcome)
	pointers := tags(tab.Output("viewer"), "pointer")
	require.Len(t, pointers, 2)
	assert.Equal(t, []string{"move", "click"}, []string{pointers[0].Phase, pointers[1].Phase})
	for _, p := range pointers {
		assert.Equal(t, [2]int{140, 50}, [2]int{p.X, p.Y})
	}
	assert.Equal(t, 1, tab.Clicks)
}

var certificateError = LoadError{URL: "https://device.local/", Code: -202, Description: "ERR_CERT_AUTHORITY_INVALID"}

// TestSBN12_ReportsWhyPageFailedToLoad is SB-N12, upstream "reports why a
// page failed to load while the tab shows the error page".
func TestSBN12_ReportsWhyPageFailedToLoad(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	w.b.PageRequest(tab, certificateError.URL)
	w.b.PageRequestFailed(tab, certificateError.URL, "net::ERR_CERT_AUTHORITY_INVALID")
	w.b.PageShows(tab, ErrorPageURL)
	status := w.as("agent-a", OpStatus, onTab(tab, nil))
	assert.Equal(t, &certificateError, status.LoadError)
	snap := w.as("agent-a", OpSnapshot, onTab(tab, nil))
	assert.Equal(t, &certificateError, snap.LoadError)
	w.b.PageRequest(tab, "https://device.local/login")
	w.b.PageShows(tab, "https://device.local/login")
	assert.Nil(t, w.as("agent-a", OpStatus, onTab(tab, nil)).LoadError, "the next navigation leaves no error")
}

// TestSBN13_DesktopLoadFailureBeforeConnect is SB-N13, upstream "reports a
// desktop tab's load failure from before the server connected".
func TestSBN13_DesktopLoadFailureBeforeConnect(t *testing.T) {
	w := newSB(t, reported)
	tab := w.b.OpenUnowned(sbThread, "", true)
	w.b.AttachViewer(tab, "viewer", false)
	w.b.PageShows(tab, ErrorPageURL)
	w.b.DesktopLoadFailure = func(thread, tabID string) *LoadError {
		if thread == sbThread && tabID == tab.TabID {
			return &certificateError
		}
		return nil
	}
	status := func() *LoadError { return w.as("agent-a", OpStatus, onTab(tab, nil)).LoadError }
	assert.Equal(t, &certificateError, status())
	w.b.PageRequest(tab, "https://device.local/retry")
	assert.Nil(t, status(), "a navigation the server sees supersedes it, even before the error page goes")
}

// TestSBN14_DesktopTakesPageBackViewerReconnects is SB-N14, upstream "a
// desktop page the desktop takes back reconnects instead of closing".
func TestSBN14_DesktopTakesPageBackViewerReconnects(t *testing.T) {
	w := newSB(t, reported)
	tab := w.b.OpenUnowned(sbThread, "", true)
	w.b.AttachViewer(tab, "viewer", false)
	assert.Equal(t, 1, w.b.DesktopConnections)
	tab.Output("viewer")
	w.b.DesktopWithdraw(tab)
	out := tab.Output("viewer")
	require.NotEmpty(t, out)
	assert.Equal(t, "reconnect", out[len(out)-1].Tag, "told to reconnect, not gone")
	assert.Empty(t, tab.Viewers, "the stream ended")
	assert.Equal(t, 1, w.b.EndpointReleases, "the desktop endpoint was released")
	assert.Equal(t, []*Tab{tab}, w.b.Tabs(), "the session survives")
	assert.False(t, tab.HasPage())
	var attached string
	w.b.AttachViewerAsync(tab, "viewer-2", false, func(o string) { attached = o })
	assert.Equal(t, OK, attached)
	assert.Equal(t, 2, w.b.DesktopConnections, "the next viewer reaches the page again")
}
