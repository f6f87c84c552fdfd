package agent

import (
	"fmt"
	"time"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/server"
	"github.com/orchsim/orchsim/sim"
)

// User is the human of one thread: sends prompts at random gaps (seconds to
// a day; often past the 30 min idle release), retries soon after a failed
// turn, watches the thread's tabs and sometimes takes control of one.
type User struct {
	lookFn  func() // look, bound once
	env     *model.Env
	rand    *sim.Rand
	Thread  string
	Project string
	srv     func() *server.Server
	viewer  string
	watched string
	habits  Habits
	// Desktop: the thread is open in the desktop app, which renders the
	// thread's new tabs (desktop-backed tabs are exempt from the sweep).
	Desktop bool
	// next is the pending prompt, due at nextAt (nil when none is pending).
	next    sim.Timer
	nextAt  time.Duration
	waiting bool
	stopped bool
	// messages counts the prompts the server took (message ids).
	messages int
	// redelivery draws the duplicate deliveries, apart from rand.
	redelivery *sim.Rand
	// steer draws the steering habit, apart from rand.
	steer  *sim.Rand
	steers int
	// Quit, if set, quits the app (the server shuts down and relaunches).
	Quit func()
	// ImpatienceMin and ImpatienceMax bound how long the user lets a turn
	// run before pressing stop (0: never).
	ImpatienceMin, ImpatienceMax time.Duration
	// impatience allocates prompt's stop events.
	impatience sim.Slab[impatience]
}

// Habits are the rates of a user's optional behaviours; swarm testing
// draws them per seed.
type Habits struct {
	// Desktop: the thread is open in the desktop app.
	Desktop sim.Ratio
	// Watch: at a look, the user opens one of the thread's tabs.
	Watch sim.Ratio
	// TakeControl: at a look at a watched tab, the user takes control.
	TakeControl sim.Ratio
	// DuplicateDelivery: a prompt the server took is delivered again
	// later (a client retry, a duplicating transport; anomalyco/opencode#27928).
	DuplicateDelivery sim.Ratio
	// Steer: after a prompt, the user sends a steering message while the
	// turn runs; half of them then stop the turn, and half of those quit
	// the app seconds later (t3code#4561's steps).
	Steer sim.Ratio
}

// DefaultHabits are the habits of the fixed (non-swarm) mix.
var DefaultHabits = Habits{Desktop: sim.Per(1, 2), Watch: sim.Per(1, 3), TakeControl: sim.Per(1, 4),
	DuplicateDelivery: sim.Per(1, 20)}

// NewUser returns the user of threadID; srv returns the live server
// process (nil while it is down).
func NewUser(env *model.Env, threadID, projectID string, srv func() *server.Server, h Habits) *User {
	u := &User{env: env, rand: env.Rand("user/" + threadID), Thread: threadID, Project: projectID, srv: srv,
		viewer: "viewer/" + threadID, habits: h, redelivery: env.Rand("redelivery/" + threadID),
		steer: env.Rand("steer/" + threadID)}
	u.Desktop = u.rand.Chance("desktop", h.Desktop)
	return u
}

// Start schedules the first prompt and, unless its viewer is switched off,
// the watching habit. A user switched off does nothing at all.
func (u *User) Start() {
	if !u.env.Enabled("user/" + u.Thread) {
		u.stopped = true
		return
	}
	u.promptAfter(u.rand.Duration("first-prompt", time.Second, 2*time.Minute))
	if u.env.Enabled(u.viewer) {
		u.env.After(u.rand.Duration("first-look", time.Minute, 20*time.Minute), u.looker())
	}
}

// Stop ends the user's activity (the heal phase of later issues).
func (u *User) Stop() { u.stopped = true }

