package browser

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// Preview hosting (the newest stored ServerBrowser.test.ts, index:70867653086,
// whose PreviewHosting mock is prepareNavigation; HostingAuth.ts @ 3c9de88a,
// index:70886478545, prepareBrowserCredential). No stored ServerBrowser.ts
// calls prepareNavigation (the newest, index:70905931248, only resolves a
// remote desktop's environment URL), so the order below is the one the test
// file's assertions fix:
//
//  1. the navigation's URL: a URL on an origin the tab already verified is
//     recovered to its local origin; otherwise a remote desktop's tab has
//     its environment URL resolved by that desktop (remoteurl.go);
//  2. hosting prepares the navigation with the local URL and, when it
//     differs, the browser URL; for two origins hosting checks that both
//     serve the same environment (its identity check) and fails otherwise;
//  3. a managed answer verifies the browser origin for the tab; with a
//     one-use bootstrap credential the tab's own browser context posts it
//     to /api/auth/browser-session on the browser origin (no redirects),
//     which writes the session cookie there;
//  4. only then does the page navigate, to the browser URL.
//
// Steps 1 and 2 are cancelled by the request's cancellation or deadline, by
// a newer viewer navigation, and by a control handoff; the credential
// exchange is not: a cancelled request drains it (the cookie is written and
// the response disposed) and then never navigates.

// Constants of the hosting path.
const (
	// BrowserSessionPath is the route a one-use bootstrap credential is
	// exchanged at for a browser session cookie.
	BrowserSessionPath = "/api/auth/browser-session"
	// HostingAuthMessage is PreviewHostingAuthError's message (HostingAuth.ts
	// @ 3c9de88a): what a failed preparation or exchange reports; it never
	// carries the credential.
	HostingAuthMessage = "Could not prepare browser access to this development preview."
	// HostingBootstrapFailed is the PreviewHostingAuthError reason of a
	// failed credential mint or an identity mismatch of the two origins.
	HostingBootstrapFailed = "bootstrap_failed"
)

// HostingInput is what a navigation asks hosting to prepare: the thread,
// the local URL, and the browser URL when it differs (a remote desktop's
// environment URL).
type HostingInput struct {
	ThreadID, URL, BrowserURL string
}

// HostingAnswer is hosting's answer to one preparation. Managed: hosting
// owns the origin (it is verified for the tab). BootstrapToken is a one-use
// credential to exchange for a browser session ("" for none). Failure is a
// PreviewHostingAuthError reason ("" for none). Hold is how long preparing
// takes; Never: it does not finish until cancelled.
type HostingAnswer struct {
	Managed        bool
	BootstrapToken string
	Failure        string
	Hold           time.Duration
	Never          bool
}

// PreviewHosting is PreviewHosting.prepareNavigation.
type PreviewHosting func(HostingInput) HostingAnswer

// HostingCall is one preparation as hosting saw it, with how it ended:
// managed, unmanaged, failed, interrupted, or "" while it runs.
type HostingCall struct {
	Input   HostingInput
	Outcome string
}

// BrowserSessionExchange is one post of a bootstrap credential by a tab's
// browser context: the URL posted to, the credential, the redirects
// allowed, the page connection it went through (1 for a tab's first), and
// how it ended (ok, failed, or "" while in flight).
type BrowserSessionExchange struct {
	ThreadID, TabID string
	URL, Credential string
	MaxRedirects    int
	Connection      int
	Outcome         string
}

// HostingHooks are the hosting side of a ServerBrowser; a nil Hosting keeps
// 164d7dbe's navigation (straight to its URL, no preparation, no remote
// resolution) for every existing case and the worlds.
type HostingHooks struct {
	// Hosting prepares every agent and viewer navigation, reload and
	// history step, and the manager's hard reload.
	Hosting PreviewHosting
	// SessionExchange says how a credential post to url goes: how long it
	// takes and its error text ("" for success). Nil: it succeeds at once.
	SessionExchange func(threadID, tabID, url string) (hold time.Duration, err string)
	// HostingCalls and Exchanges log the preparations and credential posts
	// in order.
	HostingCalls []HostingCall
	Exchanges    []BrowserSessionExchange
}

// tabHosting is the hosting state of one session. It belongs to the
// session, not to its page connection: a desktop page that reconnects
// keeps its verified origins (index:70867653086, "reattached desktop
// sessions retain verified origins for reload").
type tabHosting struct {
	verified []verifiedOrigin
	// cookies are the origins with a browser session cookie in the tab's
	// context.
	cookies []string
	// history is the page's session history and index its current entry.
	history []string
	index   int
	// conn counts page connections; ctl is the control of the current one
	// (every connection gets its own SessionControl, freshControl).
	conn int
	ctl  *Control
	// viewerNav is the signal of the viewer navigation being prepared;
	// agentNav: an agent's navigation is being prepared or exchanging its
	// credential.
	viewerNav *Signal
	agentNav  bool
	// watchers hear the current control's generation changes.
	watchers []func()
}

