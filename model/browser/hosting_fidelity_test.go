package browser

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Preview-hosting cases of the newest stored ServerBrowser.test.ts
// (index:70867653086, a [variant]), on the sb harness of fidelity_test.go
// with hosting on (hosting.go). The upstream fixture: hosting answers
// unmanaged unless a case says otherwise; a remote desktop resolves an
// environment URL by replacing localhost with environment.example.test.

const (
	remoteName     = "environment.example.test"
	oneUse         = "fixture-one-use-credential"
	fixtureProfile = "Fixture profile"
)

// remoteOf is the fixture desktop's resolution of an environment URL.
func remoteOf(raw string) string { return strings.Replace(raw, "localhost", remoteName, 1) }

// newHosted is newSB with hosting on; host is the desktop whose catalogue
// (one profile, Fixture profile) new tabs open on as its native pages: ""
// for none (headless tabs), "local" for the desktop that started the
// server, or a remote host id, which resolves environment URLs.
func newHosted(t *testing.T, host string) *sb {
	w := newSB(t, reported)
	w.b.Hosting = func(HostingInput) HostingAnswer { return HostingAnswer{} }
	if host != "" {
		w.b.Desktops = &DesktopChannel{LocalConfigured: host == LocalDesktopHost,
			Hosts: []DesktopCatalogue{{HostID: host, Profiles: []BrowserProfile{{ID: "fixture-profile", Name: fixtureProfile}},
				DefaultID: "fixture-profile"}},
			ResolveURL: func(_, raw string) (string, bool) { return remoteOf(raw), true }}
	}
	return w
}

// blank opens a tab with no URL as agent-a (the upstream ready).
func (w *sb) blank() *Tab {
	r := w.as("agent-a", OpOpen, func(r *Request) { r.ReuseExistingTab, r.URL = false, "" })
	w.run(time.Millisecond)
	require.True(w.t, r.done)
	require.Equal(w.t, OK, r.Outcome)
	return w.b.Tab(sbThread, r.TabID)
}

// navigate sends an agent navigate of t to url and runs a second.
func (w *sb) navigate(t *Tab, url string) *reply {
	r := w.as("agent-a", OpNavigate, onTab(t, func(r *Request) { r.URL = url }))
	w.run(time.Second)
	require.True(w.t, r.done, "navigate %s", url)
	return r
}

// controller attaches an operating viewer to t and gives it control.
func (w *sb) controller(t *Tab) {
	w.b.AttachViewer(t, "viewer", true)
	take := w.input(t, "viewer", ViewerInput{Kind: InputTakeControl})
	w.run(time.Second)
	require.Equal(w.t, OK, take.outcome)
}

// recording makes hosting record its inputs and answer with f.
func (w *sb) recording(f func(HostingInput) HostingAnswer) *[]HostingInput {
	var got []HostingInput
	w.b.Hosting = func(in HostingInput) HostingAnswer {
		got = append(got, in)
		return f(in)
	}
	return &got
}

func hostname(raw string) string { return strings.SplitN(strings.SplitN(raw, "://", 2)[1], "/", 2)[0] }

func localManaged(in HostingInput) HostingAnswer {
	return HostingAnswer{Managed: strings.HasPrefix(hostname(in.URL), "localhost")}
}

