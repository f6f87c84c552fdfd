package browser

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --- Desktop profile catalogues (the newest stored ServerBrowser.test.ts,
// index:70867653086; desktopprofiles.go) ---

func catalogue(host, defaultID string, profiles ...BrowserProfile) DesktopCatalogue {
	return DesktopCatalogue{HostID: host, Profiles: profiles, DefaultID: defaultID}
}

var (
	work     = BrowserProfile{ID: "work", Name: "Work"}
	personal = BrowserProfile{ID: "personal", Name: "Personal"}
)

// newDesktopSB is the sb harness with a desktop channel: hosts' catalogues
// connected, and every native page attaching at once.
func newDesktopSB(t *testing.T, local bool, hosts ...DesktopCatalogue) (*sb, *DesktopChannel) {
	w := newSB(t, reported)
	d := &DesktopChannel{LocalConfigured: local, Hosts: hosts}
	w.b.Desktops = d
	return w, d
}

// settled sends op as agent-a and runs the world until it is answered.
func (w *sb) settled(op string, mod func(*Request)) *reply {
	r := w.as("agent-a", op, mod)
	for i := 0; i < 30 && !r.done; i++ {
		w.run(time.Second)
	}
	require.True(w.t, r.done, "%s answered", op)
	return r
}

func headlessContexts(b *ServerBrowser) int {
	n := 0
	for _, t := range b.Tabs() {
		if !t.Desktop {
			n++
		}
	}
	return n
}

// TestSBN81_ConfiguredDesktopProfileRejectsSwitch is SB-N81, upstream "uses
// the configured desktop profile and rejects explicit profile changes on
// the same tab": the local desktop's catalogue names Work the default; an
// open with no profile opens a native page on Work (no headless context,
// one desktop connection) and status, asking the local catalogue, names
// it; openWithProfile Personal on that tab is tab-mismatch; without a tab
// it opens a second native page on Personal.
func TestSBN81_ConfiguredDesktopProfileRejectsSwitch(t *testing.T) {
	w, d := newDesktopSB(t, true, catalogue("local", "work", work, personal))
	first := w.settled(OpOpen, newTab)
	require.Equal(t, OK, first.Outcome)
	status := w.settled(OpStatus, func(r *Request) { r.TabID = first.TabID })
	require.Equal(t, OK, status.Outcome)
	assert.Equal(t, "work", status.ProfileID)
	assert.Equal(t, "Work", status.ProfileName)
	assert.Equal(t, "local", d.Requests[len(d.Requests)-1])
	assert.Equal(t, 0, headlessContexts(w.b))
	assert.Equal(t, 1, w.b.DesktopConnections)
	mismatch := w.settled(OpOpenWithProfile, func(r *Request) { r.TabID, r.ProfileName, r.URL = first.TabID, "Personal", "" })
	assert.Equal(t, ProfileError, mismatch.Outcome)
	assert.Equal(t, DetailTabMismatch, mismatch.Detail)
	fresh := w.settled(OpOpenWithProfile, func(r *Request) { r.ProfileName, r.URL = "Personal", "" })
	require.Equal(t, OK, fresh.Outcome)
	assert.Equal(t, "personal", fresh.ProfileID)
	assert.Equal(t, "Personal", fresh.ProfileName)
	assert.NotEqual(t, first.TabID, fresh.TabID)
	assert.Equal(t, 2, w.b.DesktopConnections)
}

// TestSBN82_DiscoveryStaysOnRetainedDesktop is SB-N82, upstream "keeps
// profile discovery and new tabs on the caller's retained desktop owner":
// the caller's tab is on host-b; once a local desktop (Personal) also
// connects, status, preview_profiles and a new openWithProfile Work still
// ask host-b and open there; an explicit tab that is gone fails
// tabNotFound before any catalogue request; with host-b gone, an open is
// RemoteUnavailable and opens nothing anywhere else.
func TestSBN82_DiscoveryStaysOnRetainedDesktop(t *testing.T) {
	w, d := newDesktopSB(t, false, catalogue("host-b", "work", work))
	tab := w.settled(OpOpen, newTab)
	require.Equal(t, OK, tab.Outcome)
	d.Hosts = append(d.Hosts, catalogue("local", "personal", personal))
	current := w.settled(OpStatus, func(r *Request) { r.TabID = tab.TabID })
	assert.Equal(t, "work", current.ProfileID)
	assert.Equal(t, "Work", current.ProfileName)
	profiles := w.settled(OpProfiles, func(r *Request) { r.TabID = tab.TabID })
	assert.Equal(t, "work", profiles.DefaultProfileID)
	assert.Equal(t, "host-b", d.Requests[len(d.Requests)-1])
	fresh := w.settled(OpOpenWithProfile, func(r *Request) { r.ProfileName, r.ReuseExistingTab, r.URL = "Work", false, "" })
	require.Equal(t, OK, fresh.Outcome)
	opened := w.b.Tab(sbThread, fresh.TabID)
	assert.Equal(t, "host-b", opened.DesktopHostID)
	assert.Equal(t, "work", opened.ProfileID)
	requests := len(d.Requests)
	stale := w.settled(OpOpenWithProfile, func(r *Request) {
		r.TabID, r.ProfileName, r.ReuseExistingTab, r.URL = "missing-tab", "Personal", false, ""
	})
	assert.Equal(t, TabNotFound, stale.Outcome)
	assert.Len(t, d.Requests, requests, "no catalogue was asked for")
	d.Hosts = d.Hosts[1:] // host-b disconnects
	gone := w.settled(OpOpen, func(r *Request) { r.TabID, r.ReuseExistingTab = tab.TabID, false })
	assert.Equal(t, RemoteUnavailable, gone.Outcome)
	assert.Equal(t, 2, w.b.DesktopConnections)
	assert.Equal(t, 0, headlessContexts(w.b))
}

// TestSBN83_ExplicitUserDesktopTabNotAdopted is SB-N83, upstream
// "explicitly selects a user's desktop tab without implicitly adopting it
// (attached=%s)" (false, true): a person's tab on host-b (profile Work),
// watched read-only or not; preview_profiles without a tab answers the
// local desktop's catalogue (Personal), with the tab host-b's (Work);
// openWithProfile work on that tab reuses it without claiming it
// (unclaimed, not the caller's); the agent navigates its page; once a
// person takes control the same open is humanControl; one desktop
// connection, no headless context.
func TestSBN83_ExplicitUserDesktopTabNotAdopted(t *testing.T) {
	for _, attached := range []bool{false, true} {
		t.Run(map[bool]string{false: "attached=false", true: "attached=true"}[attached], func(t *testing.T) {
			w, _ := newDesktopSB(t, true, catalogue("local", "personal", personal), catalogue("host-b", "work", work))
			tab := w.b.OpenNative(sbThread, "", "host-b", "work")
			if attached {
				w.b.AttachViewer(tab, "watcher", false)
			}
			onIt := func(r *Request) { r.TabID = tab.TabID }
			require.Equal(t, OK, w.settled(OpStatus, onIt).Outcome)
			assert.Equal(t, "personal", w.settled(OpProfiles, nil).DefaultProfileID)
			assert.Equal(t, "work", w.settled(OpProfiles, onIt).DefaultProfileID)
			reused := w.settled(OpOpenWithProfile, func(r *Request) { r.TabID, r.ProfileID, r.URL = tab.TabID, "work", "" })
			require.Equal(t, OK, reused.Outcome)
			assert.Equal(t, tab.TabID, reused.TabID)
			assert.Equal(t, "work", reused.ProfileID)
			assert.Equal(t, "Work", reused.ProfileName)
			assert.Equal(t, &ControlStatus{Owner: OwnerUnclaimed, OwnedByCaller: false}, reused.Control)
			nav := w.settled(OpNavigate, func(r *Request) { r.TabID, r.URL = tab.TabID, "https://example.test/agent" })
			require.Equal(t, OK, nav.Outcome)
			assert.Equal(t, "https://example.test/agent", tab.GotoURLs[len(tab.GotoURLs)-1])
			w.b.AttachViewer(tab, "person", true)
			controlled := w.settled(OpOpenWithProfile, func(r *Request) { r.TabID, r.ProfileID, r.URL = tab.TabID, "work", "" })
			assert.Equal(t, ReasonHumanControl, controlled.Outcome)
			assert.Equal(t, 1, w.b.DesktopConnections)
			assert.Equal(t, 0, headlessContexts(w.b))
		})
	}
}

// TestSBN84_MissingAndAmbiguousProfilesOpenNothing is SB-N84, upstream
// "fails explicit missing and ambiguous profiles without opening another
// cookie jar": two local profiles named Work; openWithProfile Missing is
// unknown, Work ambiguous; nothing opens.
func TestSBN84_MissingAndAmbiguousProfilesOpenNothing(t *testing.T) {
	w, _ := newDesktopSB(t, true, catalogue("local", "work", work, BrowserProfile{ID: "work-2", Name: "Work"}))
	for _, c := range [][2]string{{"Missing", DetailUnknown}, {"Work", DetailAmbiguous}} {
		name, detail := c[0], c[1]
		r := w.settled(OpOpenWithProfile, func(r *Request) { r.ProfileName = name })
		assert.Equal(t, ProfileError, r.Outcome, name)
		assert.Equal(t, detail, r.Detail, name)
	}
	assert.Empty(t, w.b.Tabs())
	assert.Equal(t, 0, w.b.DesktopConnections)
}

// TestSBN85_UnattachedDesktopNoHeadlessSubstitute is SB-N85, upstream
// "never substitutes a headless page when the selected desktop does not
// attach": the local desktop lists Work but its page never attaches; the
// open fails after the attach timeout, with no headless context and no
// desktop connection.
func TestSBN85_UnattachedDesktopNoHeadlessSubstitute(t *testing.T) {
	w, d := newDesktopSB(t, true, catalogue("local", "work", work))
	d.Attaches = func(string, string) (bool, time.Duration) { return false, 0 }
	r := w.as("agent-a", OpOpenWithProfile, func(r *Request) { r.ProfileID = "work" })
	w.run(DesktopAttachTimeout - time.Millisecond)
	assert.False(t, r.done, "the open waits for the desktop to attach")
	w.run(time.Second)
	require.True(t, r.done)
	assert.Equal(t, RemoteUnavailable, r.Outcome)
	assert.Empty(t, w.b.Tabs())
	assert.Equal(t, 0, w.b.DesktopConnections)
}

// TestSBN86_OlderDesktopFailsNativeOpens is SB-N86, upstream "an older
// desktop fails new native opens before creating or publishing a tab": for
// a local and a remote desktop without native roots, preview_profiles still
// answers (default Work) but open and openWithProfile work are
// RemoteUnavailable, root-unsupported, asking to update the desktop app;
// no tab, no page.
func TestSBN86_OlderDesktopFailsNativeOpens(t *testing.T) {
	for _, host := range []string{"local", "remote-host"} {
		cat := catalogue(host, "work", work)
		cat.NoNativeRoots = true
		w, _ := newDesktopSB(t, false, cat)
		assert.Equal(t, "work", w.settled(OpProfiles, nil).DefaultProfileID, host)
		for _, op := range []string{OpOpen, OpOpenWithProfile} {
			r := w.settled(op, func(r *Request) {
				r.URL, r.ReuseExistingTab = "https://auth.example.test/start", false
				if op == OpOpenWithProfile {
					r.ProfileID = "work"
				}
			})
			assert.Equal(t, RemoteUnavailable, r.Outcome, "%s %s", host, op)
			assert.Equal(t, DetailRootUnsupported, r.Detail)
			assert.Contains(t, r.Message, "Update the desktop app")
			assert.Empty(t, w.b.Tabs())
			assert.Equal(t, 0, w.b.DesktopConnections)
		}
	}
	// With the host on the native channel, no root creation is asked for.
	cat := catalogue("local", "work", work)
	cat.NoNativeRoots = true
	w, _ := newDesktopSB(t, false, cat)
	h := w.b.AddNativeHost("local")
	assert.Equal(t, RemoteUnavailable, w.settled(OpOpen, newTab).Outcome)
	assert.Empty(t, h.Sent(CmdCreateRoot), "rootCreations stays empty")
}

// A catalogue open on a host of the native channel opens a native root
// there on the chosen profile (created, accepted, published), which then
// pins the agent's later opens to that host.
func TestCatalogueOpenCreatesNativeRoot(t *testing.T) {
	w, _ := newDesktopSB(t, true, catalogue("local", "work", work, personal))
	h := w.b.AddNativeHost("local")
	r := w.settled(OpOpenWithProfile, func(r *Request) { r.ProfileName, r.URL = "Personal", "" })
	require.Equal(t, OK, r.Outcome, r.Message)
	assert.Equal(t, "personal", r.ProfileID)
	assert.Equal(t, "Personal", r.ProfileName)
	created := h.Sent(CmdCreateRoot)
	require.Len(t, created, 1)
	assert.Equal(t, "personal", created[0].Profile)
	tab := w.b.Tab(sbThread, r.TabID)
	assert.Equal(t, "desktop-root", tab.BackingPage())
	assert.Equal(t, "local", tab.DesktopHostID)
	assert.Equal(t, "local", w.b.retainedHost(Request{ThreadID: sbThread, AgentSessionID: tab.Control.AgentID}))
}

// TestSBN87_UnavailableCatalogueOpensNothing is SB-N87, upstream "an
// unavailable profile catalogue never opens a fallback profile or publishes
// a tab": a desktop started the server but its catalogue does not answer;
// the open fails, nothing opens (no session, page or context), and a
// viewer of a page the desktop has but the server never published finds
// no tab.
func TestSBN87_UnavailableCatalogueOpensNothing(t *testing.T) {
	w, d := newDesktopSB(t, true)
	d.Unavailable = true
	r := w.settled(OpOpen, newTab)
	assert.Equal(t, RemoteUnavailable, r.Outcome)
	assert.Empty(t, w.b.Tabs())
	assert.Equal(t, 0, w.b.DesktopConnections)
	assert.Nil(t, w.b.Tab(sbThread, "unpublished-root"), "attachViewer: ServerBrowserTabNotFoundError")
	assert.Equal(t, 0, w.b.DesktopConnections)
}

// remoteSB is a world whose only desktop is remote-desktop (Work), whose
// environment URLs it resolves by replacing localhost with
// environment.example.test while resolvable is true.
func remoteSB(t *testing.T, resolvable *bool) (*sb, *DesktopChannel) {
	w, d := newDesktopSB(t, false, catalogue("remote-desktop", "work", work))
	d.ResolveURL = func(_, url string) (string, bool) {
		if !*resolvable {
			return "", false
		}
		return strings.Replace(url, "localhost", "environment.example.test", 1), true
	}
	return w, d
}

// TestSBN90_RemoteUploadSendsBytes is SB-N90, upstream "uploads environment
// file bytes to a remote desktop profile without passing host paths": the
// file input of a remote desktop's page receives the environment file's
// name, MIME type and contents, not its path.
func TestSBN90_RemoteUploadSendsBytes(t *testing.T) {
	resolvable := true
	w, d := remoteSB(t, &resolvable)
	tab := w.settled(OpOpen, newTab)
	require.Equal(t, OK, tab.Outcome)
	path := "/state/remote-upload.txt"
	d.EnvironmentFiles = map[string]string{path: "environment file contents"}
	up := w.settled(OpUpload, func(r *Request) { r.TabID, r.Paths, r.Locator = tab.TabID, []string{path}, "input[type=file]" })
	require.Equal(t, OK, up.Outcome)
	assert.Equal(t, []Upload{{Locator: "input[type=file]",
		Payloads: []FilePayload{{Name: "remote-upload.txt", MimeType: "text/plain", Contents: "environment file contents"}}}},
		w.b.Tab(sbThread, tab.TabID).Uploads)
}

// TestSBN91_RemoteURLsResolvedForOpenAndNavigation is SB-N91, upstream
// "resolves remote environment URLs for explicit profile opens and later
// navigation": openWithProfile Work with a localhost URL opens a native
// page of remote-desktop on work that the server navigates once, to the
// URL the desktop resolved; an environment-port navigation is resolved
// too; when the desktop cannot resolve a URL the navigation is
// RemoteUnavailable and the page is not navigated; no headless context.
func TestSBN91_RemoteURLsResolvedForOpenAndNavigation(t *testing.T) {
	resolvable := true
	w, _ := remoteSB(t, &resolvable)
	opened := w.settled(OpOpenWithProfile, func(r *Request) { r.ProfileName, r.URL = "Work", "http://localhost:5173/start?x=1#section" })
	require.Equal(t, OK, opened.Outcome)
	tab := w.b.Tab(sbThread, opened.TabID)
	assert.Equal(t, "remote-desktop", tab.DesktopHostID)
	assert.Equal(t, "work", tab.ProfileID)
	assert.Equal(t, "http://environment.example.test:5173/start?x=1#section", tab.URL)
	assert.Equal(t, []string{"http://environment.example.test:5173/start?x=1#section"}, tab.GotoURLs)
	nav := w.settled(OpNavigate, func(r *Request) { r.TabID, r.URL = tab.TabID, EnvironmentPortURL(3000, "/next?x=2#target") })
	require.Equal(t, OK, nav.Outcome)
	assert.Equal(t, "http://environment.example.test:3000/next?x=2#target", tab.GotoURLs[len(tab.GotoURLs)-1])
	count := len(tab.GotoURLs)
	resolvable = false
	failed := w.settled(OpNavigate, func(r *Request) { r.TabID, r.URL = tab.TabID, "http://localhost:5173/wrong-machine" })
	assert.Equal(t, RemoteUnavailable, failed.Outcome)
	assert.Len(t, tab.GotoURLs, count)
	assert.Equal(t, 0, headlessContexts(w.b))
}

// TestSBN92_UnresolvedRemoteURLOpensNothing is SB-N92, upstream "does not
// open a remote profile when the environment URL cannot be resolved".
func TestSBN92_UnresolvedRemoteURLOpensNothing(t *testing.T) {
	resolvable := false
	w, _ := remoteSB(t, &resolvable)
	r := w.settled(OpOpenWithProfile, func(r *Request) { r.ProfileName, r.URL = "Work", "http://localhost:5173/" })
	assert.Equal(t, RemoteUnavailable, r.Outcome)
	assert.Empty(t, w.b.Tabs())
	assert.Equal(t, 0, w.b.DesktopConnections)
}
