package terminal

// Cases of agent-code's renderer tests (actions/sessionRecovery,
// actions/paneRecoveryOwnership, persistence/rehydrate .renderer.test.*
// @428aed2d) expressed against workspace.go. Each test is named after its
// case id.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

func oneTab(id, leaf string, more ...string) WsTab {
	return WsTab{ID: id, Title: "Project", Leaves: append([]string{leaf}, more...), Focused: leaf}
}

// TestAC26_FreshSessionDomainsFromSettings is AC-26, upstream "seeds fresh
// sessions from Settings while an explicit empty list wins".
func TestAC26_FreshSessionDomainsFromSettings(t *testing.T) {
	f := newFixture(t)
	w := NewWorkspace(f.app)
	w.DefaultDomains = []string{"orchestration", "workflows"}
	var ids []string
	w.Spawn("/tmp/project", Claude, nil, func(id string) { ids = append(ids, id) })
	w.Spawn("/tmp/project", Codex, []string{}, func(id string) { ids = append(ids, id) })
	f.run(5 * time.Second)
	require.Len(t, ids, 2)
	reg := f.m.MCPHost().Registered
	require.Len(t, reg, 1, "the explicit empty list registers nothing")
	assert.Equal(t, MCPRegistration{Session: ids[0], Cwd: "/tmp/project", Kind: Claude, Domains: []string{"orchestration"}}, reg[0],
		"Claude's defaults filtered to what it supports (no workflows)")
	assert.Equal(t, []string{"orchestration"}, w.Sessions[ids[0]].Domains)
	assert.Equal(t, []string{}, w.Sessions[ids[1]].Domains)
	assert.Empty(t, f.m.Snapshot(ids[1]).Domains)
}

func persisted() Persisted {
	return Persisted{
		Tabs:     []WsTab{oneTab("tab-1", "stable-session")},
		Active:   "tab-1",
		Sessions: map[string]WsMeta{"stable-session": {Kind: Claude, Cwd: "/tmp/project", Domains: []string{"workflows"}}},
		Drafts:   map[string]string{"stable-session": "unfinished prompt"},
	}
}

// TestACN24_RehydrateKeepsExplicitEmptyDomains is AC-N24, upstream "does
// not reapply enabled defaults to a persisted explicit empty list".
func TestACN24_RehydrateKeepsExplicitEmptyDomains(t *testing.T) {
	f := newFixture(t)
	w := NewWorkspace(f.app)
	w.DefaultDomains = []string{"orchestration"}
	p := persisted()
	p.Sessions["stable-session"] = WsMeta{Kind: Claude, Cwd: "/tmp/project", Domains: []string{}}
	var res *BootResult
	w.Rehydrate(p, func(r BootResult) { res = &r })
	f.run(5 * time.Second)
	require.NotNil(t, res)
	assert.Empty(t, f.m.MCPHost().Registered, "recover was asked with builtInMcpDomains []")
	assert.Equal(t, []string{}, w.Sessions["stable-session"].Domains)
	assert.Equal(t, StatusStarted, w.Runtimes["stable-session"].Status)
}

// conflictWorkspace is a tab whose leaf failed with an ownership conflict:
// main holds a codex backend under its id.
func conflictWorkspace(t *testing.T, f *fixture) *Workspace {
	f.recoverReq(RecoverRequest{Session: "conflicted-session", Kind: Codex, Cwd: "/tmp/project"})
	f.run(5 * time.Second)
	require.NotNil(t, f.m.Backend("conflicted-session"))
	w := NewWorkspace(f.app)
	w.Tabs = []WsTab{oneTab("tab-1", "conflicted-session")}
	w.Active = "tab-1"
	w.Sessions["conflicted-session"] = WsMeta{Kind: Claude, Cwd: "/tmp/project"}
	w.Runtimes["conflicted-session"] = &WsRuntime{Status: StatusFailed, FailureCode: CodeOwnershipConflict}
	return w
}