type verifiedOrigin struct{ browser, local string }

func (b *ServerBrowser) hostingOf(t *Tab) *tabHosting {
	h := t.hosting
	if h == nil {
		h = &tabHosting{}
		start := t.URL
		if start == "" {
			start = "about:blank"
		}
		h.history = []string{start}
		t.hosting = h
	}
	if h.ctl != t.Control {
		h.ctl, h.watchers = t.Control, nil
		h.conn++
		c := t.Control
		prev := c.OnEpoch
		c.OnEpoch = func(epoch int) {
			if prev != nil {
				prev(epoch)
			}
			ws := h.watchers
			h.watchers = nil
			for _, f := range ws {
				f()
			}
		}
	}
	return h
}

// Cookies returns the origins holding a browser session cookie in t's
// context.
func (t *Tab) Cookies() []string {
	if t.hosting == nil {
		return nil
	}
	return append([]string(nil), t.hosting.cookies...)
}

// Preparing reports whether an agent's navigation of t is being prepared by
// hosting or exchanging its credential (the page has not moved yet).
func (t *Tab) Preparing() bool { return t.hosting != nil && t.hosting.agentNav }

// Connection is the number of t's current page connection (1 for its
// first; a desktop page that reconnects gets the next).
func (b *ServerBrowser) Connection(t *Tab) int { return b.hostingOf(t).conn }

// History returns t's session history and its current index.
func (b *ServerBrowser) History(t *Tab) ([]string, int) {
	h := b.hostingOf(t)
	return append([]string(nil), h.history...), h.index
}

// origin is a URL's scheme://host[:port], or "" when it has none.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// onOrigin moves raw onto origin o, keeping its path, query and fragment.
func onOrigin(raw, o string) string { return o + strings.TrimPrefix(raw, origin(raw)) }

// recover returns the local URL for raw when raw is on an origin the tab
// verified, or "".
func (h *tabHosting) recover(raw string) string {
	o := origin(raw)
	for _, v := range h.verified {
		if v.browser == o {
			return onOrigin(raw, v.local)
		}
	}
	return ""
}

func (h *tabHosting) verify(browserURL, localURL string) {
	bo, lo := origin(browserURL), origin(localURL)
	if bo == "" || bo == lo {
		return
	}
	for i, v := range h.verified {
		if v.browser == bo {
			h.verified[i].local = lo
			return
		}
	}
	h.verified = append(h.verified, verifiedOrigin{browser: bo, local: lo})
}

// onHandoff calls f once, at the next generation change of t's current
// control (a takeover, a release, a disconnect or close).
func (b *ServerBrowser) onHandoff(t *Tab, f func()) {
	h := b.hostingOf(t)
	h.watchers = append(h.watchers, f)
}

// handoffReason is the abort reason of a preparation a control handoff
// cancelled.
const handoffReason = "handoff"

// abortOutcome is the outcome of work sig cancelled: interrupted for a
// handoff (BrowserControlInterrupted), closed when the tab closed, else the
// abort's reason.
func abortOutcome(sig *Signal) string {
	switch sig.Reason {
	case handoffReason:
		return ReasonInterrupted
	case ReasonClosed:
		return ReasonClosed
	}
	return Aborted(sig.Reason)
}

// wait is one cancellable step of a preparation: done(false) after hold
// (never, with never), or done(true) at once when sig aborts first.
func (b *ServerBrowser) wait(hold time.Duration, never bool, sig *Signal, done func(cancelled bool)) {
	if sig.Aborted {
		done(true)
		return
	}
	s := &waitStep{done: done}
	sig.listeners = append(sig.listeners, s.abort)
	if !never {
		b.env.RunAfter(hold, s) // its own event: the hold's end
	}
}

// waitStep is one wait in flight: done runs once, with the first of the
// hold's end (Run) and the signal's abort.
type waitStep struct {
	done  func(cancelled bool)
	ended bool
}

func (s *waitStep) end(cancelled bool) {
	if s.ended {
		return
	}
	s.ended = true
	s.done(cancelled)
}

// Run ends the wait at the end of its hold.
func (s *waitStep) Run() { s.end(false) }

func (s *waitStep) abort() { s.end(true) }

// preparedNav is a navigation after its preparation: the local URL, the
// browser URL the page goes to, and the credential to exchange first.
type preparedNav struct {
	local, browser string
	managed        bool
	token          string
}