// Gap draws the time until the next prompt after a turn: seconds to minutes,
// under the idle timeout, past it, or past a day; or 0 when the user leaves
// for good (the first option, so a zeroed or shrunk tape ends the user's
// activity instead of making it prompt every few seconds).
func (u *User) Gap() time.Duration {
	switch u.rand.Pick("gap-kind", 3, 30, 25, 35, 10) {
	case 0:
		return 0
	case 1:
		return u.rand.Duration("gap", 5*time.Second, 5*time.Minute)
	case 2:
		return u.rand.Duration("gap", 5*time.Minute, 29*time.Minute)
	case 3:
		return u.rand.Duration("gap", 31*time.Minute, 4*time.Hour)
	default:
		return u.rand.Duration("gap", 20*time.Hour, 30*time.Hour)
	}
}

// PromptNow has the user send a prompt at this instant, after the event
// being run (a commit point racing a prompt with it); a prompt already due
// now is not doubled.
func (u *User) PromptNow() { u.promptAfter(0) }

// promptAfter schedules the next prompt d from now, unless one is already
// due sooner.
func (u *User) promptAfter(d time.Duration) {
	at := u.env.Now() + d
	if u.waiting && u.nextAt <= at {
		return
	}
	u.waiting, u.nextAt = true, at
	if u.next == nil {
		u.next = u.env.Clock.AfterFunc(d, u.prompt)
		return
	}
	u.next.Reset(d)
}

func (u *User) prompt() {
	u.waiting = false
	if u.stopped {
		return
	}
	s := u.srv()
	msg := u.env.Str().Join("message:"+u.Thread+":", u.messages+1)
	if s == nil || !s.SendMessage(u.Thread, msg) {
		// Server down or a run still active: look again later.
		u.promptAfter(u.rand.Duration("prompt-retry", 30*time.Second, 5*time.Minute))
		return
	}
	u.messages++
	u.env.Emit(u.env.Str().Concat("user/", u.Thread), "prompt", "", sim.A("thread", u.Thread))
	// Drawn from a stream of its own, so a world with duplicates draws
	// everything else as one without them.
	if r := u.redelivery; r.Chance("duplicate-delivery", u.habits.DuplicateDelivery) {
		u.env.After(r.Duration("duplicate-after", time.Minute, 2*time.Hour), func() {
			if s := u.srv(); s != nil && !u.env.Healing {
				u.env.Emit("fault", "message-redelivered", "", sim.A("thread", u.Thread), sim.A("message", msg))
				s.SendMessage(u.Thread, msg)
			}
		})
	}
	u.steerSoon(s)
	if u.ImpatienceMax > 0 {
		run := s.Store.Thread(u.Thread).ActiveRunID
		p := u.impatience.New()
		*p = impatience{u: u, s: s, run: run}
		u.env.RunAfter(u.rand.Duration("impatience", u.ImpatienceMin, u.ImpatienceMax), p)
	}
}

// impatience is the user's stop of run on server s when it is still
// running once their patience ends (prompt), its own event.
type impatience struct {
	u   *User
	s   *server.Server
	run string
}

func (p *impatience) Run() {
	u, s, run := p.u, p.s, p.run
	// Done once it ran: drop the record's server. The slab's current
	// array (up to 16 records a user made) stays reachable from the user,
	// and every record in it kept a dead server, with its registry,
	// orchestrator and manager, alive until the array filled up.
	*p = impatience{}
	if s.Dead() || s.Store.Thread(u.Thread).ActiveRunID != run {
		return
	}
	u.env.Emit("user/"+u.Thread, "stop", "", sim.A("thread", u.Thread), sim.A("run", run))
	s.Interrupt(u.Thread)
}

// TurnEnded tells the user the thread's turn is over; after a failed turn
// the user usually retries within a minute.
func (u *User) TurnEnded(failed bool) {
	if failed && u.rand.Chance("retry-after-failure", sim.Per(7, 10)) {
		u.promptAfter(u.rand.Duration("retry-gap", 2*time.Second, time.Minute))
		return
	}
	if gap := u.Gap(); gap > 0 {
		u.promptAfter(gap)
		return
	}
	u.env.Emit("user/"+u.Thread, "leave", "", sim.A("thread", u.Thread))
	u.stopped = true
}

