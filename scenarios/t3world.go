package scenarios

import (
	"fmt"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/agent"
	"github.com/orchsim/orchsim/model/browser"
	"github.com/orchsim/orchsim/model/orchestrator"
	"github.com/orchsim/orchsim/model/provider"
	"github.com/orchsim/orchsim/model/server"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// CommitToolReply is the T3 world's commit point between a server's answer
// to an orchestrator tool call (its effect and receipt written) and the
// reply leaving the process: a fault there is a crash that loses the
// reply, so the caller's retry meets the next process and whatever the
// first one made durable.
const CommitToolReply = "tool.reply"

// MaxCommitFaults bounds the faults the commit strategy places per commit
// point and run (model.CommitFaultsPerPoint).
const MaxCommitFaults = model.CommitFaultsPerPoint

func init() {
	model.DeclareCommitPoint(model.CommitPointInfo{Name: CommitToolReply, Group: catalog.Orchestrator, Fault: "server-restart",
		Doc: "an orchestrator tool call is answered (effect and receipt written), the reply not yet sent: the server crashes and the reply is lost"})
}

// T3World is one environment around a restartable T3 server process: the
// durable store, the agents and users of its threads, the network between
// them, and the fault loop. Scenarios configure and start it.
type T3World struct {
	env    *model.Env
	rand   *sim.Rand
	net    *sim.Rand
	faults *sim.Rand
	Store  *store.Store
	srv    *server.Server
	incarn int
	// sizes are the last server's table sizes when it died: the next
	// boot's server is reserved for them (server.Server.Reserve).
	sizes  server.Sizes
	Agents []*agent.Agent
	Users  []*agent.User
	// Indexes of Agents and Users by thread, and the lengths they cover.
	agentOf  map[string]*agent.Agent
	userOf   map[string]*agent.User
	agentIdx int
	userIdx  int
	tabs     []tabSeen
	tabNoted map[string]bool // the tab ids in tabs
	// tabsOf lists, per thread, the positions in tabs of its tabs,
	// ascending (foreignTab).
	tabsOf map[string][]int
	calls  sim.Slab[netCall]
	// results are free boxes for answers crossing the network
	// (netCall.result), reused last in, first out.
	results []*model.ToolResult
	// turnEnds are TurnFinished's deliveries; hostActivityFn is
	// hostActivity, bound once.
	turnEnds       sim.Slab[turnEnd]
	hostActivityFn func()
	epochChecks    sim.Slab[epochCheck] // native hosts' up-timers

	// Faults configures the fault loop.
	Faults FaultMix
	// MaxRestarts bounds server restarts per run.
	MaxRestarts int
	restarts    int
	// Repertoire is the tools the agents use (preview tools by default).
	Repertoire agent.Repertoire
	// ResponseLoss is the probability that the answer to an orchestrator
	// tool call is lost on the way back (the server did the work).
	ResponseLoss sim.Ratio
	// KeyReuse is the agents' chance of reusing a clientRequestId for a
	// new request (agent.Agent.KeyReuse); swarm redraws it when it is set.
	KeyReuse sim.Ratio
	// Impatience bounds how long a user lets a turn run before pressing
	// stop (0: users never interrupt).
	ImpatienceMin, ImpatienceMax time.Duration
	// Habits are the users' optional behaviours.
	Habits agent.Habits
	// Storms turns on storms of tool-call events that put the server's
	// ingestion behind (t3code#6560), and Steering the users' steering
	// habit (t3code#4561); swarm draws their rates, each from a stream of
	// its own.
	Storms, Steering bool
	storm            *sim.Rand
	stormsPerDay     uint64
	// FirstTurnCrash is the chance that a provider process dies during the
	// first turn of a new native conversation, before the turn is written
	// (t3code#2336's CLI killed at turnCount 0); 0 (the default) leaves the
	// dimension out of the world. When set, swarm redraws it from its own
	// stream, nativeCrash, so every other draw keeps its place.
	FirstTurnCrash sim.Ratio
	nativeCrash    *sim.Rand
	// NestedDelegation is the chance that a delegated child delegates a
	// task of its own (orchestrator.Orchestrator.Nested); swarm redraws it,
	// from a stream of its own, when it is set.
	NestedDelegation sim.Ratio

	// hosts are the client preview hosts (previewhosts.go), hrand their
	// stream.
	hosts    []*browser.DesktopHost
	hrand    *sim.Rand
	lrand    *sim.Rand // the users' moves away from a thread (thread-leave)
	prand    *sim.Rand // the server tabs' page lifecycle (pagelife.go), nil when off
	profRand *sim.Rand // the server tabs' browser profiles (profiles.go), nil when off
	deskRand *sim.Rand // the desktop profile catalogues (desktopprofiles.go), nil when off
	nrand    *sim.Rand // native desktop roots (nativeroots.go), nil when off
	poprand  *sim.Rand // native popups of those roots (nativepopups.go), nil when off
	srand    *sim.Rand // native surfaces and captures (surfaces.go), nil when off
	hostRand *sim.Rand // the server tabs' preview hosting (hosting.go), nil when off
	// PageLifecycle lets the page-lifecycle dimension be drawn
	// (pagelife.go): page dialogs, failed navigations, desktop
	// withdrawals. Off keeps the worlds of the scenarios that predate it
	// (their seeds, samples and reports) as they were.
	PageLifecycle bool
	// ReplanRetry is the agents' chance of retrying a create_threads with
	// one entry more under the same clientRequestId
	// (agent.Agent.ReplanRetry); swarm redraws it, from a stream of its
	// own, when it is set.
	ReplanRetry sim.Ratio
	// Scheduling turns on the schedule_task scheduler
	// (orchestrator.Orchestrator.Scheduling) and the users who disable and
	// re-enable scheduled tasks; swarm redraws it, from a stream of its
	// own, when it is set.
	Scheduling bool
	// CompletionDelivery turns on delegated completion delivery and its
	// continuation worker (orchestrator.Orchestrator.EnableDeliveries):
	// parent runs' cohorts reserve, dispatch and run bounded deliveries of
	// their delegated tasks' results, across restarts; swarm keeps it in
	// half the seeds (its own stream).
	CompletionDelivery bool
	// CallRedelivery is the chance that the transport delivers a tools/call
	// without clientRequestId a second time, 1-30 s later, with the same
	// tool-call id (hermes-agent#57767); the client keeps the first answer.
	// Drawn from net/redelivery, a stream of its own; swarm redraws it,
	// from swarm/call-redelivery, when it is set.
	CallRedelivery sim.Ratio
	// RuntimeRestarts: now and then a user changes an idle thread's runtime
	// options (model, runtime mode), which restarts its live provider
	// session in place (server.ChangeRuntimeOptions; the situation of
	// swarajbachu/zuse#463). Drawn from its own stream, runtime-restart
	// (on in half the swarm seeds), so the other draws keep their places.
	RuntimeRestarts bool
	rr              *sim.Rand
	// HostSuspends: now and then the host sleeps for 20 min to 4 h (a
	// laptop lid closed; t3code#11805): the wall clock jumps while every
	// process is frozen. Drawn from its own stream, host-power (on in half
	// the swarm seeds), so the other draws keep their places.
	HostSuspends bool
	// HostSuspendsUntil bounds when a sleep may end (before the horizon, so
	// the heal phase starts on time); 0 means no bound.
	HostSuspendsUntil time.Duration
	power             *sim.Rand
	// ExtraInstances: now and then an agent runs T3's generated
	// agent-device helper, which launches a second desktop app instance
	// against the same home (t3code#12926; server.ExtraInstance), every
	// 1-24 h. Drawn from its own stream, extra-instance (on in a third of
	// the seeds), so the other draws keep their places.
	ExtraInstances bool
	extra          *sim.Rand
	extraN         int
}

type tabSeen struct{ tab, thread string }

// FaultMix weights the fault kinds the fault loop draws; 0 disables a kind.
type FaultMix struct {
	// GapMin and GapMax bound the virtual time between faults.
	GapMin, GapMax time.Duration
	// Weights of: provider process crash, capability change (browser access
	// toggled off then on), stale credential replay, server restart,
	// provider switch.
	Crash, CapabilityChange, StaleCall, ServerRestart, ProviderSwitch uint64
}

// NewT3World draws a world of 2-4 threads over 1-2 projects, each thread on
// a random provider instance, with browser access on.
//
// With env.Threads > 0 (a scaled world, Config.Threads) it makes that many
// threads instead, over one project per two threads (the default draw's
// proportion: 1.5 projects for 3 threads).
func NewT3World(env *model.Env) *T3World {
	w := &T3World{env: env, rand: env.Rand("world"), net: env.Rand("net"), faults: env.Rand("faults"), Store: &store.Store{},
		Habits: agent.DefaultHabits, nativeCrash: env.Rand("native-crash")}
	var projects, threads int
	if n := env.Threads; n > 0 {
		projects, threads = (n+1)/2, n
	} else {
		projects = 1 + w.rand.IntN("projects", 2)
	}
	for p := 0; p < projects; p++ {
		w.Store.Projects = append(w.Store.Projects, &store.Project{ID: fmt.Sprintf("project-%d", p+1), BrowserAccess: true})
	}
	if threads == 0 {
		threads = 2 + w.rand.IntN("threads", 3)
	}
	for i := 0; i < threads; i++ {
		id := ThreadID(i)
		inst := provider.Adapters[w.rand.IntN("instance", len(provider.Adapters))].Instance
		w.Store.Threads = append(w.Store.Threads, &store.Thread{ID: id, ProjectID: w.Store.Projects[i%projects].ID, Instance: inst})
	}
	return w
}

// ThreadID is the id of a world's i-th thread (from 0): thread-a to
// thread-z, then thread-aa, thread-ab, ... (bijective base 26, so ids stay
// letters, as FollowsFrom's id pattern expects, in a scaled world).
func ThreadID(i int) string {
	var b [16]byte
	n := len(b)
	for i++; i > 0; i = (i - 1) / 26 {
		n--
		b[n] = byte('a' + (i-1)%26)
	}
	return "thread-" + string(b[n:])
}

// Fault kinds, as the fault injector and the shrinker name them
// ("fault:<kind>" switches one kind off; "faults" switches the injector off).
const (
	FaultCrash            = "crash"
	FaultCapabilityChange = "capability-change"
	FaultStaleCredential  = "stale-credential"
	FaultServerRestart    = "server-restart"
	FaultProviderSwitch   = "provider-switch"
	FaultResponseLoss     = "response-loss"
	FaultFirstTurnCrash   = "first-turn-crash"
	FaultHostSuspend      = "host-suspend"
	FaultRuntimeRestart   = "runtime-restart"
	FaultExtraInstance    = "extra-instance"
)

// swarm redraws the fault mix and the users' habits from the seed: each
// fault kind is on or off with its own weight, the fault rate and the
// habits vary, and the drawn options are traced as the run's banner.
func (w *T3World) swarm() {
	r := w.env.Rand("swarm")
	weight := func(kind string, base uint64) uint64 {
		if base == 0 || !r.Chance("enable-"+kind, sim.Per(2, 3)) {
			return 0
		}
		return 1 + r.Below("weight-"+kind, 2*base)
	}
	m := &w.Faults
	m.Crash = weight(FaultCrash, m.Crash)
	m.CapabilityChange = weight(FaultCapabilityChange, m.CapabilityChange)
	m.StaleCall = weight(FaultStaleCredential, m.StaleCall)
	m.ServerRestart = weight(FaultServerRestart, m.ServerRestart)
	m.ProviderSwitch = weight(FaultProviderSwitch, m.ProviderSwitch)
	if m.GapMax > 0 {
		m.GapMin = r.Duration("fault-gap-min", time.Minute, 30*time.Minute)
		m.GapMax = m.GapMin + r.Duration("fault-gap-spread", time.Minute, 8*time.Hour)
	}
	if w.ResponseLoss.Numerator > 0 {
		w.ResponseLoss = sim.Per(r.Below("response-loss", 6), 20)
	}
	per := func(label string) sim.Ratio { return sim.Per(r.Below(label, 5), 4) }
	w.Habits = agent.Habits{Desktop: per("desktop"), Watch: per("watch"), TakeControl: per("take-control"),
		DuplicateDelivery: sim.Per(r.Below("duplicate-delivery", 3), 20)}
	attrs := []sim.Attr{sim.A(FaultCrash, itoa(m.Crash)), sim.A(FaultCapabilityChange, itoa(m.CapabilityChange)),
		sim.A(FaultStaleCredential, itoa(m.StaleCall)), sim.A(FaultServerRestart, itoa(m.ServerRestart)),
		sim.A(FaultProviderSwitch, itoa(m.ProviderSwitch)), sim.A(FaultResponseLoss, ratioString(w.ResponseLoss)),
		sim.A("fault-gap", m.GapMin.String()+".."+m.GapMax.String()),
		sim.A("desktop", ratioString(w.Habits.Desktop)), sim.A("watch", ratioString(w.Habits.Watch)),
		sim.A("take-control", ratioString(w.Habits.TakeControl)),
		sim.A("duplicate-delivery", ratioString(w.Habits.DuplicateDelivery))}
	if w.Steering { // its own stream: the other draws keep their places
		w.Habits.Steer = sim.Per(w.env.Rand("steer").Below("steer-rate", 3), 10)
	}
	if w.KeyReuse.Numerator > 0 { // drawn last, so the other draws keep their places
		w.KeyReuse = sim.Per(r.Below("key-reuse", 4), 20)
		attrs = append(attrs, sim.A("key-reuse", ratioString(w.KeyReuse)))
	}
	w.env.Emit("world", "swarm", "", attrs...)
	if w.NestedDelegation.Numerator > 0 {
		// Its own stream and its own banner, so the draws and the banner
		// of a world without nesting stay as they were.
		w.NestedDelegation = sim.Per(w.env.Rand("swarm/nested").Below("nested-delegation", 3), 4)
		if w.NestedDelegation.Numerator > 0 {
			w.env.Emit("world", "nested-delegation", "", sim.A("chance", ratioString(w.NestedDelegation)))
		}
	}
	if w.CallRedelivery.Numerator > 0 {
		w.CallRedelivery = sim.Per(w.env.Rand("swarm/call-redelivery").Below("call-redelivery", 3), 10)
		if w.CallRedelivery.Numerator > 0 {
			w.env.Emit("world", "call-redelivery", "", sim.A("chance", ratioString(w.CallRedelivery)))
		}
	}
	if w.Scheduling {
		w.Scheduling = w.env.Rand("swarm/scheduler").Chance("scheduler", sim.Per(1, 2))
		if w.Scheduling {
			w.env.Emit("world", "scheduler", "", sim.A("toggle-gap", "30m0s..6h0m0s"))
		}
	}
	if w.CompletionDelivery {
		w.CompletionDelivery = w.env.Rand("swarm/completion-delivery").Chance("completion-delivery", sim.Per(1, 2))
		if w.CompletionDelivery {
			w.env.Emit("world", "completion-delivery", "")
		}
	}
	if w.ReplanRetry.Numerator > 0 {
		w.ReplanRetry = sim.Per(w.env.Rand("swarm/replan").Below("replan-retry", 3), 4)
		if w.ReplanRetry.Numerator > 0 {
			w.env.Emit("world", "replan-retry", "", sim.A("chance", ratioString(w.ReplanRetry)))
		}
	}
}

// applyOff zeroes the fault kinds the shrinker switched off.
func (w *T3World) applyOff() {
	m := &w.Faults
	off := func(kind string, weight *uint64) {
		if !w.env.Enabled("fault:" + kind) {
			*weight = 0
		}
	}
	off(FaultCrash, &m.Crash)
	off(FaultCapabilityChange, &m.CapabilityChange)
	off(FaultStaleCredential, &m.StaleCall)
	off(FaultServerRestart, &m.ServerRestart)
	off(FaultProviderSwitch, &m.ProviderSwitch)
	if !w.env.Enabled("fault:" + FaultResponseLoss) {
		w.ResponseLoss = sim.Ratio{}
	}
	if !w.env.Enabled("faults") {
		m.GapMax = 0
	}
	if !w.env.Enabled("fault:"+FaultFirstTurnCrash) || !w.env.Enabled("faults") {
		w.FirstTurnCrash = sim.Ratio{}
	}
}

// Start boots the server, the actors and the fault loop.
func (w *T3World) Start() {
	if w.env.Swarm {
		w.swarm()
		if w.FirstTurnCrash.Numerator > 0 {
			w.FirstTurnCrash = sim.Ratio{}
			if w.nativeCrash.Chance("enable", sim.Per(1, 2)) {
				w.FirstTurnCrash = sim.Per(1+w.nativeCrash.Below("rate", 4), 8)
			}
		}
	}
	w.env.Crash = func() { w.restartHow(false) }
	w.env.Prompt = func(threadID string) {
		if u := w.user(threadID); u != nil {
			w.env.Emit("fault", "prompt-now", "", sim.A("thread", threadID))
			u.PromptNow()
		}
	}
	w.applyOff()
	if w.FirstTurnCrash.Numerator > 0 {
		w.env.Emit("world", "first-turn-crash", ratioString(w.FirstTurnCrash))
	}
	var users []string
	for _, t := range w.Store.Threads {
		users = append(users, t.ID)
	}
	for _, t := range w.Store.Threads {
		a := agent.New(w.env, w, t.ID)
		a.Foreign = w.foreignTab(t.ID)
		a.Repertoire = w.Repertoire
		a.Instance = t.Instance
		a.KeyReuse = w.KeyReuse
		a.ReplanRetry = w.ReplanRetry
		a.World = users
		w.Agents = append(w.Agents, a)
		u := agent.NewUser(w.env, t.ID, t.ProjectID, w.Server, w.Habits)
		u.ImpatienceMin, u.ImpatienceMax = w.ImpatienceMin, w.ImpatienceMax
		if w.Steering {
			u.Quit = func() { w.quit("after-stop", w.env.Rand("steer")) }
		}
		w.Users = append(w.Users, u)
		w.env.Emit("world", "thread", "", sim.A("thread", t.ID), sim.A("project", t.ProjectID),
			sim.A("instance", t.Instance), sim.A("desktop", fmt.Sprint(u.Desktop)),
			sim.A("browser-access", fmt.Sprint(w.Store.Project(t.ProjectID).BrowserAccess)))
	}
	w.startPageLifecycle()
	w.startProfiles()
	w.startDesktopProfiles()
	w.startNativeRoots()
	w.startNativePopups()
	w.startSurfaces()
	w.startHosting()
	w.boot()
	w.startHosts()
	for _, u := range w.Users {
		u.Start()
	}
	if w.Scheduling {
		w.toggleSchedules()
	}
	if w.Faults.GapMax > 0 {
		w.env.After(w.faults.Duration("fault-gap", w.Faults.GapMin, w.Faults.GapMax), w.fault)
	}
	if w.Storms && w.env.Enabled("storms") {
		w.storm = w.env.Rand("storm")
		// 0 to 3 storms a day on average (a zero draw: none).
		if w.stormsPerDay = w.storm.Below("storms-per-day", 4); w.stormsPerDay > 0 {
			w.env.After(w.stormGap(), w.stormNow)
		}
	}
	if w.HostSuspends && w.Faults.GapMax > 0 && w.env.Enabled("fault:"+FaultHostSuspend) {
		w.power = w.env.Rand("host-power")
		if !w.env.Swarm || w.power.Chance("enable", sim.Per(1, 2)) {
			w.env.After(w.power.Duration("gap", 2*time.Hour, 10*time.Hour), w.hostSuspend)
		}
	}
	if w.ExtraInstances && w.env.Enabled("fault:"+FaultExtraInstance) {
		w.extra = w.env.Rand(FaultExtraInstance)
		if w.extra.Chance("enable", sim.Per(1, 3)) {
			w.env.After(w.extra.Duration("gap", time.Hour, 24*time.Hour), w.extraInstance)
		}
	}
	if w.RuntimeRestarts && w.Faults.GapMax > 0 && w.env.Enabled("fault:"+FaultRuntimeRestart) {
		w.rr = w.env.Rand(FaultRuntimeRestart)
		if !w.env.Swarm || w.rr.Chance("enable", sim.Per(1, 2)) {
			w.env.After(w.rr.Duration("gap", RuntimeRestartGapMin, RuntimeRestartGapMax), w.runtimeRestart)
		}
	}
}

func (w *T3World) stormGap() time.Duration {
	mean := 24 * time.Hour / time.Duration(w.stormsPerDay)
	return w.storm.Duration("storm-gap", mean/4, mean*7/4)
}

// stormNow floods the server's ingestion with one thread's tool-call
// updates (5,000 to 100,000 events, about 2 to 33 min of work); the app
// turns sluggish, and half the time its user quits it before ingestion
// catches up.
func (w *T3World) stormNow() {
	if w.env.Healing {
		return
	}
	defer w.env.After(w.stormGap(), w.stormNow)
	s := w.srv
	if s == nil {
		return
	}
	t := w.Store.Threads[w.storm.IntN("storm-thread", len(w.Store.Threads))]
	events := 5000 + w.storm.IntN("storm-events", 95001)
	s.IngestStorm(t.ID, events)
	if w.storm.Chance("quit-during-storm", sim.Per(1, 2)) {
		backlog := time.Duration(events) * server.IngestEventCost
		w.env.After(w.storm.Duration("quit-after", time.Minute, backlog), func() {
			if w.srv == s && !w.env.Healing {
				w.quit("sluggish", w.storm)
			}
		})
	}
}

// quit is the user quitting the desktop app: its server shuts down
// gracefully and the app relaunches it seconds later (not a fault: no
// MaxRestarts bound).
func (w *T3World) quit(why string, r *sim.Rand) {
	s := w.srv
	if s == nil {
		return
	}
	w.env.Emit("user", "app.quit", why, sim.A("incarnation", fmt.Sprint(s.Incarnation)))
	w.srv, w.sizes = nil, s.Sizes()
	s.Shutdown()
	for _, u := range w.Users {
		u.Forget()
	}
	w.env.After(r.Duration("relaunch-after", 2*time.Second, 20*time.Second), w.boot)
}

// Bounds of the gap between two runtime-option changes (a modelling
// choice: a few times a day).
const (
	RuntimeRestartGapMin = 20 * time.Minute
	RuntimeRestartGapMax = 6 * time.Hour
)

// runtimeRestart is one user changing an idle thread's runtime options:
// its live session restarts in place and the user goes on with a prompt
// within seconds. Then the next change is scheduled.
func (w *T3World) runtimeRestart() {
	if w.env.Healing {
		return
	}
	defer w.env.After(w.rr.Duration("gap", RuntimeRestartGapMin, RuntimeRestartGapMax), w.runtimeRestart)
	s := w.srv
	if s == nil {
		return
	}
	t := w.Store.Threads[w.rr.IntN("thread", len(w.Store.Threads))]
	w.env.Emit("fault", FaultRuntimeRestart, "", sim.A("thread", t.ID))
	if s.ChangeRuntimeOptions(t.ID) {
		if u := w.user(t.ID); u != nil {
			u.PromptSoon()
		}
	}
}

func (w *T3World) boot() {
	w.incarn++
	w.srv = server.New(w.env, w.Store, w.incarn, server.Hooks{
		TurnStarted: func(threadID string, e *provider.Entry, cred provider.ThreadCred) {
			if a := w.agent(threadID); a != nil {
				a.Instance = e.Instance
				a.StartTurn(cred)
			}
			w.maybeCrashFirstTurn(e)
		},
		TurnAborted: func(threadID, why string) {
			if a := w.agent(threadID); a != nil {
				a.Abort()
			}
			if u := w.user(threadID); u != nil {
				u.TurnEnded(true)
			}
		},
		DesktopFor: func(threadID string) (bool, time.Duration) {
			u := w.user(threadID)
			if u == nil || !u.Desktop {
				return false, 0
			}
			d := w.rand.Duration("desktop-attach", 200*time.Millisecond, 12*time.Second)
			return d <= browser.DesktopAttachTimeout, d
		},
		OpenLatency: func(string) time.Duration {
			return w.rand.Duration("open-latency", 300*time.Millisecond, 8*time.Second)
		},
	})
	w.srv.Reserve(w.sizes)
	w.wirePage(w.srv.Browser)
	w.wireProfiles(w.srv.Browser)
	w.wireDesktopProfiles(w.srv.Browser)
	w.wireNativeRoots(w.srv.Browser)
	w.wireNativePopups(w.srv.Browser)
	w.wireSurfaces(w.srv.Browser)
	w.wireHosting(w.srv.Browser)
	w.srv.Orch.Nested = w.NestedDelegation
	for _, h := range w.hosts {
		h.Attach(w.srv.Broker)
	}
	w.srv.Orch.Scheduling = w.Scheduling
	if w.CompletionDelivery {
		w.srv.Orch.EnableDeliveries()
	}
}

// toggleSchedules is the users' habit of pausing and resuming scheduled
// tasks (ScheduledTaskService.setEnabled), every 30 min to 6 h, drawn
// from user/schedules, a stream of its own.
func (w *T3World) toggleSchedules() {
	r := w.env.Rand("user/schedules")
	var loop func()
	loop = func() {
		if w.env.Healing {
			return
		}
		if s := w.srv; s != nil {
			var timed []*store.Schedule
			for _, sc := range w.Store.Schedules {
				if sc.Timed {
					timed = append(timed, sc)
				}
			}
			if len(timed) > 0 {
				sc := timed[r.IntN("which-schedule", len(timed))]
				s.Orch.SetEnabled(sc.ID, !sc.Enabled)
			}
		}
		w.env.After(r.Duration("toggle-gap", 30*time.Minute, 6*time.Hour), loop)
	}
	w.env.After(r.Duration("toggle-gap", 30*time.Minute, 6*time.Hour), loop)
}

// Server returns the live server process, or nil while it is down.
func (w *T3World) Server() *server.Server { return w.srv }

// agent returns the agent of thread threadID (the first, as a scan would),
// or nil; agentOf indexes Agents (a world of 1,000 threads looks one up on
// every delivery), rebuilt when Agents grew.
func (w *T3World) agent(threadID string) *agent.Agent {
	if w.agentIdx != len(w.Agents) || w.agentOf == nil {
		w.agentOf, w.agentIdx = map[string]*agent.Agent{}, len(w.Agents)
		for i := len(w.Agents) - 1; i >= 0; i-- {
			w.agentOf[w.Agents[i].Thread] = w.Agents[i]
		}
	}
	return w.agentOf[threadID]
}

// user returns the user of thread threadID (the first), or nil; indexed
// like agent.
func (w *T3World) user(threadID string) *agent.User {
	if w.userIdx != len(w.Users) || w.userOf == nil {
		w.userOf, w.userIdx = map[string]*agent.User{}, len(w.Users)
		for i := len(w.Users) - 1; i >= 0; i-- {
			w.userOf[w.Users[i].Thread] = w.Users[i]
		}
	}
	return w.userOf[threadID]
}

func (w *T3World) latency() time.Duration {
	return w.net.Duration("latency", time.Millisecond, 40*time.Millisecond)
}

// Call implements agent.Net: request and response each cross the network.
func (w *T3World) Call(threadID string, cred provider.ThreadCred, call model.ToolCall, reply model.Replier) {
	// A new netCall is zero: its fields set one by one, rather than the
	// whole 1.6 kB record copied over it (with write barriers under GC).
	c := w.calls.New()
	c.w, c.threadID, c.credID, c.token, c.reply = w, threadID, cred.CredID, cred.Token, reply
	*c.slot.Call() = call
	w.env.RunAfter(w.latency(), c)
}

// netCall is one tool call crossing the network: what its delivery and
// answer need, and the server's record of it, in one allocation (closures
// over Call's parameters took several). It is the server's Replier for the
// call.
type netCall struct {
	w        *T3World
	threadID string
	// credID and token are the caller's provider.ThreadCred but for its
	// ThreadID (the record is 432 bytes, a size class below 464).
	credID, token string
	reply         model.Replier
	// Run (the call's events, model.Env.RunAfter) delivers the call, then
	// (pending) the answer held in result. An answer that comes while
	// another waits to be delivered gets a closure of its own, as every
	// answer once did. result is a box from the world's free list
	// (results), held only while the answer crosses the network: a
	// ToolResult is about 370 bytes, and a call is kept far longer.
	arrived bool
	pending bool
	// redelivered marks a call the network delivers twice; first is what
	// the first delivery's dispatch did, as its answer says (a wait still
	// holding the answer dispatched its command).
	redelivered bool
	result      *model.ToolResult
	first       string
	// slot is the server's record of the call (its one delivery); it
	// holds the call itself (slot.Call).
	slot server.CallSlot
}

// call is the call the network carries (kept in the server's slot).
func (c *netCall) call() *model.ToolCall { return c.slot.Call() }

// Run is the call's next network hop: its arrival at the server, then
// its answer's arrival at the caller.
func (c *netCall) Run() {
	if !c.arrived {
		c.arrived = true
		c.arrive()
		return
	}
	box := c.result
	r := *box
	*box = model.ToolResult{}
	c.w.results = append(c.w.results, box)
	c.pending, c.result = false, nil
	c.reply.Reply(r)
}

// arrive delivers the call at the server.
func (c *netCall) arrive() {
	w, threadID, call, reply := c.w, c.threadID, c.call(), c.reply
	s := w.srv
	if s == nil {
		w.env.Emit("agent/"+threadID, call.Tool, model.OutcomeServerDown, sim.A("thread", threadID), sim.A("cred", c.credID))
		w.env.After(w.latency(), func() { reply.Reply(model.ToolResult{Outcome: model.OutcomeServerDown}) })
		return
	}
	if call.ClientRequestID == "" && call.CallID != "" && model.IsOrchestratorTool(call.Tool) && !w.env.Healing &&
		w.env.Rand("net/redelivery").Chance("redeliver", w.CallRedelivery) {
		dup := *call
		dup.Redelivered = true
		c.redelivered, c.first = true, "dispatched"
		w.env.After(w.env.Rand("net/redelivery").Duration("redeliver-after", time.Second, 30*time.Second), func() {
			if s := w.srv; s != nil {
				w.env.Emit("fault", "tool-call-redelivered", "", sim.A("thread", c.threadID), sim.A("tool", dup.Tool),
					sim.A("tool-call", dup.CallID), sim.A("first", c.first))
				s.CallTool(c.threadID, c.token, c.credID, dup, func(model.ToolResult) {})
			}
		})
	}
	s.CallToolIn(&c.slot, threadID, c.token, c.credID, *call, orchestrator.Extra{}, c)
}

// Reply is the server's answer to the call: it crosses the network back
// (or is lost with the process or on the way).
func (c *netCall) Reply(r model.ToolResult) {
	w, threadID, call := c.w, c.threadID, c.call()
	if c.redelivered {
		c.first = r.Outcome
	}
	if call.Tool == model.ToolPreviewOpen && r.Outcome == browser.OK {
		w.noteTab(r.TabID, threadID)
	}
	if model.IsOrchestratorTool(call.Tool) && w.env.AtCommitPoint(CommitToolReply, sim.A("thread", threadID), sim.A("tool", call.Tool)) {
		// The server dies before the reply leaves it: the reply is
		// lost with the process, and the caller retries (or not)
		// against the next one.
		w.env.CrashProcess()
		return
	}
	if model.IsOrchestratorTool(call.Tool) && !w.env.Healing && w.net.Chance("response-loss", w.ResponseLoss) {
		w.env.Emit("fault", "response-lost", "", sim.A("thread", threadID), sim.A("tool", call.Tool))
		return
	}
	if c.pending {
		late, reply := r, c.reply // a copy: r itself stays on the stack
		w.env.After(w.latency(), func() { reply.Reply(late) })
		return
	}
	var box *model.ToolResult
	if n := len(w.results); n > 0 {
		box, w.results = w.results[n-1], w.results[:n-1]
	} else {
		box = new(model.ToolResult)
	}
	*box = r
	c.pending, c.result = true, box
	w.env.RunAfter(w.latency(), c)
}

// TurnFinished implements agent.Net.
func (w *T3World) TurnFinished(threadID string, backgroundFor time.Duration) {
	t := w.turnEnds.New()
	*t = turnEnd{w: w, threadID: threadID, backgroundFor: backgroundFor}
	w.env.RunAfter(w.latency(), t)
}

// turnEnd is a turn's end crossing the network to the server and user
// (TurnFinished), its own event.
type turnEnd struct {
	w             *T3World
	threadID      string
	backgroundFor time.Duration
}

func (t *turnEnd) Run() {
	w, threadID := t.w, t.threadID
	if s := w.srv; s != nil {
		s.TurnFinished(threadID, t.backgroundFor)
	}
	if u := w.user(threadID); u != nil {
		u.TurnEnded(false)
	}
}

func (w *T3World) noteTab(tab, thread string) {
	if w.tabNoted[tab] {
		return
	}
	if w.tabNoted == nil {
		w.tabNoted = map[string]bool{}
	}
	w.tabNoted[tab] = true
	if w.tabsOf == nil {
		w.tabsOf = map[string][]int{}
	}
	w.tabsOf[thread] = append(w.tabsOf[thread], len(w.tabs))
	w.tabs = append(w.tabs, tabSeen{tab, thread})
}

// foreignAt returns the position in w.tabs of the k-th (from 0) tab that
// thread did not open, own being the positions of the tabs it did,
// ascending: the k-th of the others, skipping each own tab at or before it.
func foreignAt(own []int, k int) int {
	for _, q := range own {
		if q > k {
			break
		}
		k++
	}
	return k
}

// foreignTab returns a picker of tab ids other threads opened (a user pasted
// one into this thread's conversation).
func (w *T3World) foreignTab(threadID string) func(r *sim.Rand) string {
	return func(r *sim.Rand) string {
		// The tabs other threads opened, in the order noted, without listing
		// them: a world of 1,000 threads notes as many tabs.
		own := w.tabsOf[threadID]
		n := len(w.tabs) - len(own)
		if n == 0 {
			return ""
		}
		return w.tabs[foreignAt(own, r.IntN("foreign-which", n))].tab
	}
}

// fault injects one fault drawn from the mix, then schedules the next;
// in the heal phase it injects nothing more.
func (w *T3World) fault() {
	if w.env.Healing {
		return
	}
	defer w.env.After(w.faults.Duration("fault-gap", w.Faults.GapMin, w.Faults.GapMax), w.fault)
	m := w.Faults
	restart := m.ServerRestart
	if w.restarts >= w.MaxRestarts {
		restart = 0
	}
	if m.Crash+m.CapabilityChange+m.StaleCall+restart+m.ProviderSwitch == 0 {
		return
	}
	// Kinds in the order the trace names them; a zero draw gives the first
	// enabled kind.
	switch w.faults.Pick("fault-kind", m.Crash, m.CapabilityChange, m.StaleCall, restart, m.ProviderSwitch) {
	case 0:
		w.crash()
	case 1:
		w.capabilityChange()
	case 2:
		a := w.Agents[w.faults.IntN("stale-agent", len(w.Agents))]
		if a.StaleCall() {
			w.env.Emit("fault", "stale-credential-replay", "", sim.A("thread", a.Thread))
		}
	case 3:
		w.restart()
	case 4:
		w.switchProvider()
	}
}

// extraInstance launches a second desktop app instance (an agent ran the
// agent-device helper) and schedules the next.
func (w *T3World) extraInstance() {
	if w.env.Healing {
		return
	}
	if s := w.srv; s != nil {
		w.extraN++
		w.env.Emit("fault", FaultExtraInstance, "agent-device", sim.A("live", fmt.Sprint(s.Incarnation)))
		s.ExtraInstance(w.extraN, "agent-device")
	}
	w.env.After(w.extra.Duration("gap", time.Hour, 24*time.Hour), w.extraInstance)
}

// hostSuspend sleeps the host (every process frozen, the wall clock
// jumping), wakes it, and schedules the next sleep.
func (w *T3World) hostSuspend() {
	if w.env.Healing {
		return
	}
	d := w.power.Duration("for", 20*time.Minute, 4*time.Hour)
	if w.HostSuspendsUntil > 0 && w.env.Now()+d > w.HostSuspendsUntil {
		return // the host stays awake for the rest of the run
	}
	w.env.Emit("fault", "host.suspend", "", sim.A("for", d.String()))
	s := w.srv
	if s != nil {
		s.PSM.HostSuspending()
	}
	w.env.Suspend(d)
	w.env.Emit("fault", "host.resume", "", sim.A("slept", d.String()))
	if s != nil && w.srv == s {
		s.PSM.HostResumed()
	}
	w.env.After(w.power.Duration("gap", 2*time.Hour, 10*time.Hour), w.hostSuspend)
}

// maybeCrashFirstTurn kills, with chance FirstTurnCrash, the provider
// process of a session whose native conversation has no durable turn yet,
// a moment into that first turn.
func (w *T3World) maybeCrashFirstTurn(e *provider.Entry) {
	if w.FirstTurnCrash.Numerator == 0 || w.env.Healing || e.Native() == "" {
		return
	}
	n := w.Store.Native(e.Native())
	if n == nil || n.Turns > 0 || !w.nativeCrash.Chance("first-turn-crash", w.FirstTurnCrash) {
		return
	}
	s := w.srv
	w.env.After(w.nativeCrash.Duration("first-turn-crash-after", time.Second, time.Minute), func() {
		if w.srv != s || s == nil || e.Released() || n.Turns > 0 {
			return
		}
		w.env.Emit("fault", "provider-crash", FaultFirstTurnCrash, sim.A("providerSessionId", e.ID), sim.A("native", n.ID))
		s.PSM.Crash(e)
	})
}

func (w *T3World) crash() {
	s := w.srv
	if s == nil {
		return
	}
	entries := s.PSM.Entries()
	if len(entries) == 0 {
		return
	}
	e := entries[w.faults.IntN("crash-which", len(entries))]
	w.env.Emit("fault", "provider-crash", "", sim.A("providerSessionId", e.ID))
	s.PSM.Crash(e)
}

// capabilityChange turns a project's browser access off, then on again a
// while later. After each change the user who made it (one of the
// project's) goes on with a prompt within seconds: it was changed for the
// conversation at hand.
func (w *T3World) capabilityChange() {
	p := w.Store.Projects[w.faults.IntN("capability-project", len(w.Store.Projects))]
	if !p.BrowserAccess {
		return
	}
	var users []*agent.User
	for _, u := range w.Users {
		if u.Project == p.ID {
			users = append(users, u)
		}
	}
	if len(users) == 0 {
		return
	}
	u := users[w.faults.IntN("capability-user", len(users))]
	w.setAccess(p.ID, false)
	u.PromptSoon()
	w.env.After(w.faults.Duration("capability-off-for", time.Minute, 30*time.Minute), func() {
		w.setAccess(p.ID, true)
		u.PromptSoon()
	})
}

func (w *T3World) setAccess(projectID string, on bool) {
	w.env.Emit("fault", "capability-change", "", sim.A("project", projectID), sim.A("browser-access", fmt.Sprint(on)))
	if s := w.srv; s != nil {
		s.SetBrowserAccess(projectID, on)
		return
	}
	// The server is down: the setting is written to the store directly.
	if p := w.Store.Project(projectID); p.BrowserAccess != on {
		p.BrowserAccess = on
		w.env.Emit("user", "settings.browser-access", fmt.Sprint(on), sim.A("project", projectID))
	}
}

// restart kills the server process (memory lost, store kept) and boots a
// new one after a short outage.
func (w *T3World) restart() {
	if w.srv == nil {
		return
	}
	w.restartHow(w.faults.Chance("graceful-restart", sim.Per(1, 2)))
}

// restartHow stops the server process (Shutdown if graceful, else Kill)
// and boots the next one after an outage.
func (w *T3World) restartHow(graceful bool) {
	s := w.srv
	if s == nil {
		return
	}
	w.restarts++
	how := "crash"
	if graceful {
		how = "graceful"
	}
	w.env.Emit("fault", "server-restart", how, sim.A("incarnation", fmt.Sprint(s.Incarnation)))
	w.srv, w.sizes = nil, s.Sizes()
	if graceful {
		s.Shutdown()
	} else {
		s.Kill()
	}
	for _, u := range w.Users {
		u.Forget()
	}
	w.env.After(w.faults.Duration("restart-outage", 2*time.Second, 30*time.Second), w.boot)
}

func (w *T3World) switchProvider() {
	s := w.srv
	if s == nil {
		return
	}
	t := w.Store.Threads[w.faults.IntN("switch-thread", len(w.Store.Threads))]
	to := provider.Adapters[w.faults.IntN("switch-to", len(provider.Adapters))].Instance
	s.SwitchProvider(t.ID, to)
}
