package browser

import (
	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Closing native pages and reconciling them when their host comes back
// (the newest stored ServerBrowser.test.ts, index:70867653086: "an
// interrupted online native root close handles %s without losing user
// intent", "status exposes detached roots so their owner can close them
// and recover capacity", "explicit %s close retires an offline root
// without reopening it or consuming tab capacity", "reconnect reconciles
// an ordinary offline root close and its tab capacity (%s)"; the popup
// half of the same mechanism is in ServerBrowser.ts, index:70905931248:
// the desktopPopup close, the connectedHosts probe loop).

// NativeCloseSettles is the liveness obligation a native close opens when
// its answer is lost with the host's channel: the close intent must be
// settled (the page retired, or the close vetoed) once the host is back,
// before the heal phase ends.
const NativeCloseSettles = "native-close-settles"

func init() {
	sim.DeclareObligation(sim.ObligationInfo{Name: NativeCloseSettles, Group: string(catalog.PreviewTab),
		Property: "a native page's close whose answer was lost with its desktop is settled (retired or vetoed) once the desktop is back",
		Source:   "ServerBrowser.test.ts index:70867653086, \"an interrupted online native root close handles %s without losing user intent\""})
}

// nativeEntity names p in the obligation ledger.
func nativeEntity(p *NativePage) string {
	return "native " + p.Kind.String() + " " + p.ID + " of " + TabEntity(p.ThreadID, p.TabID)
}

// settleIntent discharges p's close obligation, if open.
func (b *ServerBrowser) settleIntent(p *NativePage) {
	b.env.Obligations.Discharge(NativeCloseSettles, nativeEntity(p))
}

// killNative settles every native page's obligation: the pages die with
// the server process.
func (b *ServerBrowser) killNative() {
	for _, p := range b.native.pages {
		b.settleIntent(p)
	}
}

// NativeCloseError is PreviewNativeCloseError, a native close that did not
// retire its page; its reason is NativeCloseCanceled (a beforeunload
// veto) or NativeCloseUnavailable (the host could not be reached, or its
// answer was lost: the close intent is kept for the reconnect).
const (
	NativeCloseError       = "NativeCloseError"
	NativeCloseCanceledWhy = "canceled"
	NativeCloseUnavailable = "unavailable"
)

// closeNative closes p with intent; done gets OK once the page is retired,
// or NativeCloseError with its reason.
//
// An unreachable page (its host offline, or its window gone) is discarded
// at once: closeRoot with discardIfOffline answers discarded, the session
// is retired without reconnecting it, and its capacity is freed. A
// reachable one gets a close command with a fresh request id; the close
// intent holds until the host answers: closed retires the page,
// close-canceled clears the intent (the page stays, usable), and a lost
// answer (host-unavailable) keeps it, so the reconnect probe can replay
// the same command.
func (b *ServerBrowser) closeNative(p *NativePage, done func(outcome, reason string)) {
	if p.Closed {
		done(OK, "")
		return
	}
	if p.Kind == NativePopup {
		b.closePopup(p, "", done) // never discarded offline (native_popup.go)
		return
	}
	h := p.Host
	if !h.Connected || !p.Rendered {
		c := b.command(p, CmdCloseRoot, b.nextNativeRequest())
		h.send(c)
		b.discardRoot(p, "offline-close")
		done(OK, "")
		return
	}
	p.CloseRequested = true
	p.closeRequest = b.nextNativeRequest()
	b.sendClose(p, p.closeRequest, done)
}

// sendClose sends p's close command request and handles its answer.
func (b *ServerBrowser) sendClose(p *NativePage, request int, done func(outcome, reason string)) {
	h := p.Host
	h.send(b.command(p, CmdCloseRoot, request))
	b.emitNative(p, "close", "")
	b.askClose(p, request, done, func(result string) {
		if result == NativeCloseCanceled {
			b.emitNative(p, "close-canceled", "")
			b.settleIntent(p)
			done(NativeCloseError, NativeCloseCanceledWhy)
			return
		}
		b.emitNative(p, "close-lost", result)
		b.env.Obligations.Open(NativeCloseSettles, nativeEntity(p), "close answer lost: "+result)
		done(NativeCloseError, NativeCloseUnavailable)
	})
}

// askClose waits for the host's answer to close command request on p (a
// root's or a popup's): a page already closed or answered closed is done;
// a veto (NativeCloseCanceled) clears p's close intent if it is still this
// request's and restarts its tab's idle clock; then a veto or a lost
// answer goes to other, which says what the page's kind does with it.
func (b *ServerBrowser) askClose(p *NativePage, request int, done func(outcome, reason string), other func(result string)) {
	hook := p.Host.Close
	p.Host.ask(func(p *NativePage, answer func(string)) {
		if hook == nil {
			answer(NativeClosed)
			return
		}
		hook(p, request, answer)
	}, p, func(result string) {
		switch {
		case p.Closed:
			done(OK, "")
		case result == NativeClosed || result == "":
			b.confirmNativeClosed(p)
			done(OK, "")
		default:
			if result == NativeCloseCanceled {
				if p.closeRequest == request {
					p.CloseRequested, p.closeRequest = false, 0
				}
				if p.Tab != nil {
					p.Tab.UsedAt = b.env.Now()
				}
			}
			other(result)
		}
	})
}

// agentCloseNative is preview_close on a native page's tab: requireTab's
// refusal (another agent session) first, then human control, then
// closeNative. A close that did not retire the page is an execution error.
func (b *ServerBrowser) agentCloseNative(t *Tab, req Request, refusal string, finish func(Result)) {
	res := Result{TabID: t.TabID, TabThread: t.ThreadID, Owner: t.Control.AgentID}
	switch {
	case refusal == ReasonAgentMismatch:
		res.Outcome, res.Message = refusal, MsgAnotherSession
		finish(res)
		return
	case refusal != "":
		res.Outcome = refusal
		finish(res)
		return
	case t.Control.Owner != "" && !t.Control.IgnoreHuman:
		res.Outcome, res.Message = ReasonHumanControl, MsgHumanControl
		finish(res)
		return
	}
	b.closeNative(t.Native, func(outcome, reason string) {
		res.Outcome = outcome
		if outcome != OK {
			res.Outcome, res.Message = ExecutionError, "The desktop did not close the page ("+reason+")."
		}
		finish(res)
	})
}

// ManagerCloseNative is the preview manager closing a native page's
// session (a client's close): closeNative without an owner check. done
// (nil: ignored) gets OK or NativeCloseError with its reason.
func (b *ServerBrowser) ManagerCloseNative(t *Tab, done func(outcome, reason string)) {
	if done == nil {
		done = func(string, string) {}
	}
	b.closeNative(t.Native, done)
}

// ConnectNativeHost is host h's channel connection coming (back) up, and
// the server's reconciliation of its pages (connectedHosts): the roots
// still connected are published again, reconcileRoots tells the host the
// server epoch and which creation requests the server still holds (the
// host cancels every other pending creation of this server), and each
// page that needs it is probed (needsProbe): absent confirms it closed
// (its session goes, capacity freed), present replays an outstanding
// close with its original request id, and an unavailable probe changes
// nothing. Pages of other hosts are untouched.
func (b *ServerBrowser) ConnectNativeHost(h *NativeHost) {
	h.Connected = true
	b.env.Emit("desktop/"+h.ID, "native.host-connect", "")
	var retained []int
	var probe []*NativePage
	for _, p := range b.native.pages {
		if p.Host != h || p.Closed {
			continue
		}
		switch {
		case p.creating && !p.canceled:
			retained = append(retained, p.creation)
		case p.Kind == NativeRoot && p.Tab != nil && !p.Tab.pageless():
			h.send(b.command(p, CmdPublishRoot, b.nextNativeRequest()))
		}
		if b.needsProbe(p) {
			probe = append(probe, p)
		}
	}
	h.send(NativeCommand{Type: CmdReconcileRoots, Epoch: b.epoch, Retained: retained})
	for _, p := range probe {
		b.probeNative(p)
	}
	if h.OnConnect != nil {
		h.OnConnect()
	}
}

// needsProbe: a page with a close intent, and a root whose connection
// dropped (its window may have closed while the host was away); an
// attached root without intent is known to the host and needs none.
func (b *ServerBrowser) needsProbe(p *NativePage) bool {
	if p.Closed || p.creating {
		return false
	}
	if p.CloseRequested || p.Kind == NativePopup {
		return true // every popup of the host is probed (connectedHosts)
	}
	if p.Kind == NativeRoot {
		return p.Tab != nil && p.Tab.pageless()
	}
	return false
}

// probeNative probes p's presence and acts on the answer.
func (b *ServerBrowser) probeNative(p *NativePage) {
	h := p.Host
	typ := CmdProbeRoot
	if p.Kind == NativePopup {
		typ = CmdProbePopup
	}
	h.send(b.command(p, typ, b.nextNativeRequest()))
	present, reason := p.Rendered, ""
	act := func() {
		b.env.Emit(actor, "native.probe", probeOutcome(present, reason), sim.A("thread", p.ThreadID), sim.A("tab", p.TabID),
			sim.A("kind", p.Kind.String()), sim.A("close-requested", boolText(p.CloseRequested)))
		switch {
		case p.Closed || reason != "":
		case !present:
			b.confirmNativeClosed(p)
		case p.CloseRequested && p.Kind == NativePopup:
			b.closePopup(p, "reconnect", func(string, string) {})
		case p.CloseRequested && h.Connected:
			b.sendClose(p, p.closeRequest, func(string, string) {})
		}
	}
	if !h.Connected {
		return
	}
	due := h.hold(func() { reason = NativeHostUnavailable; act() })
	if h.Probe == nil {
		if due() {
			act()
		}
		return
	}
	h.Probe(p, func(ok bool, why string) {
		if due() {
			present, reason = ok, why
			act()
		}
	})
}

func probeOutcome(present bool, reason string) string {
	switch {
	case reason != "":
		return reason
	case present:
		return "present"
	}
	return "absent"
}

func boolText(v bool) string {
	if v {
		return "true"
	}
	return "false"
}

// nativeStatusWithoutTab answers a status that resolves to no live tab on a
// thread that holds native sessions: available false, and every session
// of the thread listed (a root whose connection dropped included), each
// with its owner, whether the caller owns it, whether it is streamed and
// its profile, so the owner can find and close a detached root. It reports
// false (not answered) otherwise.
func (b *ServerBrowser) nativeStatusWithoutTab(req Request, finish func(Result)) bool {
	native := false
	for _, t := range b.tabs {
		if t.ThreadID != req.ThreadID {
			continue
		}
		if !t.pageless() {
			return false
		}
		native = native || t.Native != nil
	}
	if !native {
		return false
	}
	res := Result{Outcome: OK}
	for _, t := range b.tabs {
		if t.ThreadID != req.ThreadID {
			continue
		}
		owner := "unclaimed"
		switch {
		case t.Control.Owner != "":
			owner = "human"
		case t.Control.AgentID != "":
			owner = "agent"
		}
		res.Tabs = append(res.Tabs, TabStatus{TabID: t.TabID, OpenerTabID: t.OpenerTabID, ProfileID: t.ProfileID,
			Owner: owner, OwnedByCaller: t.Control.AgentID == req.AgentSessionID, Visible: len(t.Viewers) > 0})
	}
	b.profileStatus(&res)
	finish(res)
	return true
}
