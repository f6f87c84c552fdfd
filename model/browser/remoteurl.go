package browser

import "github.com/orchsim/orchsim/sim"

// Remote environment URLs on the hosted path (ServerBrowser.ts,
// index:70905931248, browserNavigationUrl, which executeTabOperation runs
// under the tab's control with the request's abort signal): a tab of a
// remote desktop host cannot reach the environment's localhost, so that
// desktop resolves the URL (DesktopChannel.resolve) before the page goes
// there. The answer takes DesktopChannel.ResolveHold; the wait is
// cancelled with its request, and a late answer then navigates nothing
// (index:70867653086, "a canceled remote URL resolution never dispatches
// delayed navigation").

// resolveRemote is browserNavigationUrl for a hosted navigation: raw itself
// for a headless or local desktop's tab; else, after the desktop's answer,
// the resolved URL or RemoteUnavailable (UnresolvedURLMessage), or the
// abort's outcome. then gets the browser URL and the outcome.
func (b *ServerBrowser) resolveRemote(threadID, host, raw string, sig *Signal, then func(browser, outcome, msg string)) {
	if host == "" || host == LocalDesktopHost {
		then(raw, OK, "")
		return
	}
	d := b.Desktops
	if d == nil {
		then("", RemoteUnavailable, UnresolvedURLMessage)
		return
	}
	b.env.Emit(actor, "remote.resolve", "", sim.A("thread", threadID), sim.A("host", host))
	b.wait(d.ResolveHold, false, sig, func(cancelled bool) {
		if cancelled {
			then("", abortOutcome(sig), "")
			return
		}
		resolved, ok := d.resolve(host, raw)
		if !ok {
			then("", RemoteUnavailable, UnresolvedURLMessage)
			return
		}
		then(resolved, OK, "")
	})
}
