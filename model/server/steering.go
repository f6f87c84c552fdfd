package server

import (
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// Steering and the session shutdown finalizer (t3code#4561): a message the
// user sends while a turn runs is a durable pending turn start
// (thread.turn-start-requested; the session projection says starting). The
// turn's completion adopts it; a session that stops abandons it (the
// projector clears the pending start on a stopped, interrupted or error
// session-set, PR #4245's review of projector.ts). Stopping a turn that
// has a queued message stops the thread's provider session: its shutdown
// finalizer writes the runtime binding stopped at once
// (provider_session_runtime), while the stopped session-set reaches the
// projection only when the session's exit event is ingested, moments
// later. A quit in between leaves the two tables disagreeing.

// Session statuses the models write.
const (
	SessionStarting = "starting"
	SessionRunning  = "running"
	SessionStopped  = "stopped"
)

// ReconcileStoppedSessions is PR #4562's startup pass (the reaper's first
// sweep): every thread whose durable runtime binding is stopped while its
// session projection still says starting or running is projected stopped
// through the stopped-session path, which abandons its queued turns. Off
// is #4561: nothing replays the stopped state after the restart, the
// reaper skips the binding because it is already stopped, the thread
// shows Working and its queued turn stays pending. PR #4562 was closed
// unmerged.
const ReconcileStoppedSessions model.Switch = "reconcile-stopped-sessions"

// ReconcileKeepsQueuedTurn is a wrong fix: the startup pass projects the
// session stopped but leaves the thread's queued turn pending.
const ReconcileKeepsQueuedTurn model.Mutant = "reconcile-keeps-queued-turn"

func init() {
	model.RegisterSwitch(model.SwitchInfo{Name: ReconcileStoppedSessions, Group: catalog.RestartContinuation,
		Reports:    []catalog.Report{"t3code#4561"},
		Source:     "t3code PR #4562 (ProviderSessionReaper initial sweep); projector.ts pendingTurnStart clearing (PR #4245 review)",
		Scenario:   "request-retry",
		Invariants: []string{"stopped-session-settles"},
		Reported:   "a quit between the shutdown finalizer's runtime write and the stopped session-set leaves the projection starting and the queued turn pending for good",
		Fixed:      "startup projects every thread whose runtime binding is stopped as stopped, abandoning its queued turns",
		Upstream:   "",
		Script:     "scenarios/testdata/restart/steer_stop_quit",
		Mechanism:  "model/server: the steering queue and the session shutdown finalizer"})
	model.RegisterMutant(model.MutantInfo{Name: ReconcileKeepsQueuedTurn, Group: catalog.RestartContinuation,
		Doc:        "the startup pass projects a stopped session stopped but leaves its queued turn pending",
		Scenario:   "request-retry",
		Invariants: []string{"stopped-session-settles"}})
}

// SessionExitMin and SessionExitMax bound how long after the finalizer's
// runtime write the session's exit event is projected (a modelling choice:
// the scope close of a released session, see provider's scope-close).
const (
	SessionExitMin = 20 * time.Millisecond
	SessionExitMax = 3 * time.Second
)

// Steer is a user message sent while threadID's turn runs: a durable
// pending turn start, adopted when the turn completes. It reports false
// when there is no running turn to steer or a message already waits.
func (s *Server) Steer(threadID, messageID string) bool {
	t := s.Store.Thread(threadID)
	if s.dead || t == nil || t.ActiveRunID == "" || s.Store.PendingQueuedTurn(threadID) != nil {
		return false
	}
	if ref := s.turnOf(threadID); ref == nil || ref.completing {
		return false
	}
	s.Store.QueuedTurns = append(s.Store.QueuedTurns, &store.QueuedTurn{ThreadID: threadID, MessageID: messageID,
		Status: store.QueuedPending, At: s.env.Now()})
	t.SessionStatus = SessionStarting
	s.env.Emit(actor, "turn.queued", "", sim.A("thread", threadID), sim.A("message", messageID), sim.A("run", t.ActiveRunID))
	return true
}

// adoptQueued starts the run of threadID's queued message after its turn
// completed.
func (s *Server) adoptQueued(threadID string) {
	q := s.Store.PendingQueuedTurn(threadID)
	t := s.Store.Thread(threadID)
	if q == nil || s.dead || t == nil || t.ActiveRunID != "" {
		return
	}
	q.Status = store.QueuedAdopted
	s.env.Emit(actor, "turn.queue-resolved", store.QueuedAdopted, sim.A("thread", threadID), sim.A("message", q.MessageID))
	s.startRunFor(threadID, "", q.MessageID)
}

// abandonQueued cancels threadID's queued turn (its session ended).
func (s *Server) abandonQueued(threadID string) {
	if q := s.Store.PendingQueuedTurn(threadID); q != nil {
		q.Status = store.QueuedCancelled
		s.env.Emit(actor, "turn.queue-resolved", store.QueuedCancelled, sim.A("thread", threadID), sim.A("message", q.MessageID))
	}
}

// stopSession stops threadID's provider session after a stop with a
// queued message: the finalizer's runtime write now, the projection when
// the exit event is ingested (lost if the process dies first).
func (s *Server) stopSession(threadID string) {
	t := s.Store.Thread(threadID)
	t.RuntimeStatus = SessionStopped
	s.env.Emit(actor, "session.runtime", SessionStopped, sim.A("thread", threadID))
	s.env.After(s.finalizer.Duration("session-exit", SessionExitMin, SessionExitMax), func() {
		if s.dead {
			return
		}
		s.projectStopped(threadID, "session.exited", true)
	})
}

// projectStopped is the stopped session-set of threadID: the projection
// says stopped (while the runtime binding still does) and, with
// abandon, the queued turn is cancelled.
func (s *Server) projectStopped(threadID, cause string, abandon bool) {
	t := s.Store.Thread(threadID)
	if t.RuntimeStatus == SessionStopped && t.SessionStatus != SessionStopped {
		t.SessionStatus = SessionStopped
		s.env.Emit(actor, "session.projected", SessionStopped, sim.A("thread", threadID), sim.A("cause", cause))
	}
	if abandon {
		s.abandonQueued(threadID)
	}
}

// reconcileStoppedSessions is ReconcileStoppedSessions' startup pass.
func (s *Server) reconcileStoppedSessions() {
	for _, t := range s.Store.Threads {
		if t.RuntimeStatus != SessionStopped {
			continue
		}
		if t.SessionStatus == SessionStarting || t.SessionStatus == SessionRunning || s.Store.PendingQueuedTurn(t.ID) != nil {
			s.projectStopped(t.ID, "startup-reconcile", !s.env.Profile.Has(ReconcileKeepsQueuedTurn))
		}
	}
}
