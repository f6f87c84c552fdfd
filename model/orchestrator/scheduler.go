package orchestrator

import (
	"fmt"
	"slices"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// The scheduler of schedule_task rows, from ScheduledTaskService.ts and
// Schedule.ts at t3code@01636256/@01a7974c: rows with a daily fixed_time
// slot, a poll that runs due rows, runTask (re-read the row, re-check
// enabled and nextRunAt, markRunning writes lastRunAt before the
// dispatch, markCompleted advances nextRunAt), rescheduleMissedRun (a
// fixed-time run more than MISSED_FIXED_TIME_GRACE_MS past its slot is
// re-aimed at its next occurrence, not fired late), setEnabled (disabling
// clears nextRunAt) and the startup release of rows a dead process left
// 'running'. Modelling choices: one virtual day is 24 h from T+0; the 5 s
// poll is one timer per row, woken on the first poll tick at or after its
// slot (same observable timing); a fire delivers the task's prompt to the
// thread it is bound to as a queued message (the model does not start
// its run); a fire's markRunning and markCompleted happen in one instant,
// so no row is left 'running'.
const (
	// Day is the period of a daily fixed_time schedule.
	Day = 24 * time.Hour
	// SchedulerPoll is runDueTasks' poll period (5 s).
	SchedulerPoll = 5 * time.Second
	// MissedFixedTimeGrace is MISSED_FIXED_TIME_GRACE_MS: how late a
	// fixed-time run may fire before it counts as missed (10 min).
	MissedFixedTimeGrace = 10 * time.Minute
)

// DurableScheduleFires is the scheduler as ScheduledTaskService has it:
// after a restart every due row goes through runTask, which re-reads the
// row (a disabled or postponed task does not fire), records lastRunAt
// before the dispatch and advances nextRunAt after it, and a fixed-time
// slot missed by more than the grace is skipped, so each (task, slot)
// fires at most once and only near its slot. Off is the catch-up of
// anthropics/claude-code#74055 (and #82517): the process remembers what
// it fired in memory only, so at startup it fires a catch-up for every
// task whose last slot has passed, today's already-fired slots and
// disabled tasks included, minutes after the restart and far from the
// slot, and the catch-up records no lastRunAt. T3 Code's history has no
// such catch-up pass (its scheduler polls durable rows); the reported
// side is the report's behaviour in T3's terms.
const DurableScheduleFires model.Switch = "durable-schedule-fires"

// CatchUpChecksEnabledOnly is a wrong fix: the startup catch-up re-checks
// the enabled flag, but still fires every enabled task whose last slot
// passed, already fired or long missed.
const CatchUpChecksEnabledOnly model.Mutant = "catch-up-checks-enabled-only"

// ScheduleRowWriteBehind is a wrong fix (a write-behind cache in front of
// the scheduled_tasks table, to spare the poll a write per fire): a fire's
// markRunning and markCompleted (lastRunAt, the run count, the advanced
// nextRunAt) are flushed ScheduleRowWriteBehindDelay after the dispatch,
// the task's message itself at once. A process that dies in between loses
// the row update, so the next process finds the slot still due, within
// its grace, and fires it again. It needs a coincidence: a crash within
// 50 ms of a scheduled fire.
const ScheduleRowWriteBehind model.Mutant = "schedule-row-write-behind"

// ScheduleRowWriteBehindDelay is how long the schedule-row-write-behind
// mutant's row update trails its fire (a write-behind flush interval).
const ScheduleRowWriteBehindDelay = 50 * time.Millisecond

// CommitScheduleFired is the commit point between a scheduled fire's
// dispatch (the task's message written) and whatever follows it in the
// process: a crash placed there is the first thing the next process's
// scheduler has to survive.
const CommitScheduleFired = "schedule.fired"

// CommitScheduleToggled is the commit point after setEnabled wrote a
// task's enabled flag (and its nextRunAt), with its answer to the user
// still to go.
const CommitScheduleToggled = "schedule.toggled"

// ScheduleToggleWriteBehind is a wrong fix of the same kind for
// setEnabled: the flag and nextRunAt are flushed 50 ms after the user
// toggled them; a crash in between puts the old flag back, so a task the
// user disabled fires after the restart.
const ScheduleToggleWriteBehind model.Mutant = "schedule-toggle-write-behind"

func init() {
	model.DeclareCommitPoint(model.CommitPointInfo{Name: CommitScheduleFired, Group: catalog.Orchestrator, Fault: "server-restart",
		Doc: "a scheduled task fired (its message written, its row marked run and advanced): the server crashes before anything else happens"})
	model.DeclareCommitPoint(model.CommitPointInfo{Name: CommitScheduleToggled, Group: catalog.Orchestrator, Fault: "server-restart",
		Doc: "a user's setEnabled wrote the task's enabled flag and nextRunAt, the answer not yet back: the server crashes"})
	model.RegisterMutant(model.MutantInfo{Name: ScheduleToggleWriteBehind, Group: catalog.Orchestrator,
		Doc:        "setEnabled's flag sits in a write-behind cache for 50 ms; a crash in between puts the old flag back, so a task the user disabled fires after the restart",
		Scenario:   "request-retry",
		Invariants: []string{"one-fire-per-slot"}, GateStrategy: "commit"})
	model.RegisterMutant(model.MutantInfo{Name: ScheduleRowWriteBehind, Group: catalog.Orchestrator,
		Doc:        "a fire's row update (lastRunAt, nextRunAt) sits in a write-behind cache for 50 ms after the dispatch; a crash in between loses it and the next process fires the same slot again",
		Scenario:   "request-retry",
		Invariants: []string{"one-fire-per-slot"}, GateStrategy: "commit"})
	model.RegisterSwitch(model.SwitchInfo{Name: DurableScheduleFires, Group: catalog.Orchestrator,
		Reports:    []catalog.Report{"anthropics/claude-code#74055"},
		Source:     "ScheduledTaskService.ts at t3code@01636256 (runDueTasks, runTask, rescheduleMissedRun, setEnabled, the startup release of 'running' rows); Schedule.ts at @01a7974c (isMissedFixedTimeRun, 10 min grace)",
		Scenario:   "request-retry",
		Invariants: []string{"one-fire-per-slot"},
		Reported:   "after a restart a catch-up fires every task whose last slot passed (already fired today, long missed or disabled) and records no lastRunAt",
		Fixed:      "every fire goes through runTask: the row is re-read (enabled, nextRunAt), lastRunAt is written before the dispatch, nextRunAt advanced after it, and a slot missed by more than 10 min is skipped",
		Upstream:   "t3code@01636256",
		Script:     "scenarios/testdata/request_retry/schedule_catch_up",
		Mechanism:  "model/orchestrator: the schedule_task scheduler (slot timers, durable fire record, catch-up, disabled flag)"})
	model.RegisterMutant(model.MutantInfo{Name: CatchUpChecksEnabledOnly, Group: catalog.Orchestrator,
		Doc:        "the startup catch-up skips disabled tasks but still fires every enabled task whose last slot passed",
		Scenario:   "request-retry",
		Invariants: []string{"one-fire-per-slot"}})
}

// nextSlot is nextScheduledRunAt for a daily slot at tod: the first slot
// after from.
func nextSlot(tod, from time.Duration) time.Duration {
	k := (from - tod) / Day
	slot := k*Day + tod
	for slot <= from {
		slot += Day
	}
	return slot
}

// lastSlot is the latest slot at or before now (-1: none yet).
func lastSlot(tod, now time.Duration) time.Duration {
	if now < tod {
		return -1
	}
	return (now-tod)/Day*Day + tod
}

// newSchedule gives a schedule_task row its daily slot, 5 min to 6 h
// from now, when the scheduler is on, and arms it.
func (o *Orchestrator) newSchedule(s *store.Schedule) {
	if !o.Scheduling {
		return
	}
	now := o.env.Now()
	s.Timed, s.Enabled = true, true
	s.TimeOfDay = (now + o.sched.Duration("slot-from-now", 5*time.Minute, 6*time.Hour)) % Day
	s.NextRunAt, s.LastRunAt, s.LastRunStatus = nextSlot(s.TimeOfDay, now), -1, "never"
	o.env.Emit("scheduler", "schedule.created", "", sim.A("schedule", s.ID), sim.A("thread", s.ThreadID),
		sim.A("next", sim.FormatT(s.NextRunAt)))
	o.arm(s)
}

// StartScheduler starts this process's scheduler over the durable rows:
// with DurableScheduleFires the poll alone (after releasing rows left
// 'running'); without it, the catch-up first.
func (o *Orchestrator) StartScheduler() {
	now := o.env.Now()
	p := o.env.Profile
	for _, s := range o.st.Schedules {
		if !s.Timed {
			continue
		}
		if s.LastRunStatus == "running" {
			s.LastRunStatus, s.NextRunAt = "failed", -1
			if s.Enabled {
				s.NextRunAt = nextSlot(s.TimeOfDay, now)
			}
			s.RunCount++
		}
		if !p.Fixed(DurableScheduleFires) || p.Has(CatchUpChecksEnabledOnly) {
			if ls := lastSlot(s.TimeOfDay, now); ls >= 0 && (s.Enabled || !p.Has(CatchUpChecksEnabledOnly)) {
				s := s
				o.env.After(o.sched.Duration("catch-up-after", 20*time.Second, 5*time.Minute), func() {
					if !o.dead {
						// From the startup snapshot: no re-read, no record.
						o.fire(s, ls, "catch-up", false)
					}
				})
			}
		}
		o.arm(s)
	}
}

// arm wakes the row at the first poll tick at or after its nextRunAt.
func (o *Orchestrator) arm(s *store.Schedule) {
	if !s.Enabled || s.NextRunAt < 0 {
		return
	}
	slot := o.st.ScheduleSlot(s)
	if slot >= len(o.armed) {
		o.armed = slices.Grow(o.armed, slot+1-len(o.armed))[:slot+1] // never shrunk: the new entries are zero
	}
	o.armed[slot]++
	gen := o.armed[slot]
	due := s.NextRunAt
	if due < o.started {
		due = o.started
	}
	ticks := (due - o.started + SchedulerPoll - 1) / SchedulerPoll
	life := o.life
	o.keepArmTicket(o.env.AfterTicket(o.started+ticks*SchedulerPoll-o.env.Now(), func() {
		o := life.o // nil: the process died (o.dead)
		if o == nil || o.dead || o.armed[slot] != gen {
			return
		}
		o.runDue(s)
	}))
}

// keepArmTicket keeps the ticket of a slot timer, for Kill to make it a
// ghost; when the list has doubled since it was last pruned, the tickets
// of timers that fired are dropped.
func (o *Orchestrator) keepArmTicket(tk sim.Ticket) {
	if len(o.armTickets) >= 2*max(o.armTicketsPruned, 32) {
		kept := o.armTickets[:0]
		for _, t := range o.armTickets {
			if o.env.TicketPending(t) {
				kept = append(kept, t)
			}
		}
		clear(o.armTickets[len(kept):])
		o.armTickets = kept
		o.armTicketsPruned = len(kept)
	}
	o.armTickets = append(o.armTickets, tk)
}

// ghostArmTimers makes every pending slot timer of a killed orchestrator a
// ghost: each still fires (and counts) at its time, and would have found
// life.o nil and done nothing, but it no longer holds a timer and a
// closure (every boot arms every timed row up to 24 h ahead, so a day's
// dead processes held one per row per restart: 218,000 at 800,000 events
// of 1,000 threads, seed 2).
func (o *Orchestrator) ghostArmTimers() {
	for _, tk := range o.armTickets {
		o.env.Ghost(tk)
	}
	o.armTickets = nil
}

// runDue is runDueTasks and runTask for one row.
func (o *Orchestrator) runDue(s *store.Schedule) {
	now := o.env.Now()
	if !s.Enabled || s.NextRunAt < 0 || s.NextRunAt > now {
		return
	}
	if now-s.NextRunAt > MissedFixedTimeGrace {
		missed := s.NextRunAt
		s.NextRunAt = nextSlot(s.TimeOfDay, now)
		o.env.Emit("scheduler", "schedule.skip", "missed", sim.A("schedule", s.ID), sim.A("slot", sim.FormatT(missed)),
			sim.A("next", sim.FormatT(s.NextRunAt)))
		o.arm(s)
		return
	}
	slot := s.NextRunAt
	before := *s
	s.LastRunAt, s.LastRunStatus = now, "running" // markRunning, before the dispatch
	o.fire(s, slot, "scheduled", true)
	s.LastRunStatus, s.RunCount = "succeeded", s.RunCount+1 // markCompleted
	s.NextRunAt = nextSlot(s.TimeOfDay, now)
	if o.env.Profile.Has(ScheduleRowWriteBehind) {
		// The wrong fix: the row update is readable in the process at once
		// and flushed a moment later; Kill puts the durable row back.
		w := &unflushedRow{row: s, before: before}
		o.unflushedRows = append(o.unflushedRows, w)
		o.env.After(ScheduleRowWriteBehindDelay, func() {
			if i := slices.Index(o.unflushedRows, w); i >= 0 {
				o.unflushedRows = slices.Delete(o.unflushedRows, i, i+1)
			}
		})
	}
	if o.env.AtCommitPoint(CommitScheduleFired, sim.A("schedule", s.ID), sim.A("slot", sim.FormatT(slot))) {
		o.env.CrashProcess()
	}
	o.arm(s)
}

// unflushedRow is a schedule row update the schedule-row-write-behind
// mutant has not flushed: the row's durable run state before it.
type unflushedRow struct {
	row    *store.Schedule
	before store.Schedule
	// toggle marks a setEnabled update (the enabled flag and nextRunAt),
	// else a fire's (the run state and nextRunAt).
	toggle bool
}

// loseUnflushedRows puts back the durable state of the rows whose update a
// dying process had not flushed.
func (o *Orchestrator) loseUnflushedRows() {
	for _, w := range o.unflushedRows {
		if w.toggle {
			w.row.Enabled, w.row.NextRunAt = w.before.Enabled, w.before.NextRunAt
			continue
		}
		w.row.LastRunAt, w.row.LastRunStatus, w.row.RunCount, w.row.NextRunAt =
			w.before.LastRunAt, w.before.LastRunStatus, w.before.RunCount, w.before.NextRunAt
	}
	o.unflushedRows = nil
}

// fire dispatches the task's prompt to its thread for slot; recorded says
// whether the run wrote lastRunAt.
func (o *Orchestrator) fire(s *store.Schedule, slot time.Duration, trigger string, recorded bool) {
	now := o.env.Now()
	rec := "-"
	if recorded {
		rec = sim.FormatT(s.LastRunAt)
	}
	key := fmt.Sprintf("%s:%d:%s", s.ID, now.Milliseconds(), trigger)
	o.st.Messages = append(o.st.Messages, &store.Message{ID: "scheduled-task-message:" + key, ThreadID: s.ThreadID,
		CommandID: "scheduled-task:" + key, Text: "[Triggered by schedule task]"})
	o.env.Emit("scheduler", "schedule.fire", trigger, sim.A("schedule", s.ID), sim.A("thread", s.ThreadID),
		sim.A("slot", sim.FormatT(slot)), sim.A("late", (now-slot).String()), sim.A("enabled", fmt.Sprint(s.Enabled)),
		sim.A("recorded", rec))
}

// SetEnabled is ScheduledTaskService.setEnabled: enabling computes the
// next slot from now, disabling clears it.
func (o *Orchestrator) SetEnabled(id string, enabled bool) bool {
	for _, s := range o.st.Schedules {
		if s.ID != id || !s.Timed || s.Enabled == enabled {
			continue
		}
		before := *s
		s.Enabled, s.NextRunAt = enabled, -1
		if enabled {
			s.NextRunAt = nextSlot(s.TimeOfDay, o.env.Now())
		}
		outcome := "disabled"
		if enabled {
			outcome = "enabled"
		}
		o.env.Emit("scheduler", "schedule.enabled", outcome, sim.A("schedule", s.ID))
		if o.env.Profile.Has(ScheduleToggleWriteBehind) {
			w := &unflushedRow{row: s, before: before, toggle: true}
			o.unflushedRows = append(o.unflushedRows, w)
			o.env.After(ScheduleRowWriteBehindDelay, func() {
				if i := slices.Index(o.unflushedRows, w); i >= 0 {
					o.unflushedRows = slices.Delete(o.unflushedRows, i, i+1)
				}
			})
		}
		if o.env.AtCommitPoint(CommitScheduleToggled, sim.A("schedule", s.ID), sim.A("enabled", fmt.Sprint(enabled))) {
			o.env.CrashProcess()
		}
		o.arm(s)
		return true
	}
	return false
}
