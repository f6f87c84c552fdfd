package server

import (
	"strings"

	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// Restart continuation (RestartContinuation.ts @ 0f504549, MODEL.md §8):
// which run a restart may continue, the continuation's at-most-once
// dispatch, and the shutdown preparation that records background work a
// graceful stop is about to cancel.

// ContinuationCandidate is what restartContinuationRun reads about a
// thread's latest run, its provider thread P and P's session, as the
// projection says at the start of a reconcile pass.
type ContinuationCandidate struct {
	ThreadArchived bool
	ThreadDeleted  bool
	ThreadInstance string

	RunStatus   string
	RunInstance string
	// ContinuationOf is the run's restartContinuationOfRunId (a continuation
	// that was still starting).
	ContinuationOf string
	// Compaction: the run's attempt was a context compaction.
	Compaction bool

	ProviderThread string
	// NativeRef: P has a strong native thread ref of the run's driver.
	NativeRef bool
	// ProviderThreadActive: P is active (not idle or closed).
	ProviderThreadActive bool
	SessionInstance      string
	SessionStatus        string
	// RunningTurns counts running provider turns of the run's active
	// attempt.
	RunningTurns int
	// LostWork lists the provider threads that lost background work to the
	// restart.
	LostWork []string
}

// Run statuses the projection knows beyond the models' own.
const (
	RunQueued    = "queued"
	RunPreparing = "preparing"
	RunStarting  = "starting"
	RunWaiting   = "waiting"
)

// RestartContinuationRun is restartContinuationRun's eligibility: a live
// thread whose latest run (not a compaction) is running with a live
// provider turn; a prepared continuation (starting, restartContinuationOf
// set), which needs no live turn since a crash before provider start
// leaves none; or a completed or waiting run whose provider thread lost
// background work. The run's instance is the thread's; P has a native ref
// and its session the run's instance; a live turn needs P active, a
// session not stopped or in error, and a running provider turn.
func RestartContinuationRun(c ContinuationCandidate) bool {
	if c.ThreadArchived || c.ThreadDeleted || c.Compaction {
		return false
	}
	if c.ThreadInstance != c.RunInstance || !c.NativeRef || c.SessionInstance != c.RunInstance {
		return false
	}
	needsLiveTurn := false
	switch {
	case c.RunStatus == store.RunRunning:
		needsLiveTurn = true
	case c.RunStatus == RunStarting && c.ContinuationOf != "":
		// A prepared continuation: the live-turn checks do not apply.
	case c.RunStatus == store.RunCompleted || c.RunStatus == RunWaiting:
		lost := false
		for _, p := range c.LostWork {
			if p == c.ProviderThread {
				lost = true
			}
		}
		if !lost {
			return false
		}
	default:
		return false
	}
	if needsLiveTurn {
		switch c.SessionStatus {
		case "stopped", "error":
			return false
		}
		if !c.ProviderThreadActive || c.RunningTurns == 0 {
			return false
		}
	}
	return true
}

// ContinuationText is the prompt of a restart continuation of a run the
// restart cancelled.
const ContinuationText = "Continue where you left off."

// LostWorkNote is the prompt of a continuation for background work a
// restart cancelled under a settled run: it names the work.
func LostWorkNote(work []store.LostWork) string {
	var parts []string
	for _, w := range work {
		parts = append(parts, w.Kind+" `"+w.Description+"`")
	}
	return "The server restarted and cancelled background work you had started: " + strings.Join(parts, ", ") +
		". Check whether it finished and start it again if it is still needed."
}

// continueRestartedRuns is continueRestartedRun for every thread whose
// latest run reconcile cancelled (the effect worker's provider-runtime.continue
// effects; see docs/fidelity.md for what the worlds do not project).
func (s *Server) continueRestartedRuns() {
	if s.dead {
		return
	}
	// The marked latest runs in thread order, each still checked when its
	// turn comes (an earlier continuation could have started a run).
	for _, latest := range s.Store.RestartSources() {
		if runs := s.Store.RunsOf(latest.ThreadID); runs[len(runs)-1] != latest {
			continue
		}
		s.ContinueRestartedRun(latest.ThreadID, latest.ID)
	}
}

// ContinueRestartedRun is continueRestartedRun(threadId, sourceRunId): it
// does nothing unless the setting is on for the thread's project
// (ContinuesAfterRestart), the thread is live, no
// continuation message of the source run exists yet, the source run is
// cancelled (or settled with lost background work), no newer run exists and
// the thread is still on the run's instance; then it dispatches the
// continuation message under command:restart-continuation:<sourceRunId>
// and starts its run. It reports whether it dispatched.
func (s *Server) ContinueRestartedRun(threadID, sourceRunID string) bool {
	if s.dead {
		return false
	}
	t := s.Store.Thread(threadID)
	if t == nil || !s.ContinuesAfterRestart(t.ProjectID) || t.Archived || t.Deleted || t.ActiveRunID != "" {
		return false
	}
	msgID := "message:restart-continuation:" + sourceRunID
	cmd := "command:restart-continuation:" + sourceRunID
	if s.Store.Message(msgID) != nil || s.Store.Receipt(cmd) != nil {
		return false
	}
	src := s.Store.Run(sourceRunID)
	if src == nil || src.ThreadID != threadID || t.Instance != src.Instance {
		return false
	}
	text := ContinuationText
	switch {
	case src.Status == store.RunCancelled:
	case (src.Status == store.RunCompleted || src.Status == RunWaiting) && len(src.LostWork) > 0:
		text = LostWorkNote(src.LostWork)
	default:
		return false
	}
	// A newer run of the thread: any after src (src is one of them).
	if runs := s.Store.RunsOf(threadID); runs[len(runs)-1] != src {
		return false
	}
	s.Store.Receipts = append(s.Store.Receipts, store.NewRow(&s.Store.Rows.Receipts, store.Receipt{CommandID: cmd, ThreadID: t.ID,
		Status: store.ReceiptAccepted}))
	msg := store.NewRow(&s.Store.Rows.Messages, store.Message{ID: msgID, ThreadID: t.ID, CommandID: cmd, Text: text,
		ContinuationOf: sourceRunID})
	s.Store.Messages = append(s.Store.Messages, msg)
	s.env.Emit(actor, "restart-continuation", "", sim.A("thread", t.ID), sim.A("source-run", sourceRunID), sim.A("text", text))
	s.startRun(t.ID, sourceRunID)
	msg.RunID = t.ActiveRunID
	return true
}

// ContinuesAfterRestart is the resolved "continue threads after server
// update" setting of a project: its override if it has one, else the
// environment's.
func (s *Server) ContinuesAfterRestart(projectID string) bool {
	if p := s.Store.Project(projectID); p != nil && p.ContinueThreadsAfterServerUpdate != nil {
		return *p.ContinueThreadsAfterServerUpdate
	}
	return s.Store.Settings.ContinueThreadsAfterServerUpdate
}

// Effect types.
const EffectContinue = "provider-runtime.continue"

// PrepareForShutdown is prepareForShutdown: for every running run whose
// own provider thread runs background work, it writes the restart
// continuation effect (once); background work of another provider thread
// of the same app thread (one the thread switched away from) is not the
// run's and writes nothing. It returns the number of writes.
func (s *Server) PrepareForShutdown() int {
	writes := 0
	for _, r := range s.Store.Runs[s.Store.OpenRunsFrom():] {
		if r.Status != store.RunRunning {
			continue
		}
		p := r.ProviderThreadID
		if p == "" {
			p = r.ThreadID
		}
		own := false
		for _, w := range s.Store.Background {
			if w.ProviderThread == p {
				own = true
			}
		}
		if !own {
			continue
		}
		id := "effect:restart-continuation:" + r.ID
		exists := false
		for _, e := range s.Store.Effects {
			if e.ID == id {
				exists = true
			}
		}
		if exists {
			continue
		}
		s.Store.Effects = append(s.Store.Effects, &store.Effect{ID: id, Type: EffectContinue, SourceRun: r.ID, Status: "pending"})
		writes++
	}
	return writes
}
