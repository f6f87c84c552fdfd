package browser

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Native desktop ROOT cases of the newest stored ServerBrowser.test.ts
// (index:70867653086), on the sb harness of fidelity_test.go with a native
// host standing in for the test's DesktopBrowserChannel mock.

// nativeSB is the sb harness whose agent opens become native roots on host
// (the catalogue's desktopHostId) with profile.
func nativeSB(t *testing.T, hostID, profile string) (*sb, *NativeHost) {
	w := newSB(t, reported)
	h := w.b.AddNativeHost(hostID)
	w.b.NativeRootFor = func(string) (*NativeHost, string) { return h, profile }
	return w, h
}

// openRoot opens one root as agent-a and requires it to succeed.
func (w *sb) openRoot() *Tab {
	r := w.as("agent-a", OpOpen, func(r *Request) { r.ReuseExistingTab, r.URL = false, "" })
	w.run(time.Millisecond)
	require.True(w.t, r.done)
	require.Equal(w.t, OK, r.Outcome, r.Message)
	return w.b.Tab(sbThread, r.TabID)
}

func tabIDs(ts []*Tab) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.TabID)
	}
	return out
}

// TestSBN68_AgentOpensIndependentNativePage is SB-N68, upstream "agent
// opens %s on an independent native page owned by its selected host"
// (default on local, developer and incognito on remote-desktop): while the
// desktop sets the page up nothing is listed or announced; then the
// session is a desktop-root with its root id, the agent's owner key, the
// host and the profile; the root was created with that profile and URL,
// no headless context launched, one desktop connection navigated once; a
// viewer adds no connection; type and press reach the page; a vetoed close
// keeps the session, the next close retires it, and both closes went to
// the root (the page itself is the desktop's to close).
func TestSBN68_AgentOpensIndependentNativePage(t *testing.T) {
	for _, row := range []struct{ profile, host string }{
		{"default", "local"}, {"developer", "remote-desktop"}, {"incognito", "remote-desktop"},
	} {
		t.Run(row.profile, func(t *testing.T) {
			w, h := nativeSB(t, row.host, row.profile)
			var release func()
			h.Setup = func(_ *NativePage, done func()) { release = done }
			url := "https://example.test/start"
			opening := w.as("agent-a", OpOpen, func(r *Request) { r.ReuseExistingTab, r.URL = false, url })
			w.run(time.Second)
			require.NotNil(t, release, "setup entered")
			assert.False(t, opening.done)
			assert.Empty(t, w.b.Tabs(), "no session before the root is accepted")
			assert.Empty(t, w.b.NativeOpened(), "no event")
			release()
			require.True(t, opening.done)
			require.Equal(t, OK, opening.Outcome)
			tab := w.b.Tab(sbThread, opening.TabID)
			require.NotNil(t, tab)
			assert.Equal(t, "desktop-root", tab.BackingPage())
			assert.Equal(t, "root-"+tab.TabID, tab.Native.ID)
			assert.Equal(t, OwnerKey(w.env.Profile, sbEnv, "agent-a", sbThread), tab.Control.AgentID)
			assert.Equal(t, row.host, tab.Native.Host.ID)
			assert.Equal(t, row.profile, tab.ProfileID)
			created := h.Sent(CmdCreateRoot)
			require.Len(t, created, 1)
			assert.Equal(t, tab.TabID, created[0].TabID)
			assert.Equal(t, row.profile, created[0].Profile)
			assert.Equal(t, url, created[0].URL)
			assert.Zero(t, w.b.ContextsLaunched, "no headless context")
			assert.Equal(t, 1, w.b.DesktopConnections)
			assert.Equal(t, 1, tab.Gotos, "navigated once")
			assert.Equal(t, []string{tab.TabID}, w.b.NativeOpened(), "opened carries the root")
			w.b.AttachViewer(tab, "viewer", false)
			assert.Equal(t, 1, w.b.DesktopConnections, "the viewer reuses the connection")
			for _, op := range []string{OpType, OpPress} {
				r := w.as("agent-a", op, onTab(tab, nil))
				w.run(2 * time.Second)
				require.Equal(t, OK, r.Outcome, op)
			}
			assert.Equal(t, []string{"agent type", "agent press"}, tab.Page)
			h.Close = func(_ *NativePage, _ int, answer func(string)) { answer(NativeCloseCanceled) }
			vetoed := w.as("agent-a", OpClose, onTab(tab, nil))
			require.True(t, vetoed.done)
			assert.NotEqual(t, OK, vetoed.Outcome)
			assert.Same(t, tab, w.b.Tab(sbThread, tab.TabID), "the vetoed close keeps the session")
			assert.Equal(t, "root-"+tab.TabID, tab.Native.ID)
			h.Close = nil
			closed := w.as("agent-a", OpClose, onTab(tab, nil))
			require.True(t, closed.done)
			assert.Equal(t, OK, closed.Outcome)
			assert.Empty(t, w.b.Tabs())
			assert.Equal(t, []string{"root-" + tab.TabID, "root-" + tab.TabID}, h.SentIDs(CmdCloseRoot))
			assert.Zero(t, w.b.PagesClosed, "the desktop's page is not closed by the server")
		})
	}
}

