package invariants

import (
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Provider-session invariants, written from ProviderSessionManager's
// contract: an idle release asks hasPendingBackgroundWork first and defers
// while work is pending, up to DEFAULT_MAX_IDLE_PIN_MS (4 h); the release
// exists to reclaim idle runtimes, never to end work the user started.
// They read the manager's background-work and session.release events.
const NoReapWhileWorkOwed = "no-reap-while-work-owed"

// MaxIdlePin is how long pending background work may defer an idle release
// (DEFAULT_MAX_IDLE_PIN_MS, 4 h).
const MaxIdlePin = 4 * time.Hour

func init() {
	register(Info{Name: NoReapWhileWorkOwed, Group: catalog.ProviderSession,
		Property: "an idle release never ends a provider session while background work it reported is still running, within the 4 h pin cap",
		Source:   "ProviderSessionManager hasPendingBackgroundWork, DEFAULT_MAX_IDLE_PIN_MS; PR #10689",
		Reports:  []catalog.Report{"t3code#4198", "t3code#10600"},
		New:      func() sim.Checker { return &reapOwed{} }})
}

// owed is background work a session reported.
type owed struct {
	session      string
	since, until time.Duration
}

type reapOwed struct {
	work []owed // a few at a time; a slice keeps the checker free of map ranges
}

func (*reapOwed) Name() string { return NoReapWhileWorkOwed }

// ObservedKinds implements sim.KindObserver.
func (*reapOwed) ObservedKinds() []string { return reapOwedKinds }

var reapOwedKinds = []string{"server.start", "background-work", "session.release"}

func (r *reapOwed) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Kind == "server.start":
		r.work = r.work[:0]
	case ev.Kind == "background-work":
		until, err := ParseT(ev.Get("until"))
		if err != nil {
			return nil
		}
		session := ev.Get("providerSessionId")
		for i := range r.work {
			if r.work[i].session == session {
				r.work[i].until = max(r.work[i].until, until)
				return nil
			}
		}
		r.work = append(r.work, owed{session: session, since: ev.At, until: until})
	case ev.Kind == "session.release":
		session := ev.Get("providerSessionId")
		for i, w := range r.work {
			if w.session != session {
				continue
			}
			r.work = append(r.work[:i], r.work[i+1:]...)
			if ev.Get("reason") == "idle_timeout" && w.until > ev.At && ev.At-w.since < MaxIdlePin {
				return violation(NoReapWhileWorkOwed,
					"provider session %s was released for idleness at %s while the background work it reported at %s was still running (until %s, %s inside the 4 h pin cap): that work dies with the session",
					session, at(ev.At), at(w.since), at(w.until), MaxIdlePin-(ev.At-w.since))
			}
			return nil
		}
	}
	return nil
}

// OneRunPerMessage is written from the command receipt contract of a
// user message: its thread.turn.start carries the client's id, so a
// message delivered twice (a client retry, a duplicating transport) is one
// turn. It reads the server's run.start events and their message ids.
const OneRunPerMessage = "one-run-per-message"

func init() {
	register(Info{Name: OneRunPerMessage, Group: catalog.ProviderSession,
		Property: "a user message starts at most one run, however often it is delivered, across restarts",
		Source:   "OrchestrationEngine command receipts (thread.turn.start commandId); accepted input reaches its consumer once",
		Reports:  []catalog.Report{"anomalyco/opencode#27928"},
		New:      func() sim.Checker { return &runPerMessage{first: map[string]firstRun{}} }})
}

type firstRun struct {
	run string
	at  time.Duration
}

type runPerMessage struct {
	first map[string]firstRun // thread and message -> its first run
	str   sim.Strings         // the keys of first
}

func (*runPerMessage) Name() string { return OneRunPerMessage }

// ObservedKinds implements sim.KindObserver.
func (*runPerMessage) ObservedKinds() []string { return runPerMessageKinds }

var runPerMessageKinds = []string{"run.start"}

func (r *runPerMessage) Observe(ev *sim.Event) *sim.Violation {
	if ev.Actor != "server" || ev.Kind != "run.start" || ev.Get("message") == "" {
		return nil
	}
	var kb [128]byte // looked up as string(k), which does not allocate
	k := append(append(append(kb[:0], ev.Get("thread")...), ' '), ev.Get("message")...)
	f, seen := r.first[string(k)]
	if !seen {
		r.first[r.str.Bytes(k)] = firstRun{run: ev.Get("run"), at: ev.At}
		return nil
	}
	return violation(OneRunPerMessage,
		"message %s of thread %s started run %s at %s, and again run %s at %s: one prompt was answered twice",
		ev.Get("message"), ev.Get("thread"), f.run, at(f.at), ev.Get("run"), at(ev.At))
}

