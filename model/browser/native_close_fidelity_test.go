package browser

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Native root closes, capacity and host reconnects of the newest stored
// ServerBrowser.test.ts (index:70867653086), on the sb harness with a
// native host (native_roots_fidelity_test.go's nativeSB).

// detach is the desktop taking a root back while a viewer watches: the
// viewer is told to reconnect; with gone the root's window is gone too
// (the mock's desktopTabs.delete).
func (w *sb) detach(t *Tab, viewer string, gone bool) {
	w.b.AttachViewer(t, viewer, false)
	if gone {
		t.Native.Rendered = false
	}
	w.b.DesktopWithdraw(t)
	require.NotEmpty(w.t, tags(t.Output(viewer), "reconnect"), "the viewer reconnects")
}

// commandsFor returns the commands h was sent from index from on, about
// page id (reconcileRoots, about no page, included).
func commandsFor(h *NativeHost, from int, id string) []NativeCommand {
	var out []NativeCommand
	for _, c := range h.Commands[from:] {
		if c.ID == id || c.Type == CmdReconcileRoots {
			out = append(out, c)
		}
	}
	return out
}

// TestSBN47_InterruptedRootCloseKeepsIntent is SB-N47, upstream "an
// interrupted online native root close handles %s without losing user
// intent" (reconnect, deliberate-offline-close): the close command reaches
// the host, which vetoes it but disconnects before its reply; the close
// fails unavailable and discards nothing.
//
// reconnect: the session stays; the returning host gets the root
// published again and, probed present, the original close command with
// its original request id; its veto leaves the session as it was (owner,
// host, profile, root id) and usable; a deliberate close then sends a
// fresh request and the host's closed retires the session, discarding
// nothing.
//
// deliberate-offline-close (with seven more roots): a fresh close while
// the host is still away retires the root at once (seven sessions left);
// the returning host is sent nothing about it but a reconcileRoots that
// retains no creation; a replacement then fits in the eighth slot (opened
// once the host is back: upstream opens it through the test's mock while
// the real channel is offline).
func TestSBN47_InterruptedRootCloseKeepsIntent(t *testing.T) {
	for _, next := range []string{"reconnect", "deliberate-offline-close"} {
		t.Run(next, func(t *testing.T) {
			w, h := nativeSB(t, "host-a", "work")
			tab := w.openRoot()
			p := tab.Native
			require.Equal(t, "desktop-root", tab.BackingPage())
			if next == "deliberate-offline-close" {
				for range AgentTabLimit - 1 {
					w.openRoot()
				}
				require.Len(t, w.b.Tabs(), AgentTabLimit)
			}
			var lost func(string)
			h.Close = func(_ *NativePage, _ int, answer func(string)) { lost = answer }
			var outcome, reason string
			w.b.ManagerCloseNative(tab, func(o, r string) { outcome, reason = o, r })
			require.NotNil(t, lost, "the close reached the host")
			p.Rendered = false
			h.Disconnect()
			lost(NativeCloseCanceled) // the veto's reply, lost with the connection
			assert.Equal(t, NativeCloseError, outcome)
			assert.Equal(t, NativeCloseUnavailable, reason)
			assert.Empty(t, h.Sent(CmdDiscardRoot))
			original := h.Sent(CmdCloseRoot)[0]
			if next == "deliberate-offline-close" {
				w.b.ManagerCloseNative(tab, func(o, r string) { outcome, reason = o, r })
				assert.Equal(t, OK, outcome, "a fresh close releases the root while the host is away")
				assert.Len(t, w.b.Tabs(), AgentTabLimit-1)
				assert.Nil(t, w.b.Tab(sbThread, tab.TabID))
				from := len(h.Commands)
				p.Rendered = true
				w.b.ConnectNativeHost(h)
				after := commandsFor(h, from, p.ID)
				require.Len(t, after, 1, "nothing about the retired root but reconcileRoots")
				assert.Equal(t, CmdReconcileRoots, after[0].Type)
				assert.Empty(t, after[0].Retained)
				replacement := w.openRoot()
				assert.NotEqual(t, tab.TabID, replacement.TabID)
				assert.Len(t, w.b.Tabs(), AgentTabLimit)
				return
			}
			assert.Len(t, w.b.Tabs(), 1, "the session stays")
			p.Rendered = true
			var replayed func(string)
			replayedRequest := 0
			h.Close = func(_ *NativePage, request int, answer func(string)) { replayedRequest, replayed = request, answer }
			from := len(h.Commands)
			w.b.ConnectNativeHost(h)
			after := commandsFor(h, from, p.ID)
			require.Len(t, after, 4)
			assert.Equal(t, []string{CmdPublishRoot, CmdReconcileRoots, CmdProbeRoot, CmdCloseRoot},
				[]string{after[0].Type, after[1].Type, after[2].Type, after[3].Type})
			assert.Equal(t, original.Request, after[3].Request, "the original close, replayed")
			require.NotNil(t, replayed)
			assert.Equal(t, original.Request, replayedRequest)
			replayed(NativeCloseCanceled)
			assert.Empty(t, h.Sent(CmdDiscardRoot))
			assert.False(t, p.CloseRequested, "the veto cleared the intent")
			require.Same(t, tab, w.b.Tab(sbThread, tab.TabID))
			assert.Equal(t, "desktop-root", tab.BackingPage())
			assert.Equal(t, "root-"+tab.TabID, p.ID)
			assert.Equal(t, "host-a", p.Host.ID)
			assert.Equal(t, "work", tab.ProfileID)
			assert.Equal(t, OwnerKey(w.env.Profile, sbEnv, "agent-a", sbThread), tab.Control.AgentID)
			ev := w.as("agent-a", OpEvaluate, onTab(tab, func(r *Request) { r.Value = "evaluated" }))
			w.run(2 * time.Second)
			assert.Equal(t, "evaluated", ev.Value)
			h.Close = nil
			w.b.ManagerCloseNative(tab, func(o, r string) { outcome, reason = o, r })
			assert.Equal(t, OK, outcome)
			closes := h.Sent(CmdCloseRoot)
			assert.NotEqual(t, original.Request, closes[len(closes)-1].Request, "a fresh request")
			assert.Empty(t, w.b.Tabs())
			assert.Empty(t, h.Sent(CmdDiscardRoot))
		})
	}
}

