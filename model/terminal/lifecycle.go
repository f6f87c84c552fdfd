package terminal

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// This file holds the parts of main's SessionManager around a backend's
// lifecycle that the #596 story does not need but its upstream tests check
// (sessionManager.{recover,wake,lifecycle}.test.ts@428aed2d): the
// lifecycle journal with its gate verdicts and stall sampler, the built-in
// MCP host, the tmux registry of terminal sessions, the fresh-spawn API,
// the pre-agent reconciliation hook and the two-stop teardown of a backend
// killed while it starts. None of it writes the trace (the journal is its
// own record), so worlds that do not use it replay as before.

// Shell is the terminal session kind ('terminal' in SessionKind): a plain
// shell behind a PTY, optionally inside a tmux session. It is not a
// provider kind (Kinds), so the random worlds never open one.
const Shell Kind = "terminal"

// Gate sampler constants of SessionManager.ensureGateSampler
// (src/main/sessionManager.ts@428aed2d): a non-ready gate verdict that is
// not waiting on a human is re-recorded every GateSampleInterval, at most
// GateMaxSamples times per stall stretch.
const (
	GateSampleInterval = 5 * time.Second
	GateMaxSamples     = 24
)

// JournalRecord is one record of the session lifecycle area
// (SESSION_LIFECYCLE_AREA): its event name, session id and data fields in
// the order main wrote them.
type JournalRecord struct {
	Name    string
	Session string
	Data    []sim.Attr
}

// Get returns the value of data field key, or "" (and false).
func (r JournalRecord) Get(key string) (string, bool) {
	for _, a := range r.Data {
		if a.Key == key {
			return a.Value, true
		}
	}
	return "", false
}

// Journal is the app run journal as SessionManager writes it
// (this.lifecycle.session(name, sessionId, data)). A Manager without one
// (the constructor's journal argument null) writes nothing.
type Journal struct {
	Records []JournalRecord
}

// Names lists the records' names in order.
func (j *Journal) Names() []string {
	out := make([]string, len(j.Records))
	for i, r := range j.Records {
		out[i] = r.Name
	}
	return out
}

// All returns the records named name, in order.
func (j *Journal) All(name string) []JournalRecord {
	var out []JournalRecord
	for _, r := range j.Records {
		if r.Name == name {
			out = append(out, r)
		}
	}
	return out
}

// Find returns the first record named name, or nil.
func (j *Journal) Find(name string) *JournalRecord {
	for i := range j.Records {
		if j.Records[i].Name == name {
			return &j.Records[i]
		}
	}
	return nil
}

// SetJournal attaches a lifecycle journal (nil detaches it). Without one,
// main records nothing and runs no gate sampler.
func (m *Manager) SetJournal(j *Journal) { m.journal = j }

func (m *Manager) record(name, session string, data ...sim.Attr) {
	if m.journal == nil {
		return
	}
	// A copy: data itself does not escape, so a caller's variadic attributes
	// stay on its stack when no journal is attached (every simulated run).
	m.journal.Records = append(m.journal.Records, JournalRecord{Name: name, Session: session, Data: slices.Clone(data)})
}

// sortedKeys returns m's keys in order: the simulated path never ranges
// over a map.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func ms(d time.Duration) string { return fmt.Sprint(d.Milliseconds()) }

// PromptGate is a provider's PromptGateState as it emits it on
// 'prompt-gate': ready, warming (Reason: composer-unpainted,
// replay-pending), occupied (Reason: human-draft) or blocked (Condition:
// trust-dialog, permission-prompt; Resolvable).
type PromptGate struct {
	Kind       string
	Reason     string
	Condition  string
	Resolvable bool
}

type gateNote struct {
	signature, gate, reason string
	kind                    Kind
	since                   time.Duration
	samples                 int
}

// EmitPromptGate is the provider emitting 'prompt-gate' (the tests' fake
// session does so directly; a Claude backend does so on every readiness
// evaluation). Main ignores a backend that no longer owns its entry.
func (b *Backend) EmitPromptGate(g PromptGate) {
	if b.m.sess(b.Session).entry != b {
		return
	}
	b.m.noteGate(b, g)
}