// NoIdleReleaseWhileChildOwed is written from the delegation contract of
// Orchestrator V2: a delegated child's completion is owed to its parent
// thread, which the child's end wakes (PR #4499, "wake settled parents
// when delegated children finish"); the parent is waiting, not idle, and
// the idle release exists to reclaim idle runtimes. It reads the manager's
// session.opened/attach/detach/release events (which threads a session
// serves), the server's delegate_task events (result task=...) and the
// orchestrator's task.settled.
const NoIdleReleaseWhileChildOwed = "no-idle-release-while-child-owed"

func init() {
	register(Info{Name: NoIdleReleaseWhileChildOwed, Group: catalog.ProviderSession,
		Property: "an idle release never ends a provider session while a thread attached to it has a delegated child still running (its result is owed to that thread)",
		Source:   "delegate_task completion delivery to the parent (PR #4499); MODEL.md releaseIfStillIdle note (a parent waiting on a delegated child is not background work)",
		Reports:  []catalog.Report{"t3code#15173", "dotdevdotdev/agentwire-dev#852"},
		New:      func() sim.Checker { return newChildOwed() }})
}

// owedChild is a delegated task whose child was still running.
type owedChild struct {
	parent, task string
	since        time.Duration
}

type childOwed struct {
	// Indexes looked up by key, never ranged over: a world of 1,000
	// threads has as many sessions and delegated children.
	//
	// children holds the delegated tasks whose child was still running, by
	// task id; byParent a parent thread's of them, in acceptance order.
	children map[string]owedChild
	byParent map[string][]string
	// attached is, per live session, the threads it serves in attach order
	// (a thread attached twice is listed twice).
	attached map[string][]string
	settled  map[string]bool // task ids that settled (a later replay of their receipt owes nothing)
}

func newChildOwed() *childOwed {
	return &childOwed{children: map[string]owedChild{}, byParent: map[string][]string{},
		attached: map[string][]string{}, settled: map[string]bool{}}
}

func (*childOwed) Name() string { return NoIdleReleaseWhileChildOwed }

// ObservedKinds implements sim.KindObserver.
func (*childOwed) ObservedKinds() []string { return childOwedKinds }

var childOwedKinds = []string{"server.start", "session.opened", "session.attach", "session.detach", "delegate_task", "task.settled", "session.release"}

func (c *childOwed) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Kind == "server.start":
		clear(c.attached) // sessions die with their process; tasks are durable
	case ev.Actor == "psm" && (ev.Kind == "session.opened" || ev.Kind == "session.attach"):
		session := ev.Get("providerSessionId")
		c.attached[session] = append(c.attached[session], ev.Get("thread"))
	case ev.Actor == "psm" && ev.Kind == "session.detach":
		c.drop(ev.Get("providerSessionId"), ev.Get("thread"))
	case isToolEvent(ev) && ev.Kind == "delegate_task" && (ev.Outcome == "accepted" || ev.Outcome == "replayed"):
		task := resultField(ev.Get("result"), "task")
		if task == "" || c.settled[task] {
			return nil
		}
		if _, owed := c.children[task]; owed {
			return nil
		}
		parent := ev.Get("thread")
		c.children[task] = owedChild{parent: parent, task: task, since: ev.At}
		c.byParent[parent] = append(c.byParent[parent], task)
	case ev.Actor == "orchestrator" && ev.Kind == "task.settled":
		task := ev.Get("task")
		c.settled[task] = true
		if o, owed := c.children[task]; owed {
			delete(c.children, task)
			sim.Unindex(c.byParent, o.parent, task)
		}
	case ev.Actor == "psm" && ev.Kind == "session.release":
		session := ev.Get("providerSessionId")
		threads := c.attached[session]
		delete(c.attached, session)
		if ev.Get("reason") != "idle_timeout" {
			return nil
		}
		for _, t := range threads {
			if tasks := c.byParent[t]; len(tasks) > 0 {
				o := c.children[tasks[0]]
				return violation(NoIdleReleaseWhileChildOwed,
					"provider session %s was released for idleness at %s while its thread %s was owed the result of delegated task %s, accepted at %s and still running: the parent is waiting, not idle, and the child's report-back has no live session",
					session, at(ev.At), t, o.task, at(o.since))
			}
		}
	}
	return nil
}

func (c *childOwed) drop(session, thread string) { sim.Unindex(c.attached, session, thread) }

// ResumeBindsStoredNative and ResumeCursorFindsConversation are written
// from the resume contract of T3's provider sessions: a thread's history
// is one native conversation, which T3 persists as the thread's resume
// cursor (provider_session_runtime.resume_cursor_json) so that a session
// opened after an idle release or a restart continues it (ClaudeAdapter
// `resume`; OpenCodeAdapter session.get, PR #3617). They read the
// manager's native.create / native.resume / native.turn / cursor.persist /
// cursor.clear events and its failed session.open.
const (
	ResumeBindsStoredNative       = "resume-binds-stored-native"
	ResumeCursorFindsConversation = "resume-cursor-finds-conversation"
)

