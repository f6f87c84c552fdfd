// Package provider models T3 Code's ProviderSessionManager (V2): open and
// attach with prepareMcpSession's credential reuse rule, busy/idle
// accounting, the 30 min idle release guarded by the idle generation, the
// pin for pending background work (up to 4 h), and releaseEntry with its
// credential clean-up rules (held elsewhere; id-scoped revoke).
//
// It imports mcp because prepareMcpSession and clearMcpSession are the
// manager's own code upstream; everything else reaches it through server.
package provider

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/mcp"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// Constants from ProviderSessionManager.ts (00df9e65).
const (
	// DefaultIdleTimeout is DEFAULT_IDLE_TIMEOUT_MS: 30 min without activity
	// before an idle session is released.
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultMaxIdlePin is DEFAULT_MAX_IDLE_PIN_MS: 4 h cap on deferring the
	// idle release for pending background work.
	DefaultMaxIdlePin = 4 * time.Hour
	// ReleaseScopeCloseTimeout is RELEASE_SCOPE_CLOSE_TIMEOUT_MS: 30 s bound
	// on closing a released session's scope; credential clean-up follows it.
	ReleaseScopeCloseTimeout = 30 * time.Second
)

// Release reasons (releaseEntry).
const (
	ReasonIdleTimeout    = "idle_timeout"
	ReasonRuntimeError   = "runtime_error"
	ReasonManualShutdown = "manual_shutdown"
	ReasonServerShutdown = "server_shutdown"
	// ReasonRuntimeRestart releases the old runtime of a session restarted
	// in place (RestartInPlace); the entry lives on.
	ReasonRuntimeRestart = "runtime_restart"
)

// ReuseIgnoresCapabilities is a mutant of prepareMcpSession: a credential
// in the slot is reused even when the capability set it was issued with no
// longer matches the settings (browser access turned off keeps preview).
const ReuseIgnoresCapabilities model.Mutant = "reuse-ignores-capabilities"

// BackgroundWorkPinsSession is the idle pin (hasPendingBackgroundWork,
// DEFAULT_MAX_IDLE_PIN_MS; PR #10689 for t3code#10600, the family of
// t3code#4198): before an idle release the manager asks the runtime for
// pending background work and defers the release while there is some, up
// to 4 h. Off is the reaper #4198 reports: idle time is all it looks at, so
// a session whose foreground turn ended is reaped while a background
// subagent or workflow still runs in it, and that work dies silently.
const BackgroundWorkPinsSession model.Switch = "background-work-pins-session"

// BackgroundClearedByNextTurn is a wrong fix: the pin holds, but a later
// turn that reports no background work clears the earlier turn's, so a
// task still running from before is reaped after all.
const BackgroundClearedByNextTurn model.Mutant = "background-cleared-by-next-turn"

// RevokeBySessionGeneration is the fix of swarajbachu/zuse#463 (PR #463,
// "Fix MCP session replacement auth race": "Cleanup now verifies token
// ownership before revocation"), as it applies to T3 Code's in-place
// restart (RestartInPlace): the old runtime's credential clean-up revokes
// only the credentials its own generation recorded, the pair (session,
// generation). Off is the reported clean-up, which looks the session's
// credentials up by its ProviderSessionId alone when the old runtime
// finishes closing: by then the session records the replacement's fresh
// credential, so the old handle revokes it and clears its slot, and every
// later MCP call of the new process is 401. T3 Code's releaseEntry is
// immune (a released entry records nothing new, and a replacement entry
// is "held elsewhere"); the in-place restart keeps one entry, so neither
// defence sees the replacement. In T3 terms the cleanup key is the
// orchestration session, not the thread (the revoke-by-thread mutant).
const RevokeBySessionGeneration model.Switch = "revoke-by-session-generation"

// DelegatedChildPinsSession defers the idle release of a session while a
// thread attached to it is owed a delegated child's result (a delegate_task
// whose child is still running): the parent is waiting, not idle, and the
// child's completion wakes it (PR #4499, "wake settled parents when
// delegated children finish"). MODEL.md's note on releaseIfStillIdle says
// why a pin is needed: a parent blocked on an app-owned delegated child is
// not "pending background work", so hasPendingBackgroundWork answers false
// for it. Off is t3code#15173 (known only from a secondary source; fully
// evidenced analogue dotdevdotdev/agentwire-dev#852): a Claude parent that
// delegated a child and ended its turn shows no provider traffic for 30
// min and is released while the child still works for it. The pin has no
// cap: the child's task settles (completes, fails or is cancelled) or the
// thread detaches. The report's second half, a later stop of the released
// session failing, is not modelled: no actor stops a released session.
const DelegatedChildPinsSession model.Switch = "delegated-child-pins-session"

// ChildPinFirstThreadOnly is a wrong fix: the child pin asks only about the
// thread that opened the session (a V1 binding's single threadId), so on a
// codex session shared by several threads another thread's owed child does
// not pin it.
const ChildPinFirstThreadOnly model.Mutant = "child-pin-first-thread-only"

// DenyPathRevokesThread is the review finding of t3code PR #7083 ("let
// users withhold browser access from agents", cursor[bot]: "Deny path skips
// credential revoke") fixed: every prepare revokes the thread's existing
// credentials before it issues one, browser access off (the deny path)
// included. Off is the finding: with browser access off prepareMcpSession
// only replaces the thread's slot and never revokes, although "every
// prepare path went through issueActiveMcpCredential, which always revokes
// the thread first" and session restarts and re-attaches relied on it; the
// old bearer token, still carrying preview, stays valid, and the thread's
// later turns touch it (McpSessionRegistry touch is per thread) for the
// whole liveness window and beyond. Upstream's deny path issues no
// credential at all (the V1 ProviderService); the model's V2 manager
// issues one without preview (the capability-equality rule), so the
// finding shows as a second live credential of the thread. A release's
// clean-up revokes the old one anyway where there is a release (a
// single-thread runtime detached by the capability change), a moment
// later; a codex session shared by several threads is not released, so
// there nothing revokes it.
const DenyPathRevokesThread model.Switch = "deny-path-revokes-thread"

// DenyPathRevokesOnRestartOnly is a wrong fix of PR #7083's finding: the
// deny path revokes the thread's credentials when a live session restarts
// in place (the case the review names) but not when a thread re-attaches
// to a shared session.
const DenyPathRevokesOnRestartOnly model.Mutant = "deny-path-revokes-on-restart-only"