// promptGate is a Claude backend's derivePromptGateState verdict for its
// gate() reason.
func (b *Backend) promptGate() (PromptGate, bool) {
	ready, reason := b.gate()
	switch {
	case ready:
		return PromptGate{Kind: "ready"}, true
	case reason == "blocked":
		return PromptGate{Kind: "blocked", Condition: "permission-prompt", Resolvable: true}, true
	case reason == "human-draft":
		return PromptGate{Kind: "occupied", Reason: reason}, true
	case reason == "exited":
		return PromptGate{}, false
	}
	return PromptGate{Kind: "warming", Reason: reason}, true
}

// noteGate is noteGateEvaluation: record a changed verdict (its signature
// includes a blocked gate's condition) and arm the stall sampler.
func (m *Manager) noteGate(b *Backend, g PromptGate) {
	if m.journal == nil {
		return
	}
	id := b.Session
	sig := g.Kind + ":" + g.Reason + ":" + g.Condition
	prev, ok := m.gateNotes[id]
	if ok && prev.signature == sig {
		return
	}
	m.gateNotes[id] = &gateNote{signature: sig, gate: g.Kind, reason: g.Reason, kind: b.Kind, since: m.env.Now()}
	data := []sim.Attr{sim.A("kind", string(b.Kind)), sim.A("gate", g.Kind), sim.A("reason", g.Reason)}
	if g.Kind == "blocked" {
		data = append(data, sim.A("conditionKind", g.Condition), sim.A("resolvable", b2s(g.Resolvable)))
	}
	m.record("gate.eval", id, append(data, sim.A("elapsedMs", "0"))...)
	if !m.sampling {
		m.sampling = true
		m.env.After(GateSampleInterval, m.sampleGates)
	}
}

// sampleGates is one tick of the gate sampler's interval: re-record every
// stalled gate (not ready, not waiting on a human, still owned, under
// GateMaxSamples); stop when none is.
func (m *Manager) sampleGates() {
	stalled := 0
	for _, id := range sortedKeys(m.gateNotes) {
		n := m.gateNotes[id]
		if n.gate == "ready" || n.gate == "occupied" || n.gate == "blocked" || m.sess(id).entry == nil || n.samples >= GateMaxSamples {
			continue
		}
		stalled++
		n.samples++
		m.record("gate.eval", id, sim.A("kind", string(n.kind)), sim.A("gate", n.gate), sim.A("reason", n.reason),
			sim.A("elapsedMs", ms(m.env.Now()-n.since)))
	}
	if stalled == 0 {
		m.sampling = false
		return
	}
	m.env.After(GateSampleInterval, m.sampleGates)
}

// MCPRegistration is one registerSession call of the built-in MCP host.
type MCPRegistration struct {
	Session string
	Cwd     string
	Kind    Kind
	Domains []string
}

// MCPHost is main's BuiltInMcpHost: it registers a session's built-in MCP
// domains before its provider is constructed and revokes them when main
// cleans the session's state up.
type MCPHost struct {
	Registered []MCPRegistration
	Revoked    []string
	domains    map[string][]string
}

// NewMCPHost returns a host with no registrations.
func NewMCPHost() *MCPHost { return &MCPHost{domains: map[string][]string{}} }

// SessionDomains is sessionDomains(sessionId): the domains registered for
// a live session, or nil.
func (h *MCPHost) SessionDomains(session string) []string { return h.domains[session] }

func (h *MCPHost) register(r MCPRegistration) {
	h.Registered = append(h.Registered, r)
	h.domains[r.Session] = r.Domains
}

func (h *MCPHost) revoke(session string) {
	h.Revoked = append(h.Revoked, session)
	delete(h.domains, session)
}

// SetMCPHost sets main's built-in MCP host; nil is a manager constructed
// without one (a non-empty domain request then fails to start).
func (m *Manager) SetMCPHost(h *MCPHost) { m.mcp = h }