func init() {
	register(Info{Name: ResumeBindsStoredNative, Group: catalog.ProviderSession,
		Property: "while a thread's native conversation still exists on its instance, every provider session the thread opens there resumes it: a new one is created only when the old one is gone (and the context is then marked lost)",
		Source:   "OpenCodeAdapter.startSession resume cursor and session.get (PR #3617); ClaudeAdapter readClaudeResumeState",
		Reports:  []catalog.Report{"t3code#3604", "t3code#2838"},
		New:      func() sim.Checker { return &storedNative{exists: map[string]bool{}, lastAt: map[string]int{}} }})
	register(Info{Name: ResumeCursorFindsConversation, Group: catalog.ProviderSession,
		Property: "an open never fails because the thread's persisted resume cursor names a native conversation that does not exist: the cursor is written once the conversation is durable, or a resume that finds nothing falls back to a fresh session",
		Source:   "t3code#2336 (resume cursor at turnCount 0); ProviderService resume_cursor_json; a thread is never left unable to send",
		Reports:  []catalog.Report{"t3code#2336"},
		New:      func() sim.Checker { return &cursorFinds{} }})
}

// lastNative is the native conversation a thread last drove.
type lastNative struct {
	thread, native, instance string
	at                       time.Duration
}

type storedNative struct {
	last   []lastNative    // one per thread; a slice keeps the checker free of map ranges
	lastAt map[string]int  // thread -> its index in last (looked up only)
	exists map[string]bool // native conversation -> resumable
}

// lastOf returns the index in last of thread's row, or -1.
func (s *storedNative) lastOf(thread string) int {
	if i, ok := s.lastAt[thread]; ok {
		return i
	}
	return -1
}

func (s *storedNative) appendLast(l lastNative) {
	s.lastAt[l.thread] = len(s.last)
	s.last = append(s.last, l)
}

func (*storedNative) Name() string { return ResumeBindsStoredNative }

// ObservedKinds implements sim.KindObserver.
func (*storedNative) ObservedKinds() []string { return storedNativeKinds }

var storedNativeKinds = []string{"native.create", "native.resume", "native.turn"}

func (s *storedNative) Observe(ev *sim.Event) *sim.Violation {
	if ev.Actor != "psm" {
		return nil
	}
	switch ev.Kind {
	case "native.create":
		thread, native, instance := ev.Get("thread"), ev.Get("native"), ev.Get("instance")
		s.exists[native] = ev.Get("written") == "true"
		if i := s.lastOf(thread); i >= 0 {
			l := s.last[i]
			s.last[i] = lastNative{thread, native, instance, ev.At}
			if l.instance == instance && s.exists[l.native] {
				return violation(ResumeBindsStoredNative,
					"thread %s's provider session on %s created a new native conversation %s at %s while its conversation %s (last bound at %s) still exists: the model starts blank while the thread shows the old history",
					thread, instance, native, at(ev.At), l.native, at(l.at))
			}
			return nil
		}
		s.appendLast(lastNative{thread, native, instance, ev.At})
	case "native.resume":
		if ev.Outcome != "resumed" {
			return nil
		}
		if i := s.lastOf(ev.Get("thread")); i >= 0 {
			s.last[i] = lastNative{s.last[i].thread, ev.Get("native"), ev.Get("instance"), ev.At}
			return nil
		}
		s.appendLast(lastNative{ev.Get("thread"), ev.Get("native"), ev.Get("instance"), ev.At})
	case "native.turn":
		s.exists[ev.Get("native")] = true
	}
	return nil
}

// cursorRow is a thread's persisted cursor as the trace tells it.
type cursorRow struct {
	thread, native string
	at             time.Duration
}

type cursorFinds struct {
	cursors  []cursorRow    // one per thread
	cursorAt map[string]int // thread -> its index in cursors (looked up only)
	durable  []string       // native conversations with a durable turn (few)
}

func (*cursorFinds) Name() string { return ResumeCursorFindsConversation }

// ObservedKinds implements sim.KindObserver.
func (*cursorFinds) ObservedKinds() []string { return cursorFindsKinds }

var cursorFindsKinds = []string{"cursor.persist", "cursor.clear", "native.turn", "session.open"}