// CommitReleasePersisted is the commit point between a session's release
// (entry removed, stopped/error status written) and its credential
// clean-up, which waits for the runtime's scope to close (20 ms to 3 s).
const CommitReleasePersisted = "release.persisted"

// CleanupByIssueTime is a wrong fix of the stale clean-up (the one
// RevokeBySessionGeneration and the revoke-by-thread mutant are about): a
// released session's clean-up revokes its recorded credential and, to
// catch copies it may not have recorded, every credential of the thread
// issued no later than the release, on the reasoning that a replacement
// is always issued after it. Virtual time, like a millisecond clock, lets
// a prompt at the instant of the release issue the replacement at the
// same time, and the clean-up revokes it. It needs a coincidence: a
// session opened at the very instant another one of the thread was
// released.
const CleanupByIssueTime model.Mutant = "cleanup-by-issue-time"

func init() {
	model.DeclareCommitPoint(model.CommitPointInfo{Name: CommitReleasePersisted, Group: catalog.MCPCredential, Fault: "prompt-now",
		Doc: "a provider session's release is persisted (entry gone, status written), its credential clean-up not yet run: the thread's user sends a prompt at this instant, so a replacement is issued before the clean-up"})
	model.RegisterMutant(model.MutantInfo{Name: CleanupByIssueTime, Group: catalog.MCPCredential,
		Doc:        "a released session's clean-up also revokes every credential of the thread issued no later than the release, so a replacement issued at the same instant is revoked",
		Scenario:   "tab-ownership",
		Invariants: []string{"stale-cleanup-spares-replacement"}, GateStrategy: "commit"})
	model.RegisterSwitch(model.SwitchInfo{Name: DenyPathRevokesThread, Group: catalog.MCPCredential,
		Reports:    []catalog.Report{"t3code#7083"},
		Source:     "t3code PR #7083 review thread (ProviderService.ts:272, deny path skips credential revoke); issueActiveMcpCredential revokes the thread first (t3code#7870)",
		Scenario:   "tab-ownership",
		Invariants: []string{"one-live-credential-per-thread"},
		Reported:   "with browser access off a prepare replaces the thread's slot but does not revoke its existing credentials, so the old preview-capable token stays live",
		Fixed:      "every prepare revokes the thread's existing credentials before it issues one, browser access off included",
		Upstream:   "t3code ProviderSessionManager.ts@00df9e65 prepareMcpSession (revokeThread before every issue)",
		Script:     "scenarios/testdata/mcp_credential/deny_path",
		Mechanism:  "model/provider: prepareMcpSession's revoke before issue (browser-access deny path)"})
	model.RegisterMutant(model.MutantInfo{Name: DenyPathRevokesOnRestartOnly, Group: catalog.MCPCredential,
		Doc:        "the deny path revokes the thread's credentials on an in-place restart only, not when the thread re-attaches to a shared session",
		Scenario:   "tab-ownership",
		Invariants: []string{"one-live-credential-per-thread"}})
	model.RegisterSwitch(model.SwitchInfo{Name: RevokeBySessionGeneration, Group: catalog.MCPCredential,
		Reports:    []catalog.Report{"swarajbachu/zuse#463"},
		Source:     "swarajbachu/zuse PR #463 (mcp-gateway cleanup revoked by session id alone); T3 restart path: t3code PR #7083 review (startSession without stopSession)",
		Scenario:   "tab-ownership",
		Invariants: []string{"stale-cleanup-spares-replacement"},
		Reported:   "an in-place restart's old runtime, once closed, revokes every credential its session records by then, the replacement's included",
		Fixed:      "the old runtime's clean-up revokes only the credentials its own generation recorded (session + generation)",
		Upstream:   "t3code ProviderSessionManager.ts@00df9e65 releaseEntry (clean-up revokes the recorded credential id only)",
		Script:     "scenarios/testdata/mcp_credential/in_place_restart",
		Mechanism:  "model/provider: in-place runtime restart and its old generation's credential clean-up"})
	model.RegisterSwitch(model.SwitchInfo{Name: DelegatedChildPinsSession, Group: catalog.ProviderSession,
		Reports:    []catalog.Report{"t3code#15173"},
		Source:     "ProviderSessionManager releaseIfStillIdle (MODEL.md: a parent waiting on a delegated child is not pending background work); completion wake PR #4499",
		Scenario:   "chaos",
		Invariants: []string{"no-idle-release-while-child-owed"},
		Reported:   "the idle release ends a parent's session 30 min after its turn while its delegated child still runs",
		Fixed:      "the idle release defers while a thread attached to the session is owed a running delegated child's result",
		Upstream:   "",
		Script:     "scenarios/testdata/provider_session/parent_waits_on_child",
		Mechanism:  "model/provider: idle release and its delegated-child pin"})
	model.RegisterMutant(model.MutantInfo{Name: ChildPinFirstThreadOnly, Group: catalog.ProviderSession,
		Doc:        "the delegated-child pin asks only about the session's first thread, so a shared session's other threads' children do not pin it",
		Scenario:   "chaos",
		Invariants: []string{"no-idle-release-while-child-owed"}})
	model.RegisterSwitch(model.SwitchInfo{Name: BackgroundWorkPinsSession, Group: catalog.ProviderSession,
		Reports:    []catalog.Report{"t3code#4198", "t3code#10600"},
		Source:     "ProviderSessionManager hasPendingBackgroundWork and DEFAULT_MAX_IDLE_PIN_MS (4 h); fix PR #10689",
		Scenario:   "tab-ownership",
		Invariants: []string{"no-reap-while-work-owed"},
		Reported:   "the idle release looks at idle time only and reaps a session whose background task still runs",
		Fixed:      "the idle release asks for pending background work and defers while there is some, up to 4 h",
		Upstream:   "t3code PR #10689",
		Script:     "scenarios/testdata/provider_session/background_reap",
		Mechanism:  "model/provider: idle release and its background-work pin"})
	model.RegisterMutant(model.MutantInfo{Name: BackgroundClearedByNextTurn, Group: catalog.ProviderSession,
		Doc:        "a turn that reports no background work clears an earlier turn's, so a task still running is reaped",
		Scenario:   "tab-ownership",
		Invariants: []string{"no-reap-while-work-owed"}})
	model.RegisterMutant(model.MutantInfo{Name: ReuseIgnoresCapabilities, Group: catalog.MCPCredential,
		Doc:        "a credential is reused after its capability set changed, so toggled browser access does not take effect",
		Scenario:   "tab-ownership",
		Invariants: []string{"credential-capabilities-current"}})
}

