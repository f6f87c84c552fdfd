package terminal

import (
	"maps"
	"slices"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// This file models the renderer's WorkspaceState around a session's
// ownership (src/renderer/src/workspace@428aed2d): project tabs and their
// leaves, session metadata with its built-in MCP domain choice, detached
// (parked) sessions, the buried archive, the Dispatch selection, Undo
// Close, and the three operations the upstream tests check on it: seeding
// a fresh session's MCP domains from Settings (actions/session.ts spawn,
// mcpDomains.ts), closing and burying a pane (actions/pane.ts closeSession
// and buryFocused), and the backend reconciliation of a restored workspace
// (persistence/rehydrate.ts). Main is reached through the app's IPC.

// DefaultDomainsByProvider is BUILT_IN_MCP_DOMAINS_BY_PROVIDER
// (src/mcp/shared/types.ts@428aed2d): the built-in MCP domains each
// provider supports. OpenCode supports none.
var DefaultDomainsByProvider = map[Kind][]string{
	Claude:   {"ping", "orchestration", "ai_workspace", "agent_transcripts", "agent_management"},
	Codex:    {"ping", "orchestration", "ai_workspace", "agent_transcripts", "agent_management", "workflows"},
	OpenCode: {},
}

// ResolveDomains is resolveSessionBuiltInMcpDomains: an explicit session
// list (non-nil, even empty) is a complete choice and wins; nil falls back
// to Settings' defaults; either is filtered to what the provider supports
// (duplicates dropped, order kept).
func ResolveDomains(kind Kind, explicit, defaults []string) []string {
	requested := defaults
	if explicit != nil {
		requested = explicit
	}
	out := []string{}
	for _, d := range requested {
		if slices.Contains(DefaultDomainsByProvider[kind], d) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// WsTab is a project tab: its id, title, leaves (the tile tree's leaves in
// order; a split of several) and focused leaf.
type WsTab struct {
	ID      string
	Title   string
	Leaves  []string
	Focused string
}

// WsMeta is a session's SessionMeta: kind, cwd, title and its built-in MCP
// domain choice (nil: none captured, a legacy session).
type WsMeta struct {
	Kind    Kind
	Cwd     string
	Title   string
	Domains []string
}

// DetachedRecord is a detached (parked) session's record: the project tab
// that owns it.
type DetachedRecord struct {
	Session    string
	Surface    string
	ProjectTab string
	DetachedAt int
}

// BuriedEntry is one entry of the buried archive.
type BuriedEntry struct {
	Session string
	Note    string
}

// DispatchMode is the Dispatch surface's selection: its focused session
// and, tiled, each lane's selected session ("" none).
type DispatchMode struct {
	Scope   string
	Focused string
	Lanes   []string
}

// UndoEntry is an Undo Close stack entry: a closed pane or tab, with the
// detached children the tab close took along (meta and detachedAt).
type UndoEntry struct {
	Type     string
	Tab      WsTab
	Metas    map[string]WsMeta
	Detached []UndoDetached
}

// UndoDetached is one detached child of an UndoEntry.
type UndoDetached struct {
	Meta       WsMeta
	DetachedAt int
}

// WsRuntime is a session's SessionRuntime in the workspace: the process
// status (idle for a parked session, spawning, started, failed), failure
// code and message, readiness and its revision, and the composer draft.
type WsRuntime struct {
	Status      string
	FailureCode string
	Error       string
	InputReady  bool
	Rev         int
	Draft       string
}

// Persisted is the workspace.json a renderer restores: layout, metadata,
// detached records, the Dispatch selection and drafts.
type Persisted struct {
	Tabs     []WsTab
	Active   string
	Sessions map[string]WsMeta
	Detached map[string]DetachedRecord
	Dispatch *DispatchMode
	Drafts   map[string]string
}

// RecoveryTimeout is DEFAULT_SESSION_RECOVERY_TIMEOUT_MS
// (persistence/rehydrate.ts@428aed2d): how long rehydrate waits for one
// leaf's recovery before cancelling main's claim and failing the leaf.
const RecoveryTimeout = 30 * time.Second

// MsgRecoveryTimedOut is the failure rehydrate shows for a recovery past
// its deadline.
const MsgRecoveryTimedOut = "Session recovery timed out. Retry when the provider is available."

// BootResult is rehydrateWorkspace's result.
type BootResult struct {
	Restored, Expected int
	Complete           bool
}

// Workspace is the renderer's WorkspaceState and runtimes.
type Workspace struct {
	app      *App
	Tabs     []WsTab
	Active   string
	Sessions map[string]WsMeta
	Detached map[string]DetachedRecord
	Buried   []BuriedEntry
	Dispatch *DispatchMode
	Runtimes map[string]*WsRuntime
	Undo     []UndoEntry
	// DefaultDomains is Settings' defaultBuiltInMcpDomains.
	DefaultDomains []string
	// Confirm is the close confirmation broker: asked with every session
	// a close would kill when there is more than one; false cancels.
	Confirm func(targets []string) bool
	// Killed lists the killOwnedSession requests the workspace sent, in order.
	Killed []KillRequest
	// RecoveryTimeout bounds each leaf's recovery in Rehydrate
	// (RecoveryTimeout unless a test shortens it).
	RecoveryTimeout time.Duration
}

// KillRequest is a killOwnedSession request: the pane's durable owner tuple.
type KillRequest struct {
	Session string
	Kind    Kind
	Cwd     string
}

// NewWorkspace returns an empty workspace of app.
func NewWorkspace(app *App) *Workspace {
	return &Workspace{app: app, Sessions: map[string]WsMeta{}, Detached: map[string]DetachedRecord{},
		Runtimes: map[string]*WsRuntime{}, RecoveryTimeout: RecoveryTimeout}
}

func (w *Workspace) emit(kind, outcome string, attrs ...sim.Attr) {
	w.app.env.Emit("renderer", kind, outcome, attrs...)
}

// Spawn is useSessionActions' spawn: a fresh session in a new tab, its
// domains resolved from the explicit choice or Settings' defaults, sent to
// main's fresh-spawn API; the metadata records the resolved choice.
func (w *Workspace) Spawn(cwd string, kind Kind, explicit []string, done func(string)) {
	domains := ResolveDomains(kind, explicit, w.DefaultDomains)
	w.app.toMain(func() {
		w.app.Main.Spawn(kind, cwd, domains, func(r SpawnResult) {
			w.app.toRenderer(func() {
				if r.Err == "" {
					w.Sessions[r.Session] = WsMeta{Kind: kind, Cwd: cwd, Domains: domains}
					w.Tabs = append(w.Tabs, WsTab{ID: "tab-" + r.Session, Title: cwd, Leaves: []string{r.Session}, Focused: r.Session})
					w.Runtimes[r.Session] = &WsRuntime{Status: StatusStarted}
				}
				if done != nil {
					done(r.Session)
				}
			})
		})
	})
}

func (w *Workspace) owningTab(session string) int {
	for i, t := range w.Tabs {
		if slices.Contains(t.Leaves, session) {
			return i
		}
	}
	return -1
}

// detachedChildren lists, in id order, the detached sessions whose
// project tab is tab (detachedTabChildren).
func (w *Workspace) detachedChildren(tab string) []string {
	var ids []string
	for _, id := range sortedKeys(w.Detached) {
		if w.Detached[id].ProjectTab == tab {
			ids = append(ids, id)
		}
	}
	return ids
}

// Close is closeSession: the closed leaf and, when it is its tab's last,
// the tab's detached children are one transaction: the confirmation gate
// is asked with every target when there is more than one, the Undo Close
// entry keeps the children, each target's backend is killed only with its
// owner tuple (killOwnedSession, which main refuses for a backend that does
// not match), and runtimes, metadata, detached records, the tab and the
// Dispatch references go. done gets whether anything closed.
func (w *Workspace) Close(session string, done func(bool)) {
	ti := w.owningTab(session)
	if ti < 0 {
		if _, ok := w.Detached[session]; !ok {
			done(false)
			return
		}
	}
	targets := []string{session}
	var children []string
	var tab WsTab
	if ti >= 0 {
		tab = w.Tabs[ti]
		if len(tab.Leaves) == 1 {
			children = w.detachedChildren(tab.ID)
			targets = append(targets, children...)
		}
	}
	if len(targets) > 1 && w.Confirm != nil && !w.Confirm(targets) {
		done(false)
		return
	}
	if ti >= 0 && len(tab.Leaves) == 1 {
		u := UndoEntry{Type: "tab", Tab: tab, Metas: map[string]WsMeta{session: w.Sessions[session]}}
		for _, c := range children {
			u.Detached = append(u.Detached, UndoDetached{Meta: w.Sessions[c], DetachedAt: w.Detached[c].DetachedAt})
		}
		w.Undo = append(w.Undo, u)
	} else if ti >= 0 {
		w.Undo = append(w.Undo, UndoEntry{Type: "pane", Tab: tab, Metas: map[string]WsMeta{session: w.Sessions[session]}})
	}
	pending := len(targets)
	for _, id := range targets {
		meta := w.Sessions[id]
		req := KillRequest{Session: id, Kind: meta.Kind, Cwd: meta.Cwd}
		w.Killed = append(w.Killed, req)
		w.emit("pane.close", "", sim.A("session", id), sim.A("kind", string(meta.Kind)))
		w.app.toMain(func() {
			w.app.Main.KillOwned(req.Session, req.Kind, req.Cwd, "close", "")
			w.app.toRenderer(func() {
				if pending--; pending == 0 {
					w.removeClosed(session, ti >= 0, children)
					done(true)
				}
			})
		})
	}
}

// removeClosed applies a close's state update after its kills answered.
func (w *Workspace) removeClosed(session string, inTab bool, children []string) {
	closed := append([]string{session}, children...)
	for _, id := range closed {
		delete(w.Runtimes, id)
		delete(w.Sessions, id)
		delete(w.Detached, id)
	}
	if inTab {
		if ti := w.owningTab(session); ti >= 0 {
			t := &w.Tabs[ti]
			t.Leaves = slices.DeleteFunc(slices.Clone(t.Leaves), func(s string) bool { return s == session })
			if len(t.Leaves) == 0 {
				w.Tabs = slices.Delete(w.Tabs, ti, ti+1)
			} else if t.Focused == session {
				t.Focused = t.Leaves[0]
			}
		}
	}
	w.dropDispatch(closed)
}

// dropDispatch clears Dispatch references to sessions that are gone
// (dispatchModeAfterSessionRemovals).
func (w *Workspace) dropDispatch(gone []string) {
	if w.Dispatch == nil {
		return
	}
	if slices.Contains(gone, w.Dispatch.Focused) {
		w.Dispatch.Focused = ""
	}
	for i, l := range w.Dispatch.Lanes {
		if slices.Contains(gone, l) {
			w.Dispatch.Lanes[i] = ""
		}
	}
}

// Bury is buryFocused: a visibility operation that kills nothing. The
// buried leaf leaves its tab (the tab goes with its last leaf, and then
// its detached children move into the archive too); metadata and runtimes
// stay.
func (w *Workspace) Bury(session, note string) {
	ti := w.owningTab(session)
	if ti < 0 {
		return
	}
	tab := w.Tabs[ti]
	w.Buried = append(w.Buried, BuriedEntry{Session: session, Note: note})
	w.emit("pane.bury", "", sim.A("session", session))
	t := &w.Tabs[ti]
	t.Leaves = slices.DeleteFunc(slices.Clone(t.Leaves), func(s string) bool { return s == session })
	if len(t.Leaves) > 0 {
		return
	}
	for _, c := range w.detachedChildren(tab.ID) {
		w.Buried = append(w.Buried, BuriedEntry{Session: c})
		delete(w.Detached, c)
	}
	w.Tabs = slices.Delete(w.Tabs, ti, ti+1)
}

// Rehydrate is rehydrateWorkspace: first it repairs detached records
// whose project tab is gone (dropping the session, its draft and its
// Dispatch references), then publishes the shell at once (layout,
// metadata, detached records, Dispatch, a spawning runtime per leaf and an
// idle one holding its draft per parked session, whose backend is not
// started), then recovers every leaf through main under its persisted id
// and domain choice (an explicit empty list stays empty). An outcome only
// updates the runtime of a session still in the workspace, never the
// layout, metadata or draft the user changed meanwhile. done gets the
// counts when every leaf has an outcome.
func (w *Workspace) Rehydrate(p Persisted, done func(BootResult)) {
	tabs := map[string]bool{}
	for _, t := range p.Tabs {
		tabs[t.ID] = true
	}
	w.Tabs = slices.Clone(p.Tabs)
	w.Active = p.Active
	w.Sessions = maps.Clone(p.Sessions)
	if w.Sessions == nil {
		w.Sessions = map[string]WsMeta{}
	}
	w.Detached = map[string]DetachedRecord{}
	var ghosts []string
	for _, id := range sortedKeys(p.Detached) {
		d := p.Detached[id]
		if !tabs[d.ProjectTab] {
			ghosts = append(ghosts, id)
			delete(w.Sessions, id)
			continue
		}
		w.Detached[id] = d
	}
	if p.Dispatch != nil {
		d := *p.Dispatch
		d.Lanes = slices.Clone(d.Lanes)
		w.Dispatch = &d
		w.dropDispatch(ghosts)
	}
	var leaves []string
	for _, t := range w.Tabs {
		leaves = append(leaves, t.Leaves...)
	}
	w.Runtimes = map[string]*WsRuntime{}
	for _, id := range leaves {
		w.Runtimes[id] = &WsRuntime{Status: StatusSpawning, Draft: p.Drafts[id]}
	}
	for _, id := range sortedKeys(w.Detached) {
		w.Runtimes[id] = &WsRuntime{Status: "idle", Draft: p.Drafts[id]}
	}
	res := BootResult{Expected: len(leaves)}
	pending := len(leaves)
	if pending == 0 {
		res.Complete = true
		done(res)
		return
	}
	for _, id := range leaves {
		meta := w.Sessions[id]
		req := RecoverRequest{Session: id, Kind: meta.Kind, Cwd: meta.Cwd, Caller: "rehydrate",
			Domains: ResolveDomains(meta.Kind, meta.Domains, w.DefaultDomains)}
		w.emit("rehydrate", "", sim.A("session", id), sim.A("kind", string(meta.Kind)))
		settled := false
		outcome := func(r RecoverResult) {
			if settled {
				return
			}
			settled = true
			if rt := w.Runtimes[id]; rt != nil {
				if r.OK {
					res.Restored++
					rt.Status, rt.FailureCode, rt.Error = StatusStarted, "", ""
					if r.Snapshot.Rev >= rt.Rev {
						rt.InputReady, rt.Rev = r.Snapshot.Ready, r.Snapshot.Rev
					}
				} else {
					rt.Status, rt.FailureCode, rt.Error, rt.InputReady = StatusFailed, r.Code, r.Message, false
				}
			}
			if pending--; pending == 0 {
				res.Complete = true
				done(res)
			}
		}
		// recoverSessionBeforeDeadline: past the bound the leaf fails
		// cancelled and main's matching claim is cancelled (fire and
		// forget; main keeps its fence until the teardown settles).
		w.app.env.After(w.RecoveryTimeout, func() {
			if settled {
				return
			}
			kind, cwd := meta.Kind, meta.Cwd
			w.app.toMain(func() { w.app.Main.CancelRecovery(id, kind, cwd) })
			outcome(RecoverResult{Code: CodeCancelled, Retryable: true, Message: MsgRecoveryTimedOut})
		})
		w.app.toMain(func() {
			w.app.Main.Recover(req, func(r RecoverResult) { w.app.toRenderer(func() { outcome(r) }) })
		})
	}
}