func (c *cursorFinds) Observe(ev *sim.Event) *sim.Violation {
	if ev.Actor != "psm" {
		return nil
	}
	switch ev.Kind {
	case "cursor.persist":
		c.set(ev.Get("thread"), ev.Get("native"), ev.At)
	case "cursor.clear":
		c.set(ev.Get("thread"), "", ev.At)
	case "native.turn":
		c.durable = append(c.durable, ev.Get("native"))
	case "session.open":
		if ev.Get("cause") != "resume-missing" {
			return nil
		}
		thread, native := ev.Get("thread"), ev.Get("native")
		since := "an unknown time"
		for _, r := range c.cursors {
			if r.thread == thread && r.native == native {
				since = at(r.at)
			}
		}
		written := "it never had a durable turn"
		for _, d := range c.durable {
			if d == native {
				written = "it had a durable turn, but is gone"
			}
		}
		return violation(ResumeCursorFindsConversation,
			"thread %s's provider session %s failed to open at %s: its resume cursor, persisted at %s, names native conversation %s, which does not exist (%s), and nothing falls back or clears the cursor: every later open fails the same way",
			thread, ev.Get("providerSessionId"), at(ev.At), since, native, written)
	}
	return nil
}

func (c *cursorFinds) set(thread, native string, t time.Duration) {
	if i, ok := c.cursorAt[thread]; ok {
		c.cursors[i] = cursorRow{thread, native, t}
		return
	}
	if c.cursorAt == nil {
		c.cursorAt = map[string]int{}
	}
	c.cursorAt[thread] = len(c.cursors)
	c.cursors = append(c.cursors, cursorRow{thread, native, t})
}

// IdleCountsAwakeTime is written from the idle release's contract: it
// reclaims a session after DEFAULT_IDLE_TIMEOUT_MS / the reaper's
// DEFAULT_INACTIVITY_THRESHOLD_MS (30 min) "without activity", and time
// the host spent asleep is no inactivity of the user's (t3code#11805
// triage; PR #11838 compares the wall and monotonic clocks). It reads the
// world's host.suspend / host.resume events (the awake clock) and the
// manager's session and turn events (the last activity it can see).
const IdleCountsAwakeTime = "idle-counts-awake-time"

// IdleThreshold is the idle release's threshold (30 min).
const IdleThreshold = 30 * time.Minute

func init() {
	register(Info{Name: IdleCountsAwakeTime, Group: catalog.ProviderSession,
		Property: "an idle release ends a provider session only after 30 min of awake time without activity: a host suspend alone never makes a session reap-eligible",
		Source:   "ProviderSessionManager DEFAULT_IDLE_TIMEOUT_MS; ProviderSessionReaper DEFAULT_INACTIVITY_THRESHOLD_MS; t3code#11805 triage, PR #11838",
		Reports:  []catalog.Report{"t3code#11805"},
		New:      func() sim.Checker { return &awakeIdle{} }})
}

type sleepSpan struct{ at, d time.Duration }

type awakeIdle struct {
	sleeps []sleepSpan // host suspends so far (a few)
	// seen is the last activity per live session: looked up by session,
	// never ranged over (a world of 1,000 threads has as many sessions).
	seen map[string]time.Duration
}

func (*awakeIdle) Name() string { return IdleCountsAwakeTime }

// ObservedKinds implements sim.KindObserver.
func (*awakeIdle) ObservedKinds() []string { return awakeIdleKinds }

var awakeIdleKinds = []string{"host.suspend", "session.opened", "session.attach", "turn.start", "turn.terminal", "session.release"}

// asleep returns the host's sleep between a and b.
func (a *awakeIdle) asleep(from, to time.Duration) time.Duration {
	var d time.Duration
	for _, s := range a.sleeps {
		if s.at >= from && s.at+s.d <= to {
			d += s.d
		}
	}
	return d
}

func (a *awakeIdle) Observe(ev *sim.Event) *sim.Violation {
	switch {
	case ev.Actor == "fault" && ev.Kind == "host.suspend":
		if d, err := time.ParseDuration(ev.Get("for")); err == nil {
			a.sleeps = append(a.sleeps, sleepSpan{ev.At, d})
		}
	case ev.Actor == "psm" && (ev.Kind == "session.opened" || ev.Kind == "session.attach" || ev.Kind == "turn.start" || ev.Kind == "turn.terminal"):
		if a.seen == nil {
			a.seen = map[string]time.Duration{}
		}
		a.seen[ev.Get("providerSessionId")] = ev.At
	case ev.Actor == "psm" && ev.Kind == "session.release":
		session := ev.Get("providerSessionId")
		last, ok := a.seen[session]
		if !ok {
			return nil
		}
		delete(a.seen, session)
		slept := a.asleep(last, ev.At)
		if ev.Get("reason") == "idle_timeout" && slept > 0 && ev.At-last-slept < IdleThreshold {
			return violation(IdleCountsAwakeTime,
				"provider session %s was released for idleness at %s, %s after its last activity at %s, of which the host slept %s: only %s of awake time without activity, under the 30 min threshold",
				session, at(ev.At), ev.At-last, at(last), slept, ev.At-last-slept)
		}
	}
	return nil
}
