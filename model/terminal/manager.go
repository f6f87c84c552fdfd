package terminal

import (
	"bytes"
	"maps"
	"path"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

// Config holds the fault rates of the app's backends. The zero Config has
// no faults.
type Config struct {
	// WedgeChance is the probability that a spawn starts but never paints
	// its composer.
	WedgeChance sim.Ratio
	// StartFailChance is the probability that start() rejects
	// (recover answers start-failed).
	StartFailChance sim.Ratio
	// CrashChance is the probability that a live backend exits on its own
	// within 1-50 min.
	CrashChance sim.Ratio
	// AskChance is the probability that a turn step ends in a permission
	// prompt.
	AskChance sim.Ratio
	// DetachedIdleTimeout, when set, runs main's detached-idle reaper
	// (nebula's reap_idle_sessions, default DetachedIdleTimeout): a
	// terminal-view session whose last terminal detached is killed once
	// idle that long.
	DetachedIdleTimeout time.Duration
	// BackgroundChance is the probability that a turn step backgrounds a
	// tool call that runs on for 1-20 min after the turn.
	BackgroundChance sim.Ratio
	// LateExitMax, when set, makes the wrapper of a start that failed or
	// was cancelled emit its process exit 500 ms to LateExitMax after main
	// gave it up (a provider wrapper or tmux session outliving the start's
	// rejection; sessionManager.ts@428aed2d cleanupSessionState: "the old
	// wrapper may still emit a late exit"). Zero: the exit is never seen.
	LateExitMax time.Duration
	// SlowStopChance is the probability that a kill's first stop() of a
	// backend blocks for SlowStopMin-SlowStopMax (a wrapper waiting on its
	// child; sessionManager.recover.test.ts's blocked stop gate), drawn
	// from its own stream. The generation's teardown, and the fence of a
	// start it cancelled, last until it settles (lifecycle.go).
	SlowStopChance sim.Ratio
	// PromptProtocol runs a feed-mode Send through agent-code's prompt
	// delivery (delivery.go): main's reservation, the provider's readiness
	// wait, Claude's composer absorption before a separate Enter and its
	// durable JSONL acceptance, Codex's readiness poll and atomic write.
	// Off, a Send is one step (it lands on a ready composer or is
	// refused), as the scripted stories and older seeds have it.
	PromptProtocol bool
	// AbsorbMax bounds how long a Claude composer takes to show written
	// text (pasteConfirm.ts@428aed2d measured the inline tail at 10-30 ms;
	// 0 means 30 ms): a slow, loaded TUI stretches it toward the 2 s
	// confirmation budget.
	AbsorbMax time.Duration
}

// RecoverRequest is the recoverSession IPC payload.
type RecoverRequest struct {
	Session string
	Kind    Kind
	Cwd     string
	Resume  bool
	// Caller names the renderer call for the trace: a wake id or rehydrate.
	Caller string
	// Domains is builtInMcpDomains: the built-in MCP domains a cold spawn
	// registers with main's MCP host (nil or empty: none).
	Domains []string
	// TmuxName is recoverTmuxName: the tmux session a terminal session
	// reattaches to if it still exists.
	TmuxName string
}

// Snapshot is a backend snapshot as recover returns it.
type Snapshot struct {
	Session   string
	Backend   string
	Kind      Kind
	Cwd       string
	Lifecycle string
	Ready     bool
	Reason    string
	Rev       int
	// Domains is builtInMcpDomains: the launch-time domains main's MCP
	// host holds for the session (nil: none).
	Domains []string
}

// RecoverResult is SessionRecoverResult.
type RecoverResult struct {
	OK          bool
	Disposition string
	Snapshot    Snapshot
	Code        string
	Retryable   bool
	Message     string
	// Actual is an ownership conflict's owner (recoveryConflict's
	// actual): the claim's or live entry's kind and cwd and its lifecycle.
	Actual *Owner
}

// Owner is the kind, cwd and lifecycle of what owns a session id.
type Owner struct {
	Kind      Kind
	Cwd       string
	Lifecycle string
}

// AttachResult is what attachAgentPty returns: the replay buffer (its size
// and the PTY widths it was written at), or nothing when no entry exists
// (pre-#597 an empty string, post-#597 null).
type AttachResult struct {
	OK     bool
	Bytes  int
	Widths string
	// replay is fmtBytes(Bytes), as main traced it ("" when not built).
	replay string
}

type readiness struct {
	ready  bool
	reason string
	rev    int
}

// ownedSize is a PTY size and who set it: "spawn" (the spawn default, the
// size main's headless screen renders at for feed mode) or "pane/<id>".
type ownedSize struct {
	Size
	owner string
}

const ownerSpawn = "spawn"

type claim struct {
	kind      Kind
	cwd       string
	cancelled bool
	backend   *Backend
	waiters   []func(RecoverResult)
	// via is the trace kind of the call that claimed: recover, spawn.cold
	// or spawn.fresh.
	via string
}

// replayBuffer is a session's raw PTY replay buffer, kept as runs of output
// written at one PTY width, capped at ReplayBufferCap (tail kept).
type replayBuffer struct {
	segs  []segment
	total int
	// text[from:] is widths() kept in step with segs: a new run appends its
	// width, a dropped one moves from past its own. Every attach shows the
	// list (up to ~180 bytes at 24 h), so it is not formatted and copied
	// again per attach. text is append-only: bytes once shown are never
	// written again (a full buffer is left to the strings over it and a new
	// one started), as in sim.Strings.
	text []byte
	from int
	// sized is fmtBytes(sizedAt), the last size shown.
	sized   string
	sizedAt int
}

type segment struct{ cols, bytes int }

func (r *replayBuffer) append(cols, n int) {
	if k := len(r.segs); k > 0 && r.segs[k-1].cols == cols {
		r.segs[k-1].bytes += n
	} else {
		r.segs = append(r.segs, segment{cols, n})
		r.addWidth(cols, k > 0)
	}
	r.total += n
	for r.total > ReplayBufferCap {
		over := r.total - ReplayBufferCap
		if r.segs[0].bytes <= over {
			r.total -= r.segs[0].bytes
			r.segs = r.segs[1:]
			r.dropWidth()
			continue
		}
		r.segs[0].bytes -= over
		r.total -= over
	}
}

// addWidth appends a new run's width to text (after a comma unless it is
// the only run).
func (r *replayBuffer) addWidth(cols int, comma bool) {
	var d [24]byte
	w := strconv.AppendInt(d[:0], int64(cols), 10)
	if len(r.text)+len(w)+1 > cap(r.text) {
		live := r.text[r.from:]
		next := make([]byte, len(live), max(2*(len(live)+len(w)+1), 64))
		copy(next, live)
		r.text, r.from = next, 0
	}
	if comma {
		r.text = append(r.text, ',')
	}
	r.text = append(r.text, w...)
}

// dropWidth drops the oldest run's width from text.
func (r *replayBuffer) dropWidth() {
	if i := bytes.IndexByte(r.text[r.from:], ','); i >= 0 {
		r.from += i + 1
		return
	}
	r.from = len(r.text)
}

// size is fmtBytes(total), formatted again only when the total changed
// since the last attach showed it.
func (r *replayBuffer) size(e *model.Env) string {
	if r == nil {
		return fmtBytes(e, 0)
	}
	if r.sized == "" || r.sizedAt != r.total {
		r.sized, r.sizedAt = fmtBytes(e, r.total), r.total
	}
	return r.sized
}

// widths lists the PTY widths of the buffer's runs, oldest first.
func (r *replayBuffer) widths() string {
	if r == nil || len(r.segs) == 0 {
		return "-"
	}
	return unsafe.String(&r.text[r.from], len(r.text)-r.from)
}

// Manager is the main process's SessionManager: the registry of backends,
// in-flight recovery claims, input readiness with its global revision, and
// the agent PTY attach counts, restore sizes, sizes and replay buffers.
type Manager struct {
	reapFree *reapOp // free reaper checks (reaper.go)
	env      *model.Env
	app      *App
	cfg      Config
	claims   map[string]*claim
	gens     map[string]int
	revision int
	// sessions holds each session's registry entry, attach counts,
	// references, sizes, readiness, replay buffer and reaper generation
	// (see mainSession);
	// last is the one found last (an attach, its resize and its detach
	// ask for the same session in a row).
	sessions  map[string]*mainSession
	last      *mainSession
	wedgeNext map[string]bool
	// construct draws the provider-construction time of the unreserved
	// spawn (AtomicSpawnClaim off), from its own stream.
	construct *sim.Rand
	// lifecycle.go: the journal and its gate notes and sampler, the MCP
	// host, the tmux registry, the fresh-spawn counter, the pre-agent
	// hook, the provider construction count and every id main has owned
	// (everKnownSessionIds).
	journal     *Journal
	gateNotes   map[string]*gateNote
	sampling    bool
	mcp         *MCPHost
	tmux        *TmuxRegistry
	spawnSeq    int
	beforeStart func(done func(error))
	creates     int
	known       map[string]bool
	stopRand    *sim.Rand
	// constructFail marks sessions whose next provider construction
	// throws (FailNextConstruction).
	constructFail map[string]bool
	// reserved holds the sessions a prompt delivery has reserved
	// (promptDeliveriesInFlight); deliverySeq numbers deliveries.
	reserved    map[string]bool
	deliverySeq int
	// transcripts numbers fresh Claude transcript ids.
	transcripts int
	// The profile's switches every write and detach asks about, read once.
	holdComposer, holdStarted, detachOwn bool
}

func newManager(app *App) *Manager {
	return &Manager{env: app.env, app: app, cfg: app.cfg, claims: map[string]*claim{},
		gens: map[string]int{}, sessions: map[string]*mainSession{},
		wedgeNext: map[string]bool{}, gateNotes: map[string]*gateNote{}, mcp: NewMCPHost(), known: map[string]bool{},
		reserved: map[string]bool{}, constructFail: map[string]bool{},
		holdComposer: app.Profile().Fixed(HoldInputUntilComposer), holdStarted: app.Profile().Has(HoldUntilStarted),
		detachOwn: app.Profile().Fixed(DetachOwnReference)}
}

// mainSession is main's per-session PTY state, one lookup instead of one
// string-keyed map per field (the attach path read eight of them).
type mainSession struct {
	id string
	// entry is the registry entry (starting or live), or nil.
	entry *Backend
	// count is agentPtyAttachCounts[id] (0: none).
	count int
	// refs is the attach ledger: the client (pane) of each attach
	// reference, oldest first (DetachOwnReference).
	refs []string
	// size is sessionSizes[id] (sized: set); restore is the restore size
	// captured on the first attach (restoring: captured, not yet popped).
	size      ownedSize
	sized     bool
	restore   ownedSize
	restoring bool
	// leafSized: attached in terminal view mode; its AgentTerminalLeaf
	// owns the PTY size (KeepPTYSize).
	leafSized bool
	// ready is the readiness last published (published: there was one).
	ready     readiness
	published bool
	buffer    *replayBuffer
	// reapGen is the generation of the pending reaper check.
	reapGen int
}

// sess returns session's state, creating an empty one (an empty one reads
// as every map did for a missing key).
func (m *Manager) sess(session string) *mainSession {
	if s := m.last; s != nil && sameID(s.id, session) {
		return s
	}
	s := m.sessions[session]
	if s == nil {
		s = &mainSession{id: session}
		m.sessions[session] = s
	}
	m.last = s
	return s
}

func (m *Manager) emit(kind, outcome string, attrs ...sim.Attr) {
	m.env.Emit("main", kind, outcome, attrs...)
}

// Backend returns the registry entry of session (starting or live), or nil.
func (m *Manager) Backend(session string) *Backend { return m.sess(session).entry }

// AttachCount returns agentPtyAttachCounts[session].
func (m *Manager) AttachCount(session string) int { return m.sess(session).count }

// PTYSize returns sessionSizes[session] and who set it.
func (m *Manager) PTYSize(session string) (Size, string) {
	st := m.sess(session)
	if !st.sized {
		return Size{}, ""
	}
	return st.size.Size, st.size.owner
}

// ReplayBuffer describes the replay buffer: its size and the widths of its runs.
func (m *Manager) ReplayBuffer(session string) (int, string) {
	b := m.sess(session).buffer
	if b == nil {
		return 0, "-"
	}
	return b.total, b.widths()
}

// WedgeNextSpawn makes the next spawn of session wedge (scripts).
func (m *Manager) WedgeNextSpawn(session string) { m.wedgeNext[session] = true }

// Snapshot returns the backend snapshot recover would report for session.
func (m *Manager) Snapshot(session string) Snapshot {
	s := Snapshot{Session: session, Lifecycle: Spawning, Reason: "starting"}
	if b := m.sess(session).entry; b != nil {
		s.Backend, s.Kind, s.Cwd = b.ID, b.Kind, b.Cwd
		// A claim in flight reports spawning (sessionManager.recover.test.ts:
		// the snapshot during a gated start); live means a settled entry,
		// which is still not proof of health.
		if m.claims[session] == nil {
			s.Lifecycle = Live
		}
	}
	if st := m.sess(session); st.published {
		s.Ready, s.Reason, s.Rev = st.ready.ready, st.ready.reason, st.ready.rev
	}
	if m.mcp != nil {
		s.Domains = m.mcp.SessionDomains(session)
	}
	return s
}

func validKind(k Kind) bool {
	if k == Shell {
		return true
	}
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// Recover is recover() (IPC recoverSession, MODEL.md C4). reply is called
// once, at once for an adoption or a refusal, or when the spawn settles.
func (m *Manager) Recover(req RecoverRequest, reply func(RecoverResult)) {
	// recover compares and claims path.resolve(cwd): /tmp/project/. is
	// /tmp/project (the model's cwds are absolute, so Clean is resolve).
	req.Cwd = path.Clean(req.Cwd)
	id := req.Session
	attrs := []sim.Attr{sim.A("session", id), sim.A("kind", string(req.Kind)), sim.A("caller", req.Caller)}
	if !validKind(req.Kind) {
		m.emit("recover", CodeStartFailed, append(attrs, sim.A("reason", "unknown-kind"))...)
		reply(RecoverResult{Code: CodeStartFailed, Message: MsgUnsupported})
		return
	}
	if c := m.claims[id]; c != nil {
		if c.kind == req.Kind && c.cwd == req.Cwd {
			c.waiters = append(c.waiters, reply)
			m.emit("recover", Joined, append(attrs, sim.A("backend", c.backend.ID))...)
			m.record("recover.join", id, sim.A("kind", string(req.Kind)), sim.A("lifecycle", Spawning))
			return
		}
		m.emit("recover", CodeOwnershipConflict, append(attrs, sim.A("reason", "claim-mismatch"))...)
		m.record("recover.conflict", id, sim.A("kind", string(req.Kind)), sim.A("code", CodeOwnershipConflict),
			sim.A("lifecycle", Spawning), sim.A("reason", "claim-in-flight"))
		reply(RecoverResult{Code: CodeOwnershipConflict, Message: MsgOwnership, Actual: &Owner{c.kind, c.cwd, Spawning}})
		return
	}
	if b := m.sess(id).entry; b != nil {
		if b.Kind != req.Kind || b.Cwd != req.Cwd {
			m.emit("recover", CodeOwnershipConflict, append(attrs, sim.A("reason", "live-entry-mismatch"))...)
			m.record("recover.conflict", id, sim.A("kind", string(req.Kind)), sim.A("code", CodeOwnershipConflict),
				sim.A("lifecycle", Live), sim.A("reason", "live-entry-mismatch"))
			reply(RecoverResult{Code: CodeOwnershipConflict, Message: MsgOwnership, Actual: &Owner{b.Kind, b.Cwd, m.Snapshot(id).Lifecycle}})
			return
		}
		snap := m.Snapshot(id)
		m.emit("recover", Adopted, append(attrs, sim.A("backend", b.ID), sim.A("ready", b2s(snap.Ready)),
			sim.A("reason", snap.Reason))...)
		m.record("recover.adopted", id, sim.A("kind", string(req.Kind)), sim.A("disposition", Adopted),
			sim.A("lifecycle", snap.Lifecycle), sim.A("ready", b2s(snap.Ready)), sim.A("reason", snap.Reason), sim.A("durationMs", "0"))
		reply(RecoverResult{OK: true, Disposition: Adopted, Snapshot: snap})
		return
	}
	if meta := m.app.Meta(id); meta != nil && meta.MCP && !m.app.Profile().Fixed(AtomicSpawnClaim) {
		// Before the reservation (agent-code PR #353, acorn PR #37): the
		// check above passed, but the claim is published only once provider
		// construction (session-scoped MCP registration) has awaited,
		// so a request arriving in between passes the same check.
		if m.construct == nil {
			m.construct = m.env.Rand("main/construct")
		}
		d := m.construct.Duration("construct", ConstructMin, ConstructMax)
		m.emit("recover", "constructing", append(attrs, sim.A("for", m.env.Str().Duration(d)))...)
		m.env.After(d, func() { m.spawn("recover", req, attrs, reply) })
		return
	}
	m.spawn("recover", req, attrs, reply)
}

// ColdSpawn is the cold-restore path of a renderer that lost its restored
// candidate (AdoptBeforeSpawn off): spawnSession, which neither adopts a
// live backend nor joins a claim. Before #548 rehydrate.ts spawned visible
// leaves under fresh local ids and remapped the workspace, so the old id's
// backend ran on where no pane could reach it; here the fresh backend takes
// the session's registry slot, which leaves the old one just as
// unreachable (its output, exit and readiness are no longer the
// session's).
func (m *Manager) ColdSpawn(req RecoverRequest, reply func(RecoverResult)) {
	attrs := []sim.Attr{sim.A("session", req.Session), sim.A("kind", string(req.Kind)), sim.A("caller", req.Caller)}
	if b := m.sess(req.Session).entry; b != nil {
		attrs = append(attrs, sim.A("replaces", b.ID))
	}
	m.spawn("spawn.cold", req, attrs, reply)
}

// AdoptLiveOrSpawn is the mutant AdoptSettledOnly: adopt a settled live
// backend, otherwise cold-spawn, whatever claim is in flight.
func (m *Manager) AdoptLiveOrSpawn(req RecoverRequest, reply func(RecoverResult)) {
	if b := m.sess(req.Session).entry; b != nil && m.claims[req.Session] == nil {
		m.Recover(req, reply)
		return
	}
	m.ColdSpawn(req, reply)
}

// rendererReloaded handles a renderer that reloaded: its panes are gone
// without running their clean-ups. Upstream's agentPtyAttachCounts keep
// their references (nothing in main resets them on a reload); under
// ReleaseGoneRendererRefs main releases them, with no restore resize, so
// the reloaded renderer's panes count afresh.
func (m *Manager) rendererReloaded() {
	if m.app.Profile().Has(ReloadDropsClaims) {
		for _, id := range slices.Sorted(maps.Keys(m.claims)) {
			c := m.claims[id]
			delete(m.claims, id)
			if m.sess(id).entry == c.backend {
				m.sess(id).entry = nil
			}
			m.emit("claim.drop", "reload", sim.A("session", id), sim.A("backend", c.backend.ID))
		}
	}
	if !m.app.Profile().Fixed(ReleaseGoneRendererRefs) {
		return
	}
	for _, meta := range m.app.metas {
		id := meta.ID
		st := m.sess(id)
		for _, pane := range st.refs {
			c := st.count - 1
			outcome := "decremented"
			if c <= 0 {
				c, outcome = 0, "released"
			}
			st.count = c
			m.emit("pty.detach", outcome, sim.A("session", id), sim.A("pane", pane), sim.A("count", m.env.Itoa(c)),
				sim.A("cause", "renderer-reload"))
		}
		st.refs = nil
		if st.count > 0 {
			// References no pane holds (a leak of a pre-fix detach path).
			m.emit("pty.detach", "reset", sim.A("session", id), sim.A("pane", "-"), sim.A("count", "0"),
				sim.A("cause", "renderer-reload"))
		}
		st.count = 0
		st.restore, st.restoring = ownedSize{}, false
	}
}

// spawn is spawnWithId under recover's claim: it publishes the claim,
// inserts the registry entry before start() resolves and settles later.
// Before the provider is constructed it registers the session's built-in
// MCP domains (failing the start without a host), prepares a terminal
// session's tmux session and awaits the pre-agent hook (lifecycle.go).
func (m *Manager) spawn(kind string, req RecoverRequest, attrs []sim.Attr, reply func(RecoverResult)) {
	id := req.Session
	meta := m.app.Meta(id)
	m.gens[id]++
	resume := req.Resume || meta != nil && meta.Resume
	b := newBackend(m, &Meta{ID: id, Kind: req.Kind, Cwd: req.Cwd, Resume: resume}, m.gens[id])
	b.wedged = b.rand.Chance("wedge", m.cfg.WedgeChance) || m.wedgeNext[id]
	delete(m.wedgeNext, id)
	fails := b.rand.Chance("start-fail", m.cfg.StartFailChance)
	c := &claim{kind: req.Kind, cwd: req.Cwd, backend: b, waiters: []func(RecoverResult){reply}, via: kind}
	m.claims[id] = c
	m.emit(kind, "claimed", append(attrs, sim.A("backend", b.ID))...)
	if kind == "recover" {
		m.record("recover.claim", id, sim.A("kind", string(req.Kind)), sim.A("hasResumeId", b2s(resume)))
		m.record("spawn.begin", id, sim.A("kind", string(req.Kind)))
	}
	m.known[id] = true
	// spawnWithId inserts the registry entry before awaiting start().
	m.sess(id).entry = b
	st := m.sess(id)
	st.size, st.sized = ownedSize{SpawnDefault, ownerSpawn}, true
	create := func() {
		b.created = true
		b.startAt = m.env.Now()
		m.creates++
		m.emit("spawn", "starting", sim.A("session", id), sim.A("backend", b.ID), sim.A("kind", string(b.Kind)),
			sim.A("cols", m.env.Itoa(SpawnDefault.Cols)), sim.A("rows", m.env.Itoa(SpawnDefault.Rows)))
	}
	start := func() {
		m.record("provider.start.begin", id, sim.A("kind", string(b.Kind)))
		m.env.After(b.rand.Duration("start", 300*time.Millisecond, 3*time.Second), func() { m.settle(c, fails) })
		if m.env.AtCommitPoint(CommitSpawnClaimed, sim.A("session", id), sim.A("backend", b.ID)) {
			// The window reloads before the backend is live: the new renderer
			// meets a claim in flight (stablyai/orca#11006's transport drop
			// during a spawn).
			m.env.After(0, m.app.ReloadRenderer)
		}
	}
	if req.Kind == Shell {
		if m.tmux != nil && m.tmux.Available {
			b.tmux, b.tmuxCreated = m.tmux.prepare(req.TmuxName)
		}
	} else if len(req.Domains) > 0 {
		if m.mcp == nil {
			// "Built-in MCP host is not available": thrown before the
			// provider exists, so nothing is created or stopped.
			m.setInputReadiness(b, false, "starting")
			m.env.After(0, func() { m.settle(c, true) })
			return
		}
		m.mcp.register(MCPRegistration{Session: id, Cwd: req.Cwd, Kind: req.Kind, Domains: slices.Clone(req.Domains)})
	}
	// construct is createSession: it may throw (FailNextConstruction), and
	// then the spawn fails before any provider exists.
	construct := func() bool {
		if m.constructFail[id] {
			delete(m.constructFail, id)
			m.creates++
			return false
		}
		create()
		return true
	}
	fail := func() { m.env.After(0, func() { m.settle(c, true) }) }
	if m.beforeStart == nil || req.Kind == Shell {
		ok := construct()
		m.setInputReadiness(b, false, "starting")
		if ok {
			start()
		} else {
			fail()
		}
		return
	}
	m.setInputReadiness(b, false, "starting")
	m.beforeStart(func(err error) {
		if err != nil {
			// Best effort: journalled, never a reason to strand the launch.
			m.record("conventions.pre_spawn_reconcile.error", id, sim.A("error", err.Error()))
		}
		if c.cancelled {
			m.settle(c, false)
			return
		}
		if construct() {
			start()
		} else {
			fail()
		}
	})
}

// CommitSpawnClaimed is the commit point between a spawn's claim (the
// claim published, the registry entry inserted) and its backend going
// live: a renderer reload placed there is the fast mount/cleanup/mount
// that races a spawn.
const CommitSpawnClaimed = "spawn.claimed"

func init() {
	model.DeclareCommitPoint(model.CommitPointInfo{Name: CommitSpawnClaimed, Group: catalog.TerminalSession, Fault: "renderer.reload",
		Doc: "a spawn's claim is published and its registry entry inserted, the backend not yet live: the renderer reloads (its panes gone without clean-up) and the new one recovers every leaf"})
}

// settle resolves a claim when start() settles, once the generation's
// teardown stops (if a kill asked for them) have settled too.
func (m *Manager) settle(c *claim, fails bool) {
	b := c.backend
	m.settleStart(b, func() { m.settled(c, fails) })
}

func (m *Manager) settled(c *claim, fails bool) {
	b := c.backend
	id := b.Session
	if m.claims[id] == c {
		delete(m.claims, id)
	}
	took := sim.A("durationMs", ms(m.env.Now()-b.startAt))
	var res RecoverResult
	switch {
	case c.cancelled || m.sess(id).entry != b:
		if m.sess(id).entry == b {
			m.sess(id).entry = nil
			m.revokeMCP(b)
		}
		b.stop()
		m.emit("start", CodeCancelled, sim.A("session", id), sim.A("backend", b.ID))
		m.rollbackTmux(b)
		m.rejectHeld(b, "cancelled")
		m.armLateExit(b, 143)
		if b.created {
			m.record("provider.start.end", id, sim.A("kind", string(b.Kind)), sim.A("ok", "false"), took)
		}
		if c.via == "recover" {
			m.record("recover.cancelled", id, sim.A("kind", string(b.Kind)), sim.A("code", CodeCancelled), sim.A("lifecycle", Spawning))
		}
		res = RecoverResult{Code: CodeCancelled, Retryable: true, Message: MsgCancelled}
	case fails:
		// The rollback stops the wrapper it constructed, cleans up (revoking
		// MCP) and destroys only a tmux session this spawn created.
		m.requestStop(b)
		m.sess(id).entry = nil
		m.revokeMCP(b)
		b.stop()
		m.emit("start", CodeStartFailed, sim.A("session", id), sim.A("backend", b.ID))
		m.rollbackTmux(b)
		m.rejectHeld(b, "start-failed")
		m.armLateExit(b, 1)
		if b.created {
			m.record("provider.start.end", id, sim.A("kind", string(b.Kind)), sim.A("ok", "false"), took)
		}
		if c.via == "recover" {
			m.record("recover.failed", id, sim.A("kind", string(b.Kind)), sim.A("code", CodeStartFailed), sim.A("lifecycle", Spawning))
		}
		res = RecoverResult{Code: CodeStartFailed, Retryable: true, Message: MsgStartFailed}
	default:
		m.record("provider.start.end", id, sim.A("kind", string(b.Kind)), sim.A("ok", "true"), took)
		m.emit("start", Live, sim.A("session", id), sim.A("backend", b.ID))
		b.started()
		m.armSpawnDeadline(b)
		res = RecoverResult{OK: true, Disposition: Spawned, Snapshot: m.Snapshot(id)}
		if c.via == "recover" {
			m.record("recover.spawned", id, sim.A("kind", string(b.Kind)), sim.A("disposition", Spawned),
				sim.A("lifecycle", res.Snapshot.Lifecycle), sim.A("ready", b2s(res.Snapshot.Ready)),
				sim.A("reason", res.Snapshot.Reason), took)
		}
	}
	for _, w := range c.waiters {
		w(res)
	}
}

// armLateExit schedules the late exit of a start main gave up on (failed
// or cancelled), when the world has late exits (Config.LateExitMax).
func (m *Manager) armLateExit(b *Backend, code int) {
	if m.cfg.LateExitMax <= 0 {
		return
	}
	m.env.After(b.rand.Duration("late-exit", 500*time.Millisecond, m.cfg.LateExitMax), func() { m.lateExit(b, code) })
}

// lateExit is the exit listener of a superseded backend's wrapper firing
// after main gave the backend up. With ExitOwnedByGeneration it checks
// ownsEntry() and changes nothing; without, it is the id-only listener of
// sessionManager.ts@99f52138^: input readiness false, removed, exit
// {sessionId, exitCode} to the renderer (no backend id) and
// cleanupSessionState(sessionId), which deletes whatever entry the id
// holds. The trace's entry= names the entry the exit found ("-" none).
func (m *Manager) lateExit(b *Backend, code int) {
	id := b.Session
	cur := m.sess(id).entry
	entry := "-"
	if cur != nil {
		entry = cur.ID
	}
	attrs := []sim.Attr{sim.A("session", id), sim.A("backend", b.ID), sim.A("entry", entry), sim.A("code", strconv.Itoa(code))}
	p := m.app.Profile()
	guarded := p.Fixed(ExitOwnedByGeneration)
	if guarded && p.Has(LateExitIgnoredWhileStarting) {
		guarded = m.claims[id] != nil
	}
	if cur != b && guarded {
		m.emit("exit.late", "ignored", attrs...)
		return
	}
	if cur == nil {
		m.emit("exit.late", "no-entry", attrs...)
		r := m.app.Renderer
		m.app.toRenderer(func() { r.onExit(id, "", code, "late-exit") })
		return
	}
	m.emit("exit.late", "applied", attrs...)
	m.setInputReadiness(cur, false, "provider-not-ready")
	m.sess(id).entry = nil
	m.rejectHeld(cur, "exited")
	r := m.app.Renderer
	m.app.toRenderer(func() { r.onExit(id, "", code, "late-exit") })
}

// rollbackTmux destroys the tmux session b's spawn created; a recovered
// one is durable user state and survives.
func (m *Manager) rollbackTmux(b *Backend) {
	if b.tmuxCreated && m.tmux != nil {
		b.tmuxCreated = false
		m.tmux.kill(b.tmux)
	}
}

// armSpawnDeadline is SpawnOwnsDeadline: the readiness deadline belongs to
// the spawned generation, whoever adopts it later.
func (m *Manager) armSpawnDeadline(b *Backend) {
	if !m.app.Profile().Fixed(SpawnOwnsDeadline) {
		return
	}
	m.env.After(SpawnDeadline, func() {
		if m.sess(b.Session).entry != b || !b.Live() || b.Interactive() {
			return
		}
		if m.app.Profile().Has(NeverKillOnTimeout) {
			return
		}
		m.emit("spawn.deadline", "wedged", sim.A("session", b.Session), sim.A("backend", b.ID),
			sim.A("live-since", sim.FormatT(b.liveAt)))
		m.kill(b.Session, "spawn-deadline", "")
	})
}

// KillOwned is killOwned({sessionId, kind, cwd}): atomically, the live
// entry's kind+cwd or an in-flight claim's must match; then kill. wake names
// the renderer wake that asked, for the trace.
func (m *Manager) KillOwned(session string, kind Kind, cwd, cause, wake string) bool {
	cwd = path.Clean(cwd)
	if b := m.sess(session).entry; b != nil && b.Kind == kind && b.Cwd == cwd {
		m.kill(session, cause, wake)
		return true
	}
	if c := m.claims[session]; c != nil && c.kind == kind && c.cwd == cwd {
		m.kill(session, cause, wake)
		return true
	}
	attrs := []sim.Attr{sim.A("session", session), sim.A("cause", cause)}
	if wake != "" {
		attrs = append(attrs, sim.A("wake", wake))
	}
	m.emit("kill", "not-owned", attrs...)
	return false
}

// kill cancels the claim, severs the registry entry and stops the provider.
func (m *Manager) kill(session, cause, wake string) {
	var b *Backend
	if c := m.claims[session]; c != nil {
		c.cancelled = true
		b = c.backend
	}
	e := m.sess(session).entry
	cause0 := "no-owner"
	switch {
	case e != nil:
		cause0 = "live-entry"
	case b != nil:
		cause0 = "recovery-claim"
	}
	m.record("kill.request", session, sim.A("cause", cause0))
	if e != nil {
		b = e
		m.sess(session).entry = nil
		m.revokeMCP(e)
	}
	if b == nil {
		return
	}
	m.requestStop(b)
	attrs := []sim.Attr{sim.A("session", session), sim.A("backend", b.ID), sim.A("cause", cause)}
	if wake != "" {
		attrs = append(attrs, sim.A("wake", wake))
	}
	m.emit("kill", "killed", attrs...)
	wasLive := b.state == live
	b.stop()
	b.killJobs()
	m.rejectHeld(b, "killed")
	if wasLive {
		m.notifyExit(b, 143, cause)
	}
}

// exited handles a backend process exiting on its own.
func (m *Manager) exited(b *Backend, code int, cause string) {
	if m.sess(b.Session).entry == b {
		m.sess(b.Session).entry = nil
		m.revokeMCP(b)
	}
	b.stop()
	b.killJobs()
	m.emit("exit", m.env.Itoa(code), sim.A("session", b.Session), sim.A("backend", b.ID), sim.A("cause", cause))
	m.rejectHeld(b, "exited")
	m.notifyExit(b, code, cause)
}

func (m *Manager) notifyExit(b *Backend, code int, cause string) {
	r := m.app.Renderer
	id, backend := b.Session, b.ID
	m.app.toRenderer(func() { r.onExit(id, backend, code, cause) })
}

// setInputReadiness drops an update equal to the last (ready, reason);
// otherwise it stamps the next global revision, stores it and emits
// input-readiness to the renderer.
func (m *Manager) setInputReadiness(b *Backend, ready bool, reason string) {
	id := b.Session
	if m.sess(id).entry != b {
		return
	}
	st := m.sess(id)
	if last := st.ready; st.published && last.ready == ready && last.reason == reason {
		return
	}
	m.revision++
	rev := m.revision
	st.ready, st.published = readiness{ready, reason, rev}, true
	revs := m.env.Itoa(rev)
	m.emit("input-readiness", "", sim.A("session", id), sim.A("backend", b.ID), sim.A("ready", b2s(ready)),
		sim.A("reason", reason), sim.A("rev", revs))
	m.record("readiness.publish", id, sim.A("ready", b2s(ready)), sim.A("reason", reason), sim.A("revision", revs))
	m.app.toRendererMsg(hopReadiness, id, ready, rev)
}

// Attach is attachAgentPty: with a registry entry it takes a reference,
// capturing the restore size on 0->1, and returns the replay buffer.
// terminalView tells main the session is shown in terminal view mode, so
// its leaf owns the PTY size; only KeepPTYSize reads it.
func (m *Manager) Attach(session, pane string, terminalView bool) AttachResult {
	st := m.sess(session)
	if m.sess(session).entry == nil {
		m.emit("pty.attach", "no-entry", sim.A("session", session), sim.A("pane", pane),
			sim.A("count", m.env.Itoa(st.count)))
		return AttachResult{}
	}
	st.count++
	st.refs = append(st.refs, pane)
	if terminalView {
		st.leafSized = true
	}
	n := st.count
	if n == 1 {
		st.restore, st.restoring = st.size, true
	}
	buf := st.buffer
	bytes, widths := 0, "-"
	if buf != nil {
		bytes, widths = buf.total, buf.widths()
	}
	replay := buf.size(m.env)
	m.emit("pty.attach", "attached", sim.A("session", session), sim.A("pane", pane), sim.A("count", m.env.Itoa(n)),
		sim.A("replay", replay), sim.A("widths", widths))
	return AttachResult{OK: true, Bytes: bytes, Widths: widths, replay: replay}
}

// Detach is detachAgentPty: count > 1 decrements; otherwise the count is
// deleted and the restore size, if any, is popped and applied. pane names
// the detaching client: upstream's detach carries none, and only
// DetachOwnReference reads it, releasing only a reference pane holds.
func (m *Manager) Detach(session, pane string) {
	held := m.releaseRef(session, pane)
	st := m.sess(session)
	if !held && m.detachOwn {
		if !m.app.Profile().Has(DetachReleasesOldest) || len(st.refs) == 0 {
			m.emit("pty.detach", "ignored", sim.A("session", session), sim.A("pane", pane),
				sim.A("count", m.env.Itoa(st.count)), sim.A("why", "no-reference"))
			return
		}
		st.refs = st.refs[1:]
	}
	c := st.count
	if c > 1 {
		st.count = c - 1
		m.emit("pty.detach", "decremented", sim.A("session", session), sim.A("pane", pane), sim.A("count", m.env.Itoa(c-1)))
		return
	}
	st.count = 0
	outcome := "released"
	if c == 0 {
		outcome = "unmatched"
	}
	m.emit("pty.detach", outcome, sim.A("session", session), sim.A("pane", pane), sim.A("count", "0"))
	if outcome == "released" {
		m.armReaper(session, m.cfg.DetachedIdleTimeout)
	}
	restore, ok := st.restore, st.restoring
	st.restore, st.restoring = ownedSize{}, false
	if !ok {
		return
	}
	cur := st.size
	if restore.Size == cur.Size {
		return
	}
	if m.app.Profile().Fixed(KeepPTYSize) && st.leafSized {
		// The terminal leaf owns the size; the next leaf sets its own.
		m.emit("pty.restore", "kept", sim.A("session", session), sim.A("pane", pane),
			sim.A("restore", sizeStr(m.env, restore.Size)), sim.A("restore-owner", restore.owner),
			sim.A("size", sizeStr(m.env, cur.Size)), sim.A("size-owner", cur.owner))
		return
	}
	st.size, st.sized = restore, true
	if b := m.sess(session).entry; b != nil {
		m.resizePTY(b, restore.Size, "restore", pane)
	}
}

// releaseRef removes pane's oldest attach reference to session from the
// ledger and reports whether it held one.
func (m *Manager) releaseRef(session, pane string) bool {
	st := m.sess(session)
	refs := st.refs
	for i, r := range refs {
		if sameID(r, pane) {
			st.refs = append(refs[:i], refs[i+1:]...) // in place: nothing else holds refs
			return true
		}
	}
	return false
}

// Resize is resize(id, cols, rows) from a pane.
func (m *Manager) Resize(session, pane string, s Size) {
	st := m.sess(session)
	prev := st.size
	st.size, st.sized = ownedSize{s, m.env.Str().Concat("pane/", pane)}, true
	b := m.sess(session).entry
	if b == nil {
		m.emit("pty.resize", "no-entry", sim.A("session", session), sim.A("pane", pane),
			sim.A("cols", m.env.Itoa(s.Cols)), sim.A("rows", m.env.Itoa(s.Rows)), sim.A("cause", "pane"))
		return
	}
	if prev.Size == s {
		return
	}
	m.resizePTY(b, s, "pane", pane)
}

// resizePTY resizes the provider PTY; a painted TUI redraws its screen at
// the new width into the replay buffer.
func (m *Manager) resizePTY(b *Backend, s Size, cause, pane string) {
	redraw := 0
	if b.Live() && b.composer {
		redraw = s.Cols * s.Rows
	}
	m.emit("pty.resize", "resized", sim.A("session", b.Session), sim.A("pane", pane), sim.A("cols", m.env.Itoa(s.Cols)),
		sim.A("rows", m.env.Itoa(s.Rows)), sim.A("cause", cause))
	if redraw > 0 {
		m.appendOutput(b, redraw)
	}
}

// Write writes input chunks from a pane to the PTY. Under
// HoldInputUntilComposer a backend that has not painted its composer
// (starting, or live and still booting) holds them until it does.
func (m *Manager) Write(session, pane string, chunks []Chunk) {
	if len(chunks) == 0 {
		return
	}
	seq := seqRange(m.env, chunks)
	b := m.sess(session).entry
	if m.reserved[session] {
		// The delivery owns the composer: a raw write could splice into
		// its paste or consume its Enter (sessionManager.ts@428aed2d
		// write(): dropped, and the IPC layer reports why).
		m.emit("pty.write", "refused", sim.A("session", session), sim.A("pane", pane), sim.A("seq", seq), sim.A("why", CodeInFlight))
		return
	}
	if b != nil && b.state != stopped && m.holdsInput(b) {
		b.held = append(b.held, heldWrite{pane: pane, chunks: chunks, at: m.env.Now()})
		m.emit("pty.write", "held", sim.A("session", session), sim.A("pane", pane), sim.A("seq", seq), sim.A("backend", b.ID),
			sim.A("why", map[bool]string{true: "composer-unpainted", false: "starting"}[b.state == live]))
		return
	}
	if b == nil || !b.Live() {
		m.emit("pty.write", "no-entry", sim.A("session", session), sim.A("pane", pane), sim.A("seq", seq))
		return
	}
	m.deliver(b, pane, chunks, "")
}

// holdsInput reports whether a write to b waits: under the fix until its
// composer paints, under HoldUntilStarted only until start() resolves.
func (m *Manager) holdsInput(b *Backend) bool {
	switch {
	case !m.holdComposer:
		return false
	case m.holdStarted:
		return b.state == starting
	}
	return !b.composer || len(b.held) > 0
}

func (m *Manager) deliver(b *Backend, pane string, chunks []Chunk, heldSince string) {
	b.touch()
	b.input(chunks)
	attrs := []sim.Attr{sim.A("session", b.Session), sim.A("pane", pane), sim.A("seq", seqRange(m.env, chunks)), sim.A("backend", b.ID),
		sim.A("draft", m.env.Itoa(b.draft)), sim.A("prompt", b2s(b.prompt))}
	if heldSince != "" {
		attrs = append(attrs, sim.A("held-since", heldSince))
	}
	m.emit("pty.write", "delivered", attrs...)
}

// flushHeld delivers b's held writes in order (its composer has painted,
// or under HoldUntilStarted its process has started).
func (m *Manager) flushHeld(b *Backend) {
	held := b.held
	b.held = nil
	for _, h := range held {
		m.deliver(b, h.pane, h.chunks, m.env.Str().T(h.at))
	}
}

// rejectHeld rejects b's held writes when it stops before delivering them:
// the pane's input visibly fails instead of vanishing.
func (m *Manager) rejectHeld(b *Backend, why string) {
	held := b.held
	b.held = nil
	for _, h := range held {
		m.emit("pty.write", "rejected", sim.A("session", b.Session), sim.A("pane", h.pane), sim.A("seq", seqRange(m.env, h.chunks)),
			sim.A("backend", b.ID), sim.A("why", why), sim.A("held-since", m.env.Str().T(h.at)))
	}
}

// DeliverPrompt is deliverPromptToAgent for a feed-mode Send.
func (m *Manager) DeliverPrompt(session string) bool {
	b := m.sess(session).entry
	if b == nil {
		why := "never-owned"
		if m.known[session] {
			why = "entry-lost-after-owned"
		}
		m.record("delivery.reject", session, sim.A("code", "not-ready"), sim.A("stage", "before-write"),
			sim.A("registryHit", "false"), sim.A("reason", why))
	}
	if b == nil || !b.Live() {
		m.emit("send", "not-ready", sim.A("session", session), sim.A("stage", "before-write"), sim.A("reason", "no-entry"))
		return false
	}
	if !b.deliverPrompt() {
		_, reason := b.gate()
		m.emit("send", "not-ready", sim.A("session", session), sim.A("backend", b.ID), sim.A("reason", reason))
		return false
	}
	m.emit("send", "delivered", sim.A("session", session), sim.A("backend", b.ID))
	return true
}

// Answer answers the prompt on screen from the feed's prompt card.
func (m *Manager) Answer(session string) bool {
	b := m.sess(session).entry
	return b != nil && b.answer()
}

// output appends turn output and forwards it while a pane holds a reference.
func (m *Manager) output(b *Backend, n int) {
	if m.sess(b.Session).entry != b {
		return
	}
	size := m.sess(b.Session).size.Size
	b.emit("output", "", sim.A("bytes", fmtBytes(m.env, n)), sim.A("cols", m.env.Itoa(size.Cols)))
	m.appendOutput(b, n)
}

func (m *Manager) appendOutput(b *Backend, n int) {
	id := b.Session
	st := m.sess(id)
	buf := st.buffer
	if buf == nil {
		buf = &replayBuffer{}
		st.buffer = buf
	}
	buf.append(st.size.Cols, n)
	if st.count > 0 {
		m.app.toRendererMsg(hopPTYData, id, false, (n+4095)/4096)
	}
}

func seqRange(e *model.Env, chunks []Chunk) string {
	return e.Str().Range(chunks[0].Seq, chunks[len(chunks)-1].Seq)
}
