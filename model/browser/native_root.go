package browser

import (
	"fmt"

	"github.com/orchsim/orchsim/sim"
)

// Native roots: an agent's open whose selected desktop supports native
// roots (NativeRootFor) asks that desktop for a page of its own rather
// than a headless one (the newest stored ServerBrowser.test.ts,
// index:70867653086: "agent opens %s on an independent native page owned
// by its selected host", "a root loaded before native acceptance
// publishes its completed navigation", "native root acceptance failure
// retains the unavailable error classification", "failed native root %s
// releases capacity and reconnect ownership without an acknowledgment",
// "canceled root connection closes its attempted page and never publishes
// a late tab"; the server source of that version is not stored, so the
// order below is the order those tests observe).
//
// The root is created (createRoot, with the server epoch, profile and
// URL), connected to (Setup), navigated to its URL (a failed navigation is
// kept as LoadFailed, not a failed open), accepted (acceptRoot) and
// published (publishRoot); only then is its session listed and announced.
// Until then it exists for nobody: no session, no event. A failure of any
// step (a transport reason, or the host disconnecting with the answer
// due) discards the root (discardRoot, no close) and fails the open
// RemoteUnavailable; it holds no capacity and is no creation the server
// retains at reconnect. An open that times out (Request.Timeout) answers
// TimeoutError at once; the page that connects late is let go (its
// endpoint released) and discarded, never published.

// openNativeRoot is the native root open for req on host h with profile.
func (b *ServerBrowser) openNativeRoot(req Request, h *NativeHost, profile string, finish func(Result)) {
	if b.nativeSessions(req.ThreadID, req.AgentSessionID) >= AgentTabLimit || b.live()+b.creatingRoots() >= ServerTabLimit {
		finish(Result{Outcome: ReasonTabLimit, Message: TabLimitMessage})
		return
	}
	b.nextTab++
	now := b.env.Now()
	t := &Tab{ThreadID: req.ThreadID, TabID: fmt.Sprintf("tab_%d_%s", b.nextTab, b.epoch), CreatedAt: now, UsedAt: now,
		Desktop: true, Viewport: UnattachedFillViewport, ProfileID: profile, page: pageOpening}
	t.Control = NewControl(req.AgentSessionID, b.env.After)
	p := &NativePage{Kind: NativeRoot, ID: "root-" + t.TabID, Host: h, ThreadID: t.ThreadID, TabID: t.TabID, URL: req.URL,
		ProfileID: profile, Rendered: true, creating: true, creation: b.nextNativeRequest(), pending: t}
	t.Native = p
	b.native.pages = append(b.native.pages, p)
	replied := false
	reply := func(r Result) {
		if !replied {
			replied = true
			finish(r)
		}
	}
	if req.Timeout > 0 {
		b.env.After(req.Timeout, func() {
			if !replied {
				p.canceled = true
				b.emitNative(p, "open-timeout", "")
				reply(Result{Outcome: ErrTimeout, Message: "The browser operation exceeded its execution deadline."})
			}
		})
	}
	fail := func(reason string) {
		b.discardRoot(p, "failed")
		reply(Result{Outcome: ErrRemoteUnavailable, Message: "The desktop browser is unavailable: " + reason})
	}
	c := b.command(p, CmdCreateRoot, p.creation)
	c.URL, c.Profile, c.Epoch = req.URL, profile, b.epoch
	h.send(c)
	h.ask(h.Create, p, func(reason string) {
		switch {
		case p.canceled:
			b.discardRoot(p, "canceled")
		case reason != "":
			fail(reason)
		default:
			b.setupNative(p, func() {
				if p.canceled {
					// The page connected after its open gave up: the
					// connection is let go (its endpoint released).
					b.EndpointReleases++
					b.discardRoot(p, "canceled")
					return
				}
				b.DesktopConnections++
				t.page = pageLive
				navErr := b.initialNavigation(t, req)
				b.acceptRoot(p, func(reason string) {
					switch {
					case p.canceled:
						b.discardRoot(p, "canceled")
					case reason != "":
						fail(reason)
					default:
						b.publishRoot(p)
						b.surfaceRendered(t)
						res := Result{Outcome: OK, TabID: t.TabID, TabThread: t.ThreadID, Owner: t.Control.AgentID}
						if navErr != "" {
							res.Outcome, res.Message = ExecutionError, navErr
						}
						b.profileStatus(&res)
						reply(res)
					}
				})
			})
		}
	})
}