// Adapter is a provider instance and the adapter differences that matter:
// codex shares one provider session per instance across threads; claudeAgent
// and ACP providers (Bob) open one session per thread.
type Adapter struct {
	Instance    string // ProviderInstanceId, e.g. "codex"
	Driver      string // ProviderDriverKind, e.g. "codex", "claudeAgent", "acp"
	MultiThread bool   // supportsMultipleProviderThreads
}

// Adapters is the set of provider instances the T3 models know.
var Adapters = []Adapter{
	{Instance: "codex", Driver: "codex", MultiThread: true},
	{Instance: "claudeAgent", Driver: "claudeAgent"},
	{Instance: "acpRegistry_bob", Driver: "acp"},
}

// AdapterFor returns the adapter of instance.
func AdapterFor(instance string) (Adapter, bool) {
	for _, a := range Adapters {
		if a.Instance == instance {
			return a, true
		}
	}
	return Adapter{}, false
}

// SessionIDFor returns the orchestration ProviderSessionId a turn of thread
// on instance uses: one per instance for codex, one per thread otherwise.
// The same id is reused when a released session is reopened.
func SessionIDFor(threadID, instance string) string {
	if a, ok := AdapterFor(instance); ok && a.MultiThread {
		return "psess:" + instance
	}
	return "psess:" + threadID
}

// ThreadCred is one (thread, credential) pair recorded by an entry
// (mcpCredentialIdByThread), plus the token the adapter injected.
type ThreadCred struct {
	ThreadID string
	CredID   string
	Token    string
}

// Entry is a live provider session.
type Entry struct {
	ID          string // orchestration ProviderSessionId
	Incarnation string // ID#<server process>.<open count>: one per open (the runtime generation)
	Instance    string
	attached    []string
	creds       []ThreadCred
	idleGen     int
	pendingGen  int
	busy        int
	lastActive  time.Duration
	idleTimer   sim.Timer
	pinned      bool
	pinnedSince time.Duration
	background  time.Duration // pending background work until this time
	released    bool
	releasedAt  time.Duration // when it was released (the cleanup-by-issue-time mutant's bound)
	native      string        // the native conversation a per-thread session is bound to
	deferred    bool          // the idle release deferred it (a pin) since its last activity
	subs        []*Subscription
	seq         int // creation order in its manager: entries' order
}

// Subscription is a subscriber to an entry's provider event stream.
type Subscription struct {
	Items []string
	// Ended: the stream ended; Err is its failure ("" for a normal end).
	Ended bool
	Err   string
}

// Attached reports whether threadID is attached.
func (e *Entry) Attached(threadID string) bool {
	for _, t := range e.attached {
		if t == threadID {
			return true
		}
	}
	return false
}

// Cred returns the credential recorded for threadID.
func (e *Entry) Cred(threadID string) (ThreadCred, bool) {
	for _, c := range e.creds {
		if c.ThreadID == threadID {
			return c, true
		}
	}
	return ThreadCred{}, false
}

// Native returns the native conversation a per-thread session is bound to
// ("" for a shared session or a manager without a store).
func (e *Entry) Native() string { return e.native }

// Busy reports whether a turn is running.
func (e *Entry) Busy() bool { return e.busy > 0 }

// Released reports whether the entry has been released.
func (e *Entry) Released() bool { return e.released }

// TurnFunc receives the entry a turn runs on, or an error when the session
// could not be opened or attached.
type TurnFunc func(e *Entry, err error)

type opening struct {
	sessionID   string
	incarnation string
	instance    string
	threadID    string
	cred        prepared
	waiters     []waiter
	// first backs waiters' first element; m and fail are what the open's
	// end needs (Run).
	first [1]waiter
	m     *Manager
	fail  bool
}

type waiter struct {
	threadID string
	done     TurnFunc
	// busy: the waiter starts a turn (StartTurn), else it only opens (Open).
	busy bool
}

type prepared struct {
	credID string
	token  string
	issued bool
}

// Manager is the ProviderSessionManager of one server process.
type Manager struct {
	sweepFn func() // sweep, bound once
	env     *model.Env
	rand    *sim.Rand
	reg     *mcp.Registry
	slots   *mcp.Slots
	entries []*Entry
	// byID indexes entries by ID, each list in entries order (looked up
	// only: Entry).
	byID map[string][]*Entry
	// touched lists, by thread, the live entries that ever had the thread
	// attached or a credential recorded for it (a superset of those that
	// have it now; released entries leave on the next look): heldElsewhere
	// asks these, not every entry. Looked up only.
	touched map[string][]*Entry
	created int
	opens   openings
	reserve map[reservation]int // (threadId, credId) -> count (mcpCredentialReservations)
	opened  int
	dead    bool
	// process is the server process incarnation, part of session
	// incarnation names so they stay unique across restarts.
	process int

	// CapsFor returns the capabilities a thread's credential gets now (from
	// settings: preview iff browser access is on for its project).
	CapsFor func(threadID, instance string) mcp.Caps
	// OnRelease is called when an entry is released, before clean-up.
	OnRelease func(e *Entry, reason string)
	// IdleTimeout and MaxIdlePin default to the upstream constants.
	IdleTimeout, MaxIdlePin time.Duration
	// OpenFailure is the probability that an adapter fails to open a session.
	OpenFailure sim.Ratio

	// Store, if set, is the durable projection the manager writes its
	// provider-session status rows to and whose runtime requests a release
	// settles.
	Store *store.Store
	// FailStatusWrite, if set, makes the status write of a release fail
	// (a harness's broken event store): the release still cleans up, and
	// Close reports ProviderSessionCloseError.
	FailStatusWrite func(status string) bool
	// ProbeBackground, if set, is the runtime's hasPendingBackgroundWork,
	// answered asynchronously; nil answers at once from SetBackgroundWork.
	ProbeBackground func(e *Entry, answer func(pending bool))
	// OwesChild, if set, reports whether threadID is owed a delegated
	// child's result (a task of it still running); see
	// DelegatedChildPinsSession.
	OwesChild func(threadID string) bool
	// WorkspaceMissing, if set, reports that a thread's cwd is not a
	// directory: opening for it fails ProviderWorkspaceMissingError.
	WorkspaceMissing func(threadID string) bool

	closes int
	reap   reaper
	// unflushed are the writes a write-behind mutant has not flushed
	// (holdWrite): undone if the process dies.
	unflushed []*func()
}

const actor = "psm"