// PromptSoon sends a prompt within seconds (after changing a setting).
func (u *User) PromptSoon() {
	if u.stopped {
		return
	}
	u.promptAfter(u.rand.Duration("prompt-soon", time.Second, 10*time.Second))
}

// look is the watching habit: now and then the user opens one of the
// thread's tabs in the preview panel, and sometimes takes control of it.
// looker returns look, bound once (a method value allocates at every use).
func (u *User) looker() func() {
	if u.lookFn == nil {
		u.lookFn = u.look
	}
	return u.lookFn
}

func (u *User) look() {
	if u.stopped {
		return
	}
	defer u.env.After(u.rand.Duration("look-gap", 2*time.Minute, 40*time.Minute), u.looker())
	s := u.srv()
	if s == nil {
		return
	}
	if u.watched != "" {
		t := s.Browser.Tab(u.Thread, u.watched)
		if t == nil {
			u.watched = ""
			return
		}
		if u.rand.Chance("take-control", u.habits.TakeControl) && s.Browser.TakeControl(t, u.viewer) {
			hold := u.rand.Duration("control-hold", 10*time.Second, 10*time.Minute)
			u.env.After(hold, func() {
				if s.Dead() {
					return
				}
				if t2 := s.Browser.Tab(u.Thread, t.TabID); t2 != nil {
					s.Browser.ReleaseControl(t2, u.viewer)
				}
			})
		}
		return
	}
	tabs := s.Browser.ThreadTabs(u.Thread) // read before Watch
	if len(tabs) == 0 || !u.rand.Chance("watch", u.habits.Watch) {
		return
	}
	t := tabs[u.rand.IntN("watch-tab", len(tabs))]
	s.Browser.Watch(t, u.viewer)
	u.watched = t.TabID
	u.env.After(u.rand.Duration("watch-for", 5*time.Minute, 3*time.Hour), func() {
		if s.Dead() || u.watched != t.TabID {
			return
		}
		if t2 := s.Browser.Tab(u.Thread, t.TabID); t2 != nil {
			s.Browser.Unwatch(t2, u.viewer)
		}
		u.watched = ""
	})
}

// Forget drops what the user had open in a dead server's UI.
func (u *User) Forget() { u.watched = "" }

// steerSoon is the steering habit after a prompt the server took: a
// message sent while the turn runs (queued), then perhaps the stop button
// before it is adopted, then perhaps a quit while the session shuts down.
// Drawn from a stream of its own.
func (u *User) steerSoon(s *server.Server) {
	r := u.steer
	if !r.Chance("steer", u.habits.Steer) {
		return
	}
	run := s.Store.Thread(u.Thread).ActiveRunID
	live := func() bool {
		return !u.stopped && !u.env.Healing && !s.Dead() && s.Store.Thread(u.Thread).ActiveRunID == run
	}
	u.env.After(r.Duration("steer-after", 5*time.Second, 3*time.Minute), func() {
		if !live() {
			return
		}
		msg := fmt.Sprintf("message:%s:steer-%d", u.Thread, u.steers+1)
		if !s.Steer(u.Thread, msg) {
			return
		}
		u.steers++ // traced by the server (turn.queued), one action
		if !r.Chance("stop-after-steer", sim.Per(1, 2)) {
			return
		}
		u.env.After(r.Duration("stop-after", time.Second, 2*time.Minute), func() {
			if !live() || s.Store.PendingQueuedTurn(u.Thread) == nil {
				return
			}
			u.env.Emit("user/"+u.Thread, "stop", "", sim.A("thread", u.Thread), sim.A("run", run))
			s.Interrupt(u.Thread)
			if u.Quit == nil || !r.Chance("quit-after-stop", sim.Per(1, 2)) {
				return
			}
			u.env.After(r.Duration("quit-after", 100*time.Millisecond, 3*time.Second), func() {
				if !s.Dead() && !u.env.Healing {
					u.Quit()
				}
			})
		})
	})
}