// TestACN23_CloseConflictLeafSparesUnrelatedBackend is AC-N23, upstream
// "closes an ownership-conflict leaf without killing the unrelated main
// backend".
func TestACN23_CloseConflictLeafSparesUnrelatedBackend(t *testing.T) {
	f := newFixture(t)
	w := conflictWorkspace(t, f)
	var closed *bool
	w.Close("conflicted-session", func(ok bool) { closed = &ok })
	f.run(time.Second)
	require.NotNil(t, closed)
	assert.True(t, *closed)
	assert.Equal(t, []KillRequest{{Session: "conflicted-session", Kind: Claude, Cwd: "/tmp/project"}}, w.Killed,
		"the destructive request carries the pane's owner tuple")
	assert.Equal(t, []string{"not-owned cause=close"}, f.events("kill"), "main refuses it atomically")
	require.NotNil(t, f.m.Backend("conflicted-session"), "the unrelated backend lives")
	assert.Empty(t, w.Sessions)
	assert.Empty(t, w.Tabs)
	assert.Empty(t, w.Runtimes)
}

// parentWithDetachedChild is a tab with one pane (claude) and a detached
// codex child owned by that tab, both live in main.
func parentWithDetachedChild(t *testing.T, f *fixture) *Workspace {
	f.recoverReq(RecoverRequest{Session: "visible-pane", Kind: Claude, Cwd: "/tmp/project"})
	f.recoverReq(RecoverRequest{Session: "detached-child", Kind: Codex, Cwd: "/tmp/project"})
	f.run(5 * time.Second)
	w := NewWorkspace(f.app)
	w.Tabs = []WsTab{oneTab("tab-1", "visible-pane")}
	w.Active = "tab-1"
	w.Sessions["visible-pane"] = WsMeta{Kind: Claude, Cwd: "/tmp/project"}
	w.Sessions["detached-child"] = WsMeta{Kind: Codex, Cwd: "/tmp/project"}
	w.Detached["detached-child"] = DetachedRecord{Session: "detached-child", Surface: "dispatch", ProjectTab: "tab-1", DetachedAt: 123}
	w.Runtimes["visible-pane"] = &WsRuntime{}
	w.Runtimes["detached-child"] = &WsRuntime{}
	return w
}

// TestAC28_CloseLastPaneClosesDetachedChildren is AC-28, upstream
// "atomically closes detached children when their last owning pane
// closes".
func TestAC28_CloseLastPaneClosesDetachedChildren(t *testing.T) {
	f := newFixture(t)
	w := parentWithDetachedChild(t, f)
	var asked []string
	w.Confirm = func(targets []string) bool { asked = targets; return true }
	var closed *bool
	w.Close("visible-pane", func(ok bool) { closed = &ok })
	f.run(time.Second)
	assert.ElementsMatch(t, []string{"visible-pane", "detached-child"}, asked, "the dialog names both sessions")
	require.NotNil(t, closed)
	assert.True(t, *closed)
	assert.Len(t, w.Killed, 2)
	assert.Contains(t, w.Killed, KillRequest{Session: "detached-child", Kind: Codex, Cwd: "/tmp/project"})
	assert.Nil(t, f.m.Backend("visible-pane"))
	assert.Nil(t, f.m.Backend("detached-child"))
	assert.Empty(t, w.Tabs)
	assert.Empty(t, w.Sessions)
	assert.Empty(t, w.Detached)
	assert.Empty(t, w.Runtimes)
	require.Len(t, w.Undo, 1)
	assert.Equal(t, "tab", w.Undo[0].Type)
	assert.Equal(t, []UndoDetached{{Meta: WsMeta{Kind: Codex, Cwd: "/tmp/project"}, DetachedAt: 123}}, w.Undo[0].Detached)

	// Declining the gate closes nothing.
	f2 := newFixture(t)
	w2 := parentWithDetachedChild(t, f2)
	w2.Confirm = func([]string) bool { return false }
	w2.Close("visible-pane", func(ok bool) { closed = &ok })
	assert.False(t, *closed)
	assert.Empty(t, w2.Killed)
	assert.Len(t, w2.Tabs, 1)
}

