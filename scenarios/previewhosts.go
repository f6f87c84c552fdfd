package scenarios

import (
	"strings"
	"time"

	"github.com/orchsim/orchsim/model/browser"
	"github.com/orchsim/orchsim/sim"
)

// The client preview hosts of a T3 world (a swarm dimension drawn from its
// own stream, client-hosts, so the other draws keep their places): in
// half the seeds two desktop apps register as preview automation hosts of
// the environment, the second one a while after the first (t3code#13051's
// t≈0 and t≈+10 min), and in half of those a mobile client too. The user
// moves between the windows (focusHost), opens the thread's signed-in page
// by hand in the window in front, and now and then backgrounds the mobile
// app, whose socket then goes half-open until it comes back (#11167). The
// agents then also read those pages (preview_evaluate, preview_wait_for),
// through the server's broker. A server restart closes every host
// connection; the hosts register with the new process when it is up.

// hostsActor is the stream and the shrinker's name of the dimension.
const hostsActor = "client-hosts"

func (w *T3World) startHosts() {
	if w.Repertoire.Orchestrator && !w.Repertoire.Preview {
		return // agents that use no preview tool read no page
	}
	r := w.env.Rand(hostsActor)
	if !r.Chance("enable", sim.Per(1, 2)) || !w.env.Enabled(hostsActor) {
		return
	}
	w.hrand = r
	// Two desktop apps and, in half the worlds, a mobile client; a scaled
	// world (env.Threads) has two desktops and one mobile client per three
	// threads, at least as many as the default.
	desktops, mobiles := 2, 1
	if n := w.env.Threads; n > 0 {
		desktops, mobiles = max(2, 2*n/3), max(1, n/3)
	}
	for i := range desktops {
		w.hosts = append(w.hosts, browser.NewDesktopHost(w.env, "desktop-"+itoa(uint64(i+1)), false))
	}
	if r.Chance("mobile", sim.Per(1, 2)) {
		for i := range mobiles {
			w.hosts = append(w.hosts, browser.NewDesktopHost(w.env, "mobile-"+itoa(uint64(i+1)), true))
		}
	}
	var names []string
	for _, h := range w.hosts {
		names = append(names, h.ClientID)
		if w.srv != nil {
			h.Attach(w.srv.Broker)
		}
	}
	for _, a := range w.Agents {
		a.HostTools = true
	}
	w.env.Emit("world", "preview-hosts", "", sim.A("hosts", strings.Join(names, ",")))
	for i, h := range w.hosts {
		at := r.Duration("start-"+h.ClientID, 0, 2*time.Minute)
		if i > 0 {
			at = r.Duration("start-"+h.ClientID, time.Minute, 30*time.Minute)
		}
		w.env.After(at, func() {
			h.Start()
			w.focusHost(h)
			if r.Chance("first-tab", sim.Per(1, 2)) {
				h.OpenTab(w.Store.Threads[r.IntN("first-tab-thread", len(w.Store.Threads))].ID)
			}
		})
	}
	w.env.After(r.Duration("activity-gap", time.Minute, 45*time.Minute), w.hostActivity)
	// In half of these worlds the user also moves windows between threads
	// (t3code#6355), drawn from its own stream so the rest keep their places.
	if lr := w.env.Rand(leaveActor); lr.Chance("enable", sim.Per(1, 2)) && w.env.Enabled(leaveActor) {
		w.lrand = lr
		w.env.After(lr.Duration("leave-gap", 5*time.Minute, 2*time.Hour), w.leaveThread)
	}
}

// leaveActor is the stream of the users' moves away from a thread.
const leaveActor = "thread-leave"

// leaveThread is the user moving one window away from one of the threads
// it holds pages of.
func (w *T3World) leaveThread() {
	if w.env.Healing {
		return
	}
	r := w.lrand
	defer w.env.After(r.Duration("leave-gap", 5*time.Minute, 2*time.Hour), w.leaveThread)
	h := w.hosts[r.IntN("leave-host", len(w.hosts))]
	if threads := h.Threads(); len(threads) > 0 {
		h.LeaveThread(threads[r.IntN("leave-which", len(threads))])
	}
}

// focusHost brings h's window to the front and the others behind it.
func (w *T3World) focusHost(h *browser.DesktopHost) {
	for _, o := range w.hosts {
		if o != h {
			o.Focus(false)
		}
	}
	h.Focus(true)
}

// hostActivity is one thing the user does with the client apps: move to
// another window, open a thread's page in the window in front, or
// background the mobile app for a while.
func (w *T3World) hostActivity() {
	if w.env.Healing {
		return
	}
	r := w.hrand
	if w.hostActivityFn == nil {
		w.hostActivityFn = w.hostActivity // bound once, not per activity
	}
	defer w.env.After(r.Duration("activity-gap", time.Minute, 45*time.Minute), w.hostActivityFn)
	var mobile *browser.DesktopHost
	for _, h := range w.hosts {
		if h.Mobile && !h.Suspended() {
			mobile = h
		}
	}
	suspend := uint64(0)
	if mobile != nil {
		suspend = 2
	}
	switch r.Pick("host-action", 4, 4, suspend) {
	case 0:
		w.focusHost(w.hosts[r.IntN("focus-which", len(w.hosts))])
	case 1:
		h := w.hosts[r.IntN("tab-host", len(w.hosts))]
		w.focusHost(h)
		h.OpenTab(w.Store.Threads[r.IntN("tab-thread", len(w.Store.Threads))].ID)
	case 2:
		mobile.Suspend()
		w.env.After(r.Duration("suspended-for", time.Minute, 2*time.Hour), mobile.Resume)
	}
}