// TestSBN48_StatusExposesDetachedRoots is SB-N48, upstream "status exposes
// detached roots so their owner can close them and recover capacity":
// eight roots, each taken back with its window gone; a status without a
// tab reaches no live tab (available false) yet lists the eight, in
// order, owned by the caller (owner agent), profile work, not visible,
// without reconnecting any; another session sees them as not its own; an
// open on another desktop is refused (Too many: the detached roots hold
// their slots); another session's close is refused (another agent
// session); the owner's close retires the root (discarded, the host
// unreachable) and a replacement fits, the closed root gone from the eight.
func TestSBN48_StatusExposesDetachedRoots(t *testing.T) {
	w, h := nativeSB(t, "host-a", "work")
	var roots []*Tab
	for range AgentTabLimit {
		roots = append(roots, w.openRoot())
	}
	for i, r := range roots {
		w.detach(r, "viewer-"+string(rune('a'+i)), true)
	}
	conns := w.b.DesktopConnections
	st := w.as("agent-a", OpStatus, nil)
	require.True(t, st.done)
	require.Equal(t, OK, st.Outcome)
	assert.False(t, st.Available)
	require.Len(t, st.Tabs, AgentTabLimit)
	var listed []string
	for _, s := range st.Tabs {
		listed = append(listed, s.TabID)
		assert.True(t, s.OwnedByCaller)
		assert.Equal(t, "agent", s.Owner)
		assert.Equal(t, "work", s.ProfileID)
		assert.False(t, s.Visible)
	}
	assert.Equal(t, tabIDs(roots), listed)
	assert.Equal(t, conns, w.b.DesktopConnections, "status reconnects nothing")
	for _, s := range w.as("other-agent", OpStatus, nil).Tabs {
		assert.False(t, s.OwnedByCaller)
	}
	hb := w.b.AddNativeHost("host-b")
	w.b.NativeRootFor = func(string) (*NativeHost, string) { return hb, "work" }
	full := w.as("agent-a", OpOpen, newTab)
	require.True(t, full.done)
	assert.Equal(t, ReasonTabLimit, full.Outcome)
	assert.Contains(t, full.Message, "Too many")
	closable := roots[0]
	mismatch := w.as("other-agent", OpClose, onTab(closable, nil))
	require.True(t, mismatch.done)
	assert.Contains(t, mismatch.Message, "another agent session")
	closed := w.as("agent-a", OpClose, onTab(closable, nil))
	require.True(t, closed.done)
	assert.Equal(t, OK, closed.Outcome)
	replacement := w.openRoot()
	assert.NotEqual(t, closable.TabID, replacement.TabID)
	assert.Len(t, w.b.Tabs(), AgentTabLimit)
	assert.Nil(t, w.b.Tab(sbThread, closable.TabID))
	assert.Equal(t, []string{"root-" + closable.TabID}, h.SentIDs(CmdDiscardRoot))
}