// NewManager returns an empty manager over the registry and slots of
// server process incarnation process.
func NewManager(env *model.Env, reg *mcp.Registry, slots *mcp.Slots, process int) *Manager {
	return &Manager{env: env, rand: env.Rand(actor), reg: reg, slots: slots, reserve: map[reservation]int{}, process: process,
		IdleTimeout: DefaultIdleTimeout, MaxIdlePin: DefaultMaxIdlePin, reap: reaper{origin: env.Awake()},
		CapsFor: func(string, string) mcp.Caps { return mcp.CapOrchestration }}
}

// ManagerSizes are a manager's table sizes (Manager.Sizes): entries,
// session ids, threads touched and credential reservations. Counts, not
// bytes.
type ManagerSizes struct{ Entries, IDs, Touched, Reservations int }

// Sizes returns m's table sizes now (before Shutdown releases them).
func (m *Manager) Sizes() ManagerSizes {
	return ManagerSizes{Entries: len(m.entries), IDs: len(m.byID), Touched: len(m.touched), Reservations: len(m.reserve)}
}

// Reserve sizes m's empty tables for sz (a dead predecessor's Sizes: after
// a restart every thread's sessions open again), so they do not grow from
// empty one rehash at a time. Only a table still empty is resized; the
// maps are looked up, never ranged over, so capacity changes nothing a run
// does.
func (m *Manager) Reserve(sz ManagerSizes) {
	if len(m.entries) == 0 && sz.Entries > 0 {
		m.entries = make([]*Entry, 0, sz.Entries)
	}
	if len(m.byID) == 0 && sz.IDs > 0 {
		m.byID = make(map[string][]*Entry, sz.IDs)
	}
	if len(m.touched) == 0 && sz.Touched > 0 {
		m.touched = make(map[string][]*Entry, sz.Touched)
	}
	if len(m.reserve) == 0 && sz.Reservations > 0 {
		m.reserve = make(map[reservation]int, sz.Reservations)
	}
}

// Kill marks the manager as belonging to a dead server process: callbacks it
// had scheduled do nothing any more.
func (m *Manager) Kill() {
	m.dead = true
	for _, lose := range m.unflushed {
		(*lose)()
	}
	m.unflushed = nil
}

// Entries returns the live entries in open order.
func (m *Manager) Entries() []*Entry { return m.entries }

// Entry returns the live entry of sessionID, or nil.
func (m *Manager) Entry(sessionID string) *Entry {
	if list := m.byID[sessionID]; len(list) > 0 {
		return list[0]
	}
	return nil
}

// EntryForThread returns the live entry that has threadID attached, or nil.
func (m *Manager) EntryForThread(threadID string) *Entry {
	for _, e := range m.entries {
		if e.Attached(threadID) {
			return e
		}
	}
	return nil
}

// reservation keys mcpCredentialReservations: upstream's key is
// threadId NUL credId; a pair is the same key without building a string.
type reservation struct{ thread, cred string }

func reservationKey(threadID, credID string) reservation { return reservation{threadID, credID} }

// Errors of the manager (MODEL.md §10).
var (
	// ErrWorkspaceMissing is ProviderWorkspaceMissingError.
	ErrWorkspaceMissing = errors.New("ProviderWorkspaceMissingError: Restore the folder at this path before retrying.")
	// ErrClose is ProviderSessionCloseError.
	ErrClose = errors.New("ProviderSessionCloseError: the release could not be persisted")
	// ErrNoSession is what Close answers for a session that is not live.
	ErrNoSession = errors.New("ProviderSessionLookupError: no live session")
)

// Opens is the number of adapter opens started (openCount).
func (m *Manager) Opens() int { return m.opened }

// Closes is the number of adapter sessions closed (closeCount).
func (m *Manager) Closes() int { return m.closes }

// prepareMcpSession returns the credential for threadID: the slot's, reused
// iff it still resolves to the same thread, instance and capability set
// (the [variant] capability equality), else a fresh one after revoking the
// thread's others. The result is reserved until the caller records it.
func (m *Manager) prepareMcpSession(threadID, instance, incarnation string) prepared {
	caps := m.CapsFor(threadID, instance)
	if sl, ok := m.slots.Get(threadID); ok {
		m.reserve[reservationKey(threadID, sl.CredID)]++
		c := m.reg.Resolve(sl.Token)
		if c != nil && c.Scope.Thread != nil && c.Scope.Thread.ThreadID == threadID &&
			c.Scope.Thread.ProviderInstanceID == instance &&
			(c.Scope.Capabilities == caps || m.env.Profile.Has(ReuseIgnoresCapabilities)) {
			m.env.Emit(actor, "credential.reuse", "", sim.A("thread", threadID), sim.A("cred", c.ID), sim.A("for", incarnation),
				sim.A("caps", c.Scope.Capabilities.String()))
			return prepared{credID: c.ID, token: c.Token}
		}
		m.unreserve(threadID, sl.CredID)
	}
	m.revokeBeforeIssue(threadID, caps, incarnation, false)
	c := m.reg.Issue(threadID, instance, caps, incarnation)
	m.slots.Set(mcp.Slot{ThreadID: threadID, CredID: c.ID, Token: c.Token, InstanceID: instance, Caps: caps, Endpoint: c.Endpoint})
	m.reserve[reservationKey(threadID, c.ID)]++
	return prepared{credID: c.ID, token: c.Token, issued: true}
}

// revokeBeforeIssue is issueActiveMcpCredential's first step: the
// thread's existing credentials are revoked before a new one is issued for
// incarnation. Without DenyPathRevokesThread a prepare with browser access
// off (caps without preview) takes the deny path, which skips it; restart
// says the prepare is an in-place restart's (what the
// DenyPathRevokesOnRestartOnly mutant still revokes for).
func (m *Manager) revokeBeforeIssue(threadID string, caps mcp.Caps, incarnation string, restart bool) {
	revoke := caps&mcp.CapPreview != 0 || m.env.Profile.Fixed(DenyPathRevokesThread)
	if m.env.Profile.Has(DenyPathRevokesOnRestartOnly) && caps&mcp.CapPreview == 0 {
		revoke = restart
	}
	if revoke {
		m.reg.RevokeThread(threadID, "prepare:"+incarnation)
		return
	}
	if n := m.reg.ThreadCredentials(threadID); n > 0 {
		m.env.Emit(actor, "prepare.deny-path", "kept "+fmt.Sprint(n), sim.A("thread", threadID), sim.A("for", incarnation))
	}
}

func (m *Manager) unreserve(threadID, credID string) {
	k := reservationKey(threadID, credID)
	if m.reserve[k] <= 1 {
		delete(m.reserve, k)
		return
	}
	m.reserve[k]--
}