// MCPHost returns main's built-in MCP host, or nil.
func (m *Manager) MCPHost() *MCPHost { return m.mcp }

// revokeMCP is cleanupSessionState's revoke: every agent-kind cleanup
// revokes, a terminal session's never does.
func (m *Manager) revokeMCP(b *Backend) {
	if m.mcp != nil && b.Kind != Shell {
		m.mcp.revoke(b.Session)
	}
}

// TmuxRegistry is main's tmux registry for terminal sessions: which tmux
// sessions exist, which main created and killed.
type TmuxRegistry struct {
	Available bool
	Existing  map[string]bool
	Created   []string
	Killed    []string
	seq       int
}

// NewTmuxRegistry returns an available registry holding the named tmux
// sessions.
func NewTmuxRegistry(existing ...string) *TmuxRegistry {
	t := &TmuxRegistry{Available: true, Existing: map[string]bool{}}
	for _, e := range existing {
		t.Existing[e] = true
	}
	return t
}

// SetTmux sets main's tmux registry (nil: none).
func (m *Manager) SetTmux(t *TmuxRegistry) { m.tmux = t }

// prepareTmux is spawnWithId's tmux step: reuse the recovered session when
// it still exists, else create one under a generated name (which the
// rollback may destroy). It returns the name to use and whether main
// created it.
func (t *TmuxRegistry) prepare(recover string) (string, bool) {
	if recover != "" && t.Existing[recover] {
		return recover, false
	}
	t.seq++
	name := fmt.Sprintf("agent-code-%d", t.seq)
	t.Existing[name] = true
	t.Created = append(t.Created, name)
	return name, true
}

func (t *TmuxRegistry) kill(name string) {
	delete(t.Existing, name)
	t.Killed = append(t.Killed, name)
}

// SpawnResult is SessionSpawnResult: the fresh session id, or the error
// spawn rejects with.
type SpawnResult struct {
	Session string
	Err     string
}

// Spawn is spawn(options): a fresh pane's backend under an id main draws
// (randomUUID upstream; here spawn-N in call order), so no caller can choose
// a persisted local id. reply is called when start() settles.
func (m *Manager) Spawn(kind Kind, cwd string, domains []string, reply func(SpawnResult)) {
	m.spawnSeq++
	id := fmt.Sprintf("spawn-%d", m.spawnSeq)
	req := RecoverRequest{Session: id, Kind: kind, Cwd: cwd, Domains: domains, Caller: "spawn"}
	attrs := []sim.Attr{sim.A("session", id), sim.A("kind", string(kind)), sim.A("caller", "spawn")}
	m.spawn("spawn.fresh", req, attrs, func(r RecoverResult) {
		if r.OK {
			reply(SpawnResult{Session: id})
			return
		}
		reply(SpawnResult{Err: r.Message})
	})
}

// SetBeforeAgentStart installs beforeAgentSessionStart, the pre-agent
// conventions reconciliation main awaits before constructing an agent
// provider: hook is called once per agent spawn and calls done when it
// settles; an error is journalled and never fails the spawn.
func (m *Manager) SetBeforeAgentStart(hook func(done func(err error))) { m.beforeStart = hook }

// FailNextConstruction makes the next provider construction of session
// throw (a provider constructor failing after MCP registration; scripts and
// tests).
func (m *Manager) FailNextConstruction(session string) { m.constructFail[session] = true }

// ProviderCreates returns how many providers main has constructed
// (createSession calls).
func (m *Manager) ProviderCreates() int { return m.creates }

// StopAttempts returns how many times main has called stop() on b.
func (b *Backend) StopAttempts() int { return b.stops }

// BlockStop makes b's next stop() attempt hang until release is called
// (the tests' deferred stop gate).
func (b *Backend) BlockStop() (release func()) {
	b.stopGate = true
	return func() {
		b.stopGate = false
		b.releaseStop()
	}
}