// TestAC29_BuryMovesDetachedChildrenToArchive is AC-29, upstream "moves
// detached children into the buried archive when bury removes their tab".
func TestAC29_BuryMovesDetachedChildrenToArchive(t *testing.T) {
	f := newFixture(t)
	w := parentWithDetachedChild(t, f)
	sessions := map[string]WsMeta{}
	for k, v := range w.Sessions {
		sessions[k] = v
	}
	w.Bury("visible-pane", "keep this work")
	f.run(time.Second)
	assert.Empty(t, w.Killed)
	assert.Empty(t, f.events("kill"))
	assert.Empty(t, w.Tabs)
	assert.Empty(t, w.Detached)
	assert.Equal(t, []BuriedEntry{{Session: "visible-pane", Note: "keep this work"}, {Session: "detached-child"}}, w.Buried)
	assert.Equal(t, sessions, w.Sessions)
	assert.Len(t, w.Runtimes, 2)
	assert.NotNil(t, f.m.Backend("visible-pane"))
	assert.NotNil(t, f.m.Backend("detached-child"))
}

// TestACN27_RehydrateNeverReplaysPersistedState is AC-N27, upstream "never
// replays persisted layout or runtime state after the initial shell is
// published".
func TestACN27_RehydrateNeverReplaysPersistedState(t *testing.T) {
	f := newFixture(t)
	w := NewWorkspace(f.app)
	p := persisted()
	p.Sessions["second-session"] = WsMeta{Kind: Codex, Cwd: "/tmp/project", Title: "Persisted title"}
	p.Tabs[0].Leaves = []string{"stable-session", "second-session"}
	var res *BootResult
	w.Rehydrate(p, func(r BootResult) { res = &r })
	assert.Equal(t, []string{"stable-session", "second-session"}, w.Tabs[0].Leaves, "the shell is published at once")
	assert.Equal(t, StatusSpawning, w.Runtimes["stable-session"].Status)
	assert.Equal(t, StatusSpawning, w.Runtimes["second-session"].Status)
	// The second provider stays unresolved: its pre-agent boundary holds.
	var holdSecond func(error)
	f.m.SetBeforeAgentStart(func(done func(error)) {
		if holdSecond == nil && f.m.ProviderCreates() == 1 {
			holdSecond = done
			return
		}
		done(nil)
	})
	f.run(5 * time.Second)
	require.NotNil(t, holdSecond)
	assert.Equal(t, StatusStarted, w.Runtimes["stable-session"].Status)
	assert.Equal(t, StatusSpawning, w.Runtimes["second-session"].Status)
	require.Nil(t, res)
	// The user and the live feed change the workspace meanwhile.
	w.Tabs[0] = WsTab{ID: "tab-1", Title: "Project", Leaves: []string{"second-session"}, Focused: "second-session"}
	delete(w.Sessions, "stable-session")
	m := w.Sessions["second-session"]
	m.Title = "Edited while recovering"
	w.Sessions["second-session"] = m
	delete(w.Runtimes, "stable-session")
	w.Runtimes["second-session"].Draft = "newer draft"
	holdSecond(nil)
	f.run(5 * time.Second)
	require.NotNil(t, res)
	assert.Equal(t, BootResult{Restored: 2, Expected: 2, Complete: true}, *res)
	assert.Equal(t, []string{"second-session"}, w.Tabs[0].Leaves)
	assert.NotContains(t, w.Sessions, "stable-session")
	assert.Equal(t, "Edited while recovering", w.Sessions["second-session"].Title)
	assert.NotContains(t, w.Runtimes, "stable-session")
	assert.Equal(t, StatusStarted, w.Runtimes["second-session"].Status)
	assert.Equal(t, "newer draft", w.Runtimes["second-session"].Draft)
}

// TestACN28_ParkedDraftAndDispatchFocusKept is AC-N28, upstream "preserves
// a parked agent draft and Dispatch focus without spawning its backend".
func TestACN28_ParkedDraftAndDispatchFocusKept(t *testing.T) {
	f := newFixture(t)
	w := NewWorkspace(f.app)
	p := persisted()
	p.Sessions["parked-session"] = WsMeta{Kind: Codex, Cwd: "/tmp/project", Title: "Parked review"}
	p.Detached = map[string]DetachedRecord{"parked-session": {Session: "parked-session", Surface: "dispatch", ProjectTab: "tab-1", DetachedAt: 42}}
	p.Dispatch = &DispatchMode{Scope: "project", Focused: "parked-session"}
	p.Drafts["parked-session"] = "finish this after restart"
	var res *BootResult
	w.Rehydrate(p, func(r BootResult) { res = &r })
	f.run(5 * time.Second)
	require.NotNil(t, res)
	assert.Equal(t, BootResult{Restored: 1, Expected: 1, Complete: true}, *res)
	assert.Equal(t, 1, f.m.ProviderCreates(), "one recover: the parked session's backend is not started")
	assert.Nil(t, f.m.Backend("parked-session"))
	assert.Equal(t, "tab-1", w.Detached["parked-session"].ProjectTab)
	assert.Equal(t, "parked-session", w.Dispatch.Focused)
	assert.Equal(t, &WsRuntime{Status: "idle", Draft: "finish this after restart"}, w.Runtimes["parked-session"])
}