// StartTurn runs a turn of threadID on instance: it opens the session (or
// joins an open in progress), attaches the thread, marks the entry busy and
// touches the thread's credentials, then calls done. Opening takes the
// adapter's start-up time (openLatency) of virtual time.
func (m *Manager) StartTurn(threadID, instance string, openLatency time.Duration, done TurnFunc) {
	m.open(SessionIDFor(threadID, instance), threadID, instance, openLatency, true, done)
}

// Open is open(threadId, providerSessionId) without a turn: it opens the
// session sessionID (or joins an open in progress, or attaches threadID to
// the live entry) and calls done with the entry.
func (m *Manager) Open(sessionID, threadID, instance string, openLatency time.Duration, done TurnFunc) {
	m.open(sessionID, threadID, instance, openLatency, false, done)
}

// BeginTurn is startTurn on a live entry: attach, markBusy.
func (m *Manager) BeginTurn(e *Entry, threadID string) error {
	if e.released {
		return fmt.Errorf("Provider session released")
	}
	if !e.Attached(threadID) {
		a, _ := AdapterFor(e.Instance)
		if !a.MultiThread {
			return fmt.Errorf("ProviderSessionOpenError: %s does not support attaching multiple app threads to one session", e.Instance)
		}
		m.attach(e, threadID)
	}
	m.markBusy(e, threadID)
	return nil
}

func (m *Manager) open(sid, threadID, instance string, openLatency time.Duration, busy bool, done TurnFunc) {
	if m.WorkspaceMissing != nil && m.WorkspaceMissing(threadID) {
		done(nil, ErrWorkspaceMissing)
		return
	}
	if e := m.Entry(sid); e != nil {
		if !e.Attached(threadID) {
			a, _ := AdapterFor(instance)
			if !a.MultiThread {
				done(nil, fmt.Errorf("ProviderSessionOpenError: %s does not support attaching multiple app threads to one session", instance))
				return
			}
			m.attach(e, threadID)
		}
		if busy {
			m.markBusy(e, threadID)
		} else {
			m.Activity(e)
		}
		done(e, nil)
		return
	}
	if o := m.opens.find(sid); o != nil {
		o.waiters = append(o.waiters, waiter{threadID, done, busy})
		return
	}
	m.opened++
	var ib [96]byte // sid#process.opened, one allocation fewer than fmt
	incb := strconv.AppendInt(append(append(ib[:0], sid...), '#'), int64(m.process), 10)
	inc := m.env.Str().Bytes(strconv.AppendInt(append(incb, '.'), int64(m.opened), 10))
	o := &opening{sessionID: sid, incarnation: inc, instance: instance, threadID: threadID, m: m}
	o.first[0] = waiter{threadID, done, busy}
	o.waiters = o.first[:1:1] // as append to nil: a full slice, so the next append copies
	m.env.Emit(actor, "session.open", "", sim.A("providerSessionId", sid), sim.A("incarnation", inc), sim.A("thread", threadID), sim.A("instance", instance))
	o.cred = m.prepareMcpSession(threadID, instance, inc)
	m.opens.add(o)
	o.fail = m.rand.Chance("open-failure", m.OpenFailure)
	m.env.RunAfter(openLatency, o)
}

// openings are the opens in flight, at most one per provider session id,
// found by id: after a restart every continued thread opens at once, so a
// list scanned per open and per finish cost O(threads) each. Looked up
// only, never ranged over.
type openings struct{ bySession map[string]*opening }

// find returns the open in flight of session sid, or nil.
func (os *openings) find(sid string) *opening { return os.bySession[sid] }

// add records o (the caller found none of its session in flight).
func (os *openings) add(o *opening) {
	if os.bySession == nil {
		os.bySession = map[string]*opening{}
	}
	os.bySession[o.sessionID] = o
}

// remove drops o, if it is the one in flight of its session.
func (os *openings) remove(o *opening) {
	if os.bySession[o.sessionID] == o {
		delete(os.bySession, o.sessionID)
	}
}

// Run is the open's end after openLatency (the opening is its own event).
func (o *opening) Run() {
	if m := o.m; !m.dead {
		m.finishOpen(o, o.fail)
	}
}

// entryAlloc is a new entry and the first elements of its attached and
// creds slices in one allocation (finishOpen).
type entryAlloc struct {
	e     Entry
	att   [1]string
	creds [1]ThreadCred
}

func (m *Manager) finishOpen(o *opening, fail bool) {
	m.opens.remove(o)
	m.unreserve(o.threadID, o.cred.credID)
	var why error // built only for a failed open
	var attrs []sim.Attr
	native := ""
	if !fail {
		var missing string
		native, missing = m.bindNative(o)
		if missing != "" {
			fail = true
			why = fmt.Errorf("ProviderSessionOpenError: No conversation found with session ID: %s", missing)
			attrs = []sim.Attr{sim.A("cause", "resume-missing"), sim.A("native", missing), sim.A("thread", o.threadID)}
		}
	}
	if fail {
		if why == nil {
			why = fmt.Errorf("ProviderSessionOpenError: adapter failed to start %s", o.instance)
		}
		m.env.Emit(actor, "session.open", "ProviderSessionOpenError",
			append([]sim.Attr{sim.A("providerSessionId", o.sessionID), sim.A("incarnation", o.incarnation)}, attrs...)...)
		if o.cred.issued {
			m.clearMcpSession(o.threadID, o.cred.credID, "open-failed:"+o.incarnation)
		}
		for _, w := range o.waiters {
			w.done(nil, why)
		}
		return
	}
	ea := &entryAlloc{att: [1]string{o.threadID}, creds: [1]ThreadCred{{ThreadID: o.threadID, CredID: o.cred.credID, Token: o.cred.token}}}
	e := &ea.e
	*e = Entry{ID: o.sessionID, Incarnation: o.incarnation, Instance: o.instance, lastActive: m.env.Now(), native: native}
	e.attached = ea.att[:1:1] // as []string{...}: a full slice, so an append copies
	e.creds = ea.creds[:1:1]
	m.created++
	e.seq = m.created
	m.touch(o.threadID, e)
	m.entries = append(m.entries, e)
	if m.byID == nil {
		m.byID = map[string][]*Entry{}
	}
	m.byID[e.ID] = append(m.byID[e.ID], e)
	m.env.Emit(actor, "session.opened", "ready", sim.A("providerSessionId", e.ID), sim.A("incarnation", e.Incarnation),
		sim.A("thread", o.threadID), sim.A("cred", o.cred.credID))
	m.writeStatus(e.ID, "ready", "")
	m.scheduleIdleRelease(e)
	for _, w := range o.waiters {
		if e.released {
			w.done(nil, fmt.Errorf("Provider session released"))
			continue
		}
		if !e.Attached(w.threadID) {
			m.attach(e, w.threadID)
		}
		if w.busy {
			m.markBusy(e, w.threadID)
		}
		w.done(e, nil)
	}
}