// releaseStop settles a blocked first stop and runs what waited on it.
func (b *Backend) releaseStop() {
	if !b.stopHeld {
		return
	}
	b.stopHeld = false
	waiting := b.onStopped
	b.onStopped = nil
	for _, f := range waiting {
		f()
	}
}

// requestStop is requestEntryStop: the generation's first stop, once; a
// stop requested before start() settled also asks for a post-start stop.
func (m *Manager) requestStop(b *Backend) {
	if !b.created || b.stopRequested {
		return
	}
	b.stopRequested = true
	if b.state == starting {
		b.stopBeforeSettle = true
	}
	b.stops++
	if b.stopGate {
		b.stopGate = false
		b.stopHeld = true
		return
	}
	if m.cfg.SlowStopChance.Numerator == 0 {
		return
	}
	if m.stopRand == nil {
		m.stopRand = m.env.Rand("main/stop")
	}
	if !m.stopRand.Chance("slow-stop", m.cfg.SlowStopChance) {
		return
	}
	d := m.stopRand.Duration("stop", SlowStopMin, SlowStopMax)
	b.stopHeld = true
	m.emit("stop", "blocked", sim.A("session", b.Session), sim.A("backend", b.ID), sim.A("for", d.String()))
	m.env.After(d, func() {
		m.emit("stop", "settled", sim.A("session", b.Session), sim.A("backend", b.ID))
		b.releaseStop()
	})
}

// Slow stop bounds of Config.SlowStopChance (model choice: a wrapper that
// waits on its child's exit for up to 20 s).
const (
	SlowStopMin = time.Second
	SlowStopMax = 20 * time.Second
)

// afterStops runs f once every stop attempt of b has settled.
func (b *Backend) afterStops(f func()) {
	if b.stopHeld {
		b.onStopped = append(b.onStopped, f)
		return
	}
	f()
}

// settleStart is settleEntryStart: a generation whose stop was requested
// before start() settled gets its post-start stop at once, even while the
// first is still blocked; then f runs when both have settled.
func (m *Manager) settleStart(b *Backend, f func()) {
	if b.stopBeforeSettle && !b.postStop {
		b.postStop = true
		b.stops++
		if b.stopHeld && m.cfg.SlowStopChance.Numerator > 0 {
			m.emit("stop", "post-start", sim.A("session", b.Session), sim.A("backend", b.ID))
		}
	}
	b.afterStops(f)
}

// Kill is kill(sessionId): cancel a claim, sever the entry, stop the
// provider; done (if not nil) gets whether anything was owned once its
// teardown stops have settled.
func (m *Manager) Kill(session string, done func(bool)) {
	b, owned := m.owner(session)
	m.kill(session, "kill", "")
	if done == nil {
		return
	}
	if b == nil {
		done(owned)
		return
	}
	b.afterStops(func() { done(owned) })
}

// CancelRecovery is cancelRecovery({sessionId, kind, cwd}): claim-only
// cancellation, so a renderer deadline that fires late can never kill a
// live backend. Only an in-flight claim matching kind and cwd is cancelled
// (its entry severed and its provider stopped); anything else answers
// false and changes nothing.
func (m *Manager) CancelRecovery(session string, kind Kind, cwd string) bool {
	cwd = path.Clean(cwd)
	c := m.claims[session]
	if c == nil || c.kind != kind || c.cwd != cwd {
		return false
	}
	c.cancelled = true
	b := c.backend
	m.emit("recover.cancel", CodeCancelled, sim.A("session", session), sim.A("backend", b.ID))
	if m.sess(session).entry == b {
		m.sess(session).entry = nil
		m.revokeMCP(b)
		m.requestStop(b)
	}
	return true
}

// owner returns the backend kill would stop and whether an entry or claim
// owns session.
func (m *Manager) owner(session string) (*Backend, bool) {
	if e := m.sess(session).entry; e != nil {
		return e, true
	}
	if c := m.claims[session]; c != nil {
		return c.backend, true
	}
	return nil, false
}
