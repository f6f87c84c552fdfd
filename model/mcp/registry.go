// Package mcp models T3 Code's MCP credential registry (McpSessionRegistry)
// and the per-thread credential slot (McpProviderSession): issue, resolve,
// touch, revoke by id and by thread, and the 24 h liveness window. All of it
// is in memory and is lost on a server restart.
package mcp

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

// DefaultLivenessWindow is how long a credential lives after its last sign
// of life. 24 h: McpSessionRegistry DEFAULT_LIVENESS_WINDOW_MS (1b69cde2).
const DefaultLivenessWindow = 24 * time.Hour

// The idle era's bounds (McpSessionRegistry@96314411, before PR #4659): a
// credential died after 30 min without an MCP request (resolve refreshed
// lastUsedAt) and 8 h after it was minted whatever its use (expiresAt,
// never refreshed; PR #3678 describes the cap).
const (
	IdleTimeout     = 30 * time.Minute
	MaximumLifetime = 8 * time.Hour
)

// CredentialLivesWithSession is PR #4659 ("Keep MCP credentials alive
// across provider turns"), the fix of t3code#4463: a credential lives for
// the 24 h liveness window after its provider session's last sign of life,
// and every provider turn is one (touch). Off is the idle era: the token
// baked into the provider process's config at session start dies after
// 30 min without an MCP call, or 8 h after issue, while the session runs
// on and cannot rotate it, so every later MCP call of that session is 401.
const CredentialLivesWithSession model.Switch = "credential-lives-with-session"

// LifetimeCapKept is a wrong fix of t3code#4463: the liveness window and
// touch of PR #4659, but the idle era's 8 h cap from issue kept (PR
// #3678's report), so a session that runs all day still loses its token.
const LifetimeCapKept model.Mutant = "lifetime-cap-kept"

func init() {
	model.RegisterMutant(model.MutantInfo{Name: LifetimeCapKept, Group: catalog.MCPCredential,
		Doc:        "credentials live with their session's turns but still die 8 h after issue",
		Scenario:   "chaos",
		Invariants: []string{"live-session-keeps-credential"}})
	model.RegisterSwitch(model.SwitchInfo{Name: CredentialLivesWithSession, Group: catalog.MCPCredential,
		Reports:    []catalog.Report{"t3code#4463"},
		Source:     "McpSessionRegistry.ts@96314411 (idle era) and @1b69cde2 (touch, liveness window); fix PR #4659; same family PR #3678",
		Scenario:   "tab-ownership",
		Invariants: []string{"live-session-keeps-credential"},
		Reported:   "a credential dies 30 min after its last MCP request (resolve refreshes it, provider turns do not) or 8 h after issue",
		Fixed:      "a credential dies 24 h after its session's last sign of life; every provider turn touches the thread's credentials",
		Upstream:   "t3code PR #4659",
		Script:     "scenarios/testdata/mcp_credential/idle_credential",
		Mechanism:  "model/mcp: credential expiry clock (idle era against liveness era)"})
}

// Caps is a set of MCP capabilities granted to a credential.
type Caps uint8

// Capabilities (McpInvocationScope.capabilities).
const (
	CapOrchestration Caps = 1 << iota
	CapWorktree
	CapPullRequests
	CapPreview
	CapDevice
)

// String renders caps as a comma-separated list, for traces.
func (c Caps) String() string { return capsNames[c&(1<<len(capNames)-1)] }

// capNames name the capability bits; capsNames is every combination's
// String, built once (a credential's issue traced a fresh join).
var (
	capNames  = []string{"orchestration", "worktree", "pull-requests", "preview", "device"}
	capsNames = func() (out [1 << 5]string) {
		for c := range out {
			out[c] = Caps(c).join()
		}
		return out
	}()
)