// TestACN29_GhostDetachedRecordsRepaired is AC-N29, upstream "repairs
// detached records for deleted project tabs before publishing runtimes".
func TestACN29_GhostDetachedRecordsRepaired(t *testing.T) {
	f := newFixture(t)
	w := NewWorkspace(f.app)
	p := persisted()
	p.Sessions["parked-session"] = WsMeta{Kind: Codex, Cwd: "/tmp/project"}
	p.Sessions["ghost-session"] = WsMeta{Kind: Claude, Cwd: "/tmp/deleted-project"}
	p.Detached = map[string]DetachedRecord{
		"parked-session": {Session: "parked-session", Surface: "dispatch", ProjectTab: "tab-1", DetachedAt: 42},
		"ghost-session":  {Session: "ghost-session", Surface: "dispatch", ProjectTab: "deleted-tab", DetachedAt: 21},
	}
	p.Dispatch = &DispatchMode{Scope: "global", Focused: "ghost-session", Lanes: []string{"parked-session", "ghost-session"}}
	p.Drafts["ghost-session"] = "this draft belongs to an unreachable ghost"
	var res *BootResult
	w.Rehydrate(p, func(r BootResult) { res = &r })
	f.run(5 * time.Second)
	require.NotNil(t, res)
	assert.Equal(t, BootResult{Restored: 1, Expected: 1, Complete: true}, *res)
	assert.Equal(t, 1, f.m.ProviderCreates())
	assert.Contains(t, w.Sessions, "stable-session")
	assert.Contains(t, w.Sessions, "parked-session")
	assert.NotContains(t, w.Sessions, "ghost-session")
	assert.Contains(t, w.Detached, "parked-session")
	assert.NotContains(t, w.Detached, "ghost-session")
	assert.Contains(t, w.Runtimes, "parked-session")
	assert.NotContains(t, w.Runtimes, "ghost-session")
	assert.Empty(t, w.Dispatch.Focused)
	assert.Equal(t, []string{"parked-session", ""}, w.Dispatch.Lanes)
}

// TestACN32_CloseCancelsBlockedStartupWhole is AC-N32, upstream "lets close
// cancel blocked startup without resurrecting an orphan backend"
// (sessionRecovery.integration.test.ts), across the workspace's rehydrate
// and main: a kill during the restored leaf's start cancels it, the
// bootstrap completes with nothing restored, the provider is stopped twice
// and its MCP scope revoked once, no backend is left, and the leaf stays,
// failed as cancelled.
func TestACN32_CloseCancelsBlockedStartupWhole(t *testing.T) {
	f := newFixture(t)
	w := NewWorkspace(f.app)
	var res *BootResult
	w.Rehydrate(persisted(), func(r BootResult) { res = &r })
	for f.m.ProviderCreates() == 0 {
		f.run(time.Millisecond)
	}
	b := f.m.Backend("stable-session")
	require.False(t, b.Live())
	var killed *bool
	f.m.Kill("stable-session", func(ok bool) { killed = &ok })
	require.NotNil(t, killed)
	assert.True(t, *killed)
	f.run(5 * time.Second)
	require.NotNil(t, res)
	assert.Equal(t, BootResult{Restored: 0, Expected: 1, Complete: true}, *res)
	assert.Equal(t, 2, b.StopAttempts())
	assert.Equal(t, []string{"stable-session"}, f.m.MCPHost().Revoked)
	assert.Nil(t, f.m.Backend("stable-session"))
	assert.Equal(t, []string{"stable-session"}, w.Tabs[0].Leaves)
	rt := w.Runtimes["stable-session"]
	assert.Equal(t, StatusFailed, rt.Status)
	assert.Contains(t, rt.Error, "cancelled")
	assert.False(t, rt.InputReady)
}

