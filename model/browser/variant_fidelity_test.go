package browser

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Cases of the newest stored ServerBrowser.test.ts (index:70867653086, a
// [variant]: its repository is not certain) that 164d7dbe lacks, on the sb
// harness of fidelity_test.go.

// TestSBN15_HungViewerNavigationDoesNotHoldNextInput is SB-N15, upstream
// "a viewer $method that never commits does not hold back the viewer's
// next input (native: $native)", the headless rows.
func TestSBN15_HungViewerNavigationDoesNotHoldNextInput(t *testing.T) {
	for _, method := range []string{"goto", "goBack", "goForward", "reload"} {
		t.Run(method, func(t *testing.T) {
			w := newSB(t, reported)
			tab := w.ready()
			w.b.AttachViewer(tab, "viewer", true)
			w.input(tab, "viewer", ViewerInput{Kind: InputTakeControl})
			w.run(time.Second)
			hung := w.input(tab, "viewer", ViewerInput{Kind: InputNavigate, Method: method, Hold: 24 * time.Hour})
			fixed := w.input(tab, "viewer", ViewerInput{Kind: InputNavigate, Method: "goto", Hold: time.Millisecond})
			typed := w.input(tab, "viewer", ViewerInput{Kind: InputText, Text: "hello"})
			w.run(time.Second)
			require.True(t, hung.done && fixed.done && typed.done, "neither waits for the hung navigation")
			assert.Equal(t, OK, typed.outcome)
			assert.Equal(t, ViewerNavigation{Method: "goto", WaitUntil: "commit", Timeout: NavigationTimeout}, tab.LastViewerNavigation)
			assert.Contains(t, tab.Page, "human typed hello")
		})
	}
}

// TestSBN16_PopupKeepsAgentAndOpener is SB-N16, upstream "a popup keeps
// its agent, profile, and opener page (native: %s)", the headless row.
func TestSBN16_PopupKeepsAgentAndOpener(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	popup := w.b.Popup(tab)
	assert.Equal(t, tab.Control.AgentID, popup.Control.AgentID)
	assert.False(t, popup.Reveal)
	own := w.as("agent-a", OpEvaluate, onTab(popup, func(r *Request) { r.Value = "evaluated" }))
	w.run(2 * time.Second)
	assert.Equal(t, "evaluated", own.Value, "the opener's agent drives the popup")
	assert.Equal(t, ReasonAgentMismatch, w.as("agent-b", OpEvaluate, onTab(popup, nil)).Outcome)
	status := w.as("agent-a", OpStatus, onTab(tab, nil))
	assert.Equal(t, []TabStatus{{TabID: tab.TabID, URL: tab.URL}, {TabID: popup.TabID, OpenerTabID: tab.TabID}}, status.Tabs)
	w.b.PageClosed(popup)
	assert.Equal(t, []*Tab{tab}, w.b.Tabs(), "closing the popup's page ends its session only")
}

// TestSBN17_DownloadFromSupersededNavigationKeepsLoading is SB-N17,
// upstream "a download from a superseded navigation leaves the newer
// navigation loading".
func TestSBN17_DownloadFromSupersededNavigationKeepsLoading(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	pdf := "https://example.com/paper.pdf"
	w.b.PageRequest(tab, pdf)
	w.b.PageRequestFailed(tab, pdf, "net::ERR_ABORTED")
	w.b.PageDownload(tab, DownloadEvent{FileName: "paper.pdf", URL: pdf, Size: 4, SaveTime: 50 * time.Millisecond})
	w.run(10 * time.Millisecond)
	w.b.PageRequest(tab, "https://example.com/next")
	w.run(AbortedNavigationGrace + time.Second)
	require.Len(t, w.as("agent-a", OpStatus, onTab(tab, nil)).Downloads, 1)
	assert.True(t, tab.Loading, "the newer navigation is still loading")
}

// TestSBN18_LateFailureOfOlderRequestKeepsLoading is SB-N18, upstream "a
// late failure from a request that predates tracking leaves a newer
// navigation loading".
func TestSBN18_LateFailureOfOlderRequestKeepsLoading(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	w.b.PageRequest(tab, "https://example.com/next")
	w.b.PageRequestFailed(tab, "https://example.com/first", "net::ERR_CONNECTION_REFUSED")
	assert.True(t, tab.Loading)
}

// TestSBN19_UnexplainedAbortStopsLoading is SB-N19, upstream "an aborted
// navigation that no download explains stops loading".
func TestSBN19_UnexplainedAbortStopsLoading(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	url := "https://example.com/cancelled"
	w.b.PageRequest(tab, url)
	w.b.PageRequestFailed(tab, url, "net::ERR_ABORTED")
	assert.True(t, tab.Loading, "still loading: a download may explain the abort")
	w.run(AbortedNavigationGrace)
	assert.False(t, tab.Loading)
}

// TestSBN20_PopupShownToThePersonWhoOpenedIt is SB-N20, upstream "a popup
// from a person's click is shown to that person, with its opener kept".
func TestSBN20_PopupShownToThePersonWhoOpenedIt(t *testing.T) {
	w := newSB(t, reported)
	tab := w.b.OpenUnowned(sbThread, "", false)
	w.b.AttachViewer(tab, "watcher", false)
	w.b.AttachViewer(tab, "viewer", true)
	w.input(tab, "viewer", ViewerInput{Kind: InputTakeControl})
	w.run(time.Second)
	popup := w.b.Popup(tab)
	shown := tags(tab.Output("viewer"), "popup")
	require.Len(t, shown, 1)
	assert.Equal(t, popup.TabID, shown[0].ID)
	assert.Empty(t, tags(tab.Output("watcher"), "popup"))
	assert.Len(t, w.b.Tabs(), 2, "the opener stays open")
}

// TestSBN21_ReturnedDesktopPageReconnectsWithoutViewer is SB-N21, upstream
// "a desktop page that comes back reconnects without waiting for a viewer".
func TestSBN21_ReturnedDesktopPageReconnectsWithoutViewer(t *testing.T) {
	w := newSB(t, reported)
	tab := w.b.OpenUnowned(sbThread, "", true)
	require.Equal(t, 1, w.b.DesktopConnections)
	w.b.DesktopWithdraw(tab)
	assert.Equal(t, 1, w.b.EndpointReleases)
	w.b.DesktopReturns(tab)
	assert.Equal(t, 2, w.b.DesktopConnections)
	assert.True(t, tab.HasPage())
}

// TestSBN56_DownloadOfferedWhenTabMovesOn is SB-N56, upstream "a file a
// blank tab opened is offered to download if the tab moves on while it
// saves": the navigation to the file is aborted, the person navigates
// elsewhere while the file is written, and the saved file is offered.
func TestSBN56_DownloadOfferedWhenTabMovesOn(t *testing.T) {
	w := newSB(t, reported)
	tab := w.b.OpenUnowned(sbThread, "", false)
	w.b.AttachViewer(tab, "viewer", true)
	w.input(tab, "viewer", ViewerInput{Kind: InputTakeControl})
	w.run(time.Second)
	pdf := "https://example.com/paper.pdf"
	w.b.PageRequest(tab, pdf)
	w.b.PageRequestFailed(tab, pdf, "net::ERR_ABORTED")
	w.b.PageDownload(tab, DownloadEvent{FileName: "paper.pdf", URL: pdf, Size: 4, SaveTime: 100 * time.Millisecond})
	w.run(50 * time.Millisecond)
	w.b.PageRequest(tab, "https://example.com/next")
	w.run(100 * time.Millisecond)
	offered := tags(tab.Output("viewer"), "download")
	require.Len(t, offered, 1)
	assert.Equal(t, "paper.pdf", offered[0].FileName)
}

// TestSBN88_HeadlessPageStaysHeadless is SB-N88, upstream "a headless page
// never becomes a native page when a desktop attaches later": a desktop
// that would render the thread's tabs appears after the tab opened
// headless; a viewer and a reusing open leave it headless.
func TestSBN88_HeadlessPageStaysHeadless(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	w.b.DesktopFor = func(string) (bool, time.Duration) { return true, 0 }
	w.b.AttachViewer(tab, "viewer", false)
	reuse := w.as("agent-a", OpOpen, onTab(tab, func(r *Request) { r.URL = "https://headless.example/test" }))
	require.Equal(t, OK, reuse.Outcome)
	assert.Equal(t, tab.TabID, reuse.TabID)
	assert.Equal(t, 1, tab.Gotos, "the open navigated the headless page")
	assert.False(t, tab.Desktop)
	assert.Equal(t, 0, w.b.DesktopConnections)
}

// TestSBN75_SharedNativePageRefusesAgentKeyboard is SB-N75, upstream
// "shared native pages reject agent keyboard input while allowing a
// controlling viewer" (index:70867653086): the manager opens a desktop
// page for a person with agent-a as its automation owner; agent-a's type
// and press fail with an execution error that points it to its own tab,
// touch nothing on the page and leave the session listed; a viewer that
// takes control types and presses Enter on the page.
func TestSBN75_SharedNativePageRefusesAgentKeyboard(t *testing.T) {
	w := newSB(t, reported)
	shared := w.b.OpenShared(sbThread, "", OwnerKey(w.env.Profile, sbEnv, "agent-a", sbThread))
	w.b.AttachViewer(shared, "viewer", true)
	require.True(t, shared.Desktop, "backingPage desktop")
	require.Equal(t, 1, w.b.DesktopConnections)
	for _, op := range []string{OpType, OpPress} {
		r := w.as("agent-a", op, onTab(shared, nil))
		w.run(2 * time.Second)
		require.True(t, r.done, op)
		assert.Equal(t, ExecutionError, r.Outcome, op)
		assert.Contains(t, r.Message, "preview_open({reuseExistingTab:false})", op)
		assert.Contains(t, r.Message, "returned tabId", op)
	}
	assert.Empty(t, shared.Page, "no locator or keyboard call reached the page")
	assert.Equal(t, []*Tab{shared}, w.b.Tabs(), "the session stays")
	take := w.input(shared, "viewer", ViewerInput{Kind: InputTakeControl})
	w.run(time.Second)
	require.Equal(t, OK, take.outcome)
	text := w.input(shared, "viewer", ViewerInput{Kind: InputText, Text: "viewer text"})
	key := w.input(shared, "viewer", ViewerInput{Kind: InputKey, Key: "Enter"})
	w.run(time.Second)
	assert.Equal(t, OK, text.outcome)
	assert.Equal(t, OK, key.outcome)
	assert.Equal(t, []string{"human typed viewer text", "human key Enter"}, shared.Page)
}

// TestSBN75_OwnTabTakesAgentKeyboard is the contrast SB-N75's message
// points to: on the agent's own tab (preview_open reuseExistingTab false)
// type and press reach the page.
func TestSBN75_OwnTabTakesAgentKeyboard(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	for _, op := range []string{OpType, OpPress} {
		r := w.as("agent-a", op, onTab(tab, nil))
		w.run(2 * time.Second)
		require.True(t, r.done, op)
		assert.Equal(t, OK, r.Outcome, op)
	}
	assert.Equal(t, []string{"agent type", "agent press"}, tab.Page)
}

// TestSBN49_OfflineRootCloseRetiresWithoutReopening is SB-N49, upstream
// "explicit %s close retires an offline root without reopening it or
// consuming tab capacity" (agent and client): agent-a opens a
// desktop-rendered tab, the desktop withdraws it, and seven more follow; another session's
// close is refused and retires nothing; the owner's close (the agent's, or
// the manager's for the client) does not reconnect the page, the session
// goes, and a replacement open fits in the freed capacity.
func TestSBN49_OfflineRootCloseRetiresWithoutReopening(t *testing.T) {
	for _, entry := range []string{"agent", "client"} {
		t.Run(entry, func(t *testing.T) {
			w := newSB(t, reported)
			w.b.DesktopFor = func(string) (bool, time.Duration) { return true, 0 }
			root := w.ready()
			w.run(time.Millisecond)
			require.True(t, root.Desktop)
			w.b.DesktopWithdraw(root)
			for range AgentTabLimit - 1 {
				w.ready()
			}
			w.run(time.Millisecond)
			require.Len(t, w.b.Tabs(), AgentTabLimit, "eight sessions, one offline")
			mismatch := w.as("other-agent", OpClose, onTab(root, nil))
			require.True(t, mismatch.done)
			assert.Equal(t, ReasonAgentMismatch, mismatch.Outcome)
			assert.Same(t, root, w.b.Tab(sbThread, root.TabID), "nothing retired")
			before := w.b.DesktopConnections
			if entry == "agent" {
				r := w.as("agent-a", OpClose, onTab(root, nil))
				require.True(t, r.done)
				assert.Equal(t, OK, r.Outcome)
			} else {
				w.b.ManagerClose(root)
			}
			assert.Equal(t, before, w.b.DesktopConnections, "not reopened")
			assert.Nil(t, w.b.Tab(sbThread, root.TabID))
			assert.Len(t, w.b.Tabs(), AgentTabLimit-1)
			replacement := w.as("agent-a", OpOpen, newTab)
			require.Equal(t, OK, replacement.Outcome)
			assert.NotEqual(t, root.TabID, replacement.TabID)
			assert.Len(t, w.b.Tabs(), AgentTabLimit)
		})
	}
}
