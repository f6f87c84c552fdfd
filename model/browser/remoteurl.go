package browser

import (
	"time"

	"github.com/orchsim/orchsim/sim"
)

// Remote environment URLs (ServerBrowser.ts, index:70905931248,
// browserNavigationUrl): a tab of a remote desktop host (a desktop host id
// other than "" and "local") cannot reach the environment's localhost, so
// the desktop resolves each navigation's URL to the environment's address
// as it sees it (DesktopBrowserChannel.resolveUrl) before the page goes
// there. The resolution is cancelled with its request (the request's abort
// signal), and a late answer then navigates nothing (index:70867653086, "a
// canceled remote URL resolution never dispatches delayed navigation").

// RemoteResolution is a desktop's answer to one resolution: the URL ("" when
// it cannot resolve it), after Hold; Never: no answer until cancelled.
type RemoteResolution struct {
	URL   string
	Hold  time.Duration
	Never bool
}

// RemoteUnavailableMessage is what a navigation reports when the remote
// desktop cannot resolve the environment URL (PreviewAutomationRemoteUnavailableError;
// the desktop's own localhost is never opened instead).
const RemoteUnavailableMessage = "The remote desktop could not resolve this environment URL, so nothing was opened; check the environment connection and retry."

// remoteHost reports whether host is a remote desktop host.
func remoteHost(host string) bool { return host != "" && host != "local" }

// resolveRemote is browserNavigationUrl: raw itself for a local tab, else
// the remote desktop's resolution; then gets the browser URL, or
// RemoteUnavailableError, or the abort's outcome.
func (b *ServerBrowser) resolveRemote(threadID, host, raw string, sig *Signal, then func(browser, outcome, msg string)) {
	if !remoteHost(host) {
		then(raw, OK, "")
		return
	}
	var r RemoteResolution
	if b.RemoteURL != nil {
		r = b.RemoteURL(host, threadID, raw)
	}
	b.env.Emit(actor, "remote.resolve", "", sim.A("thread", threadID), sim.A("host", host))
	b.wait(r.Hold, r.Never, sig, func(cancelled bool) {
		switch {
		case cancelled:
			then("", Aborted(sig.Reason), "")
		case r.URL == "":
			then("", ErrRemoteUnavailable, RemoteUnavailableMessage)
		default:
			then(r.URL, OK, "")
		}
	})
}