// TestAC32_RehydrateRetainsFailedLeaf is AC-32, upstream "retains the
// pane, metadata, and draft when backend recovery fails".
func TestAC32_RehydrateRetainsFailedLeaf(t *testing.T) {
	f := newFixture(t)
	f.m.cfg.StartFailChance = sim.Per(1, 1)
	w := NewWorkspace(f.app)
	var res *BootResult
	w.Rehydrate(persisted(), func(r BootResult) { res = &r })
	f.run(5 * time.Second)
	require.NotNil(t, res)
	assert.Equal(t, BootResult{Restored: 0, Expected: 1, Complete: true}, *res)
	assert.Equal(t, WsMeta{Kind: Claude, Cwd: "/tmp/project", Domains: []string{"workflows"}}, w.Sessions["stable-session"])
	assert.Equal(t, []string{"stable-session"}, w.Tabs[0].Leaves)
	assert.Len(t, w.Tabs, 1, "no new tab")
	assert.Equal(t, &WsRuntime{Status: StatusFailed, FailureCode: CodeStartFailed, Error: MsgStartFailed, Draft: "unfinished prompt"},
		w.Runtimes["stable-session"])
}

// TestAC32_RehydrateBoundsNeverSettlingRecovery is AC-32, upstream "bounds
// a never-settling recovery, cancels main ownership, and completes
// bootstrap": the provider's start never gets past the pre-agent boundary,
// so recover never answers; at the bound the leaf fails cancelled and
// main's claim is cancelled with the owner tuple.
func TestAC32_RehydrateBoundsNeverSettlingRecovery(t *testing.T) {
	f := newFixture(t)
	f.m.SetBeforeAgentStart(func(func(error)) {}) // never settles
	w := NewWorkspace(f.app)
	w.RecoveryTimeout = 5 * time.Millisecond
	var res *BootResult
	w.Rehydrate(persisted(), func(r BootResult) { res = &r })
	f.run(time.Second)
	require.NotNil(t, res)
	assert.Equal(t, BootResult{Restored: 0, Expected: 1, Complete: true}, *res)
	assert.Equal(t, []string{"cancelled"}, f.events("recover.cancel"), "cancelSessionRecovery reached main's claim")
	assert.Nil(t, f.m.Backend("stable-session"), "main's ownership is released")
	assert.Equal(t, []string{"stable-session"}, w.Tabs[0].Leaves)
	rt := w.Runtimes["stable-session"]
	assert.Equal(t, StatusFailed, rt.Status)
	assert.Equal(t, CodeCancelled, rt.FailureCode)
	assert.False(t, rt.InputReady)
}

// TestACN26_FailedSiblingKeptBesideLiveLeaf is AC-N26, upstream "keeps
// failed siblings in a split after every leaf has a resolved outcome":
// main already owns second-session as another kind, so its leaf's recover
// is an ownership conflict while its sibling spawns; both leaves stay.
func TestACN26_FailedSiblingKeptBesideLiveLeaf(t *testing.T) {
	f := newFixture(t)
	f.recoverReq(RecoverRequest{Session: "second-session", Kind: Claude, Cwd: "/tmp/project"})
	f.run(5 * time.Second)
	w := NewWorkspace(f.app)
	p := persisted()
	p.Sessions["second-session"] = WsMeta{Kind: Codex, Cwd: "/tmp/project"}
	p.Tabs[0].Leaves = []string{"stable-session", "second-session"}
	var res *BootResult
	w.Rehydrate(p, func(r BootResult) { res = &r })
	f.run(5 * time.Second)
	require.NotNil(t, res)
	assert.Equal(t, BootResult{Restored: 1, Expected: 2, Complete: true}, *res)
	assert.Equal(t, []string{"stable-session", "second-session"}, w.Tabs[0].Leaves)
	assert.Equal(t, StatusStarted, w.Runtimes["stable-session"].Status)
	assert.Equal(t, &WsRuntime{Status: StatusFailed, FailureCode: CodeOwnershipConflict, Error: MsgOwnership}, w.Runtimes["second-session"])
}
