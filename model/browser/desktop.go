package browser

import (
	"slices"
	"strconv"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

// DesktopHost is one client app registered with the server's broker as a
// preview automation host (PreviewAutomationHosts in apps/web, mounted on
// Electron; a mobile client too): it holds its own tabs, each in its own
// browsing context (cookies, DOM), reports them to the broker
// (ws.rpc.preview.reportStatus), and answers the requests it reads.
//
// A desktop host answers evaluate after the page's action time; waitFor
// either finds its text within the budget it was given or waits out that
// whole budget, overshooting it by up to WaitForOvershoot, and answers an
// honest "not found" (issue #12407: "Desktop waitFor also uses the full
// budget and can overshoot it"). A request that names no tab runs on the
// host's current tab of the thread, or in the host's blank context when it
// holds none (issue #13051: the login form, document.cookie ""). A
// suspended host (a backgrounded mobile page, #11167) reads nothing: its
// socket is half-open, the broker still lists it, and requests sent to it
// are never answered. When the broker ends its connection the host
// registers again ReregisterDelay later (#12535) unless it is suspended;
// on resuming it registers anew.
type DesktopHost struct {
	actorName string // "host/"+ClientID (actor)
	env       *model.Env
	rand      *sim.Rand
	ClientID  string
	// Mobile marks a mobile client (it can be backgrounded).
	Mobile    bool
	broker    *Broker
	conn      *Host
	started   bool
	suspended bool
	focused   bool
	tabs      []hostTab
	nextTab   int
}

type hostTab struct {
	thread, tab string
	opened      time.Duration
	// detached: the tab's control (CDP) session was dropped when the
	// user left its thread in this window; restored once (for the
	// restore-once-per-tab mutant).
	detached, restored bool
}

// RestoreControlSession keeps preview automation across leaving a thread
// (PR #7200, closed unmerged; the fix t3code#6355 asks for): a hidden
// thread is not a closed tab, and the next automation call on a tab whose
// control session was dropped restores it (restoreControlSession) before
// it runs. Off is #6355: leaving a thread detaches its tabs' control
// sessions; on return the old tab still exists, but every automation call
// on it stalls (UnknownVizError or a capture hanging 76-320 s) until the
// broker gives up; only a new tab works.
const RestoreControlSession model.Switch = "restore-control-session"

// RestoreOncePerTab is a wrong fix: the control session is restored the
// first time a tab is left and come back to only; a second departure
// leaves it detached for good.
const RestoreOncePerTab model.Mutant = "restore-once-per-tab"

func init() {
	model.RegisterSwitch(model.SwitchInfo{Name: RestoreControlSession, Group: catalog.PreviewTab,
		Reports:    []catalog.Report{"t3code#6355"},
		Source:     "issue #6355 (sanitized preview trace: captureAutomationSnapshot UnknownVizError on the old tab); PR #7200 (apps/desktop/src/preview/Manager.ts, restoreControlSession), closed",
		Scenario:   "tab-ownership",
		Invariants: []string{"live-host-answers-in-time"},
		Reported:   "leaving a thread drops its tabs' control sessions; automation on such a tab stalls past the broker's deadline",
		Fixed:      "the next automation call on a tab whose control session was dropped restores it and runs",
		Upstream:   "",
		Script:     "scenarios/testdata/tab_ownership/leave_thread_stalls_tab",
		Mechanism:  "model/browser: a client host's per-tab control session"})
	model.RegisterMutant(model.MutantInfo{Name: RestoreOncePerTab, Group: catalog.PreviewTab,
		Doc:        "a tab's dropped control session is restored the first time only; after a second departure it stays detached",
		Scenario:   "tab-ownership",
		Invariants: []string{"live-host-answers-in-time"}})
}

// LeaveThread is the user moving this window away from threadID: the
// thread's tabs stay, but their control sessions are dropped (the
// webviews are unregistered).
func (d *DesktopHost) LeaveThread(threadID string) {
	n := 0
	for i := range d.tabs {
		if d.tabs[i].thread == threadID && !d.tabs[i].detached {
			d.tabs[i].detached = true
			n++
		}
	}
	if n > 0 {
		d.env.Emit(d.actor(), "host.thread-leave", "", sim.A("client", d.ClientID), sim.A("thread", threadID))
	}
}

// Threads returns the threads this host holds tabs of, in first-tab order.
func (d *DesktopHost) Threads() []string {
	var out []string
	for _, t := range d.tabs {
		if !slices.Contains(out, t.thread) {
			out = append(out, t.thread)
		}
	}
	return out
}

// control reports whether the tab's control session can run an operation,
// restoring a dropped one under restore-control-session.
func (d *DesktopHost) control(threadID, tab string) bool {
	for i := range d.tabs {
		t := &d.tabs[i]
		if t.thread != threadID || t.tab != tab || !t.detached {
			continue
		}
		p := d.env.Profile
		if !p.Fixed(RestoreControlSession) || p.Has(RestoreOncePerTab) && t.restored {
			return false
		}
		t.detached, t.restored = false, true
		d.env.Emit(d.actor(), "host.control-restore", "", sim.A("client", d.ClientID), sim.A("thread", threadID), sim.A("tab", tab))
	}
	return true
}

// Desktop host constants.
const (
	// ReregisterDelay is how long after an eviction the preview client
	// registers again (PR #12535: "after one second").
	ReregisterDelay = time.Second
	// WaitForOvershoot bounds how far past its budget a host's waitFor
	// answers (a model choice: the last poll and the reply's serialization).
	WaitForOvershoot = 50 * time.Millisecond
	// OpWaitFor is the waitFor operation (preview_wait_for).
	OpWaitFor = "waitFor"
)

// NewDesktopHost returns a host that has not registered yet.
func NewDesktopHost(env *model.Env, clientID string, mobile bool) *DesktopHost {
	return &DesktopHost{env: env, rand: env.Rand("host/" + clientID), ClientID: clientID, Mobile: mobile}
}

func (d *DesktopHost) actor() string {
	if d.actorName == "" {
		d.actorName = "host/" + d.ClientID // built once
	}
	return d.actorName
}

func (d *DesktopHost) latency() time.Duration {
	return d.rand.Duration("latency", time.Millisecond, 40*time.Millisecond)
}

// Start launches the app: it registers with the broker it is attached to.
func (d *DesktopHost) Start() {
	d.started = true
	d.connect()
}

// Attach points the host at a (new) server's broker and registers if the
// app runs; nil detaches it (the server is down).
func (d *DesktopHost) Attach(b *Broker) {
	d.broker = b
	d.conn = nil
	if b != nil && d.started {
		d.connect()
	}
}

// Connected reports whether the host holds a broker connection.
func (d *DesktopHost) Connected() bool { return d.conn != nil }

// Suspended reports whether the host is suspended (half-open).
func (d *DesktopHost) Suspended() bool { return d.suspended }

func (d *DesktopHost) connect() {
	b := d.broker
	if b == nil || b.dead || d.suspended {
		return
	}
	c := b.Connect(d.ClientID, d.env.EnvironmentID, nil)
	d.conn = c
	c.OnRequest = func(r HostRequest) { d.onRequest(b, c, r) }
	c.OnClose = func(reason string) { d.onClose(b, c, reason) }
	for _, t := range d.tabs {
		b.ReportTab(d.ClientID, d.env.EnvironmentID, t.thread, t.tab, t.opened)
	}
	if d.focused {
		b.Focus(d.ClientID, d.env.EnvironmentID, c.ConnectionID, true)
	}
}

func (d *DesktopHost) onClose(b *Broker, c *Host, reason string) {
	if d.conn != c {
		return
	}
	d.conn = nil
	if reason == "evicted" {
		d.env.After(ReregisterDelay, func() {
			if d.broker == b && d.conn == nil && !d.suspended {
				d.connect()
			}
		})
	}
}

// Focus is the user bringing this host's window to the front (or leaving
// it); the broker hears it as focusHost.
func (d *DesktopHost) Focus(on bool) {
	if !on && !d.focused {
		// Already behind: nothing changes, here or at the broker, whose
		// host of this desktop has the desktop's focus (connect sends
		// it, Focus every change). A world brings one window to the
		// front by sending every other behind.
		return
	}
	d.focused = on
	if on {
		d.env.Emit(d.actor(), "host.focus", "", sim.A("client", d.ClientID))
	}
	if d.conn != nil && d.broker != nil {
		d.broker.Focus(d.ClientID, d.env.EnvironmentID, d.conn.ConnectionID, on)
	}
}

// OpenTab is the user opening a tab of thread by hand in this host (the
// signed-in page the thread's agent is to read); it becomes the thread's
// current tab and is reported to the broker.
func (d *DesktopHost) OpenTab(threadID string) string {
	d.nextTab++
	var tb [64]byte
	tab := d.env.Str().Bytes(strconv.AppendInt(append(append(append(tb[:0], "ptab_"...), d.ClientID...), '_'), int64(d.nextTab), 10))
	d.tabs = append(d.tabs, hostTab{thread: threadID, tab: tab, opened: d.env.Now()})
	d.env.Emit(d.actor(), "host.tab-open", "", sim.A("client", d.ClientID), sim.A("thread", threadID), sim.A("tab", tab))
	if d.conn != nil && d.broker != nil {
		d.broker.ReportTab(d.ClientID, d.env.EnvironmentID, threadID, tab, d.env.Now())
	}
	return tab
}

// Suspend backgrounds the app: its page stops reading, its socket stays
// half-open.
func (d *DesktopHost) Suspend() {
	if d.suspended {
		return
	}
	d.suspended = true
	d.env.Emit(d.actor(), "host.suspend", "", sim.A("client", d.ClientID))
}

// Resume brings the app back: it registers anew (a fresh connection
// replaces a half-open one the broker still lists).
func (d *DesktopHost) Resume() {
	if !d.suspended {
		return
	}
	d.suspended = false
	d.env.Emit(d.actor(), "host.resume", "", sim.A("client", d.ClientID))
	d.connect()
}

// current returns the host's current tab of thread (its last), or "".
func (d *DesktopHost) current(threadID string) string {
	for i := len(d.tabs) - 1; i >= 0; i-- {
		if d.tabs[i].thread == threadID {
			return d.tabs[i].tab
		}
	}
	return ""
}

func (d *DesktopHost) holds(threadID, tab string) bool {
	for _, t := range d.tabs {
		if t.thread == threadID && t.tab == tab {
			return true
		}
	}
	return false
}

func (d *DesktopHost) onRequest(b *Broker, c *Host, r HostRequest) {
	if d.suspended {
		return // the frame queues up unread on a half-open socket
	}
	d.env.After(d.latency(), func() {
		if d.suspended || d.conn != c {
			return
		}
		tab := r.TabID
		switch {
		case tab != "" && d.holds(r.ThreadID, tab):
		case r.TabIDExplicit:
			d.respond(b, c, r, tab, &RemoteError{Tag: ErrTabNotFound, Message: "tab not found"}, 0)
			return
		default:
			tab = d.current(r.ThreadID)
		}
		if tab != "" && !d.control(r.ThreadID, tab) {
			// The detached tab's capture hangs (UnknownVizError after
			// 76-320 s in #6355): nothing comes back within any deadline.
			d.env.Emit(d.actor(), "host.stall", "", sim.A("client", d.ClientID), sim.A("request", r.RequestID),
				sim.A("thread", r.ThreadID), sim.A("op", r.Operation), sim.A("tab", tab))
			return
		}
		d.env.Emit(d.actor(), "host.execute", "", sim.A("client", d.ClientID), sim.A("request", r.RequestID),
			sim.A("thread", r.ThreadID), sim.A("op", r.Operation), sim.A("tab", orNone(tab)))
		if r.Operation == OpWaitFor {
			if d.rand.Chance("wait-found", sim.Per(1, 2)) {
				d.respond(b, c, r, tab, nil, d.rand.Duration("wait-found-after", 50*time.Millisecond, max(r.Timeout*3/4, 60*time.Millisecond)))
				return
			}
			d.env.Emit(d.actor(), "host.wait-exhausted", "", sim.A("client", d.ClientID), sim.A("request", r.RequestID),
				sim.A("budget", r.Timeout.String()))
			over := d.rand.Duration("wait-overshoot", 0, WaitForOvershoot)
			d.respond(b, c, r, tab, &RemoteError{Tag: ErrTimeout, Message: "text not found"}, r.Timeout+over)
			return
		}
		d.respond(b, c, r, tab, nil, d.rand.Duration("action-time", 5*time.Millisecond, 1500*time.Millisecond))
	})
}

// respond answers r after the page's time plus the way back.
func (d *DesktopHost) respond(b *Broker, c *Host, r HostRequest, tab string, e *RemoteError, after time.Duration) {
	d.env.After(after, func() {
		if d.suspended || d.conn != c {
			return
		}
		d.env.After(d.latency(), func() {
			b.Respond(Response{ClientID: d.ClientID, ConnectionID: c.ConnectionID, RequestID: r.RequestID,
				OK: e == nil, Error: e, TabID: tab, Value: "ctx:" + d.ClientID})
		})
	})
}