func (c Caps) join() string {
	names := capNames
	var parts []string
	for i, n := range names {
		if c&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// ThreadScope is the thread part of a caller scope.
type ThreadScope struct {
	ThreadID           string
	ProviderSessionID  string // the MCP credential id, random per issue
	ProviderInstanceID string
}

// Scope is McpInvocationScope: what a resolved bearer token stands for.
type Scope struct {
	EnvironmentID    string
	RequestNamespace string
	Thread           *ThreadScope // nil for OAuth clients
	Capabilities     Caps
	IssuedAt         time.Duration
	// Client is an OAuth client caller (McpInvocationScope.client; nil for
	// a thread caller): its session and the runtime-mode ceiling it was
	// approved with.
	Client *ClientScope
}

// ClientScope is an OAuth client's part of a Scope.
type ClientScope struct {
	SessionID string
	// Access is the approved ceiling: read-only, or a runtime mode
	// (full-access, ...), McpInvocationContext clientRuntimeModeCeiling.
	Access string
}

// Credential is one issued MCP credential. ID is the credential's
// providerSessionId (a random UUID upstream, 8 random hex digits here).
type Credential struct {
	ID          string
	Token       string
	Scope       Scope
	LastAliveAt time.Duration
	// IssuedFor names the provider session incarnation whose prepare minted it.
	IssuedFor string
	// Endpoint is the config's MCP endpoint.
	Endpoint string
	dead     bool
}

// Registry is McpSessionRegistry. Records are kept in issue order so that
// thread-wide operations iterate deterministically; a dropped record stays
// in records (dead) until they are compacted. The maps index the live
// records (by token, by id, and each thread's in issue order) and are
// looked up, never ranged over. A world of 1,000 threads holds about a
// thousand credentials, and every provider turn touches its thread's.
type Registry struct {
	env      *model.Env
	rand     *sim.Rand
	records  []*Credential
	live     int
	byToken  map[string]*Credential
	byID     map[string]*Credential
	byThread map[string][]*Credential
	// floor is at or before every live record's expiry (its last sign of
	// life plus the liveness window, its issue plus the lifetime cap)
	// under floorFor, the settings it was computed with: a prune at or
	// before it has nothing to expire. Refreshes only move expiries later.
	floor    time.Duration
	floorFor Settings
	floorOK  bool
	// Settings are the era's bounds (SettingsFor the profile).
	Settings
	// Endpoint is the MCP HTTP endpoint issued configs name.
	Endpoint string
}

const actor = "mcp-registry"

// Settings are the registry's lifetime rules. They differ between the
// idle era and the liveness era (SettingsFor).
type Settings struct {
	// LivenessWindow is the time after the last sign of life at which a
	// credential dies.
	LivenessWindow time.Duration
	// ResolveRefreshes makes resolve (an MCP request) a sign of life
	// (the idle era's lastUsedAt; main@eac52f00); off follows 1b69cde2,
	// where only touch is ("a bearer credential cannot prove that its
	// provider session is still alive").
	ResolveRefreshes bool
	// MaxLifetime, if set, kills a credential this long after issue
	// whatever its activity (the idle era's 8 h expiresAt).
	MaxLifetime time.Duration
	// TouchRefreshes makes Touch (every provider turn) a sign of life; off
	// is the idle era, which had no touch.
	TouchRefreshes bool
}

// SettingsFor returns the era p names: with CredentialLivesWithSession the
// liveness era (1b69cde2: 24 h window, touch refreshes, resolve does not),
// without it the idle era (96314411: 30 min idle timeout refreshed by
// resolve, 8 h cap, no touch).
func SettingsFor(p model.Profile) Settings {
	if p.Fixed(CredentialLivesWithSession) {
		s := Settings{LivenessWindow: DefaultLivenessWindow, TouchRefreshes: true}
		if p.Has(LifetimeCapKept) {
			s.MaxLifetime = MaximumLifetime
		}
		return s
	}
	return Settings{LivenessWindow: IdleTimeout, ResolveRefreshes: true, MaxLifetime: MaximumLifetime}
}

// EndpointFor is the MCP endpoint a registry bound to hostname:port issues
// (McpSessionRegistry's endpoint from the bound server address): a wildcard
// bind (0.0.0.0, ::) is reached on 127.0.0.1, an IPv6 literal is bracketed,
// any other host is used as bound; the path is /mcp.
func EndpointFor(hostname string, port int) string {
	host := hostname
	switch {
	case hostname == "0.0.0.0" || hostname == "::":
		host = "127.0.0.1"
	case strings.Contains(hostname, ":"):
		host = "[" + hostname + "]"
	}
	return "http://" + host + ":" + strconv.Itoa(port) + "/mcp"
}

// NewRegistry returns an empty registry with the settings of env's profile.
func NewRegistry(env *model.Env) *Registry {
	return &Registry{env: env, rand: env.Rand(actor), Settings: SettingsFor(env.Profile),
		byToken: map[string]*Credential{}, byID: map[string]*Credential{}, byThread: map[string][]*Credential{}}
}

// RegistrySizes are a registry's table sizes (Registry.Sizes): live
// credentials and the threads that hold one. Counts, not bytes.
type RegistrySizes struct{ Live, Threads int }

// Sizes returns r's table sizes now.
func (r *Registry) Sizes() RegistrySizes {
	return RegistrySizes{Live: r.live, Threads: len(r.byThread)}
}

// Reserve sizes r's empty tables for sz (a dead predecessor's Sizes: after
// a restart every thread's next turn is issued a credential again), so
// they do not grow from empty one rehash at a time. Only an empty
// registry is resized; its maps are looked up, never ranged over, so
// their capacity changes nothing a run does.
func (r *Registry) Reserve(sz RegistrySizes) {
	if len(r.records) > 0 || sz.Live <= 0 {
		return
	}
	r.byToken, r.byID = make(map[string]*Credential, sz.Live), make(map[string]*Credential, sz.Live)
	r.byThread = make(map[string][]*Credential, sz.Threads)
	r.records = make([]*Credential, 0, sz.Live)
}

// expiry is the earliest instant at which c can expire under the registry's
// settings: once now passes it.
func (r *Registry) expiry(c *Credential) time.Duration {
	e := c.LastAliveAt + r.LivenessWindow
	if r.MaxLifetime > 0 {
		e = min(e, c.Scope.IssuedAt+r.MaxLifetime)
	}
	return e
}

// credentialAndScope is a thread credential and its thread scope in one
// allocation (Issue).
type credentialAndScope struct {
	c  Credential
	ts ThreadScope
}

// Issue mints a credential for a thread caller: a random providerSessionId,
// which is also its requestNamespace, and a random token. incarnation names
// the provider session being prepared (for the trace).
func (r *Registry) Issue(threadID, instanceID string, caps Caps, incarnation string) *Credential {
	r.prune()
	// A random UUID upstream; unique across the run whatever the source.
	id := r.env.Unique(r.rand.Hex("credential-id", 8))
	now := r.env.Now()
	var tb [64]byte
	token := r.env.Str().Bytes(append(append(append(append(tb[:0], "tok_"...), id...), '_'), r.rand.Hex("token", 8)...))
	cs := &credentialAndScope{ts: ThreadScope{ThreadID: threadID, ProviderSessionID: id, ProviderInstanceID: instanceID}}
	c := &cs.c
	*c = Credential{
		ID:    id,
		Token: token,
		Scope: Scope{
			EnvironmentID:    r.env.EnvironmentID,
			RequestNamespace: id,
			Thread:           &cs.ts,
			Capabilities:     caps,
			IssuedAt:         now,
		},
		LastAliveAt: now,
		IssuedFor:   incarnation,
		Endpoint:    r.Endpoint,
	}
	r.records = append(r.records, c)
	r.live++
	r.byToken[c.Token], r.byID[id] = c, c
	r.byThread[threadID] = append(r.byThread[threadID], c)
	if r.floorOK {
		r.floor = min(r.floor, r.expiry(c))
	}
	r.env.Emit(actor, "credential.issue", "", sim.A("thread", threadID), sim.A("cred", id),
		sim.A("instance", instanceID), sim.A("caps", caps.String()), sim.A("for", incarnation))
	return c
}

// Resolve returns the live credential of token, or nil (HTTP 401).
func (r *Registry) Resolve(token string) *Credential {
	if token == "" {
		return nil
	}
	r.prune()
	c := r.byToken[token]
	if c != nil && r.ResolveRefreshes {
		c.LastAliveAt = r.env.Now()
	}
	return c
}

// Lookup returns the live credential with id, or nil. It does not prune.
func (r *Registry) Lookup(id string) *Credential { return r.byID[id] }

// Touch refreshes the liveness of every credential bound to threadID; T3
// calls it on every provider turn.
func (r *Registry) Touch(threadID string) {
	if !r.TouchRefreshes {
		return
	}
	now := r.env.Now()
	for _, c := range r.byThread[threadID] {
		c.LastAliveAt = now
	}
}

// RevokeProviderSession revokes the credential id (revokeProviderSession);
// cause names who asked, for the trace. It reports whether one was live.
func (r *Registry) RevokeProviderSession(id, cause string) bool {
	c := r.byID[id]
	if c == nil {
		return false
	}
	r.drop(c, "credential.revoke", cause)
	return true
}

// ThreadCredentials returns how many live credentials are bound to
// threadID (it does not prune).
func (r *Registry) ThreadCredentials(threadID string) int { return len(r.byThread[threadID]) }

// RevokeThread revokes every credential bound to threadID (revokeThread),
// in issue order.
func (r *Registry) RevokeThread(threadID, cause string) {
	for cs := r.byThread[threadID]; len(cs) > 0; cs = r.byThread[threadID] {
		r.drop(cs[0], "credential.revoke", cause)
	}
}

// RevokeThreadIssuedBy revokes every credential bound to threadID that was
// issued at or before at (the cleanup-by-issue-time mutant's clean-up).
func (r *Registry) RevokeThreadIssuedBy(threadID string, at time.Duration, cause string) {
	for i := 0; i < len(r.byThread[threadID]); {
		c := r.byThread[threadID][i]
		if c.Scope.IssuedAt <= at {
			r.drop(c, "credential.revoke", cause)
			continue
		}
		i++
	}
}

// prune expires, in issue order, every credential past its liveness window
// or lifetime cap. It scans only when the floor says one may be.
func (r *Registry) prune() {
	now := r.env.Now()
	if r.floorOK && r.floorFor == r.Settings && now <= r.floor {
		return
	}
	floor := time.Duration(math.MaxInt64)
	for i := 0; i < len(r.records); i++ {
		c := r.records[i]
		if c.dead {
			continue
		}
		if now-c.LastAliveAt > r.LivenessWindow {
			r.drop(c, "credential.expire", "liveness", sim.A("last-alive", sim.FormatT(c.LastAliveAt)))
			continue
		}
		if r.MaxLifetime > 0 && now-c.Scope.IssuedAt > r.MaxLifetime {
			r.drop(c, "credential.expire", "lifetime", sim.A("issued", sim.FormatT(c.Scope.IssuedAt)))
			continue
		}
		floor = min(floor, r.expiry(c))
	}
	r.floor, r.floorFor, r.floorOK = floor, r.Settings, true
	r.compact()
}

// compact drops dead records from records once they are most of it.
func (r *Registry) compact() {
	if len(r.records) < 2*r.live+32 {
		return
	}
	out := r.records[:0]
	for _, c := range r.records {
		if !c.dead {
			out = append(out, c)
		}
	}
	clear(r.records[len(out):])
	r.records = out
}

func (r *Registry) drop(c *Credential, kind, cause string, extra ...sim.Attr) {
	c.dead = true
	r.live--
	delete(r.byToken, c.Token)
	delete(r.byID, c.ID)
	thread := ""
	if c.Scope.Thread != nil {
		thread = c.Scope.Thread.ThreadID
		cs := r.byThread[thread]
		for i, x := range cs {
			if x == c {
				cs = append(cs[:i], cs[i+1:]...)
				break
			}
		}
		if len(cs) == 0 {
			delete(r.byThread, thread)
		} else {
			r.byThread[thread] = cs
		}
	}
	r.env.Emit(actor, kind, "", append([]sim.Attr{sim.A("thread", thread), sim.A("cred", c.ID), sim.A("cause", cause)}, extra...)...)
}

// Len returns the number of live credentials.
func (r *Registry) Len() int { return r.live }

// Slot is McpProviderSessionConfig: the credential an adapter injects into
// the provider process for one thread.
type Slot struct {
	ThreadID   string
	CredID     string
	Token      string
	InstanceID string
	Caps       Caps
	Endpoint   string
}

// Slots is the module-level per-thread slot map (one slot per thread). It
// is only looked up by thread, never ranged over.
type Slots struct {
	slots map[string]Slot
}

// Get returns the slot of threadID.
func (s *Slots) Get(threadID string) (Slot, bool) {
	sl, ok := s.slots[threadID]
	return sl, ok
}

// Set writes the slot of sl.ThreadID.
func (s *Slots) Set(sl Slot) {
	if s.slots == nil {
		s.slots = map[string]Slot{}
	}
	s.slots[sl.ThreadID] = sl
}

// Clear empties the slot of threadID; with credID non-empty only if the slot
// still holds credID. It reports whether it cleared one.
func (s *Slots) Clear(threadID, credID string) bool {
	sl, ok := s.slots[threadID]
	if !ok || credID != "" && sl.CredID != credID {
		return false
	}
	delete(s.slots, threadID)
	return true
}
