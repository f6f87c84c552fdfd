package browser

import (
	"fmt"
	"strings"
	"time"

	"orchsim/model"
	"orchsim/sim"
)

// Constants from ServerBrowser.ts (164d7dbe) and the #23021 report.
const (
	// AgentTabLimit is AGENT_TAB_LIMIT: tabs per agent-session (owner) key.
	AgentTabLimit = 8
	// ServerTabLimit is SERVER_TAB_LIMIT: tabs per server.
	ServerTabLimit = 32
	// AgentTabIdle is AGENT_TAB_IDLE_MS: an unwatched agent tab closes after
	// this long without an agent request.
	AgentTabIdle = 30 * time.Minute
	// IdleSweepInterval is IDLE_SWEEP_INTERVAL: the sweep period.
	IdleSweepInterval = time.Minute
	// DesktopAttachTimeout is DESKTOP_ATTACH_TIMEOUT: how long a new tab
	// waits for the desktop app's webview before going headless.
	DesktopAttachTimeout = 10 * time.Second
)

// Mutants of the preview host: deliberately wrong "fixes" the invariants
// must catch.
const (
	// HumanControlIgnored lets agent work run while a human controls the tab.
	HumanControlIgnored model.Mutant = "human-control-ignored"
	// SweepIgnoresViewers lets the idle sweep close watched and
	// desktop-rendered tabs.
	SweepIgnoresViewers model.Mutant = "sweep-ignores-viewers"
)

func init() {
	model.RegisterMutant(model.MutantInfo{Name: HumanControlIgnored,
		Doc: "agent work runs on a tab while a human viewer controls it"})
	model.RegisterMutant(model.MutantInfo{Name: SweepIgnoresViewers,
		Doc: "the idle sweep also closes watched and desktop-rendered agent tabs"})
}

// RegainTab is the liveness obligation a thread opens when it is refused on
// its own agent tab: it must be able to act on that tab again (or the tab
// closes) before the heal phase ends.
const RegainTab = "thread-regains-its-tabs"

// TabEntity names a tab in the obligation ledger.
func TabEntity(threadID, tabID string) string { return "thread " + threadID + " tab " + tabID }

// Preview operations the tools send.
const (
	OpOpen     = "open"
	OpNavigate = "navigate"
	OpClick    = "click"
	OpSnapshot = "snapshot"
	OpClose    = "close"
)

// IsRead reports whether op only reads (status, snapshot, waitFor, ping).
func IsRead(op string) bool { return op == OpSnapshot }

// Tab is one ServerTab.
type Tab struct {
	ThreadID  string
	TabID     string
	Control   *Control
	CreatedAt time.Duration
	UsedAt    time.Duration
	Viewers   []string
	Desktop   bool // the desktop app renders the page (exempt from the sweep)
	URL       string
}

// Watched reports whether a viewer streams the tab.
func (t *Tab) Watched() bool { return len(t.Viewers) > 0 }

// Request is what the broker sends the host.
type Request struct {
	ThreadID       string // from the caller's credential, never from arguments
	TabID          string // explicit tab id, or ""
	AgentSessionID string // the owner key
	Op             string
	URL            string
	// ReuseExistingTab is open's reuseExistingTab (default true).
	ReuseExistingTab bool
}

// Result is the host's answer.
type Result struct {
	Outcome string // OK or a reason
	TabID   string
	// TabThread is the thread of the tab the request resolved to, if any.
	TabThread string
	// Owner is the owner key of that tab.
	Owner string
}

// ServerBrowser is the in-process browser host (preferred host).
type ServerBrowser struct {
	env     *model.Env
	rand    *sim.Rand
	epoch   string
	tabs    []*Tab
	nextTab int
	sweep   sim.Timer
	dead    bool
	// DesktopFor says whether the desktop app will render a new tab of
	// thread, and after how long it attaches (<= DesktopAttachTimeout).
	DesktopFor func(threadID string) (bool, time.Duration)
}

const actor = "server-browser"

// NewServerBrowser starts the host of server process incarnation with a
// fresh serverEpoch and its idle sweep. The epoch is random upstream (a
// UUID); here it also carries the incarnation, so tab ids of different
// processes never collide even when draws repeat.
func NewServerBrowser(env *model.Env, incarnation int) *ServerBrowser {
	b := &ServerBrowser{env: env, rand: env.Rand(actor)}
	b.epoch = fmt.Sprintf("%d%s", incarnation, b.rand.Hex("server-epoch", 3))
	b.sweep = env.Clock.AfterFunc(IdleSweepInterval, b.onSweep)
	return b
}

