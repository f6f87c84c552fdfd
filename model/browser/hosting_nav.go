package browser

import (
	"time"

	"github.com/orchsim/orchsim/sim"
)

// The navigations that go through preview hosting (hosting.go) once
// ServerBrowser.Hosting is set: an agent's navigate and its open with a URL
// (reusing a tab, or a new one), a viewer's navigate, reload and history
// step, and the manager's hard reload.

// requestSignal returns the signal that cancels req's hosted work and the
// reply that answers req once. The signal aborts when req's caller cancels
// it (the caller then hears nothing) and at req's execution deadline, when
// the reply is PreviewAutomationTimeoutError (ErrTimeout).
func (b *ServerBrowser) requestSignal(req Request, finish func(Result)) (*Signal, func(Result)) {
	sig := &Signal{}
	replied := false
	reply := func(r Result) {
		if !replied {
			replied = true
			finish(r)
		}
	}
	if c := req.Cancel; c != nil {
		cancel := func() {
			replied = true
			sig.Abort(c.Reason)
		}
		if c.Aborted {
			cancel()
		} else {
			c.listeners = append(c.listeners, cancel)
		}
	}
	if req.Timeout > 0 {
		b.env.After(hostDeadline(req.Timeout), func() {
			if replied {
				return
			}
			reply(Result{Outcome: ErrTimeout, Message: MsgDeadline})
			sig.Abort("timeout")
		})
	}
	return sig, reply
}