// TestSBN69_ReconnectReconcilesOfflineRootClose is SB-N69, upstream
// "reconnect reconciles an ordinary offline root close and its tab
// capacity (%s)" (absent, present, unavailable): a root taken back still
// holds its slot beside seven more; when other-host and then host-a
// connect, each is told the server epoch every root was created with, and
// only the detached root of host-a is probed; absent retires its session
// (the others unchanged) and frees the slot, present and unavailable keep
// it (another open is refused, Too many); no close is sent.
func TestSBN69_ReconnectReconcilesOfflineRootClose(t *testing.T) {
	for _, presence := range []string{"absent", "present", "unavailable"} {
		t.Run(presence, func(t *testing.T) {
			w, h := nativeSB(t, "host-a", "work")
			other := w.b.AddNativeHost("other-host")
			root := w.openRoot()
			w.detach(root, "viewer", false)
			for range AgentTabLimit - 1 {
				w.openRoot()
			}
			before := tabIDs(w.b.Tabs())
			require.Len(t, before, AgentTabLimit)
			created := h.Sent(CmdCreateRoot)
			epoch := created[0].Epoch
			for _, c := range created {
				assert.Equal(t, epoch, c.Epoch)
			}
			var probed []string
			var answer func(bool, string)
			h.Probe = func(p *NativePage, a func(bool, string)) { probed, answer = append(probed, p.ID), a }
			w.b.ConnectNativeHost(other)
			w.b.ConnectNativeHost(h)
			assert.Equal(t, []string{"root-" + root.TabID}, probed)
			for _, host := range []*NativeHost{other, h} {
				rec := host.Sent(CmdReconcileRoots)
				require.Len(t, rec, 1, host.ID)
				assert.Equal(t, epoch, rec[0].Epoch)
			}
			reason := ""
			if presence == "unavailable" {
				reason = NativeHostUnavailable
			}
			answer(presence != "absent", reason)
			after := tabIDs(w.b.Tabs())
			assert.Equal(t, presence != "absent", w.b.Tab(sbThread, root.TabID) != nil)
			var rest []string
			for _, id := range before {
				if id != root.TabID {
					rest = append(rest, id)
				}
			}
			var afterRest []string
			for _, id := range after {
				if id != root.TabID {
					afterRest = append(afterRest, id)
				}
			}
			assert.Equal(t, rest, afterRest, "the other sessions unchanged")
			assert.Empty(t, h.Sent(CmdCloseRoot))
			replacement := w.as("agent-a", OpOpen, newTab)
			w.run(time.Millisecond)
			require.True(t, replacement.done)
			if presence == "absent" {
				assert.Equal(t, OK, replacement.Outcome)
				assert.NotEqual(t, root.TabID, replacement.TabID)
			} else {
				assert.Equal(t, ReasonTabLimit, replacement.Outcome)
				assert.Contains(t, replacement.Message, "Too many")
			}
			assert.Len(t, w.b.Tabs(), AgentTabLimit)
		})
	}
}