// Kill stops a host whose server process died; its tabs die with it.
func (b *ServerBrowser) Kill() {
	b.dead = true
	b.sweep.Stop()
	for _, t := range b.tabs {
		t.Control.Close()
		b.env.Obligations.Discharge(RegainTab, TabEntity(t.ThreadID, t.TabID))
	}
	b.tabs = nil
}

// Tabs returns the open tabs in creation order.
func (b *ServerBrowser) Tabs() []*Tab { return b.tabs }

// Tab returns the tab (threadID, tabID), or nil.
func (b *ServerBrowser) Tab(threadID, tabID string) *Tab {
	for _, t := range b.tabs {
		if t.ThreadID == threadID && t.TabID == tabID {
			return t
		}
	}
	return nil
}

func (b *ServerBrowser) tabByID(tabID string) *Tab {
	for _, t := range b.tabs {
		if t.TabID == tabID {
			return t
		}
	}
	return nil
}

func (b *ServerBrowser) onSweep() {
	if b.dead {
		return
	}
	b.sweepIdle()
	b.sweep.Reset(IdleSweepInterval)
}

// sweepIdle drops agent tabs that nobody watches, the desktop does not
// render, and no agent request used for AgentTabIdle.
func (b *ServerBrowser) sweepIdle() {
	now := b.env.Now()
	for i := 0; i < len(b.tabs); {
		t := b.tabs[i]
		exempt := (t.Watched() || t.Desktop) && !b.env.Profile.Has(SweepIgnoresViewers)
		if t.Control.AgentID != "" && !exempt && now-t.UsedAt > AgentTabIdle {
			b.removeAt(i)
			b.env.Emit(actor, "tab.swept", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID),
				sim.A("idle", (now-t.UsedAt).Round(time.Second).String()))
			continue
		}
		i++
	}
}

func (b *ServerBrowser) removeAt(i int) {
	t := b.tabs[i]
	b.tabs = append(b.tabs[:i], b.tabs[i+1:]...)
	t.Control.Close()
	b.env.Obligations.Discharge(RegainTab, TabEntity(t.ThreadID, t.TabID))
}

func (b *ServerBrowser) remove(t *Tab) {
	for i, x := range b.tabs {
		if x == t {
			b.removeAt(i)
			return
		}
	}
}

func (b *ServerBrowser) owned(threadID, key string) []*Tab {
	var out []*Tab
	for _, t := range b.tabs {
		if t.ThreadID == threadID && t.Control.AgentID == key {
			out = append(out, t)
		}
	}
	return out
}

func (b *ServerBrowser) markUsed(threadID, key string) {
	now := b.env.Now()
	for _, t := range b.tabs {
		if t.ThreadID == threadID && t.Control.AgentID == key {
			t.UsedAt = now
		}
	}
}

// Handle serves one broker request and calls reply with the outcome when it
// is decided: when the action starts, or at once for a refusal. Outcome
// events are the caller's to trace.
func (b *ServerBrowser) Handle(req Request, reply func(Result)) {
	ignore := b.env.Profile.Has(model.IgnoreTabOwner)
	finish := func(r Result) {
		b.markUsed(req.ThreadID, req.AgentSessionID)
		reply(r)
	}
	if b.dead {
		reply(Result{Outcome: ReasonInterrupted})
		return
	}
	if req.AgentSessionID == "" {
		finish(Result{Outcome: ReasonInterrupted})
		return
	}
	if req.Op == OpOpen {
		b.open(req, finish)
		return
	}
	tab, refusal := b.requireTab(req, ignore)
	if tab == nil {
		finish(Result{Outcome: refusal})
		return
	}
	res := Result{TabID: tab.TabID, TabThread: tab.ThreadID, Owner: tab.Control.AgentID}
	if refusal != "" {
		res.Outcome = refusal
		finish(res)
		return
	}
	run := func() (string, time.Duration) {
		switch req.Op {
		case OpNavigate:
			tab.URL = req.URL
		case OpClose:
			b.remove(tab)
			return OK, 0
		}
		return OK, b.rand.Duration("action-time", 5*time.Millisecond, 1500*time.Millisecond)
	}
	if IsRead(req.Op) {
		res.Outcome, _ = run()
		finish(res)
		return
	}
	tab.Control.IgnoreHuman = b.env.Profile.Has(HumanControlIgnored)
	tab.Control.Agent(req.AgentSessionID, ignore, run, func(outcome string) {
		res.Outcome = outcome
		finish(res)
	})
}

