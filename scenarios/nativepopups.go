package scenarios

import (
	"fmt"
	"time"

	"github.com/orchsim/orchsim/model/browser"
	"github.com/orchsim/orchsim/sim"
)

// Native popups of the native roots (a dimension drawn from its own stream,
// native-popups, so the other draws keep their places; on in three
// quarters of the worlds where native-roots is; model/browser/native_popup.go):
//   - two thirds of the roots published open a popup (a sign-in window) 10 s to
//     20 min later, and each popup is followed by another with chance 1/2,
//     while the root's session lasts and the host is connected:
//     the popup becomes a session of the root's agent (it counts against
//     its tabs, the agent's requests keep it from idling, the idle sweep
//     closes it through the desktop, where its beforeunload handler (a
//     sign-in form) vetoes a quarter of its closes outside the heal phase
//     and the host answers the rest as it answers a root's: vetoed, or
//     lost as its channel drops);
//   - a popup's page attaches 20 ms to 1.5 s after its session is listed;
//   - half the popups close by themselves, a third of those at once (0.1
//     to 3 s after they were announced: a sign-in that needed no input,
//     which may be before its page attached: it is never registered), the
//     rest 5 s to 40 min later: the desktop reports it, or, while it is
//     away, the window is just gone (its return's probe finds it absent);
//   - when the host's channel comes back it announces half its living
//     popups again, as the desktop does, which retries a close that was
//     requested while it was away or whose answer it lost.

// popupActor is the stream and the shrinker's name of the dimension.
const popupActor = "native-popups"

// popupURL is the page every world popup opens.
const popupURL = "https://signin.example.test/"

func (w *T3World) startNativePopups() {
	if w.nrand == nil {
		return
	}
	r := w.env.Rand(popupActor)
	if !r.Chance("enable", sim.Per(3, 4)) || !w.env.Enabled(popupActor) {
		return
	}
	w.poprand = r
	w.env.Emit("world", popupActor, "", sim.A("popups", "2/3"), sim.A("self-close", "1/2"), sim.A("popup-vetoes", "1/4"), sim.A("reannounce", "1/2"))
}

// wireNativePopups hooks the dimension onto the native host that
// wireNativeRoots gave a new server process's browser.
func (w *T3World) wireNativePopups(b *browser.ServerBrowser) {
	r := w.poprand
	hosts := b.NativeHosts()
	if r == nil || len(hosts) == 0 {
		return
	}
	h := hosts[0]
	alive := func() bool { return w.srv != nil && w.srv.Browser == b }
	n := 0
	// open schedules root's next popup: each is followed by another with
	// chance 1/2.
	var open func(root *browser.NativePage)
	open = func(root *browser.NativePage) {
		selfClose := r.Chance("self-close", sim.Per(1, 2))
		closeAfter := r.Duration("self-close-after", 5*time.Second, 40*time.Minute)
		if r.Chance("quick-close", sim.Per(1, 3)) {
			closeAfter = r.Duration("quick-close-after", 100*time.Millisecond, 3*time.Second)
		}
		again := r.Chance("another", sim.Per(1, 2))
		w.env.After(r.Duration("popup-after", 10*time.Second, 20*time.Minute), func() {
			if !alive() || root.Closed || root.Tab == nil || !h.Connected {
				return
			}
			n++
			id := fmt.Sprintf("popup-%d", n)
			b.NativePopupCreated(h, root.ThreadID, root.TabID, id, popupURL)
			if again {
				open(root)
			}
			p := b.NativePopupOf(h, root.ThreadID, root.TabID, id)
			if p == nil || !selfClose {
				return
			}
			w.env.After(closeAfter, func() {
				if !alive() || p.Closed {
					return
				}
				p.Rendered = false
				if h.Connected {
					b.NativePopupClosed(h, p.ThreadID, p.TabID, p.ID)
				}
			})
		})
	}
	published := h.OnPublish
	h.OnPublish = func(root *browser.NativePage) {
		if published != nil {
			published(root)
		}
		if r.Chance("popup", sim.Per(2, 3)) {
			open(root)
		}
	}
	// A popup's page takes a while to attach (the endpoint, the CDP
	// connection); a root's setup is left as it was.
	setup := h.Setup
	h.Setup = func(p *browser.NativePage, done func()) {
		if p.Kind != browser.NativePopup {
			if setup != nil {
				setup(p, done)
			} else {
				done()
			}
			return
		}
		w.env.After(r.Duration("popup-attach", 20*time.Millisecond, 1500*time.Millisecond), done)
	}
	// A sign-in popup often holds a form: its beforeunload handler vetoes
	// a quarter of its closes outside the heal phase; the rest are the
	// host's to answer as it answers a root's.
	closing := h.Close
	h.Close = func(p *browser.NativePage, request int, answer func(string)) {
		if p.Kind == browser.NativePopup && !w.env.Healing && r.Chance("popup-veto", sim.Per(1, 4)) {
			w.env.After(r.Duration("popup-veto-after", 5*time.Millisecond, 2*time.Second), func() {
				answer(browser.NativeCloseCanceled)
			})
			return
		}
		if closing != nil {
			closing(p, request, answer)
			return
		}
		answer(browser.NativeClosed)
	}
	connected := h.OnConnect
	h.OnConnect = func() {
		if connected != nil {
			connected()
		}
		var living []*browser.NativePage
		for _, p := range b.NativePages() {
			if p.Kind == browser.NativePopup && p.Host == h && !p.Closed && p.Rendered {
				living = append(living, p)
			}
		}
		for _, p := range living {
			if r.Chance("reannounce", sim.Per(1, 2)) && !p.Closed {
				b.NativePopupCreated(h, p.ThreadID, p.TabID, p.ID, p.URL)
			}
		}
	}
}