// attach is ensureThreadAttached for a thread not yet attached.
func (m *Manager) attach(e *Entry, threadID string) {
	p := m.prepareMcpSession(threadID, e.Instance, e.Incarnation)
	e.attached = append(e.attached, threadID)
	e.setCred(ThreadCred{ThreadID: threadID, CredID: p.credID, Token: p.token})
	m.touch(threadID, e)
	m.unreserve(threadID, p.credID)
	m.env.Emit(actor, "session.attach", "", sim.A("providerSessionId", e.ID), sim.A("incarnation", e.Incarnation),
		sim.A("thread", threadID), sim.A("cred", p.credID))
}

func (e *Entry) setCred(c ThreadCred) {
	for i := range e.creds {
		if e.creds[i].ThreadID == c.ThreadID {
			e.creds[i] = c
			return
		}
	}
	e.creds = append(e.creds, c)
}

func (m *Manager) markBusy(e *Entry, threadID string) {
	e.busy++
	if e.idleTimer != nil {
		e.idleTimer.Stop()
	}
	e.pinned = false
	e.lastActive = m.env.Now()
	m.reg.Touch(threadID)
	m.env.Emit(actor, "turn.start", "", sim.A("providerSessionId", e.ID), sim.A("thread", threadID))
	if e.native != "" && m.env.Profile.Has(CursorAtTurnStart) {
		if t := m.Store.Thread(threadID); t != nil && t.ResumeCursor != e.native {
			m.persistCursor(t, e.native, e.Instance)
		}
	}
}

// TurnTerminal is the runtime's turn.terminal event: markIdle.
func (m *Manager) TurnTerminal(e *Entry, threadID string) {
	if e.released {
		return
	}
	if e.busy > 0 {
		e.busy--
	}
	e.lastActive = m.env.Now()
	m.env.Emit(actor, "turn.terminal", "", sim.A("providerSessionId", e.ID), sim.A("thread", threadID))
	m.nativeTurnWritten(e, threadID)
	m.scheduleIdleRelease(e)
}

// Activity is any other provider event (touchActivity).
func (m *Manager) Activity(e *Entry) {
	if e.released {
		return
	}
	e.lastActive = m.env.Now()
	if e.busy == 0 {
		m.scheduleIdleRelease(e)
	}
}

// SetBackgroundWork records that the runtime reports pending background work
// until the given virtual time (hasPendingBackgroundWork asks the runtime,
// which knows every task: a shared session keeps the latest end of its
// threads' work); 0 clears it.
func (m *Manager) SetBackgroundWork(e *Entry, until time.Duration) {
	if until == 0 {
		e.background = 0
		return
	}
	e.background = max(e.background, until)
	if until > 0 {
		m.env.Emit(actor, "background-work", "", sim.A("providerSessionId", e.ID), sim.A("until", sim.FormatT(until)))
	}
}

func (m *Manager) scheduleIdleRelease(e *Entry) {
	if e.busy > 0 || e.released {
		return
	}
	e.deferred = false
	e.idleGen++
	e.pendingGen = e.idleGen
	if e.idleTimer == nil {
		e.idleTimer = m.env.Clock.AfterFunc(m.IdleTimeout, func() { m.releaseIfStillIdle(e) })
		return
	}
	e.idleTimer.Reset(m.IdleTimeout)
}

func (m *Manager) releaseIfStillIdle(e *Entry) {
	if m.dead || e.released || e.busy > 0 || e.pendingGen != e.idleGen {
		return
	}
	gen := e.idleGen
	if !m.env.Profile.Fixed(BackgroundWorkPinsSession) {
		m.afterProbe(e, gen, false) // the reaper of #4198 does not ask
		return
	}
	if m.ProbeBackground == nil {
		m.afterProbe(e, gen, m.env.Now() < e.background)
		return
	}
	m.ProbeBackground(e, func(pending bool) { m.afterProbe(e, gen, pending) })
}

// afterProbe acts on hasPendingBackgroundWork's answer for the idle
// generation gen; an answer about a released runtime or an older
// generation is ignored (onlyIfIdleGeneration).
func (m *Manager) afterProbe(e *Entry, gen int, pending bool) {
	if m.dead || e.released || e.busy > 0 || e.pendingGen != gen || e.idleGen != gen {
		return
	}
	if m.env.Profile.Fixed(DelegatedChildPinsSession) && m.OwesChild != nil {
		for i, t := range e.attached {
			if i > 0 && m.env.Profile.Has(ChildPinFirstThreadOnly) {
				break
			}
			if m.OwesChild(t) {
				m.env.Emit(actor, "idle-release-deferred", "delegated child", sim.A("providerSessionId", e.ID), sim.A("thread", t))
				e.deferred = true
				e.idleTimer.Reset(m.IdleTimeout)
				return
			}
		}
	}
	now := m.env.Now()
	if pending {
		since := now
		if e.pinned {
			since = e.pinnedSince
		}
		if now-since < m.MaxIdlePin {
			if !e.pinned {
				e.pinned, e.pinnedSince = true, now
			}
			m.env.Emit(actor, "idle-release-deferred", "", sim.A("providerSessionId", e.ID))
			e.deferred = true
			e.idleTimer.Reset(m.IdleTimeout)
			return
		}
		m.env.Emit(actor, "idle-release-pin-expired", "", sim.A("providerSessionId", e.ID))
	}
	m.releaseEntry(e, ReasonIdleTimeout)
}

// Crash is the provider process dying: its event stream fails, so the entry
// is released with runtime_error.
func (m *Manager) Crash(e *Entry) {
	if e.released {
		return
	}
	m.env.Emit(actor, "provider.crash", "", sim.A("providerSessionId", e.ID), sim.A("incarnation", e.Incarnation))
	m.releaseEntryDetail(e, ReasonRuntimeError, "provider process exited")
}