// requireTab resolves the tab a request targets. It returns the tab and a
// refusal to report against it (agentMismatch), or nil and the refusal.
func (b *ServerBrowser) requireTab(req Request, ignoreOwner bool) (*Tab, string) {
	var tab *Tab
	if req.TabID != "" {
		if ignoreOwner {
			tab = b.tabByID(req.TabID)
		} else {
			tab = b.Tab(req.ThreadID, req.TabID)
		}
	} else {
		owned := b.owned(req.ThreadID, req.AgentSessionID)
		if len(owned) > 1 {
			return nil, ReasonTabRequired
		}
		if len(owned) == 1 {
			tab = owned[0]
		}
	}
	if tab == nil {
		return nil, TabNotFound
	}
	if !ignoreOwner && !tab.Control.MayAct(req.AgentSessionID) {
		return tab, ReasonAgentMismatch
	}
	return tab, ""
}

func (b *ServerBrowser) open(req Request, finish func(Result)) {
	if req.ReuseExistingTab {
		owned := b.owned(req.ThreadID, req.AgentSessionID)
		if len(owned) > 1 && req.TabID == "" {
			finish(Result{Outcome: ReasonTabRequired})
			return
		}
		if len(owned) == 1 {
			t := owned[0]
			t.URL = req.URL
			finish(Result{Outcome: OK, TabID: t.TabID, TabThread: t.ThreadID, Owner: t.Control.AgentID})
			return
		}
	}
	b.sweepIdle()
	if len(b.owned(req.ThreadID, req.AgentSessionID)) >= AgentTabLimit || len(b.tabs) >= ServerTabLimit {
		finish(Result{Outcome: ReasonTabLimit})
		return
	}
	b.nextTab++
	now := b.env.Now()
	t := &Tab{ThreadID: req.ThreadID, TabID: fmt.Sprintf("tab_%d_%s", b.nextTab, b.epoch), CreatedAt: now, UsedAt: now, URL: req.URL}
	t.Control = NewControl(req.AgentSessionID, b.env.After)
	b.tabs = append(b.tabs, t)
	if b.DesktopFor != nil {
		if ok, after := b.DesktopFor(req.ThreadID); ok {
			b.env.After(after, func() {
				if b.dead || t.Control.Closed {
					return
				}
				t.Desktop = true
				b.env.Emit("desktop", "tab.render", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
			})
		}
	}
	finish(Result{Outcome: OK, TabID: t.TabID, TabThread: t.ThreadID, Owner: t.Control.AgentID})
}

// Watch attaches a streamed viewer to a tab; Unwatch detaches it (and a
// disconnecting viewer releases control).
func (b *ServerBrowser) Watch(t *Tab, viewer string) {
	for _, v := range t.Viewers {
		if v == viewer {
			return
		}
	}
	t.Viewers = append(t.Viewers, viewer)
	b.env.Emit(viewer, "viewer.attach", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
}

// Unwatch detaches viewer from t, releasing control if it held it.
func (b *ServerBrowser) Unwatch(t *Tab, viewer string) {
	for i, v := range t.Viewers {
		if v == viewer {
			t.Viewers = append(t.Viewers[:i], t.Viewers[i+1:]...)
			if t.Control.Release(viewer) {
				b.env.Emit(viewer, "control.release", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
			}
			b.env.Emit(viewer, "viewer.detach", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
			return
		}
	}
}

// TakeControl lets viewer take over t; it traces the outcome.
func (b *ServerBrowser) TakeControl(t *Tab, viewer string) bool {
	ok := t.Control.Take(viewer)
	out := "ok"
	if !ok {
		out = "refused"
	}
	b.env.Emit(viewer, "control.take", out, sim.A("thread", t.ThreadID), sim.A("tab", t.TabID), sim.A("epoch", fmt.Sprint(t.Control.Epoch)))
	return ok
}

// ReleaseControl returns control of t from viewer.
func (b *ServerBrowser) ReleaseControl(t *Tab, viewer string) bool {
	ok := t.Control.Release(viewer)
	if ok {
		b.env.Emit(viewer, "control.release", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
	}
	return ok
}

// OwnerKey is the broker's hostAssignmentKey, sent to the host as
// agentSessionId and stored as the tab owner: environmentId NUL credential
// providerSessionId NUL threadId as reported (#23021), environmentId NUL
// threadId with the stable-tab-owner fix.
func OwnerKey(p model.Profile, environmentID, credentialID, threadID string) string {
	if p.Fixed(model.StableTabOwner) {
		return environmentID + "\x00" + threadID
	}
	return environmentID + "\x00" + credentialID + "\x00" + threadID
}

// ShowKey renders an owner key for traces, NUL shown as '/'.
func ShowKey(k string) string { return strings.ReplaceAll(k, "\x00", "/") }
