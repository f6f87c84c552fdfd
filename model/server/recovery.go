package server

import (
	"time"

	"github.com/orchsim/orchsim/model/store"
)

// ProviderRuntimeRecoveryService.reconcile (ProviderRuntimeRecoveryService.ts
// @ 03800668, MODEL.md §8) over the durable projection. The worlds' runs
// have no subtree rows, provider threads, requests or effects, so for them
// it cancels the running runs and nothing else; the fidelity cases (RC-10,
// RC-11, RC-13, RC-14) build the subtrees.

// RecoveryEvent is one row update a reconcile commits, in order.
type RecoveryEvent struct {
	Entity string // run, attempt, node, provider-turn, message, turn-item, runtime-request, provider-thread, provider-session, effect
	ID     string
	Status string
	// Instance attributes a cancelled item to a provider instance.
	Instance string
}

// BackgroundCancelled is a run.background-work-cancelled record.
type BackgroundCancelled struct {
	RunID string
	Kinds []string
}

// RecoverySummary is what a reconcile did.
type RecoverySummary struct {
	TerminalizedRuns int
	StoppedSessions  int
	RetiredEffects   int
	RequeuedEffects  int
	ClosedRequests   int
	Background       []BackgroundCancelled
	// CancelledRuns are the runs it cancelled, in store order.
	CancelledRuns []*store.Run
	Events        []RecoveryEvent
}

// Effect types: process-bound ones die with the process and are cancelled;
// a checkpoint capture is replay-safe and requeued.
const (
	EffectCheckpointCapture = "checkpoint.capture"
)

// ProcessBoundEffects are the effect types a restart cancels.
var ProcessBoundEffects = []string{"provider-turn.start", "provider-turn.interrupt", "provider-turn.steer",
	"provider-turn.restart", "runtime-request.respond"}

func processBound(t string) bool {
	for _, x := range ProcessBoundEffects {
		if x == t {
			return true
		}
	}
	return false
}

// backgroundKind reports whether a turn item of kind is background work a
// restart cancels (restartCancelledBackgroundWork kinds), as opposed to a
// tool call the turn was waiting on.
func backgroundKind(kind string) bool {
	switch kind {
	case "shell", "subagent", "monitor", "task":
		return true
	}
	return false
}

func nonTerminal(status string) bool {
	switch status {
	case RunPreparing, RunStarting, store.RunRunning, RunWaiting:
		return true
	}
	return false
}

func openStatus(status string) bool {
	switch status {
	case "running", "waiting", "pending", "starting", "queued":
		return true
	}
	return false
}