// Detach removes threadID from e (plain detach keeps the recorded
// credential; terminal detach revokes the thread's credentials). A
// single-thread runtime left with no thread is released (manual_shutdown).
func (m *Manager) Detach(e *Entry, threadID string, terminal bool) {
	if e.released || !e.Attached(threadID) {
		return
	}
	for i, t := range e.attached {
		if t == threadID {
			e.attached = append(e.attached[:i], e.attached[i+1:]...)
			break
		}
	}
	m.env.Emit(actor, "session.detach", "", sim.A("providerSessionId", e.ID), sim.A("thread", threadID), sim.A("terminal", fmt.Sprint(terminal)))
	if terminal {
		for i, c := range e.creds {
			if c.ThreadID == threadID {
				e.creds = append(e.creds[:i], e.creds[i+1:]...)
				break
			}
		}
		m.clearMcpSession(threadID, "", "detach:"+e.Incarnation)
	}
	a, _ := AdapterFor(e.Instance)
	if len(e.attached) == 0 && !a.MultiThread {
		m.releaseEntry(e, ReasonManualShutdown)
		return
	}
	m.scheduleIdleRelease(e)
}

// Shutdown releases every entry with server_shutdown (the layer finalizer).
func (m *Manager) Shutdown() {
	for len(m.entries) > 0 {
		m.releaseEntry(m.entries[0], ReasonServerShutdown)
	}
}

// Close is close(providerSessionId): releaseEntry(manual_shutdown). The
// release happens whatever; a failed status write is reported as
// ProviderSessionCloseError.
func (m *Manager) Close(sessionID string) error {
	e := m.Entry(sessionID)
	if e == nil {
		return ErrNoSession
	}
	return m.Release(e, ReasonManualShutdown, "")
}

// Release is releaseEntry for a live entry with a reason and, for
// runtime_error, the error detail (lastError).
func (m *Manager) Release(e *Entry, reason, detail string) error {
	if e.released {
		return ErrNoSession
	}
	if !m.releaseEntryDetail(e, reason, detail) {
		return ErrClose
	}
	return nil
}

// ReportStatus is the provider publishing its session status (with a
// lastError for status error): written to the projection.
func (m *Manager) ReportStatus(e *Entry, status, lastError string) {
	if e.released {
		return
	}
	m.writeStatus(e.ID, status, lastError)
}

// Subscribe subscribes to e's provider event stream.
func (m *Manager) Subscribe(e *Entry) *Subscription {
	sub := &Subscription{}
	if e.released {
		sub.Ended = true
		return sub
	}
	e.subs = append(e.subs, sub)
	return sub
}

// Publish is a provider event on e's stream: it reaches the current
// subscribers and counts as activity.
func (m *Manager) Publish(e *Entry, item string) {
	if e.released {
		return
	}
	for _, sub := range e.subs {
		sub.Items = append(sub.Items, item)
	}
	m.Activity(e)
}

// writeStatus writes a provider-session status row; it reports false when
// the write failed. lastError is set only with status error and is kept
// across later status writes.
func (m *Manager) writeStatus(sessionID, status, lastError string) bool {
	if m.FailStatusWrite != nil && m.FailStatusWrite(status) {
		return false
	}
	if m.Store == nil {
		return true
	}
	m.Store.WriteProviderSession(sessionID, status, lastError, m.env.Now())
	return true
}

// releaseEntry removes e at once, then closes its scope (bounded by 30 s)
// and finally cleans up its credentials unless held elsewhere.
func (m *Manager) releaseEntry(e *Entry, reason string) { m.releaseEntryDetail(e, reason, "") }

func (m *Manager) releaseEntryDetail(e *Entry, reason, detail string) (persisted bool) {
	if e.released {
		return true
	}
	for i, x := range m.entries {
		if x == e {
			m.entries = append(m.entries[:i], m.entries[i+1:]...)
			sim.Unindex(m.byID, e.ID, e)
			break
		}
	}
	e.released = true
	if e.idleTimer != nil {
		e.idleTimer.Stop()
	}
	status := "stopped"
	if reason == ReasonRuntimeError {
		status = "error"
	}
	m.env.Emit(actor, "session.release", status, sim.A("providerSessionId", e.ID), sim.A("incarnation", e.Incarnation), sim.A("reason", reason))
	m.closes++
	// Subscribers: closed on a server shutdown, failed otherwise.
	for _, sub := range e.subs {
		sub.Ended = true
		if reason != ReasonServerShutdown {
			sub.Err = "Provider session released: " + reason + "."
		}
	}
	e.subs = nil
	lastError := ""
	if reason == ReasonRuntimeError {
		lastError = detail
	}
	persisted = m.writeStatus(e.ID, status, lastError)
	m.settleRuntimeRequests(e, reason)
	if m.OnRelease != nil {
		m.OnRelease(e, reason)
	}
	e.releasedAt = m.env.Now()
	if len(e.attached) > 0 && m.env.AtCommitPoint(CommitReleasePersisted, sim.A("providerSessionId", e.ID), sim.A("thread", e.attached[0])) {
		// The thread's user sends a prompt at this very instant: its
		// session opens anew while this one's clean-up is still pending.
		m.env.PromptNow(e.attached[0])
	}
	// The scope close usually takes moments; a hung provider hits the bound.
	closing := m.rand.Duration("scope-close", 20*time.Millisecond, 3*time.Second)
	if m.rand.Chance("scope-close-hang", sim.Per(1, 10)) {
		closing = ReleaseScopeCloseTimeout
	}
	m.env.After(closing, func() {
		if m.dead {
			return
		}
		m.cleanupCredentials(e)
	})
	return persisted
}

// settleRuntimeRequests marks the session's pending runtime requests with a
// live response capability non-live: cancelled on a manual or server
// shutdown, expired otherwise, capability not_resumable; their nodes and
// turn items cancelled (failed for runtime_error).
func (m *Manager) settleRuntimeRequests(e *Entry, reason string) {
	if m.Store == nil {
		return
	}
	status, child := store.RequestExpired, store.RunCancelled
	if reason == ReasonManualShutdown || reason == ReasonServerShutdown {
		status = store.RequestCancelled
	}
	if reason == ReasonRuntimeError {
		child = store.RunFailed
	}
	for _, r := range m.Store.RuntimeRequests {
		if r.SessionID != e.ID || r.Status != store.RequestPending || r.Capability != store.CapabilityLive {
			continue
		}
		r.Status, r.Capability = status, store.CapabilityNotResumable
		r.NodeStatus, r.ItemStatus = child, child
		r.ItemCompletedAt = m.env.Now()
	}
}

func (m *Manager) cleanupCredentials(e *Entry) { m.cleanupGeneration(e, e.Incarnation, e.creds) }

