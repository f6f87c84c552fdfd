package provider

import (
	"fmt"
	"slices"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// Native conversations and resume cursors. A per-thread provider session
// (claudeAgent, an ACP agent such as OpenCode) drives one native
// conversation, which the provider keeps on its own disk
// (store.NativeConversation); T3 persists the thread's resume cursor (its
// id, provider_session_runtime.resume_cursor_json) so that the session it
// opens after an idle release or a restart resumes the same conversation
// (ClaudeAdapter readClaudeResumeState: `resume` when the cursor names a
// session, a fresh `sessionId` otherwise; OpenCodeAdapter.startSession
// after PR #3617: session.get on the cursor's id, session.create when it
// is missing). Shared codex sessions are not modelled here (codex resumes
// its threads itself).

// ResumeNativeSession is PR #3617 (merged; "resume the OpenCode session
// on follow-ups instead of starting an empty one"): the OpenCode adapter
// emits a resume cursor {schemaVersion, sessionId} from startSession and
// sendTurn, and when a cursor is present re-adopts that session
// (session.get) instead of session.create, falling back to a new session
// only when the old one is missing. Off is t3code#3604 (duplicates #2838;
// related #2378): the adapter never emitted or read a cursor, so after an
// idle release or a restart the next follow-up runs in a brand-new, empty
// native session while T3 still renders the old history. The ACP adapter
// (acpRegistry_bob) stands for OpenCode here; Claude already resumed.
const ResumeNativeSession model.Switch = "resume-native-session"

// CursorAfterFirstTurn persists a Claude thread's resume cursor only once
// its native conversation has a durable turn, and makes a resume that
// finds no conversation fall back to a fresh session once (clearing the
// cursor, marking the context lost) instead of failing. Off is
// t3code#2336: the cursor is persisted when the session starts; a CLI
// killed before its first turn (turnCount 0) never wrote the conversation,
// so every later open resumes the missing id and fails ("No conversation
// found with session ID"), across restarts; only a new thread works. The
// report is open upstream; the fallback half is what a reporter and
// Zeus-Deus/codemux PR #177 describe.
const CursorAfterFirstTurn model.Switch = "cursor-after-first-turn"

// NativeIDsInMemory is a wrong fix of t3code#3604 (the shape PR #3735 was
// reviewed against): the adapter remembers the native session ids it
// created in process memory and resumes those, so a follow-up after an
// idle release resumes, but one after a server restart starts blank.
const NativeIDsInMemory model.Mutant = "native-ids-in-memory"

// CursorAtTurnStart is a wrong fix of t3code#2336: the cursor is persisted
// when the first turn starts ("the prompt was sent, so the conversation
// exists") rather than once it is durable, and the resume keeps failing
// on a missing conversation; a kill during the first turn still leaves
// the thread stuck.
const CursorAtTurnStart model.Mutant = "cursor-at-turn-start"

func init() {
	model.RegisterSwitch(model.SwitchInfo{Name: ResumeNativeSession, Group: catalog.ProviderSession,
		Reports:    []catalog.Report{"t3code#3604", "t3code#2838", "t3code#2378"},
		Source:     "OpenCodeAdapter.startSession resume cursor (PR #3617); ClaudeAdapter readClaudeResumeState",
		Scenario:   "tab-ownership",
		Invariants: []string{"resume-binds-stored-native"},
		Reported:   "an OpenCode (ACP) thread's session opened after an idle release or a restart creates a new, empty native session",
		Fixed:      "the adapter persists the native session id as the thread's resume cursor and re-adopts it; a new one only when it is gone",
		Upstream:   "t3code PR #3617",
		Script:     "scenarios/testdata/provider_session/resume_native_session",
		Mechanism:  "model/provider: native conversations and resume cursors (resume or create on open)"})
	model.RegisterSwitch(model.SwitchInfo{Name: CursorAfterFirstTurn, Group: catalog.ProviderSession,
		Reports:    []catalog.Report{"t3code#2336"},
		Source:     "t3code#2336 (ClaudeAdapter resume cursor at turnCount 0); stale-resume fallback as in Zeus-Deus/codemux PR #177",
		Scenario:   "chaos",
		Invariants: []string{"resume-cursor-finds-conversation"},
		Reported:   "a Claude thread's resume cursor is persisted when its session starts; a kill before the first turn leaves it naming nothing, and every later open fails",
		Fixed:      "the cursor is persisted after the first durable native turn, and a resume that finds nothing falls back to a fresh session once and clears it",
		Upstream:   "",
		Script:     "scenarios/testdata/provider_session/dangling_cursor",
		Mechanism:  "model/provider: native conversations and resume cursors (when the cursor is persisted)"})
	model.RegisterMutant(model.MutantInfo{Name: NativeIDsInMemory, Group: catalog.ProviderSession,
		Doc:        "the adapter resumes only the native sessions its own process created, so a follow-up after a server restart starts blank",
		Scenario:   "tab-ownership",
		Invariants: []string{"resume-binds-stored-native"}})
	model.RegisterMutant(model.MutantInfo{Name: CursorAtTurnStart, Group: catalog.ProviderSession,
		Doc:        "the resume cursor is persisted when the first turn starts, not once it is durable, and a missing conversation still fails the open",
		Scenario:   "chaos",
		Invariants: []string{"resume-cursor-finds-conversation"}})
}

// bindNative is the adapter's resume-or-create for the thread of o: it
// returns the native conversation the new session drives, or, when the
// cursor names a conversation that does not exist and the adapter does
// not fall back, that id (the open fails).
func (m *Manager) bindNative(o *opening) (native, missing string) {
	a, _ := AdapterFor(o.instance)
	if m.Store == nil || a.MultiThread {
		return "", ""
	}
	t := m.Store.Thread(o.threadID)
	if t == nil {
		return "", ""
	}
	p := m.env.Profile
	cursor := ""
	if t.ResumeInstance == o.instance {
		cursor = t.ResumeCursor
	}
	fallbackOf := ""
	if cursor != "" && (a.Driver != "acp" || p.Fixed(ResumeNativeSession)) {
		n := m.Store.Native(cursor)
		switch {
		case n != nil && n.Exists() && (!p.Has(NativeIDsInMemory) || n.Process == m.process):
			n.Process = m.process
			m.env.Emit(actor, "native.resume", "resumed", sim.A("thread", t.ID), sim.A("native", n.ID), sim.A("instance", o.instance))
			return n.ID, ""
		case n != nil && n.Exists():
			// NativeIDsInMemory: this process never saw the id; it creates.
		case a.Driver == "acp" || p.Fixed(CursorAfterFirstTurn) && !p.Has(CursorAtTurnStart):
			m.env.Emit(actor, "native.resume", "missing", sim.A("thread", t.ID), sim.A("native", cursor),
				sim.A("cursor-at", sim.FormatT(t.CursorAt)), sim.A("then", "fresh session"))
			m.clearCursor(t)
			fallbackOf = cursor
		default:
			m.env.Emit(actor, "native.resume", "missing", sim.A("thread", t.ID), sim.A("native", cursor),
				sim.A("cursor-at", sim.FormatT(t.CursorAt)), sim.A("then", "open fails"))
			return "", cursor
		}
	}
	count := len(m.Store.NativesOf(t.ID))
	n := &store.NativeConversation{ID: fmt.Sprintf("native:%s:%d", t.ID, count+1), ThreadID: t.ID, Instance: o.instance,
		WrittenAtCreate: a.Driver == "acp", Process: m.process, CreatedAt: m.env.Now()}
	m.Store.Natives = append(m.Store.Natives, n)
	attrs := []sim.Attr{sim.A("thread", t.ID), sim.A("native", n.ID), sim.A("instance", o.instance),
		sim.A("written", fmt.Sprint(n.WrittenAtCreate))}
	if fallbackOf != "" {
		attrs = append(attrs, sim.A("fallback-of", fallbackOf), sim.A("context", "lost"))
	}
	m.env.Emit(actor, "native.create", "", attrs...)
	switch {
	case a.Driver == "acp":
		if p.Fixed(ResumeNativeSession) { // reported: the adapter emits no cursor
			m.persistCursor(t, n.ID, o.instance)
		}
	case !p.Fixed(CursorAfterFirstTurn):
		m.persistCursor(t, n.ID, o.instance) // t3code#2336: at session start
	}
	return n.ID, ""
}

// nativeTurnWritten records a durable turn of e's native conversation (a
// turn.terminal) and, with CursorAfterFirstTurn, persists the cursor after
// the first one.
func (m *Manager) nativeTurnWritten(e *Entry, threadID string) {
	if e.native == "" {
		return
	}
	n := m.Store.Native(e.native)
	if n == nil {
		return
	}
	n.Turns++
	if n.Turns == 1 {
		m.env.Emit(actor, "native.turn", "durable", sim.A("thread", threadID), sim.A("native", n.ID))
	}
	t := m.Store.Thread(threadID)
	if t != nil && t.ResumeCursor != n.ID && m.env.Profile.Fixed(CursorAfterFirstTurn) && !m.env.Profile.Has(CursorAtTurnStart) {
		if a, _ := AdapterFor(e.Instance); a.Driver != "acp" {
			cursor, inst, at := t.ResumeCursor, t.ResumeInstance, t.CursorAt
			m.persistCursor(t, n.ID, e.Instance)
			if m.env.Profile.Has(CursorWriteBehind) {
				m.holdWrite(func() { t.ResumeCursor, t.ResumeInstance, t.CursorAt = cursor, inst, at })
			}
		}
	}
	if n.Turns == 1 && m.env.AtCommitPoint(CommitFirstTurnDurable, sim.A("thread", threadID), sim.A("native", n.ID)) {
		m.env.CrashProcess()
	}
}

// CommitFirstTurnDurable is the commit point after a native
// conversation's first turn became durable (and, with
// CursorAfterFirstTurn, the thread's resume cursor was written): a crash
// there leaves the next process to resume a conversation the dead one
// only just made resumable.
const CommitFirstTurnDurable = "native.first-turn"

// CursorWriteBehind is a wrong fix of t3code#2336: the cursor is written
// after the first durable turn, as CursorAfterFirstTurn has it, but
// through a write-behind cache flushed CursorWriteBehindDelay later; a
// process that dies in between loses it, and the thread's next session
// creates a new conversation beside the one that exists. It needs a
// coincidence: a crash within 50 ms of a first turn.
const CursorWriteBehind model.Mutant = "cursor-write-behind"

// CursorWriteBehindDelay is how long the cursor-write-behind mutant's
// cursor trails the first durable turn.
const CursorWriteBehindDelay = 50 * time.Millisecond

func init() {
	model.DeclareCommitPoint(model.CommitPointInfo{Name: CommitFirstTurnDurable, Group: catalog.ProviderSession, Fault: "server-restart",
		Doc: "a native conversation's first turn is durable and the thread's resume cursor written, the session not yet idle: the server crashes"})
	model.RegisterMutant(model.MutantInfo{Name: CursorWriteBehind, Group: catalog.ProviderSession,
		Doc:        "the resume cursor is written after the first durable turn but through a write-behind cache flushed 50 ms later; a crash in between loses it and the next session starts a new conversation beside the old one",
		Scenario:   "tab-ownership",
		Invariants: []string{"resume-binds-stored-native"}, GateStrategy: "commit"})
}

// holdWrite puts a durable write the manager just made into the
// write-behind cache of a write-behind mutant: lose undoes it if the
// process dies before the flush, CursorWriteBehindDelay later.
func (m *Manager) holdWrite(lose func()) {
	w := &lose
	m.unflushed = append(m.unflushed, w)
	m.env.After(CursorWriteBehindDelay, func() {
		if i := slices.Index(m.unflushed, w); i >= 0 {
			m.unflushed = slices.Delete(m.unflushed, i, i+1)
		}
	})
}

func (m *Manager) persistCursor(t *store.Thread, native, instance string) {
	t.ResumeCursor, t.ResumeInstance, t.CursorAt = native, instance, m.env.Now()
	m.env.Emit(actor, "cursor.persist", "", sim.A("thread", t.ID), sim.A("native", native), sim.A("instance", instance))
}

func (m *Manager) clearCursor(t *store.Thread) {
	m.env.Emit(actor, "cursor.clear", "", sim.A("thread", t.ID), sim.A("native", t.ResumeCursor))
	t.ResumeCursor, t.ResumeInstance, t.CursorAt = "", "", 0
}