// prepare runs steps 1 and 2 for a navigation to raw from a tab of desktop
// host ("" for a headless tab) with hosting state h (for a tab still to be
// opened, a detached one). then gets the prepared navigation, or an
// outcome other than OK and its message.
func (b *ServerBrowser) prepare(threadID, host string, h *tabHosting, raw string, sig *Signal,
	then func(nav preparedNav, outcome, msg string)) {
	nav := preparedNav{local: raw, browser: raw}
	if local := h.recover(raw); local != "" {
		nav.local = local
		b.prepareHosting(threadID, h, nav, sig, then)
		return
	}
	b.resolveRemote(threadID, host, raw, sig, func(browser, outcome, msg string) {
		if outcome != OK {
			then(nav, outcome, msg)
			return
		}
		nav.browser = browser
		b.prepareHosting(threadID, h, nav, sig, then)
	})
}

func (b *ServerBrowser) prepareHosting(threadID string, h *tabHosting, nav preparedNav, sig *Signal,
	then func(nav preparedNav, outcome, msg string)) {
	in := HostingInput{ThreadID: threadID, URL: nav.local}
	if nav.browser != nav.local {
		in.BrowserURL = nav.browser
	}
	answer := b.Hosting(in)
	b.HostingCalls = append(b.HostingCalls, HostingCall{Input: in})
	call := len(b.HostingCalls) - 1
	b.wait(answer.Hold, answer.Never, sig, func(cancelled bool) {
		c := &b.HostingCalls[call]
		switch {
		case cancelled:
			c.Outcome = "interrupted"
			then(nav, abortOutcome(sig), "")
		case answer.Failure != "":
			c.Outcome = "failed"
			then(nav, ExecutionError, HostingAuthMessage)
		default:
			c.Outcome = "unmanaged"
			if answer.Managed {
				c.Outcome = "managed"
				nav.managed, nav.token = true, answer.BootstrapToken
				h.verify(nav.browser, nav.local)
			}
			then(nav, OK, "")
		}
	})
}

// exchange is step 3 on tab t: with a credential, t's context posts it to
// the browser origin and the cookie is written when the post succeeds. It
// cannot be cancelled; then runs once the response is disposed, with
// ExecutionError (HostingAuthMessage) for a failed post.
func (b *ServerBrowser) exchange(t *Tab, nav preparedNav, then func(outcome, msg string)) {
	if nav.token == "" {
		then(OK, "")
		return
	}
	h := b.hostingOf(t)
	post := origin(nav.browser) + BrowserSessionPath
	b.Exchanges = append(b.Exchanges, BrowserSessionExchange{ThreadID: t.ThreadID, TabID: t.TabID, URL: post,
		Credential: nav.token, Connection: h.conn})
	i := len(b.Exchanges) - 1
	hold, failure := time.Duration(0), ""
	if b.SessionExchange != nil {
		hold, failure = b.SessionExchange(t.ThreadID, t.TabID, post)
	}
	b.env.After(hold, func() {
		if failure != "" {
			// The post's own error may quote the credential; only the
			// hosting message leaves.
			b.Exchanges[i].Outcome = "failed"
			b.env.Emit(actor, "hosting.exchange", "failed", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
			then(ExecutionError, HostingAuthMessage)
			return
		}
		b.Exchanges[i].Outcome = OK
		o := origin(nav.browser)
		if !containsString(h.cookies, o) {
			h.cookies = append(h.cookies, o)
		}
		t.log("cookie written " + o)
		t.log("response disposed")
		b.env.Emit(actor, "hosting.exchange", OK, sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
		then(OK, "")
	})
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pageGoto is page.goto(raw): a new history entry after the current one.
func (b *ServerBrowser) pageGoto(t *Tab, raw string) {
	h := b.hostingOf(t)
	h.history = append(h.history[:h.index+1], raw)
	h.index++
	t.URL = raw
	t.Gotos++
	t.GotoURLs = append(t.GotoURLs, raw)
	t.log("goto " + raw)
}

// PageGo is the page moving delta entries through its own history (a
// script's history.go, or Playwright's goBack/goForward outside a viewer),
// clamped to the history's ends.
func (b *ServerBrowser) PageGo(t *Tab, delta int) {
	h := b.hostingOf(t)
	h.index = min(max(h.index+delta, 0), len(h.history)-1)
	t.URL = h.history[h.index]
}

// historyTarget is the entry delta steps away, or "" beyond the ends.
func (h *tabHosting) historyTarget(delta int) string {
	i := h.index + delta
	if i < 0 || i >= len(h.history) {
		return ""
	}
	return h.history[i]
}

// ClearCookies is the browser context losing its session cookies
// (Network.clearBrowserCookies).
func (b *ServerBrowser) clearCookies(t *Tab) {
	b.hostingOf(t).cookies = nil
	t.log("cookies cleared")
}

// String renders a hosting call for traces and failures.
func (c HostingCall) String() string {
	return fmt.Sprintf("prepare %s browser=%s: %s", c.Input.URL, c.Input.BrowserURL, c.Outcome)
}
