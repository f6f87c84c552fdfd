package server

import (
	"slices"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// Commit points of the server process (model.DeclareCommitPoint): where a
// durable write is done and the process has more to do before the write
// is acknowledged or acted on.
const (
	// CommitRunStarted is a user message's run started: the run row and
	// the message id it answers (thread.turn.start's receipt) are written,
	// the acknowledgement is not yet back at the client.
	CommitRunStarted = "run.started"
	// CommitCheckpointCaptured is a completed turn's checkpoint captured
	// and its completion journaled, the ingestion worker not yet at it.
	CommitCheckpointCaptured = "checkpoint.captured"
)

// Write-behind mutants: deliberately wrong fixes that put a write-behind
// cache in front of a durable table, so the write is readable in the
// process at once and durable WriteBehindDelay later; a process that dies
// in between loses it. Each needs a coincidence, a crash within 50 ms of
// the write, which random faults almost never make and the commit
// strategy places at the point.
const (
	// RunMessageWriteBehind holds the message id of a new run (its
	// thread.turn.start receipt) in a write-behind cache: a crash in the
	// window loses it, and a redelivery of the message after the restart
	// starts a second run.
	RunMessageWriteBehind model.Mutant = "run-message-write-behind"
	// JournalWriteBehind journals a runtime event on arrival, as
	// JournalRuntimeEvents does, but through a write-behind cache: a crash
	// in the window loses the completion the inbox was for.
	JournalWriteBehind model.Mutant = "journal-write-behind"
)

// WriteBehindDelay is how long a write-behind mutant's write trails the
// step that made it (a write-behind flush interval).
const WriteBehindDelay = 50 * time.Millisecond

func init() {
	model.DeclareCommitPoint(model.CommitPointInfo{Name: CommitRunStarted, Group: catalog.ProviderSession, Fault: "server-restart",
		Doc: "a user message's run started (the run row and its message id written), its acknowledgement not yet at the client: the server crashes"})
	model.DeclareCommitPoint(model.CommitPointInfo{Name: CommitCheckpointCaptured, Group: catalog.RestartContinuation, Fault: "server-restart",
		Doc: "a completed turn's checkpoint captured and its completion journaled, still queued behind the ingestion backlog: the server crashes"})
	model.RegisterMutant(model.MutantInfo{Name: RunMessageWriteBehind, Group: catalog.ProviderSession,
		Doc:        "a new run's message id (its thread.turn.start receipt) sits in a write-behind cache for 50 ms; a crash in between loses it and the message, delivered again after the restart, runs twice",
		Scenario:   "tab-ownership",
		Invariants: []string{"one-run-per-message"}, GateStrategy: "commit"})
	model.RegisterMutant(model.MutantInfo{Name: JournalWriteBehind, Group: catalog.RestartContinuation,
		Doc:        "a runtime event is journaled on arrival but through a write-behind cache flushed 50 ms later; a crash in between loses the completion queued behind a backlog",
		Scenario:   "request-retry",
		Invariants: []string{"projection-agrees-with-provider"}, GateStrategy: "commit"})
}

// writeBehind holds a durable write of a write-behind mutant until it is
// flushed: lose undoes it in the store when the process dies first.
type writeBehind struct{ lose func() }

// holdWrite puts a write the step just made into the write-behind cache
// (lose undoes it) and flushes it WriteBehindDelay later.
func (s *Server) holdWrite(lose func()) {
	w := &writeBehind{lose: lose}
	s.unflushed = append(s.unflushed, w)
	s.env.After(WriteBehindDelay, func() {
		if i := slices.Index(s.unflushed, w); i >= 0 {
			s.unflushed = slices.Delete(s.unflushed, i, i+1)
		}
	})
}

// loseUnflushed undoes, in the store, every write a dying process had not
// flushed.
func (s *Server) loseUnflushed() {
	for _, w := range s.unflushed {
		w.lose()
	}
	s.unflushed = nil
}

// runStarted is the commit point after a user message's run started.
func (s *Server) runStarted(run *store.Run) {
	if run.MessageID == "" {
		return
	}
	if s.env.Profile.Has(RunMessageWriteBehind) {
		s.holdWrite(func() { run.MessageID = "" })
	}
	if s.env.AtCommitPoint(CommitRunStarted, sim.A("thread", run.ThreadID), sim.A("run", run.ID)) {
		s.env.CrashProcess()
	}
}

// journaled is the commit point after a queued completion was journaled
// (seq its inbox row).
func (s *Server) journaled(it ingestItem) {
	if it.seq > 0 && s.env.Profile.Has(JournalWriteBehind) {
		row := s.Store.RuntimeEvents[it.seq-1]
		// A lost insert: its seq stays taken (as an autoincrement a lost
		// insert consumed), nothing else of the row survives.
		s.holdWrite(func() { *row = store.RuntimeEvent{Seq: row.Seq, Ingested: true} })
	}
	if s.env.AtCommitPoint(CommitCheckpointCaptured, sim.A("thread", it.threadID), sim.A("run", it.runID)) {
		s.env.CrashProcess()
	}
}
