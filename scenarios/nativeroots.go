package scenarios

import (
	"time"

	"github.com/orchsim/orchsim/model/browser"
	"github.com/orchsim/orchsim/sim"
)

// Native desktop roots of a T3 world's agent tabs (a dimension drawn from
// its own stream, native-roots, so the other draws keep their places; on
// in half the worlds that set T3World.PageLifecycle, as chaos does, and
// whose agents use the preview tools; model/browser/native*.go):
//   - each server process has one desktop host ("local") on its desktop
//     browser channel; two thirds of the agent tabs the desktop would render open
//     as native roots on it instead (created, accepted and published
//     before they are listed) while the host is connected;
//   - the host answers a close 5 ms to 3 s later, and vetoes a sixth of
//     them (a beforeunload handler) outside the heal phase;
//   - the desktop takes back two thirds of the roots a minute to an hour
//     after they were published, and two thirds of those lose their window
//     (the person closes half of those tabs in the client, 1 s to 10 min
//     later: a close of an unreachable root);
//   - outside the heal phase the host's channel drops 2 to 45 min after it
//     came up, and a third of the closes it receives are left unanswered
//     as it drops (it vetoed, or closed, and lost the reply); it returns
//     2 s to 3 min later: answers due are lost (a close's intent is kept),
//     closes meanwhile retire their roots at once, and the return
//     reconciles the roots (probes, replayed closes).

// nativeActor is the stream and the shrinker's name of the dimension.
const nativeActor = "native-roots"

func (w *T3World) startNativeRoots() {
	if !w.PageLifecycle || w.Repertoire.Orchestrator && !w.Repertoire.Preview {
		return
	}
	r := w.env.Rand(nativeActor)
	if !r.Chance("enable", sim.Per(1, 2)) || !w.env.Enabled(nativeActor) {
		return
	}
	w.nrand = r
	w.env.Emit("world", nativeActor, "", sim.A("roots", "1/2"), sim.A("close-vetoes", "1/6"), sim.A("withdrawals", "1/2"))
}

// desktopDraw is a DesktopFor answer drawn for a thread's open that did
// not become a root, kept for the open's own DesktopFor call so the world
// stream draws it once.
type desktopDraw struct {
	thread string
	ok     bool
	after  time.Duration
}

// wireNativeRoots sets the dimension's host and hooks on a new server
// process's browser.
func (w *T3World) wireNativeRoots(b *browser.ServerBrowser) {
	r := w.nrand
	if r == nil || b.DesktopFor == nil {
		return
	}
	h := b.AddNativeHost("local")
	alive := func() bool { return w.srv != nil && w.srv.Browser == b }
	desktopFor := b.DesktopFor
	var kept *desktopDraw
	b.DesktopFor = func(threadID string) (bool, time.Duration) {
		if d := kept; d != nil && d.thread == threadID {
			kept = nil
			return d.ok, d.after
		}
		kept = nil
		return desktopFor(threadID)
	}
	b.NativeRootFor = func(threadID string) (*browser.NativeHost, string) {
		kept = nil
		if !h.Connected {
			return nil, "" // no catalogue from a host that is away
		}
		ok, after := desktopFor(threadID)
		if ok && r.Chance("root", sim.Per(2, 3)) {
			return h, ""
		}
		kept = &desktopDraw{thread: threadID, ok: ok, after: after}
		return nil, ""
	}
	// epoch invalidates the up-timer of a connection that ended early.
	epoch := 0
	// The callbacks are bound once per wiring, not per connection; an
	// up-timer is an epochCheck carrying the epoch it was armed in.
	var cycle, goAway, reconnect, upEnd func()
	goAway = func() {
		epoch++
		h.Disconnect()
		w.env.After(r.Duration("host-away", 2*time.Second, 3*time.Minute), reconnect)
	}
	reconnect = func() {
		if alive() {
			b.ConnectNativeHost(h)
			cycle()
		}
	}
	upEnd = func() {
		if alive() && !w.env.Healing && h.Connected {
			goAway()
		}
	}
	cycle = func() {
		c := w.epochChecks.New()
		*c = epochCheck{armed: epoch, epoch: &epoch, then: upEnd}
		w.env.RunAfter(r.Duration("host-up", 2*time.Minute, 45*time.Minute), c)
	}
	h.Close = func(_ *browser.NativePage, _ int, answer func(string)) {
		veto := !w.env.Healing && r.Chance("close-veto", sim.Per(1, 6))
		drop := !w.env.Healing && r.Chance("drop-before-answer", sim.Per(1, 3))
		w.env.After(r.Duration("close-answer", 5*time.Millisecond, 3*time.Second), func() {
			switch {
			case drop && alive() && h.Connected:
				goAway() // the answer is lost with the channel
			case veto:
				answer(browser.NativeCloseCanceled)
			default:
				answer(browser.NativeClosed)
			}
		})
	}
	h.OnPublish = func(p *browser.NativePage) {
		if !r.Chance("withdraw", sim.Per(2, 3)) {
			return
		}
		gone := r.Chance("window-gone", sim.Per(2, 3))
		w.env.After(r.Duration("withdraw-after", time.Minute, time.Hour), func() {
			if t := p.Tab; alive() && t != nil && !p.Closed && t.HasPage() {
				if gone {
					p.Rendered = false
				}
				b.DesktopWithdraw(t)
				if gone && r.Chance("client-close", sim.Per(1, 2)) {
					// The person closes the dead root's tab in the client.
					w.env.After(r.Duration("client-close-after", time.Second, 10*time.Minute), func() {
						if t := p.Tab; alive() && t != nil && !p.Closed {
							b.ManagerCloseNative(t, nil)
						}
					})
				}
			}
		})
	}
	cycle()
}

// epochCheck is an event that runs then if *epoch is still the epoch it
// was armed in (a timer of a connection that ended early does nothing).
type epochCheck struct {
	armed int
	epoch *int
	then  func()
}

func (c *epochCheck) Run() {
	if c.armed == *c.epoch {
		c.then()
	}
}