// pageEntries returns t's page log entries with one of the prefixes.
func pageEntries(t *Tab, prefixes ...string) []string {
	var out []string
	for _, e := range t.Page {
		for _, p := range prefixes {
			if strings.HasPrefix(e, p) {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

func exchangesOn(b *ServerBrowser, t *Tab, conn int) []BrowserSessionExchange {
	var out []BrowserSessionExchange
	for _, e := range b.Exchanges {
		if e.TabID == t.TabID && e.Connection == conn {
			out = append(out, e)
		}
	}
	return out
}

// TestSBN24_OwnedOpenInstallsAuthInSelectedProfile is SB-N24, upstream
// "recovers owned opens and installs auth only in the selected profile:
// %s" (headless, local, remote): an open of a new tab with an owned URL is
// prepared once (with the browser URL for a remote desktop), the new tab's
// own context exchanges the one-use credential on the browser origin, and
// its page goes there exactly once; the credential is in no result.
func TestSBN24_OwnedOpenInstallsAuthInSelectedProfile(t *testing.T) {
	for _, c := range []struct{ row, host string }{{"headless", ""}, {"local", "local"}, {"remote", "fixture-desktop"}} {
		t.Run(c.row, func(t *testing.T) {
			w := newHosted(t, c.host)
			native := c.host != ""
			prepared := w.recording(func(HostingInput) HostingAnswer {
				return HostingAnswer{Managed: true, BootstrapToken: oneUse}
			})
			url := "http://localhost:5173/qa/nested?theme=dark#section"
			browserURL := url
			if c.row == "remote" {
				browserURL = remoteOf(url)
			}
			op := OpOpen
			if native {
				op = OpOpenWithProfile
			}
			r := w.as("agent-a", op, func(r *Request) {
				r.URL, r.ReuseExistingTab = url, false
				if native {
					r.ProfileName = fixtureProfile
				}
			})
			w.run(time.Second)
			require.True(t, r.done)
			require.Equal(t, OK, r.Outcome)
			tab := w.b.Tab(sbThread, r.TabID)
			require.NotNil(t, tab)
			assert.Equal(t, native, tab.Desktop)
			assert.Equal(t, c.host, tab.DesktopHostID)
			want := HostingInput{ThreadID: sbThread, URL: url}
			if c.row == "remote" {
				want.BrowserURL = browserURL
			}
			assert.Equal(t, []HostingInput{want}, *prepared)
			post := origin(browserURL) + BrowserSessionPath
			assert.Equal(t, []BrowserSessionExchange{{ThreadID: sbThread, TabID: tab.TabID, URL: post, Credential: oneUse,
				Connection: 1, Outcome: OK}}, w.b.Exchanges, "one post, no redirects, by the new tab's context")
			assert.Equal(t, []string{origin(browserURL)}, tab.Cookies())
			assert.Equal(t, []string{"goto " + browserURL}, pageEntries(tab, "goto "))
			assert.Equal(t, browserURL, r.URL)
			assert.NotContains(t, fmt.Sprintf("%+v", r.Result), "fixture-one-use")
			status := w.as("agent-a", OpStatus, onTab(tab, nil))
			assert.NotContains(t, fmt.Sprintf("%+v", status.Result), "fixture-one-use")
			for _, other := range w.b.Tabs() {
				if other != tab {
					assert.Empty(t, other.Cookies())
				}
			}
		})
	}
}

// TestSBN25_IdentityRejectionCannotNavigate is SB-N25, upstream "%s passes
// both origins to hosting and cannot navigate after identity rejection"
// (open, openWithProfile, navigate): on a remote desktop the owned URL and
// its environment URL share a port but not an origin; hosting gets both
// and rejects their identity; the request fails with an execution error,
// nothing is posted, no cookie is written, no page navigates and no tab
// opens.
func TestSBN25_IdentityRejectionCannotNavigate(t *testing.T) {
	for _, op := range []string{"open", "openWithProfile", "navigate"} {
		t.Run(op, func(t *testing.T) {
			w := newHosted(t, "fixture-desktop")
			tab := w.blank()
			owned := "http://localhost:5173/qa/nested?theme=dark#anchor"
			unowned := remoteOf(owned)
			prepared := w.recording(func(HostingInput) HostingAnswer {
				return HostingAnswer{Failure: HostingBootstrapFailed}
			})
			var r *reply
			switch op {
			case "navigate":
				r = w.as("agent-a", OpNavigate, onTab(tab, func(r *Request) { r.URL = owned }))
			case "open":
				r = w.as("agent-a", OpOpen, func(r *Request) { r.URL, r.ReuseExistingTab = owned, false })
			default:
				r = w.as("agent-a", OpOpenWithProfile, func(r *Request) {
					r.URL, r.ReuseExistingTab, r.ProfileName = owned, false, fixtureProfile
				})
			}
			w.run(time.Second)
			require.True(t, r.done)
			assert.Equal(t, strings.Split(hostname(owned), ":")[1], strings.Split(hostname(unowned), ":")[1], "same port")
			assert.NotEqual(t, origin(owned), origin(unowned))
			assert.Equal(t, []HostingInput{{ThreadID: sbThread, URL: owned, BrowserURL: unowned}}, *prepared)
			assert.Equal(t, ExecutionError, r.Outcome)
			assert.Equal(t, HostingAuthMessage, r.Message)
			assert.NotContains(t, fmt.Sprintf("%+v", r.Result), "fixture-private-credential")
			assert.Empty(t, w.b.Exchanges)
			assert.Empty(t, tab.Cookies())
			assert.Zero(t, tab.Gotos)
			assert.Len(t, w.b.Tabs(), 1, "one session")
		})
	}
}

// TestSBN26_EnvironmentPortAndViewerReloadsPrepared is SB-N26, upstream
// "prepares environment-port navigation and both viewer reloads without
// changing the destination": the environment-port target is navigated on
// localhost, and the viewer's reload and hard reload each prepare that URL
// again before reloading.
func TestSBN26_EnvironmentPortAndViewerReloadsPrepared(t *testing.T) {
	w := newHosted(t, "")
	tab := w.blank()
	prepared := w.recording(func(HostingInput) HostingAnswer { return HostingAnswer{Managed: true} })
	url := "http://localhost:5173/qa?mode=one#anchor"
	r := w.as("agent-a", OpNavigate, onTab(tab, func(r *Request) { r.URL = EnvironmentPortURL(5173, "/qa?mode=one#anchor") }))
	w.run(time.Second)
	require.True(t, r.done)
	require.Equal(t, OK, r.Outcome)
	assert.Equal(t, url, r.URL)
	w.controller(tab)
	w.input(tab, "viewer", ViewerInput{Kind: InputNavigate, Method: MethodReload})
	w.run(time.Second)
	w.input(tab, "viewer", ViewerInput{Kind: InputNavigate, Method: MethodReload, IgnoreCache: true})
	w.run(time.Second)
	var urls []string
	for _, in := range *prepared {
		urls = append(urls, in.URL)
	}
	assert.Equal(t, []string{url, url, url}, urls)
	assert.Equal(t, []string{"reload"}, pageEntries(tab, "reload"))
	assert.Equal(t, []string{"hard reload"}, pageEntries(tab, "hard reload"))
	assert.Equal(t, url, tab.URL, "the destination is unchanged")
}

// TestSBN27_ReloadRecoversBothRemoteOriginsThroughHistory is SB-N27,
// upstream "reload recovers both owned remote origins after returning
// through public history": on a remote desktop the agent visits two owned
// ports and a public page; the viewer steps back through history and
// reloads at each owned page, and every step is prepared with the local
// URL its verified origin maps back to.
func TestSBN27_ReloadRecoversBothRemoteOriginsThroughHistory(t *testing.T) {
	w := newHosted(t, "fixture-desktop")
	tab := w.blank()
	prepared := w.recording(localManaged)
	destinations := []string{
		"http://localhost:5173/qa/first?mode=dark#first",
		"http://localhost:5180/qa/second?mode=light#second",
		"https://public.example/other",
	}
	for _, url := range destinations {
		require.Equal(t, OK, w.navigate(tab, url).Outcome)
	}
	w.controller(tab)
	for _, url := range []string{destinations[1], destinations[0]} {
		w.input(tab, "viewer", ViewerInput{Kind: InputNavigate, Method: MethodGoBack})
		w.run(time.Second)
		w.input(tab, "viewer", ViewerInput{Kind: InputNavigate, Method: MethodReload})
		w.run(time.Second)
		assert.Equal(t, remoteOf(url), tab.URL)
	}
	var urls []string
	for _, in := range *prepared {
		urls = append(urls, in.URL)
	}
	assert.Equal(t, append(slices.Clone(destinations), destinations[1], destinations[1], destinations[0], destinations[0]), urls)
	assert.Len(t, pageEntries(tab, "reload"), 2)
}

// TestSBN28_ClientHardReloadPreparesManagedAccess is SB-N28, upstream
// "client hard reload prepares managed access before reloading (remote:
// %s)": a client's adjust clears the cookies and hard-reloads; between
// the two the page's URL is prepared again and a fresh credential
// exchanged.
func TestSBN28_ClientHardReloadPreparesManagedAccess(t *testing.T) {
	for _, remote := range []bool{false, true} {
		t.Run(fmt.Sprint(remote), func(t *testing.T) {
			host := ""
			if remote {
				host = "fixture-desktop"
			}
			w := newHosted(t, host)
			tab := w.blank()
			url := "http://localhost:5173/qa/reload?mode=dark#anchor"
			w.b.Hosting = func(HostingInput) HostingAnswer { return HostingAnswer{Managed: true} }
			require.Equal(t, OK, w.navigate(tab, url).Outcome)
			prepared := w.recording(func(HostingInput) HostingAnswer { return HostingAnswer{Managed: true, BootstrapToken: oneUse} })
			mark := len(tab.Page)
			var outcome string
			w.b.ManagerAdjust(tab, true, true, func(o string) { outcome = o })
			w.run(time.Second)
			require.Equal(t, OK, outcome)
			browserURL := url
			want := HostingInput{ThreadID: sbThread, URL: url}
			if remote {
				browserURL = remoteOf(url)
				want.BrowserURL = browserURL
			}
			assert.Equal(t, []HostingInput{want}, *prepared)
			assert.Equal(t, []string{"cookies cleared", "hosting prepared " + url, "cookie written " + origin(browserURL),
				"response disposed", "hard reload"}, tab.Page[mark:])
			require.Len(t, w.b.Exchanges, 1)
			assert.Equal(t, origin(browserURL)+BrowserSessionPath, w.b.Exchanges[0].URL)
			assert.Equal(t, oneUse, w.b.Exchanges[0].Credential)
		})
	}
}

// TestSBN29_HistoryDeltaPreparesManagedDestination is SB-N29, upstream
// "history delta %s prepares the managed destination before navigation"
// (-1, 1): a viewer's step to the owned entry of a remote desktop's
// history is prepared with its local URL, its credential exchanged, then
// the page moves.
func TestSBN29_HistoryDeltaPreparesManagedDestination(t *testing.T) {
	for _, delta := range []int{-1, 1} {
		t.Run(fmt.Sprint(delta), func(t *testing.T) {
			w := newHosted(t, "fixture-desktop")
			tab := w.blank()
			url := "http://localhost:5173/qa/history?mode=dark#anchor"
			w.b.Hosting = localManaged
			require.Equal(t, OK, w.navigate(tab, url).Outcome)
			require.Equal(t, OK, w.navigate(tab, "https://public.example/other").Outcome)
			if delta > 0 {
				w.b.PageGo(tab, -1)
				w.b.PageGo(tab, -1)
			}
			prepared := w.recording(func(HostingInput) HostingAnswer { return HostingAnswer{Managed: true, BootstrapToken: oneUse} })
			calls := len(w.b.Exchanges)
			w.controller(tab)
			mark := len(tab.Page)
			method := MethodGoBack
			if delta > 0 {
				method = MethodGoForward
			}
			w.input(tab, "viewer", ViewerInput{Kind: InputNavigate, Method: method})
			w.run(time.Second)
			browserURL := remoteOf(url)
			assert.Equal(t, browserURL, tab.URL)
			assert.Equal(t, []HostingInput{{ThreadID: sbThread, URL: url, BrowserURL: browserURL}}, *prepared)
			assert.Equal(t, []string{"hosting prepared " + url, "cookie written " + origin(browserURL), "response disposed", method,
				"navigation committed"}, tab.Page[mark:], "recovered, authenticated, navigated")
			require.Len(t, w.b.Exchanges, calls+1)
			assert.Equal(t, origin(browserURL)+BrowserSessionPath, w.b.Exchanges[calls].URL)
			assert.Equal(t, oneUse, w.b.Exchanges[calls].Credential)
		})
	}
}

// TestSBN30_ReenteredRemoteURLsUseVerifiedLocalOrigin is SB-N30, upstream
// "%s recovers reentered remote URLs and path edits using the verified
// local origin" (open, openWithProfile, navigate, viewer): after the owned
// URL verified its environment origin, the environment URL entered again,
// and a path edit on it, are prepared with the local origin, each
// exchanging a credential on the environment origin.
func TestSBN30_ReenteredRemoteURLsUseVerifiedLocalOrigin(t *testing.T) {
	for _, op := range []string{"open", "openWithProfile", "navigate", "viewer"} {
		t.Run(op, func(t *testing.T) {
			w := newHosted(t, "fixture-desktop")
			tab := w.blank()
			prepared := w.recording(func(in HostingInput) HostingAnswer {
				if origin(in.URL) == "http://localhost:5173" {
					return HostingAnswer{Managed: true, BootstrapToken: oneUse}
				}
				return HostingAnswer{}
			})
			owned := "http://localhost:5173/qa/original?mode=one#first"
			localURLs := []string{owned, "http://localhost:5173/qa/edited?mode=two#second"}
			require.Equal(t, OK, w.navigate(tab, owned).Outcome)
			if op == "viewer" {
				w.controller(tab)
			}
			for _, local := range localURLs {
				browserURL := remoteOf(local)
				switch op {
				case "viewer":
					w.input(tab, "viewer", ViewerInput{Kind: InputNavigate, Method: MethodGoto, URL: browserURL})
					w.run(time.Second)
				case "navigate":
					require.Equal(t, OK, w.navigate(tab, browserURL).Outcome)
				default:
					open := OpOpen
					if op == "openWithProfile" {
						open = OpOpenWithProfile
					}
					r := w.as("agent-a", open, onTab(tab, func(r *Request) {
						r.URL = browserURL
						if op == "openWithProfile" {
							r.ProfileName = fixtureProfile
						}
					}))
					w.run(time.Second)
					require.True(t, r.done)
					require.Equal(t, OK, r.Outcome)
				}
				assert.Equal(t, browserURL, tab.URL)
			}
			var want []HostingInput
			for _, url := range append([]string{owned}, localURLs...) {
				want = append(want, HostingInput{ThreadID: sbThread, URL: url, BrowserURL: remoteOf(url)})
			}
			assert.Equal(t, want, *prepared)
			require.Len(t, w.b.Exchanges, 3)
			assert.Equal(t, "http://environment.example.test:5173/api/auth/browser-session", w.b.Exchanges[2].URL)
			assert.Equal(t, oneUse, w.b.Exchanges[2].Credential)
			assert.Len(t, w.b.Tabs(), 1)
			assert.Equal(t, 1, w.b.Connection(tab), "one desktop connection")
		})
	}
}

// TestSBN31_ReattachedDesktopRetainsVerifiedOrigins is SB-N31, upstream
// "reattached desktop sessions retain verified origins for reload
// (ignoreCache=%s)": the remote desktop takes its page back and returns
// it; on the new connection the viewer's reload is prepared with the local
// URL the session verified before, and the credential is exchanged once,
// through the new connection; the old page is not closed.
func TestSBN31_ReattachedDesktopRetainsVerifiedOrigins(t *testing.T) {
	for _, ignoreCache := range []bool{false, true} {
		t.Run(fmt.Sprint(ignoreCache), func(t *testing.T) {
			w := newHosted(t, "fixture-desktop")
			tab := w.blank()
			prepared := w.recording(func(in HostingInput) HostingAnswer {
				if origin(in.URL) == "http://localhost:5173" {
					return HostingAnswer{Managed: true, BootstrapToken: oneUse}
				}
				return HostingAnswer{}
			})
			localURL := "http://localhost:5173/qa/retained?mode=dark#anchor"
			browserURL := remoteOf(localURL)
			require.Equal(t, OK, w.navigate(tab, localURL).Outcome)
			require.True(t, tab.Desktop)
			w.b.AttachViewer(tab, "watcher", false)
			w.b.DesktopWithdraw(tab)
			require.NotEmpty(t, tags(tab.Output("watcher"), "reconnect"))
			w.b.DesktopReturns(tab)
			w.controller(tab)
			require.Equal(t, 2, w.b.Connection(tab))
			w.input(tab, "viewer", ViewerInput{Kind: InputNavigate, Method: MethodReload, IgnoreCache: ignoreCache})
			w.run(time.Second)
			assert.Equal(t, browserURL, tab.URL)
			want := HostingInput{ThreadID: sbThread, URL: localURL, BrowserURL: browserURL}
			assert.Equal(t, []HostingInput{want, want}, *prepared)
			now := exchangesOn(w.b, tab, 2)
			require.Len(t, now, 1)
			assert.Equal(t, "http://environment.example.test:5173/api/auth/browser-session", now[0].URL)
			assert.Equal(t, oneUse, now[0].Credential)
			reload := "reload"
			if ignoreCache {
				reload = "hard reload"
			}
			assert.Equal(t, []string{reload}, pageEntries(tab, reload))
			assert.Zero(t, w.b.PagesClosed, "the previous page is not closed")
		})
	}
}

// TestSBN32_CancelledAuthenticationDrainsCookieWrites is SB-N32, upstream
// "cancelled authentication drains cookie writes before takeover and
// typing": an agent navigation is cancelled while its credential post is
// in flight; the viewer's takeover shows at once but completes, and its
// typing reaches the page, only after the cookie is written and the
// response disposed; reads are not held; the page never navigates.
func TestSBN32_CancelledAuthenticationDrainsCookieWrites(t *testing.T) {
	w := newHosted(t, "")
	tab := w.blank()
	w.b.AttachViewer(tab, "viewer", true)
	w.b.Hosting = func(HostingInput) HostingAnswer {
		return HostingAnswer{Managed: true, BootstrapToken: "fixture-delayed-credential"}
	}
	w.b.SessionExchange = func(string, string, string) (time.Duration, string) { return 10 * time.Second, "" }
	cancel := &Signal{}
	request := w.as("agent-a", OpNavigate, onTab(tab, func(r *Request) { r.URL, r.Cancel = "http://localhost:5173/qa", cancel }))
	w.run(time.Second)
	require.Len(t, w.b.Exchanges, 1, "the post is in flight")
	cancel.Abort("interrupted")
	tab.Output("viewer")
	takeover := w.input(tab, "viewer", ViewerInput{Kind: InputTakeControl})
	controls := tags(tab.Output("viewer"), "control")
	require.NotEmpty(t, controls)
	assert.Equal(t, "you", controls[len(controls)-1].Controller)
	typing := w.input(tab, "viewer", ViewerInput{Kind: InputText, Text: "hello"})
	status := w.as("agent-a", OpStatus, onTab(tab, nil))
	assert.True(t, status.done, "reads are not held")
	w.run(time.Second)
	assert.False(t, takeover.done)
	assert.False(t, typing.done)
	assert.Empty(t, pageEntries(tab, "cookie", "response", "human"))
	w.run(10 * time.Second)
	require.True(t, takeover.done)
	require.True(t, typing.done)
	assert.Equal(t, OK, takeover.outcome)
	assert.Equal(t, OK, typing.outcome)
	assert.Equal(t, []string{"cookie written http://localhost:5173", "response disposed", "human typed hello"},
		pageEntries(tab, "cookie", "response", "human"))
	assert.Zero(t, tab.Gotos)
	assert.False(t, request.done, "the cancelled caller hears nothing")
}

// TestSBN33_NewerViewerNavigationCancelsPreparation is SB-N33, upstream "a
// newer viewer %s cancels preparation without blocking input" (navigate,
// history): the viewer's slow navigation is preparing while its typing
// reaches the page; its next navigation (or history step) interrupts the
// slow one, and only the newer one touches the page.
func TestSBN33_NewerViewerNavigationCancelsPreparation(t *testing.T) {
	for _, kind := range []string{"navigate", "history"} {
		t.Run(kind, func(t *testing.T) {
			w := newHosted(t, "")
			tab := w.blank()
			w.controller(tab)
			slow := "http://localhost:5173/slow"
			w.recording(func(in HostingInput) HostingAnswer { return HostingAnswer{Never: in.URL == slow} })
			w.input(tab, "viewer", ViewerInput{Kind: InputNavigate, Method: MethodGoto, URL: slow})
			w.run(time.Second)
			require.Len(t, w.b.HostingCalls, 1)
			require.Empty(t, w.b.HostingCalls[0].Outcome, "preparing")
			typed := w.input(tab, "viewer", ViewerInput{Kind: InputText, Text: "hello"})
			w.run(time.Second)
			require.True(t, typed.done)
			assert.Equal(t, OK, typed.outcome)
			assert.Contains(t, tab.Page, "human typed hello")
			corrected := "https://public.example/corrected?mode=dark#anchor"
			if kind == "navigate" {
				w.input(tab, "viewer", ViewerInput{Kind: InputNavigate, Method: MethodGoto, URL: corrected})
			} else {
				w.input(tab, "viewer", ViewerInput{Kind: InputNavigate, Method: MethodGoBack})
			}
			w.run(time.Second)
			assert.Equal(t, "interrupted", w.b.HostingCalls[0].Outcome)
			if kind == "navigate" {
				assert.Equal(t, []string{"goto " + corrected}, pageEntries(tab, "goto "))
				assert.Equal(t, ViewerNavigation{Method: MethodGoto, WaitUntil: "commit", Timeout: NavigationTimeout}, tab.LastViewerNavigation)
			} else {
				assert.Empty(t, pageEntries(tab, "goto "))
				assert.Equal(t, []string{"goBack"}, pageEntries(tab, "goBack"))
			}
			release := w.input(tab, "viewer", ViewerInput{Kind: InputReleaseControl})
			w.run(time.Second)
			assert.Equal(t, OK, release.outcome)
		})
	}
}

// TestSBN34_HandoffCancelsViewerPreparation is SB-N34, upstream "control
// handoff cancels pending viewer %s preparation before page mutation"
// (navigate, reload, history): the viewer releases control while its
// navigation is preparing; the preparation is interrupted, the page is not
// touched, and the agent's next action runs.
func TestSBN34_HandoffCancelsViewerPreparation(t *testing.T) {
	for _, kind := range []string{"navigate", "reload", "history"} {
		t.Run(kind, func(t *testing.T) {
			w := newHosted(t, "")
			tab := w.blank()
			url := "http://localhost:5173/qa?mode=dark#anchor"
			w.b.Hosting = func(HostingInput) HostingAnswer { return HostingAnswer{Managed: true} }
			require.Equal(t, OK, w.navigate(tab, url).Outcome)
			if kind == "history" {
				require.Equal(t, OK, w.navigate(tab, "https://public.example/other").Outcome)
			}
			w.controller(tab)
			w.b.Hosting = func(HostingInput) HostingAnswer { return HostingAnswer{Never: true} }
			in := ViewerInput{Kind: InputNavigate, Method: MethodGoto, URL: url}
			switch kind {
			case "reload":
				in = ViewerInput{Kind: InputNavigate, Method: MethodReload}
			case "history":
				in = ViewerInput{Kind: InputNavigate, Method: MethodGoBack}
			}
			w.input(tab, "viewer", in)
			w.run(time.Second)
			last := len(w.b.HostingCalls) - 1
			require.Empty(t, w.b.HostingCalls[last].Outcome, "preparing")
			w.input(tab, "viewer", ViewerInput{Kind: InputReleaseControl})
			w.run(time.Second)
			assert.Equal(t, "interrupted", w.b.HostingCalls[last].Outcome)
			wantGotos := 1
			if kind == "history" {
				wantGotos = 2
			}
			assert.Len(t, pageEntries(tab, "goto "), wantGotos)
			assert.Empty(t, pageEntries(tab, "reload", "hard reload", "goBack"))
			r := w.as("agent-a", OpEvaluate, onTab(tab, func(r *Request) { r.Value = "evaluated" }))
			w.run(2 * time.Second)
			require.True(t, r.done)
			assert.Equal(t, OK, r.Outcome)
			assert.Equal(t, "evaluated", r.Value)
		})
	}
}

// TestSBN35_CancelledOwnedPreparationCannotNavigate is SB-N35, upstream "a
// cancelled owned preparation cannot navigate or leave recovery running":
// the agent's request is cancelled while hosting prepares; the preparation
// is interrupted and nothing is posted or navigated.
func TestSBN35_CancelledOwnedPreparationCannotNavigate(t *testing.T) {
	w := newHosted(t, "")
	tab := w.blank()
	w.b.Hosting = func(HostingInput) HostingAnswer { return HostingAnswer{Never: true} }
	cancel := &Signal{}
	w.as("agent-a", OpNavigate, onTab(tab, func(r *Request) { r.URL, r.Cancel = "http://localhost:5173/qa", cancel }))
	w.run(time.Second)
	require.Len(t, w.b.HostingCalls, 1)
	cancel.Abort("interrupted")
	w.run(time.Second)
	assert.Equal(t, "interrupted", w.b.HostingCalls[0].Outcome)
	assert.Zero(t, tab.Gotos)
	assert.Empty(t, w.b.Exchanges)
	assert.False(t, tab.Control.Busy(), "no recovery left running")
}

// TestSBN36_PreparationSharesNavigationDeadline is SB-N36, upstream
// "hosting preparation shares the navigation deadline": a preparation that
// never ends fails the navigation at its execution deadline (30 ms less a
// tenth) with a timeout, is interrupted, and the page does not navigate.
func TestSBN36_PreparationSharesNavigationDeadline(t *testing.T) {
	w := newHosted(t, "")
	tab := w.blank()
	w.b.Hosting = func(HostingInput) HostingAnswer { return HostingAnswer{Never: true} }
	r := w.as("agent-a", OpNavigate, onTab(tab, func(r *Request) { r.URL, r.Timeout = "http://localhost:5173/qa", 30*time.Millisecond }))
	w.run(26 * time.Millisecond)
	require.False(t, r.done)
	w.run(time.Millisecond)
	require.True(t, r.done)
	assert.Equal(t, ErrTimeout, r.Outcome)
	assert.Equal(t, "interrupted", w.b.HostingCalls[0].Outcome)
	assert.Zero(t, tab.Gotos)
}

// TestSBN37_FailedExchangeStaysPrivate is SB-N37, upstream "a failed
// private browser-session exchange stays out of URLs and error results":
// the credential post is rejected with an error quoting the credential;
// the navigation fails without it and the page does not navigate.
func TestSBN37_FailedExchangeStaysPrivate(t *testing.T) {
	w := newHosted(t, "")
	tab := w.blank()
	w.b.Hosting = func(HostingInput) HostingAnswer {
		return HostingAnswer{Managed: true, BootstrapToken: "fixture-private-credential"}
	}
	w.b.SessionExchange = func(string, string, string) (time.Duration, string) {
		return 0, "Rejected fixture-private-credential"
	}
	r := w.navigate(tab, "http://localhost:5173/qa?theme=dark#anchor")
	assert.Equal(t, ExecutionError, r.Outcome)
	assert.NotContains(t, fmt.Sprintf("%+v", r.Result), "fixture-private-credential")
	assert.Zero(t, tab.Gotos)
	assert.NotContains(t, tab.URL, "fixture-private-credential")
}

// TestSBN62_CancelledRemoteResolutionNeverNavigates is SB-N62, upstream "a
// canceled remote URL resolution never dispatches delayed navigation": on
// a remote desktop the environment URL's resolution outlives the request's
// deadline (200 ms less a tenth); the request times out, the tab takes the
// next action at once, and the late resolution navigates nothing.
func TestSBN62_CancelledRemoteResolutionNeverNavigates(t *testing.T) {
	w := newHosted(t, "remote-desktop")
	tab := w.blank()
	gate := time.Hour
	w.b.Desktops.ResolveHold = gate
	r := w.as("agent-a", OpNavigate, onTab(tab, func(r *Request) { r.URL, r.Timeout = "http://localhost:3000/late", 200*time.Millisecond }))
	w.run(180 * time.Millisecond)
	require.True(t, r.done)
	assert.Equal(t, ErrTimeout, r.Outcome)
	first := w.as("agent-a", OpEvaluate, onTab(tab, func(r *Request) { r.Value = "evaluated" }))
	w.run(2 * time.Second)
	require.True(t, first.done)
	assert.Equal(t, "evaluated", first.Value)
	w.run(gate)
	second := w.as("agent-a", OpEvaluate, onTab(tab, func(r *Request) { r.Value = "2" }))
	w.run(2 * time.Second)
	require.True(t, second.done)
	assert.Zero(t, tab.Gotos)
	assert.Empty(t, pageEntries(tab, "goto "))
}

// TestHostedNavigationInterruptedByTakeover is the model's reading beside
// SB-N32..N34 (no upstream case): a human who takes over a tab while an
// agent's navigation is being prepared interrupts it, so the page never
// moves under the human's control; a takeover during the credential
// exchange lets the exchange drain and then stops the navigation.
func TestHostedNavigationInterruptedByTakeover(t *testing.T) {
	for _, during := range []string{"preparation", "exchange"} {
		t.Run(during, func(t *testing.T) {
			w := newHosted(t, "")
			tab := w.blank()
			w.b.AttachViewer(tab, "viewer", true)
			if during == "preparation" {
				w.b.Hosting = func(HostingInput) HostingAnswer { return HostingAnswer{Hold: 5 * time.Second} }
			} else {
				w.b.Hosting = func(HostingInput) HostingAnswer { return HostingAnswer{Managed: true, BootstrapToken: oneUse} }
				w.b.SessionExchange = func(string, string, string) (time.Duration, string) { return 5 * time.Second, "" }
			}
			r := w.as("agent-a", OpNavigate, onTab(tab, func(r *Request) { r.URL = "http://localhost:5173/qa" }))
			w.run(time.Second)
			require.True(t, tab.Preparing())
			require.True(t, w.b.TakeControl(tab, "viewer"))
			w.run(10 * time.Second)
			require.True(t, r.done)
			assert.Equal(t, ReasonInterrupted, r.Outcome)
			assert.False(t, tab.Preparing())
			assert.Zero(t, tab.Gotos)
			if during == "preparation" {
				assert.Equal(t, "interrupted", w.b.HostingCalls[0].Outcome)
				assert.Empty(t, w.b.Exchanges)
			} else {
				assert.Equal(t, []string{"cookie written http://localhost:5173", "response disposed"}, pageEntries(tab, "cookie", "response"))
			}
		})
	}
}

// TestHostedOpenWithoutCatalogueOpensNothing: with hosting on, a new tab's
// open whose desktop catalogue is unavailable is refused as without
// hosting (UnavailableOpenMessage), before any preparation.
func TestHostedOpenWithoutCatalogueOpensNothing(t *testing.T) {
	w := newHosted(t, LocalDesktopHost)
	w.b.Desktops.Unavailable = true
	r := w.as("agent-a", OpOpen, func(r *Request) { r.URL, r.ReuseExistingTab = "http://localhost:5173/qa", false })
	w.run(time.Second)
	require.True(t, r.done)
	assert.Equal(t, RemoteUnavailable, r.Outcome)
	assert.Equal(t, UnavailableOpenMessage, r.Message)
	assert.Empty(t, w.b.HostingCalls)
	assert.Empty(t, w.b.Tabs())
}