// setupNative connects to p's page through the host's Setup hook.
func (b *ServerBrowser) setupNative(p *NativePage, done func()) {
	if p.Host.Setup == nil {
		done()
		return
	}
	p.Host.Setup(p, done)
}

// initialNavigation navigates a new root to its URL (goto, wait-until
// commit): the page reports Success with its title, or, with
// req.LoadFailure, LoadFailed (the open then fails with the navigation's
// error, the session kept).
func (b *ServerBrowser) initialNavigation(t *Tab, req Request) string {
	p := t.Native
	if req.URL == "" {
		return ""
	}
	t.Gotos++
	if req.LoadFailure != "" {
		var res Result
		b.failNavigation(t, req.URL, req.LoadFailure, &res)
		code, desc := ParseNetError(req.LoadFailure)
		p.Nav = NavStatus{Tag: "LoadFailed", URL: req.URL, Code: code, Description: desc}
		return res.Message
	}
	t.URL = req.URL
	title := p.Host.Title
	if title == "" {
		title = "test page"
	}
	p.Nav = NavStatus{Tag: "Success", URL: req.URL, Title: title}
	return ""
}

// acceptRoot then publishRoot; done gets "" once both succeeded.
func (b *ServerBrowser) acceptRoot(p *NativePage, done func(reason string)) {
	h := p.Host
	h.send(b.command(p, CmdAcceptRoot, b.nextNativeRequest()))
	h.ask(h.Accept, p, func(reason string) {
		if reason != "" || p.canceled {
			done(reason)
			return
		}
		h.send(b.command(p, CmdPublishRoot, b.nextNativeRequest()))
		h.ask(h.Publish, p, done)
	})
}

// publishRoot lists and announces p's session.
func (b *ServerBrowser) publishRoot(p *NativePage) {
	t := p.pending
	p.creating, p.pending, p.Tab = false, nil, t
	b.freshControl(t)
	b.tabs = append(b.tabs, t)
	b.native.opened = append(b.native.opened, t.TabID)
	t.nativePresented = p.Host.Presented[t.TabID]
	b.emitNative(p, "published", "")
	if p.Host.OnPublish != nil {
		p.Host.OnPublish(p)
	}
}

// discardRoot retires a root that was never published, or a published one
// closed while unreachable: discardRoot, no close; its connection, if any,
// is let go.
//
// why is traced: failed (a step of the open failed), canceled (its open
// gave up), offline-close (a close found the page unreachable).
func (b *ServerBrowser) discardRoot(p *NativePage, why string) {
	if p.Closed {
		return
	}
	t := p.pending
	if t == nil {
		t = p.Tab
	}
	p.creating, p.Closed, p.CloseRequested, p.closeRequest = false, true, false, 0
	p.pending, p.Tab = nil, nil
	p.Host.send(b.command(p, CmdDiscardRoot, b.nextNativeRequest()))
	b.emitNative(p, "discarded", why)
	b.settleIntent(p)
	if t == nil {
		return
	}
	if !t.pageless() {
		t.DesktopEndpoint = false
		b.EndpointReleases++
	}
	if b.Tab(t.ThreadID, t.TabID) == t {
		b.remove(t)
		return
	}
	t.page = pageNone
	t.Control.Close()
}

// creatingRoots counts roots whose creation is in progress (pendingTabs).
func (b *ServerBrowser) creatingRoots() int {
	n := 0
	for _, p := range b.native.pages {
		if p.creating && !p.Closed {
			n++
		}
	}
	return n
}

// connectNative is ensureTab for a published root whose connection
// dropped: the host must be connected and still render it; then the page
// is connected again (Setup), registers, and samples its presentation.
func (b *ServerBrowser) connectNative(t *Tab, by string, settle func(string)) {
	p := t.Native
	if p.Kind == NativePopup {
		b.connectPopup(t, by, settle)
		return
	}
	if p.Closed || !p.Host.Connected || !p.Rendered {
		t.page = pageNone
		settle(ErrRemoteUnavailable)
		return
	}
	b.setupNative(p, func() {
		if p.Closed || b.Tab(t.ThreadID, t.TabID) != t {
			t.page = pageNone
			settle(TabNotFound)
			return
		}
		b.DesktopConnections++
		t.page = pageLive
		b.freshControl(t)
		t.nativePresented = p.Host.Presented[t.TabID]
		b.env.Emit(actor, "tab.connect", "native", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID), sim.A("by", by))
		settle(OK)
	})
}