// TestSBN70_RootLoadedBeforeAcceptancePublishesNavigation is SB-N70,
// upstream "a root loaded before native acceptance publishes its completed
// navigation": the root navigates and reports Success while its
// acceptance is held; nothing is listed or announced until acceptance;
// then the session carries that Success with its URL and title, and the
// page was navigated once.
func TestSBN70_RootLoadedBeforeAcceptancePublishesNavigation(t *testing.T) {
	w, h := nativeSB(t, "local", "default")
	h.Title = "Completed before acceptance"
	var accept func(string)
	h.Accept = func(_ *NativePage, answer func(string)) { accept = answer }
	url := "https://example.test/completed"
	opening := w.as("agent-a", OpOpen, func(r *Request) { r.ReuseExistingTab, r.URL = false, url })
	w.run(time.Second)
	require.NotNil(t, accept, "acceptance entered")
	p := w.b.NativePages()[0]
	assert.Equal(t, NavStatus{Tag: "Success", URL: url, Title: "Completed before acceptance"}, p.Nav, "reported before acceptance")
	assert.Empty(t, w.b.Tabs())
	assert.Empty(t, w.b.NativeOpened())
	accept("")
	require.True(t, opening.done)
	require.Equal(t, OK, opening.Outcome)
	require.Len(t, w.b.Tabs(), 1)
	tab := w.b.Tabs()[0]
	assert.Equal(t, opening.TabID, tab.TabID)
	assert.Equal(t, NavStatus{Tag: "Success", URL: url, Title: "Completed before acceptance"}, tab.Native.Nav)
	assert.Equal(t, 1, tab.Gotos)
}

// TestSBN71_RootFailedBeforeAcceptancePublishesFailure is SB-N71, upstream
// "a root that failed before native acceptance publishes its failed
// navigation": the root's navigation is refused while its acceptance is
// held; nothing is listed; once accepted the open fails with the
// navigation's error (ERR_CONNECTION_REFUSED) and the session is listed
// with that LoadFailed (code -102); one navigation.
func TestSBN71_RootFailedBeforeAcceptancePublishesFailure(t *testing.T) {
	w, h := nativeSB(t, "local", "default")
	var accept func(string)
	h.Accept = func(_ *NativePage, answer func(string)) { accept = answer }
	url := "https://example.test/refused"
	opening := w.as("agent-a", OpOpen, func(r *Request) {
		r.ReuseExistingTab, r.URL, r.LoadFailure = false, url, "net::ERR_CONNECTION_REFUSED"
	})
	w.run(time.Second)
	require.NotNil(t, accept)
	assert.Equal(t, "LoadFailed", w.b.NativePages()[0].Nav.Tag, "reported before acceptance")
	assert.Empty(t, w.b.Tabs())
	accept("")
	require.True(t, opening.done)
	assert.Equal(t, ExecutionError, opening.Outcome)
	assert.Contains(t, opening.Message, "ERR_CONNECTION_REFUSED")
	require.Len(t, w.b.Tabs(), 1, "the failed navigation keeps its session")
	assert.Equal(t, NavStatus{Tag: "LoadFailed", URL: url, Code: -102, Description: "ERR_CONNECTION_REFUSED"},
		w.b.Tabs()[0].Native.Nav)
	assert.Equal(t, 1, w.b.Tabs()[0].Gotos)
}

// TestSBN72_AcceptanceFailureIsRemoteUnavailable is SB-N72, upstream
// "native root acceptance failure retains the unavailable error
// classification": acceptance fails guest-unavailable; the open fails
// RemoteUnavailable and no session is listed.
func TestSBN72_AcceptanceFailureIsRemoteUnavailable(t *testing.T) {
	w, h := nativeSB(t, "local", "default")
	h.Accept = func(_ *NativePage, answer func(string)) { answer(NativeGuestMissing) }
	r := w.as("agent-a", OpOpen, newTab)
	w.run(time.Second)
	require.True(t, r.done)
	assert.Equal(t, ErrRemoteUnavailable, r.Outcome)
	assert.Empty(t, w.b.Tabs())
}