// TestSBN73_FailedRootReleasesCapacityAndOwnership is SB-N73, upstream
// "failed native root %s releases capacity and reconnect ownership without
// an acknowledgment" (acceptance, publication): beside a published root
// the desktop took back, nine opens (more than the eight-tab limit) each
// see their host disconnect while it holds the root's acceptance (or
// publication); each fails RemoteUnavailable for that reason, leaves only
// the retained session, and the returning host is told the server retains
// no creation; each failed root was discarded, none closed. A replacement
// then opens beside the retained root, which stays closable offline.
func TestSBN73_FailedRootReleasesCapacityAndOwnership(t *testing.T) {
	for _, stage := range []string{"acceptance", "publication"} {
		t.Run(stage, func(t *testing.T) {
			w, h := nativeSB(t, "host-a", "work")
			retained := w.openRoot()
			epoch := h.Sent(CmdCreateRoot)[0].Epoch
			w.detach(retained, "viewer", false)
			for range AgentTabLimit + 1 {
				var held bool
				hold := func(_ *NativePage, _ func(string)) { held = true }
				h.Accept, h.Publish = nil, nil
				if stage == "acceptance" {
					h.Accept = hold
				} else {
					h.Publish = hold
				}
				opening := w.as("agent-a", OpOpen, newTab)
				w.run(time.Millisecond)
				require.True(t, held, "the host holds the root's "+stage)
				require.False(t, opening.done)
				created := h.Sent(CmdCreateRoot)
				rootID := "root-" + created[len(created)-1].TabID
				h.Disconnect()
				require.True(t, opening.done)
				assert.Equal(t, ErrRemoteUnavailable, opening.Outcome)
				assert.Equal(t, []*Tab{retained}, w.b.Tabs())
				w.b.ConnectNativeHost(h)
				rec := h.Sent(CmdReconcileRoots)
				assert.Equal(t, epoch, rec[len(rec)-1].Epoch)
				assert.Empty(t, rec[len(rec)-1].Retained, "no creation retained")
				assert.Contains(t, h.SentIDs(CmdDiscardRoot), rootID)
				assert.Empty(t, h.Sent(CmdCloseRoot))
			}
			assert.Len(t, h.Sent(CmdDiscardRoot), AgentTabLimit+1)
			h.Accept, h.Publish = nil, nil
			replacement := w.openRoot()
			assert.NotEqual(t, retained.TabID, replacement.TabID)
			assert.Len(t, w.b.Tabs(), 2)
			retained.Native.Rendered = false
			closed := w.as("agent-a", OpClose, onTab(retained, nil))
			require.True(t, closed.done)
			assert.Equal(t, OK, closed.Outcome)
			assert.Equal(t, []*Tab{replacement}, w.b.Tabs())
		})
	}
}

// TestSBN74_CanceledRootConnectionNeverPublishes is SB-N74, upstream
// "canceled root connection closes its attempted page and never publishes
// a late tab": the open times out (200 ms) while the root's page is being
// set up; when the setup ends the late connection is let go; no session,
// no event, no close; the root is discarded.
func TestSBN74_CanceledRootConnectionNeverPublishes(t *testing.T) {
	w, h := nativeSB(t, "local", "default")
	var release func()
	h.Setup = func(_ *NativePage, done func()) { release = done }
	opening := w.as("agent-a", OpOpen, func(r *Request) { r.ReuseExistingTab, r.Timeout = false, 200*time.Millisecond })
	w.run(201 * time.Millisecond)
	require.True(t, opening.done)
	assert.Equal(t, ErrTimeout, opening.Outcome)
	require.NotNil(t, release)
	releases := w.b.EndpointReleases
	release()
	assert.Equal(t, releases+1, w.b.EndpointReleases, "the late connection is let go")
	assert.Empty(t, w.b.Tabs())
	assert.Empty(t, w.b.NativeOpened())
	assert.Empty(t, h.Sent(CmdCloseRoot))
	assert.Equal(t, []string{"root-" + h.Sent(CmdCreateRoot)[0].TabID}, h.SentIDs(CmdDiscardRoot))
}

