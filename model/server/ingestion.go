package server

import (
	"fmt"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// Provider runtime ingestion (ProviderRuntimeIngestion.ts @006fa4ca): one
// drainable worker (makeDrainableWorker) takes every provider runtime
// event of every thread from an in-memory queue and projects it, one at
// a time, as orchestration commands. CheckpointReactor reads the same
// provider event stream on its own, so a turn's checkpoint is captured as
// soon as the provider completes the turn, whether or not ingestion has
// projected the completion. A storm of tool-call updates from one thread
// (t3code#6556's Grok tool_call_update storm, #5681's Codex subagent
// progress) queues every other thread's events behind it; the queue is
// process memory, so a restart loses what it still holds (t3code#6560).

// IngestEventCost is the worker's time per runtime event: a command with
// its SQLite transaction and subscriber fan-out. A modelling choice that
// puts #6560's backlog (events about 31 min old when the checkpoint was
// persisted) at some 90,000 queued events.
const IngestEventCost = 20 * time.Millisecond

// Ingestion item kinds.
const (
	IngestTurnCompleted = "turn.completed"
	IngestToolCallStorm = "tool-call-storm"
)

// JournalRuntimeEvents is a durable inbox in front of the ingestion
// worker (the expected behaviour #6560 names first: "the canonical
// runtime event stream should be durable enough to replay after a
// restart"): a lifecycle event is written to the store when it arrives,
// marked ingested once projected, and startup resumes ingestion from the
// inbox before it reconciles, so a turn the provider completed while its
// events waited behind a backlog is projected completed. The queued
// tool-call snapshots coalesce (tool.updated is latest-wins upstream), so
// their replay is not modelled. Off is #6560: the queue is memory, the
// restart loses the completion, and the thread's run stays running (or,
// with the startup reconcile, is cancelled and continued) although the
// provider completed it and a checkpoint was captured. Upstream closed the
// issue without a merged fix in the stored record.
const JournalRuntimeEvents model.Switch = "journal-runtime-events"

// JournalOnDequeue is a wrong fix: the inbox row is written when the
// worker takes an event, not when it arrives, so events still queued
// behind a backlog die with the process as before.
const JournalOnDequeue model.Mutant = "journal-on-dequeue"

func init() {
	model.RegisterSwitch(model.SwitchInfo{Name: JournalRuntimeEvents, Group: catalog.RestartContinuation,
		Reports:    []catalog.Report{"t3code#6560"},
		Source:     "ProviderRuntimeIngestion.ts@006fa4ca (makeDrainableWorker over providerService.streamEvents); t3code#6560 expected behaviour",
		Scenario:   "request-retry",
		Invariants: []string{"projection-agrees-with-provider"},
		Reported:   "runtime events wait for the ingestion worker in process memory; a restart behind a backlog loses a completed turn's events",
		Fixed:      "runtime lifecycle events are journaled on arrival and startup ingests the journal before it reconciles",
		Upstream:   "",
		Script:     "scenarios/testdata/restart/storm_quit",
		Mechanism:  "model/server: the provider runtime ingestion worker's queue"})
	model.RegisterMutant(model.MutantInfo{Name: JournalOnDequeue, Group: catalog.RestartContinuation,
		Doc:        "runtime events are journaled when the ingestion worker takes them, so those still queued die with the process",
		Scenario:   "request-retry",
		Invariants: []string{"projection-agrees-with-provider"}})
}

// ingestItem is one entry of the worker's queue.
type ingestItem struct {
	kind     string
	threadID string
	runID    string
	events   int
	cost     time.Duration
	seq      int // the inbox row, 0 for none
}

// ingestBacklog is how long the worker needs for what it holds now.
func (s *Server) ingestBacklog() time.Duration {
	if len(s.ingest) == 0 {
		return 0
	}
	d := max(s.ingestHeadEnd-s.env.Now(), 0)
	for _, it := range s.ingest[1:] {
		d += it.cost
	}
	return d
}

// IngestStorm queues a storm of events tool-call updates of threadID (one
// item of events × IngestEventCost).
func (s *Server) IngestStorm(threadID string, events int) {
	if s.dead {
		return
	}
	s.ingest = append(s.ingest, ingestItem{kind: IngestToolCallStorm, threadID: threadID, events: events,
		cost: time.Duration(events) * IngestEventCost})
	s.pump()
	s.env.Emit(actor, "ingest.storm", "", sim.A("thread", threadID), sim.A("events", fmt.Sprint(events)),
		sim.A("backlog", s.ingestBacklog().String()))
}

// pump starts the worker on the head of the queue unless it is busy.
func (s *Server) pump() {
	if s.ingestBusy || len(s.ingest) == 0 {
		return
	}
	it := s.ingest[0]
	s.ingestBusy, s.ingestHeadEnd = true, s.env.Now()+it.cost
	if it.kind == IngestTurnCompleted && s.env.Profile.Has(JournalOnDequeue) {
		s.ingest[0].seq = s.journal(it)
		it = s.ingest[0]
	}
	s.env.After(it.cost, func() {
		if s.dead {
			return
		}
		s.ingest = s.ingest[1:]
		s.ingestBusy = false
		s.applyIngested(it)
		s.pump()
	})
}

// journal writes it to the durable inbox and returns its row's seq.
func (s *Server) journal(it ingestItem) int {
	seq := len(s.Store.RuntimeEvents) + 1
	s.Store.RuntimeEvents = append(s.Store.RuntimeEvents, &store.RuntimeEvent{Seq: seq, Kind: it.kind,
		ThreadID: it.threadID, RunID: it.runID, At: s.env.Now()})
	return seq
}

func (s *Server) applyIngested(it ingestItem) {
	if it.seq > 0 {
		s.Store.RuntimeEvents[it.seq-1].Ingested = true
	}
	if it.kind == IngestTurnCompleted {
		s.completeTurn(it.threadID, it.runID)
	}
}

// finishTurn hands the provider's turn completion of ref's run to
// ingestion: projected at once when the worker is idle, else captured by
// CheckpointReactor (traced) and queued behind the backlog.
func (s *Server) finishTurn(threadID string, ref *turnRef) {
	s.Store.Checkpoints = append(s.Store.Checkpoints, store.NewRow(&s.Store.Rows.Checkpoints, store.Checkpoint{ThreadID: threadID, RunID: ref.runID, At: s.env.Now()}))
	if !s.ingestBusy {
		s.completeTurn(threadID, ref.runID)
		return
	}
	ref.completing = true
	s.env.Emit(actor, "checkpoint.captured", "", sim.A("thread", threadID), sim.A("run", ref.runID))
	it := ingestItem{kind: IngestTurnCompleted, threadID: threadID, runID: ref.runID}
	if s.env.Profile.Fixed(JournalRuntimeEvents) && !s.env.Profile.Has(JournalOnDequeue) {
		it.seq = s.journal(it)
	}
	s.env.Emit(actor, "ingest.queued", "", sim.A("thread", threadID), sim.A("run", ref.runID),
		sim.A("behind", s.ingestBacklog().String()))
	s.ingest = append(s.ingest, it)
	s.journaled(it)
}

// completeTurn projects the completion of runID: the run ends completed,
// a deferred detach applies, a queued turn is adopted.
func (s *Server) completeTurn(threadID, runID string) {
	ref := s.turnOf(threadID)
	if ref == nil || ref.runID != runID {
		return
	}
	s.endTurn(threadID, store.RunCompleted, "")
	s.applyPendingDetach(threadID)
	s.adoptQueued(threadID)
}

// loseIngestion traces what a dying process's queue held.
func (s *Server) loseIngestion() {
	var runs []string
	events := 0
	for _, it := range s.ingest {
		events += max(it.events, 1)
		if it.kind == IngestTurnCompleted {
			runs = append(runs, it.runID)
		}
	}
	if len(s.ingest) > 0 {
		attrs := []sim.Attr{sim.A("events", fmt.Sprint(events))}
		if len(runs) > 0 {
			attrs = append(attrs, sim.A("completions", fmt.Sprint(runs)))
		}
		s.env.Emit(actor, "ingest.lost", "", attrs...)
	}
	s.ingest = nil
}

// replayInbox is startup's resume of ingestion from the durable inbox:
// every event not yet ingested is projected, before reconcile.
func (s *Server) replayInbox() {
	for _, ev := range s.Store.RuntimeEvents {
		if ev.Ingested {
			continue
		}
		ev.Ingested = true
		r := s.Store.Run(ev.RunID)
		if ev.Kind != IngestTurnCompleted || r == nil || r.Status != store.RunRunning {
			continue
		}
		s.Store.EndRun(r.ID, store.RunCompleted)
		s.env.Obligations.Discharge(RunSettles, r.ID+" of "+r.ThreadID)
		s.env.Emit(actor, "ingest.replay", store.RunCompleted, sim.A("thread", r.ThreadID), sim.A("run", r.ID),
			sim.A("seq", fmt.Sprint(ev.Seq)))
	}
}
