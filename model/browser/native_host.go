package browser

import (
	"slices"

	"github.com/orchsim/orchsim/sim"
)

// NativeHost is one desktop app on the server's desktop browser channel
// (DesktopBrowserChannel, keyed by desktopHostId; "local" is the desktop
// the server runs beside): the side that creates native pages (roots the
// server asks for, popups the page opens), renders and presents them, and
// answers the channel's commands. Every command the server sends is
// recorded in Commands, in order, as the upstream test's channel mock
// records rootCreations, rootAcceptances, rootClosures, rootDiscards,
// probes and rootOwnerReconciliations (ServerBrowser.test.ts,
// index:70867653086).
//
// The hooks decide the host's answers; nil answers at once with success
// (Probe: present while Rendered). A hook may keep its answer function and
// call it later (a gate); an answer still pending when the host
// disconnects is answered host-unavailable by Disconnect, and a late call
// is ignored.
type NativeHost struct {
	// ID is the desktopHostId.
	ID string
	// Connected: the host's channel connection is up. Commands for a page
	// of a disconnected host fail host-unavailable.
	Connected bool
	// Presented are the tabs (by tab id) the host shows in a native slot
	// now (isPresented).
	Presented map[string]bool
	// Title is what the host's pages report as their title (the fake
	// page's "test page" when "").
	Title string

	// Create answers createRoot ("" or a DesktopBrowserTransportError
	// reason: guest-unavailable, host-unavailable).
	Create func(p *NativePage, answer func(reason string))
	// Setup is connecting to the page's endpoint and preparing it
	// (connectDesktopPage and the page's rendering setup); done ends it.
	Setup func(p *NativePage, done func())
	// Accept answers acceptRoot; Publish answers publishRoot (reasons as
	// Create's).
	Accept  func(p *NativePage, answer func(reason string))
	Publish func(p *NativePage, answer func(reason string))
	// Close answers a close command (closeRoot or closePopup) of request
	// id: NativeClosed, or a reason (close-canceled: the page's
	// beforeunload kept it open; host-unavailable).
	Close func(p *NativePage, request int, answer func(result string))
	// Probe answers a presence probe (probeRoot, probePopup): whether the
	// page's window still exists, or a reason ("" when it answered).
	Probe func(p *NativePage, answer func(present bool, reason string))

	// OnPublish, if set, hears that a root's session was published (the
	// worlds use it to schedule the host's own later moves on the page).
	OnPublish func(p *NativePage)
	// OnConnect, if set, hears that the host's channel came (back) up,
	// after the server reconciled its pages (ConnectNativeHost); the
	// worlds use it for the desktop's re-announcement of its living popups.
	OnConnect func()

	// Commands is every command the server sent the host, in order.
	Commands []NativeCommand

	b       *ServerBrowser
	pending []*nativeAnswer
}

// Results and transport reasons of the desktop channel
// (DesktopBrowserTransportError.reason, closeRoot's result).
const (
	NativeClosed          = "closed"
	NativeDiscarded       = "discarded"
	NativeCloseCanceled   = "close-canceled"
	NativeHostUnavailable = "host-unavailable"
	NativeGuestMissing    = "guest-unavailable"
)

// Native channel command types (DesktopBrowserCommand.type).
const (
	CmdCreateRoot     = "createRoot"
	CmdAcceptRoot     = "acceptRoot"
	CmdPublishRoot    = "publishRoot"
	CmdCloseRoot      = "closeRoot"
	CmdDiscardRoot    = "discardRoot"
	CmdProbeRoot      = "probeRoot"
	CmdReconcileRoots = "reconcileRoots"
	CmdClosePopup     = "closePopup"
	CmdProbePopup     = "probePopup"
)

// NativeCommand is one command the server sent a host. ID is the page's
// rootId or popupId; Request the command's request id (a close replayed
// after reconnect keeps its original id); Epoch and Retained are
// reconcileRoots' serverEpoch and retainedRootRequestIds (the creation
// requests still in progress).
type NativeCommand struct {
	Type     string
	ThreadID string
	TabID    string
	ID       string
	Request  int
	URL      string
	Profile  string
	Epoch    string
	Retained []int
}

type nativeAnswer struct {
	done bool
	fail func()
}

// Sent returns the commands of type typ the host was sent, in order.
func (h *NativeHost) Sent(typ string) []NativeCommand {
	var out []NativeCommand
	for _, c := range h.Commands {
		if c.Type == typ {
			out = append(out, c)
		}
	}
	return out
}

// SentIDs returns the page ids of the commands of type typ, in order.
func (h *NativeHost) SentIDs(typ string) []string {
	var out []string
	for _, c := range h.Sent(typ) {
		out = append(out, c.ID)
	}
	return out
}

func (h *NativeHost) send(c NativeCommand) {
	h.Commands = append(h.Commands, c)
	if h.b != nil {
		h.b.env.Emit(h.b.env.Str().Concat("desktop/", h.ID), h.b.env.Str().Concat("native.", c.Type), c.ID, sim.A("thread", c.ThreadID), sim.A("tab", c.TabID))
	}
}

// hold registers an answer that Disconnect fails; the returned func
// reports whether the answer is still due (and marks it given).
func (h *NativeHost) hold(fail func()) func() bool {
	a := &nativeAnswer{fail: fail}
	h.pending = append(h.pending, a)
	return func() bool {
		if a.done {
			return false
		}
		a.done = true
		h.pending = slices.DeleteFunc(h.pending, func(x *nativeAnswer) bool { return x == a })
		return true
	}
}

// ask sends a reason-answered command through hook (nil: success), failing
// at once when the host is offline.
func (h *NativeHost) ask(hook func(*NativePage, func(string)), p *NativePage, done func(reason string)) {
	if !h.Connected {
		done(NativeHostUnavailable)
		return
	}
	var due func() bool
	due = h.hold(func() { done(NativeHostUnavailable) })
	answer := func(reason string) {
		if due() {
			done(reason)
		}
	}
	if hook == nil {
		answer("")
		return
	}
	hook(p, answer)
}

// Disconnect is the host's channel connection ending: every answer still
// due fails host-unavailable (a command delivered whose reply is lost).
// Pages stay; the server reconciles them when the host connects again.
func (h *NativeHost) Disconnect() {
	h.Connected = false
	pending := h.pending
	h.pending = nil
	for _, a := range pending {
		if !a.done {
			a.done = true
			a.fail()
		}
	}
	if h.b != nil {
		h.b.env.Emit("desktop/"+h.ID, "native.host-disconnect", "")
	}
}