// TestSBN80_PresentationChangedDuringReconnectSetup is SB-N80, upstream
// "reconciles native presentation changed during reconnect setup
// (initially presented: %s)": the desktop takes a root back; a viewer's
// reconnect is held in the page's setup while the host's presentation
// flips and its event arrives (the page not registered yet); once the
// connection completes and that viewer leaves, status reports the flipped
// presentation (nativePresented and visible), no stream viewer, two
// desktop connections and no headless context.
func TestSBN80_PresentationChangedDuringReconnectSetup(t *testing.T) {
	for _, initially := range []bool{true, false} {
		t.Run(boolText(initially), func(t *testing.T) {
			w, h := nativeSB(t, "local", "default")
			tab := w.openRoot()
			w.detach(tab, "viewer", false)
			h.Presented[tab.TabID] = initially
			var release func()
			h.Setup = func(_ *NativePage, done func()) { release = done }
			attached := ""
			w.b.AttachViewerAsync(tab, "reconnecting", false, func(o string) { attached = o })
			require.NotNil(t, release, "the reconnect is in its setup")
			require.False(t, tab.HasPage())
			h.Presented[tab.TabID] = !initially
			w.b.NativePresentation(h, tab.TabID)
			release()
			require.Equal(t, OK, attached)
			w.b.Unwatch(tab, "reconnecting")
			st := w.as("agent-a", OpStatus, onTab(tab, nil))
			require.True(t, st.done)
			assert.Equal(t, !initially, st.NativePresented)
			assert.Equal(t, !initially, st.Visible)
			assert.Zero(t, st.StreamViewers)
			assert.Equal(t, 2, w.b.DesktopConnections)
			assert.Zero(t, w.b.ContextsLaunched)
		})
	}
}

// TestSBN49_NativeOfflineRootCloseRetires is SB-N49, upstream "explicit %s
// close retires an offline root without reopening it or consuming tab
// capacity" (agent, client), on native roots: agent-a's root is taken back
// with its window gone and seven more follow; another session's close is
// refused (another agent session) and discards nothing; the owner's close
// (the agent's, or the manager's for the client) connects nothing, the
// root is discarded, seven sessions remain, and a replacement fits.
func TestSBN49_NativeOfflineRootCloseRetires(t *testing.T) {
	for _, entry := range []string{"agent", "client"} {
		t.Run(entry, func(t *testing.T) {
			w, h := nativeSB(t, "host-a", "work")
			root := w.openRoot()
			w.detach(root, "viewer", true)
			for range AgentTabLimit - 1 {
				w.openRoot()
			}
			mismatch := w.as("other-agent", OpClose, onTab(root, nil))
			require.True(t, mismatch.done)
			assert.Equal(t, ReasonAgentMismatch, mismatch.Outcome)
			assert.Contains(t, mismatch.Message, "another agent session")
			assert.Empty(t, h.Sent(CmdDiscardRoot))
			conns := w.b.DesktopConnections
			if entry == "agent" {
				r := w.as("agent-a", OpClose, onTab(root, nil))
				require.True(t, r.done)
				assert.Equal(t, OK, r.Outcome)
			} else {
				w.b.ManagerClose(root)
			}
			assert.Equal(t, conns, w.b.DesktopConnections, "not reopened")
			assert.Equal(t, []string{"root-" + root.TabID}, h.SentIDs(CmdDiscardRoot))
			assert.Len(t, w.b.Tabs(), AgentTabLimit-1)
			replacement := w.openRoot()
			assert.NotEqual(t, root.TabID, replacement.TabID)
			assert.Len(t, w.b.Tabs(), AgentTabLimit)
		})
	}
}