// cleanupGeneration is the credential clean-up of the runtime generation
// inc of e, over the (thread, credential) pairs creds.
func (m *Manager) cleanupGeneration(e *Entry, inc string, creds []ThreadCred) {
	for _, c := range creds {
		if why := m.heldElsewhere(e, c); why != "" {
			m.env.Emit(actor, "credential.cleanup", "held elsewhere ("+why+")", sim.A("incarnation", inc),
				sim.A("thread", c.ThreadID), sim.A("cred", c.CredID))
			continue
		}
		m.env.Emit(actor, "credential.cleanup", "clear", sim.A("incarnation", inc),
			sim.A("thread", c.ThreadID), sim.A("cred", c.CredID))
		if m.env.Profile.Has(model.RevokeByThread) {
			m.clearMcpSession(c.ThreadID, "", "cleanup:"+inc)
			continue
		}
		m.clearMcpSession(c.ThreadID, c.CredID, "cleanup:"+inc)
		if m.env.Profile.Has(CleanupByIssueTime) && inc == e.Incarnation && e.released {
			m.reg.RevokeThreadIssuedBy(c.ThreadID, e.releasedAt, "cleanup:"+inc)
		}
	}
}

// RestartInPlace restarts e's provider runtime in place because the
// thread's runtime options changed (model, runtime mode, cwd): upstream
// ProviderService.startSession for a thread whose session is live, without
// stopSession (t3code PR #7083's review: "Session restarts (runtime mode,
// cwd, model) call startSession without stopSession"). The entry keeps its
// ProviderSessionId and its attached threads; the new runtime is a new
// incarnation (generation) whose start issues every attached thread a
// fresh credential (issueActiveMcpCredential, which revokes the thread's
// existing ones first), injected into the new process. The old runtime is
// released (reason runtime_restart) and its scope closes like a release's
// (20 ms-3 s, 30 s when it hangs); its credential clean-up runs then, over
// what RevokeBySessionGeneration says it owns. It reports false, doing
// nothing, for a released or busy entry (a turn is running: the options
// apply to the next one).
func (m *Manager) RestartInPlace(e *Entry, why string) bool {
	if e.released || e.busy > 0 {
		return false
	}
	old := e.Incarnation
	owned := append([]ThreadCred(nil), e.creds...)
	m.env.Emit(actor, "session.release", "stopped", sim.A("providerSessionId", e.ID), sim.A("incarnation", old),
		sim.A("reason", ReasonRuntimeRestart), sim.A("why", why))
	m.closes++
	m.opened++
	e.Incarnation = fmt.Sprintf("%s#%d.%d", e.ID, m.process, m.opened)
	m.env.Emit(actor, "session.open", "", sim.A("providerSessionId", e.ID), sim.A("incarnation", e.Incarnation),
		sim.A("thread", e.attached[0]), sim.A("instance", e.Instance), sim.A("restart-of", old))
	e.creds = nil
	for i, t := range e.attached {
		caps := m.CapsFor(t, e.Instance)
		m.revokeBeforeIssue(t, caps, e.Incarnation, true)
		c := m.reg.Issue(t, e.Instance, caps, e.Incarnation)
		m.slots.Set(mcp.Slot{ThreadID: t, CredID: c.ID, Token: c.Token, InstanceID: e.Instance, Caps: caps, Endpoint: c.Endpoint})
		e.creds = append(e.creds, ThreadCred{ThreadID: t, CredID: c.ID, Token: c.Token})
		m.touch(t, e)
		kind, outcome := "session.attach", ""
		if i == 0 {
			kind, outcome = "session.opened", "ready"
		}
		m.env.Emit(actor, kind, outcome, sim.A("providerSessionId", e.ID), sim.A("incarnation", e.Incarnation),
			sim.A("thread", t), sim.A("cred", c.ID))
	}
	m.Activity(e)
	closing := m.rand.Duration("scope-close", 20*time.Millisecond, 3*time.Second)
	if m.rand.Chance("scope-close-hang", sim.Per(1, 10)) {
		closing = ReleaseScopeCloseTimeout
	}
	m.env.After(closing, func() {
		if m.dead {
			return
		}
		if m.env.Profile.Fixed(RevokeBySessionGeneration) {
			m.cleanupGeneration(e, old, owned)
			return
		}
		// By session id alone: whatever the session records when the old
		// runtime finishes closing, the replacement's credentials included.
		m.cleanupGeneration(e, old, e.creds)
	})
	return true
}

// touch records that e has threadID attached or a credential for it.
func (m *Manager) touch(threadID string, e *Entry) {
	if m.touched == nil {
		m.touched = map[string][]*Entry{}
	}
	list := m.touched[threadID]
	if slices.Contains(list, e) {
		return
	}
	m.touched[threadID] = append(list, e)
}

// heldElsewhere says why c stays: reserved, or the first live entry other
// than e (in entries' order) that has c's thread attached or records c.
// Only entries the thread touched can, so those are asked (dropping the
// released ones), and the earliest created of those that do is the one a
// walk of entries meets first (entries are appended as they are created).
func (m *Manager) heldElsewhere(e *Entry, c ThreadCred) string {
	if m.reserve[reservationKey(c.ThreadID, c.CredID)] > 0 {
		return "reserved"
	}
	list := m.touched[c.ThreadID]
	var first *Entry
	attached := false
	n := 0
	for _, o := range list {
		if o.released {
			continue
		}
		list[n] = o
		n++
		if o == e || first != nil && o.seq > first.seq {
			continue
		}
		if o.Attached(c.ThreadID) {
			first, attached = o, true
		} else if oc, ok := o.Cred(c.ThreadID); ok && oc.CredID == c.CredID {
			first, attached = o, false
		}
	}
	if n < len(list) {
		clear(list[n:])
		m.touched[c.ThreadID] = list[:n]
	}
	switch {
	case first == nil:
		return ""
	case attached:
		return "thread attached to " + first.Incarnation
	}
	return "recorded by " + first.Incarnation
}

// clearMcpSession revokes credID (or, with credID empty, every credential of
// the thread) and clears the thread's slot if it still holds credID.
func (m *Manager) clearMcpSession(threadID, credID, cause string) {
	if credID == "" {
		m.reg.RevokeThread(threadID, cause)
	} else {
		m.reg.RevokeProviderSession(credID, cause)
	}
	if sl, ok := m.slots.Get(threadID); ok && (credID == "" || sl.CredID == credID) {
		m.slots.Clear(threadID, "")
		m.env.Emit(actor, "slot.clear", "", sim.A("thread", threadID), sim.A("cred", sl.CredID), sim.A("cause", cause))
	}
}
