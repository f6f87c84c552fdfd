package invariants

import (
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// OneFirePerSlot is written from ScheduledTaskService's contract (t3code
// @01636256): runTask re-reads the row because a task "deleted, paused, or
// postponed since the poll loaded it ... may [not] fire"; "a due
// fixed-time run that is long past its slot (server was off or asleep) is
// skipped and re-aimed at its next occurrence, not fired late"; markRunning
// records lastRunAt before the dispatch, and the startup release exists so
// that not "the first poll after every restart re-fires the interrupted
// task". Each (task, slot) fires at most once, never while the task is
// disabled, never more than the 10 min grace (plus a poll) after its slot,
// and every fire records lastRunAt. It reads the scheduler's
// schedule.created, schedule.enabled and schedule.fire (slot, late,
// recorded).
const OneFirePerSlot = "one-fire-per-slot"

// FireGrace is MISSED_FIXED_TIME_GRACE_MS (10 min) plus one 5 s poll.
const FireGrace = 10*time.Minute + 5*time.Second

func init() {
	register(Info{Name: OneFirePerSlot, Group: catalog.Orchestrator,
		Property: "a scheduled task fires at most once per slot, only while enabled, within the 10 min grace of its slot, and every fire records lastRunAt",
		Source:   "ScheduledTaskService.ts at t3code@01636256 (runTask's re-read, rescheduleMissedRun, markRunning before dispatch, the startup release); Schedule.ts MISSED_FIXED_TIME_GRACE_MS",
		Reports:  []catalog.Report{"anthropics/claude-code#74055"},
		New:      func() sim.Checker { return &slotFires{rows: map[string]*slotRow{}} }})
}

type slotRow struct {
	disabled   bool
	disabledAt time.Duration
	fired      map[string]time.Duration // slot -> when it fired
}

type slotFires struct {
	rows map[string]*slotRow
}

func (*slotFires) Name() string { return OneFirePerSlot }

// ObservedKinds implements sim.KindObserver.
func (*slotFires) ObservedKinds() []string { return slotFiresKinds }

var slotFiresKinds = []string{"schedule.created", "schedule.enabled", "schedule.fire"}

func (f *slotFires) row(id string) *slotRow {
	r := f.rows[id]
	if r == nil {
		r = &slotRow{fired: map[string]time.Duration{}}
		f.rows[id] = r
	}
	return r
}

func (f *slotFires) Observe(ev *sim.Event) *sim.Violation {
	if ev.Actor != "scheduler" {
		return nil
	}
	id := ev.Get("schedule")
	switch ev.Kind {
	case "schedule.created":
		f.row(id)
	case "schedule.enabled":
		r := f.row(id)
		r.disabled = ev.Outcome == "disabled"
		r.disabledAt = ev.At
	case "schedule.fire":
		r := f.row(id)
		slot := ev.Get("slot")
		switch late, err := time.ParseDuration(ev.Get("late")); {
		case r.disabled:
			return violation(OneFirePerSlot,
				"scheduled task %s fired (%s) for its slot %s at %s while disabled since %s",
				id, ev.Outcome, slot, at(ev.At), at(r.disabledAt))
		case hasSlot(r.fired, slot):
			return violation(OneFirePerSlot,
				"scheduled task %s fired twice for its slot %s: at %s, and again (%s) at %s",
				id, slot, at(r.fired[slot]), ev.Outcome, at(ev.At))
		case err == nil && late > FireGrace:
			return violation(OneFirePerSlot,
				"scheduled task %s fired (%s) at %s for its slot %s, %s late: a slot missed by more than 10 min is skipped, not fired late",
				id, ev.Outcome, at(ev.At), slot, late)
		case ev.Get("recorded") != at(ev.At):
			return violation(OneFirePerSlot,
				"scheduled task %s fired (%s) for its slot %s at %s without recording lastRunAt (recorded %s)",
				id, ev.Outcome, slot, at(ev.At), ev.Get("recorded"))
		}
		r.fired[slot] = ev.At
	}
	return nil
}

func hasSlot(fired map[string]time.Duration, slot string) bool {
	_, ok := fired[slot]
	return ok
}

// probeRestartAfterScheduledFire is the situation durable-schedule-fires
// needs: a server started after a scheduled task had fired (or while a
// slot passed with the server down).
var probeRestartAfterScheduledFire = declareProbe(ProbeInfo{Name: "restart-after-scheduled-fire", Group: catalog.Orchestrator,
	Doc: "a server started after a scheduled task had fired in an earlier process"})

// scheduleRestarts follows fires and server starts, for the probe.
type scheduleRestarts struct{ fired bool }

func (s *scheduleRestarts) observe(ev *sim.Event, hit func(string)) {
	switch {
	case ev.Actor == "scheduler" && ev.Kind == "schedule.fire":
		s.fired = true
	case ev.Kind == "server.start" && s.fired:
		hit(probeRestartAfterScheduledFire)
	}
}