// hostedNavigate is an agent's navigation of t (navigate, or open reusing
// t) as queued agent work: prepared, its credential exchanged, then the
// page goes to the browser URL; res is answered with the page's URL when
// the navigation starts, and its load (the page's action time) holds the
// queue as tracked work.
//
// A control handoff (a human taking over, or the tab closing) cancels the
// preparation as it cancels a viewer's, and a handoff during the
// credential exchange stops the navigation after it (interrupted): the
// newest stored test file cancels only viewers' preparations at a
// handoff; that an agent's navigation never lands under a human's control
// is the model's reading of "while a human controls a tab, no agent
// action runs on it" (SessionControl).
func (b *ServerBrowser) hostedNavigate(t *Tab, req Request, ignore bool, res Result, finish func(Result)) {
	sig, reply := b.requestSignal(req, finish)
	raw := req.URL
	t.Control.Submit(Item{Kind: ItemAgent, Actor: req.AgentSessionID, IgnoreOwner: ignore, Signal: sig,
		Run: func(done func(string)) {
			if t.dialog != nil {
				done(ReasonDialogPending)
				return
			}
			b.env.Emit(actor, "hosting.navigate", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
			h := b.hostingOf(t)
			h.agentNav = true
			if !t.Control.IgnoreHuman {
				ctl := t.Control
				b.onHandoff(t, func() {
					if ctl.Closed {
						sig.Abort(ReasonClosed)
						return
					}
					sig.Abort(handoffReason)
				})
			}
			b.navigateHosted(t, raw, b.hold(req), sig, func(outcome, msg string) {
				h.agentNav = false
				res.Message, res.URL = msg, t.URL
				b.env.Emit(actor, "hosting.navigated", outcome, sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
				done(outcome)
			})
		},
		Done: func(o string) {
			res.Outcome = o
			reply(res)
		}})
}

// navigateHosted prepares raw for t, exchanges its credential, and, unless
// sig aborted meanwhile, control changed hands or the page went, navigates
// the page (a drawn net error fails it, as NavigationFailure says), whose
// load then takes load, tracked by the tab's control.
func (b *ServerBrowser) navigateHosted(t *Tab, raw string, load time.Duration, sig *Signal, then func(outcome, msg string)) {
	h := b.hostingOf(t)
	ctl := t.Control
	epoch := ctl.Epoch
	b.prepare(t.ThreadID, t.DesktopHostID, h, raw, sig, func(nav preparedNav, outcome, msg string) {
		if outcome != OK {
			then(outcome, msg)
			return
		}
		t.log("hosting prepared " + nav.local)
		b.exchange(t, nav, func(outcome, msg string) {
			switch {
			case outcome != OK:
				then(outcome, msg)
			case sig.Aborted:
				then(abortOutcome(sig), "")
			case t.Control != ctl || ctl.Closed:
				then(ReasonClosed, "")
			case ctl.Epoch != epoch && !ctl.IgnoreHuman:
				then(ReasonInterrupted, "")
			default:
				if b.NavigationFailure != nil {
					if e := b.NavigationFailure(t.ThreadID, t.TabID); e != "" {
						t.Gotos++
						var res Result
						b.failNavigation(t, nav.browser, e, &res)
						then(ExecutionError, res.Message)
						return
					}
				}
				b.pageGoto(t, nav.browser)
				settle := ctl.Track()
				b.env.After(load, func() { settle("") })
				then(OK, "")
			}
		})
	})
}

// prepareOpen is an agent's open of a new tab of desktop host ("" for a
// headless tab) with a URL: the navigation is prepared before the tab
// exists (a failed preparation opens nothing), then open opens the tab
// blank, its own context exchanges the credential, and its page goes to
// the browser URL.
func (b *ServerBrowser) prepareOpen(req Request, host string, open func(Request, func(Result)), finish func(Result)) {
	sig, reply := b.requestSignal(req, finish)
	h := &tabHosting{}
	b.prepare(req.ThreadID, host, h, req.URL, sig, func(nav preparedNav, outcome, msg string) {
		if outcome != OK {
			reply(Result{Outcome: outcome, Message: msg})
			return
		}
		// The tab to reuse was decided before the preparation; this is a
		// new one.
		blank := req
		blank.URL, blank.ReuseExistingTab, blank.Timeout, blank.Cancel = "", false, 0, nil
		open(blank, func(res Result) {
			t := b.Tab(res.TabThread, res.TabID)
			if res.Outcome != OK || t == nil {
				reply(res)
				return
			}
			b.hostingOf(t).verified = h.verified
			b.exchange(t, nav, func(outcome, msg string) {
				if outcome == OK && !sig.Aborted {
					b.pageGoto(t, nav.browser)
				}
				res.Outcome, res.Message, res.URL = outcome, msg, t.URL
				reply(res)
			})
		})
	})
}

// Viewer navigation methods (ViewerInput.Method).
const (
	MethodGoto      = "goto"
	MethodReload    = "reload"
	MethodGoBack    = "goBack"
	MethodGoForward = "goForward"
)

// hostedViewerNavigation is a controlling viewer's navigate, reload or
// history step with hosting: the input is answered at once and prepared
// outside the tab's queue (the viewer's other input is not held back); a
// newer navigation of the viewer, or a control handoff, cancels it. Once
// prepared (and its credential exchanged) the page mutation is the
// viewer's human action, its commit tracked until handoff.
func (b *ServerBrowser) hostedViewerNavigation(t *Tab, viewer string, in ViewerInput, done func(outcome, msg string)) {
	c := t.Control
	switch {
	case c.Closed:
		done(ReasonClosed, MsgClosed)
		return
	case c.Owner != viewer:
		done(ReasonInterrupted, MsgNotController)
		return
	case in.Method == MethodGoto && in.URL == "":
		done(Ignored, "")
		return
	}
	h := b.hostingOf(t)
	if h.viewerNav != nil {
		h.viewerNav.Abort("superseded")
	}
	sig := &Signal{}
	h.viewerNav = sig
	b.onHandoff(t, func() { sig.Abort("handoff") })
	done(OK, "")
	var dest string
	switch in.Method {
	case MethodGoto:
		dest = in.URL
	case MethodReload:
		dest = t.URL
	case MethodGoBack:
		dest = h.historyTarget(-1)
	case MethodGoForward:
		dest = h.historyTarget(1)
	}
	mutate := func(nav preparedNav) {
		c.Submit(Item{Kind: ItemHuman, Actor: viewer,
			Run: func(finish func(string)) {
				if sig.Aborted {
					finish(abortOutcome(sig))
					return
				}
				if q := t.queue(viewer); q != nil {
					q.inputAt, q.hasIn = b.env.Now(), true
				}
				t.LastViewerNavigation = ViewerNavigation{Method: in.Method, WaitUntil: "commit", Timeout: NavigationTimeout}
				switch in.Method {
				case MethodGoto:
					b.pageGoto(t, nav.browser)
				case MethodReload:
					if in.IgnoreCache {
						t.log("hard reload")
					} else {
						t.log("reload")
					}
				case MethodGoBack:
					b.PageGo(t, -1)
					t.log("goBack")
				case MethodGoForward:
					b.PageGo(t, 1)
					t.log("goForward")
				}
				settle := c.TrackUntilHandoff()
				b.env.After(in.Hold, func() {
					if !c.Closed {
						t.log("navigation committed")
					}
					settle("")
				})
				finish(OK)
			},
			Done: func(string) {
				if h.viewerNav == sig {
					h.viewerNav = nil
				}
			}})
	}
	if dest == "" || dest == "about:blank" {
		// Nothing to prepare (a blank page, or no entry that way).
		mutate(preparedNav{local: in.URL, browser: in.URL})
		return
	}
	b.prepare(t.ThreadID, t.DesktopHostID, h, dest, sig, func(nav preparedNav, outcome, _ string) {
		if outcome != OK {
			return
		}
		t.log("hosting prepared " + nav.local)
		b.exchange(t, nav, func(outcome, _ string) {
			if outcome == OK && !sig.Aborted && t.Control == c {
				mutate(nav)
			}
		})
	})
}

// ManagerAdjust is the preview manager's adjust of t's session by a client
// (clear: "cookies", hardReload), applied as queued system work as the
// "resized" event is: the context's cookies are cleared, and a hard reload
// (Page.reload ignoreCache) of a hosted page first prepares its URL again,
// exchanging a fresh credential (index:70867653086, "client hard reload
// prepares managed access before reloading"). done gets the outcome.
func (b *ServerBrowser) ManagerAdjust(t *Tab, clearCookies, hardReload bool, done func(outcome string)) {
	t.Control.Submit(Item{Kind: ItemSystem,
		Run: func(finish func(string)) {
			if clearCookies {
				b.clearCookies(t)
			}
			if !hardReload {
				finish(OK)
				return
			}
			reload := func() {
				t.log("hard reload")
				finish(OK)
			}
			if b.Hosting == nil || t.URL == "" || t.URL == "about:blank" {
				reload()
				return
			}
			h := b.hostingOf(t)
			b.prepare(t.ThreadID, t.DesktopHostID, h, t.URL, &Signal{}, func(nav preparedNav, outcome, _ string) {
				if outcome != OK {
					finish(outcome)
					return
				}
				t.log("hosting prepared " + nav.local)
				b.exchange(t, nav, func(outcome, _ string) {
					if outcome != OK {
						finish(outcome)
						return
					}
					reload()
				})
			})
		},
		Done: done})
}