// Reconcile is reconcile(trigger) at now: non-terminal runs are cancelled
// with their subtrees (except a waiting run whose checkpoint capture is
// pending or running: its running items are cancelled and recorded as
// lost background work, and the capture requeued); queued runs are held
// (QueueHeld) with their execution state; leftover running items of
// settled runs are cancelled with their nodes and subagents, and recorded
// with the tasks left on their provider thread's roster as that run's lost
// background work; pending runtime requests other than
// message-capability ones expire (startup) or are cancelled (shutdown);
// active provider threads go idle with empty rosters; sessions stop;
// process-bound effects are cancelled.
func Reconcile(st *store.Store, trigger string, now time.Duration) RecoverySummary {
	var sum RecoverySummary
	ev := func(entity, id, status, instance string) {
		sum.Events = append(sum.Events, RecoveryEvent{Entity: entity, ID: id, Status: status, Instance: instance})
	}
	pthread := func(id string) *store.ProviderThread {
		for _, p := range st.ProviderThreads {
			if p.ID == id {
				return p
			}
		}
		return nil
	}
	capture := func(runID string) *store.Effect {
		for _, e := range st.Effects {
			if e.SourceRun == runID && e.Type == EffectCheckpointCapture && (e.Status == "pending" || e.Status == "running") {
				return e
			}
		}
		return nil
	}
	ownedByRequest := func(p *store.RunPart) bool {
		if p.RequestID == "" {
			return false
		}
		for _, r := range st.RuntimeRequests {
			if r.ID == p.RequestID && r.Status == store.RequestPending {
				return true
			}
		}
		return false
	}
	// attribution: the run's instance, else the item's own, else its
	// provider thread's.
	attribute := func(r *store.Run, p *store.RunPart) string {
		switch {
		case r != nil && r.Instance != "":
			return r.Instance
		case p.Instance != "":
			return p.Instance
		}
		if pt := pthread(p.ProviderThread); pt != nil {
			return pt.Instance
		}
		return ""
	}
	cancelPart := func(r *store.Run, p *store.RunPart) {
		p.Status, p.CompletedAt = store.RunCancelled, now
		ev(p.Kind, p.ID, store.RunCancelled, attribute(r, p))
	}
	partsOf := func(runID, kind string) []*store.RunPart {
		var out []*store.RunPart
		for _, p := range st.Parts {
			if p.RunID == runID && p.Kind == kind {
				out = append(out, p)
			}
		}
		return out
	}

	// Background work cancelled under settled runs, by run, in run order:
	// leftover items and the provider threads' rosters.
	var lostRuns []string
	lost := map[string][]string{}
	lose := func(runID, kind string) {
		if _, ok := lost[runID]; !ok {
			lostRuns = append(lostRuns, runID)
		}
		for _, k := range lost[runID] {
			if k == kind {
				return
			}
		}
		lost[runID] = append(lost[runID], kind)
	}
	// The streaming messages of each run, in table order (a scan of every
	// message per cut run was quadratic in a world of 1,000 threads, and a
	// scan of every message per restart grew with the day's history:
	// Store.StreamingMessages reads only the ones that stream).
	var streaming map[string][]*store.Message
	runs := st.Runs
	if len(st.Parts) == 0 {
		// Without run parts a settled run has nothing to reconcile (the
		// default case below only cancels its leftover parts).
		runs = st.Runs[st.OpenRunsFrom():]
	}
	for _, r := range runs {
		switch {
		case r.Status == RunQueued:
			// Accepted queued work is held behind the cut run, its attempt
			// and nodes untouched.
			r.QueueHeld = true
			ev("run", r.ID, RunQueued, "")
		case r.Status == RunWaiting && capture(r.ID) != nil:
			// The run stays waiting; what ran in the background is lost.
			var kinds []string
			for _, p := range partsOf(r.ID, "turn-item") {
				if p.Status != "running" || p.AppOwned {
					continue
				}
				cancelPart(r, p)
				seen := false
				for _, k := range kinds {
					seen = seen || k == p.ItemKind
				}
				if !seen {
					kinds = append(kinds, p.ItemKind)
				}
			}
			if len(kinds) > 0 {
				sum.Background = append(sum.Background, BackgroundCancelled{RunID: r.ID, Kinds: kinds})
			}
		case nonTerminal(r.Status):
			r.Status = store.RunCancelled
			if t := st.Thread(r.ThreadID); t != nil && t.ActiveRunID == r.ID {
				t.ActiveRunID = ""
			}
			sum.TerminalizedRuns++
			sum.CancelledRuns = append(sum.CancelledRuns, r)
			ev("run", r.ID, store.RunCancelled, "")
			for _, kind := range []string{"attempt", "node", "provider-turn"} {
				for _, p := range partsOf(r.ID, kind) {
					if openStatus(p.Status) && !p.AppOwned && !ownedByRequest(p) {
						cancelPart(r, p)
					}
				}
			}
			if streaming == nil { // grouped once: nothing here changes a message's run
				streaming = map[string][]*store.Message{}
				for _, m := range st.StreamingMessages() {
					streaming[m.RunID] = append(streaming[m.RunID], m)
				}
			}
			for _, m := range streaming[r.ID] {
				if m.Streaming {
					m.Streaming = false
					ev("message", m.ID, "streaming=false", "")
				}
			}
			for _, p := range partsOf(r.ID, "turn-item") {
				if openStatus(p.Status) && !p.AppOwned && !ownedByRequest(p) {
					cancelPart(r, p)
				}
			}
		default:
			// A settled run: leftover running items and their nodes.
			for _, p := range partsOf(r.ID, "turn-item") {
				if !openStatus(p.Status) || p.AppOwned || ownedByRequest(p) {
					continue
				}
				cancelPart(r, p)
				if backgroundKind(p.ItemKind) {
					lose(r.ID, p.ItemKind)
				}
				for _, n := range partsOf(r.ID, "node") {
					if n.ID == p.Node && openStatus(n.Status) {
						cancelPart(r, n)
					}
				}
				for _, sa := range partsOf(r.ID, "subagent") {
					if sa.ID == p.Subagent && openStatus(sa.Status) {
						cancelPart(r, sa)
					}
				}
			}
		}
	}

	reason := "The server restarted before this runtime request was resolved."
	status := store.RequestExpired
	if trigger == "shutdown" {
		reason, status = "The server shut down before this runtime request was resolved.", store.RequestCancelled
	}
	for _, q := range st.RuntimeRequests {
		if q.Status != store.RequestPending || q.Capability == store.CapabilityMessage {
			continue
		}
		q.Status, q.Capability, q.Reason = status, store.CapabilityNotResumable, reason
		sum.ClosedRequests++
		ev("runtime-request", q.ID, status, "")
		for _, p := range st.Parts {
			if p.RequestID == q.ID && openStatus(p.Status) {
				p.Status, p.CompletedAt = store.RunCancelled, now
				ev(p.Kind, p.ID, store.RunCancelled, "")
			}
		}
	}

	for _, pt := range st.ProviderThreads {
		if pt.Status != "active" && len(pt.Roster) == 0 {
			continue
		}
		// A roster entry that is not one of the items already counted is a
		// task lost under the latest settled run of this provider thread.
		var owner *store.Run
		for _, r := range st.Runs {
			if r.ProviderThreadID == pt.ID {
				owner = r
			}
		}
		if owner != nil && !nonTerminal(owner.Status) && owner.Status != RunQueued {
			for _, task := range pt.Roster {
				counted := false
				for _, p := range partsOf(owner.ID, "turn-item") {
					counted = counted || p.ID == task
				}
				if !counted {
					lose(owner.ID, "task")
				}
			}
		}
		if pt.Status == "active" {
			pt.Status = "idle"
		}
		pt.Roster = nil
		ev("provider-thread", pt.ID, pt.Status, "")
	}
	for _, id := range lostRuns {
		sum.Background = append(sum.Background, BackgroundCancelled{RunID: id, Kinds: lost[id]})
	}
	for _, ps := range st.ProviderSessions {
		if ps.Status == "stopped" || ps.Status == "error" {
			continue
		}
		ps.Status, ps.UpdatedAt = "stopped", now
		sum.StoppedSessions++
		ev("provider-session", ps.ID, "stopped", "")
	}
	for _, e := range st.Effects {
		switch {
		case (e.Status == "pending" || e.Status == "running") && processBound(e.Type):
			e.Status = "cancelled"
			sum.RetiredEffects++
		case e.Status == "running" && e.Type == EffectCheckpointCapture,
			e.Status == "running" && e.Type == EffectContinue:
			e.Status = "pending"
			sum.RequeuedEffects++
		}
	}
	return sum
}
