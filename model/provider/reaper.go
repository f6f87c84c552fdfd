package provider

import (
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

// The inactivity sweep of ProviderSessionReaper.ts (pingdotgg/t3code main,
// beside the manager's own idle timer): every DEFAULT_SWEEP_INTERVAL_MS
// (5 min, Schedule.spaced, so awake time) it stops each non-stopped,
// non-busy session whose idle time, Clock.currentTimeMillis (the wall
// clock) minus its binding's lastSeenAt, reaches
// DEFAULT_INACTIVITY_THRESHOLD_MS (30 min). It skips sessions with an
// active turn and, as the manager does, those whose idle release is
// deferred for pending work.
//
// While the host never sleeps the wall clock and the awake clock agree, and
// the manager's idle timer has released (or deferred) every session the
// sweep could reap before the sweep sees it; so the model runs the sweep
// only once the host has suspended (Manager.HostSuspending), from the sweep
// instant it would have had, and skips those no-op sweeps before.

// Constants of ProviderSessionReaper.ts.
const (
	// ReaperInactivityThreshold is DEFAULT_INACTIVITY_THRESHOLD_MS.
	ReaperInactivityThreshold = 30 * time.Minute
	// ReaperSweepInterval is DEFAULT_SWEEP_INTERVAL_MS.
	ReaperSweepInterval = 5 * time.Minute
)

// ReaperCountsAwakeTime is PR #11838 (open upstream): the reaper compares
// the wall clock with the monotonic clock at each sweep and, when the wall
// clock jumped further than the time the process was awake (a host
// suspend), gives every session a fresh idle window from that sweep. Off is
// t3code#11805 (confirmed in triage): idle time is wall clock minus
// lastSeenAt; the process is frozen during sleep and the host-power
// "suspended" signal (HostPowerMonitor, DesktopTelemetryPublisher) only
// feeds BackgroundPolicy, so the first sweep after a sleep longer than 30
// min reaps every idle session, however recently the user worked in it.
const ReaperCountsAwakeTime model.Switch = "reaper-counts-awake-time"

// ReaperChecksSuspendFlag is a wrong fix, the one the #11805 triage warns
// against: instead of comparing the clocks, the sweep skips while
// hostPower.suspended is set, but the
// process is frozen during sleep, so the flag is already clear when the
// first sweep after the wake runs, and it reaps as before.
const ReaperChecksSuspendFlag model.Mutant = "reaper-checks-suspend-flag"

func init() {
	model.RegisterSwitch(model.SwitchInfo{Name: ReaperCountsAwakeTime, Group: catalog.ProviderSession,
		Reports:    []catalog.Report{"t3code#11805"},
		Source:     "ProviderSessionReaper.ts sweep (DEFAULT_INACTIVITY_THRESHOLD_MS 30 min, DEFAULT_SWEEP_INTERVAL_MS 5 min, Clock.currentTimeMillis - lastSeenAt); fix PR #11838",
		Scenario:   "chaos",
		Invariants: []string{"idle-counts-awake-time"},
		Reported:   "the reaper measures idle time on the wall clock, so the first sweep after a host sleep longer than 30 min reaps every idle session",
		Fixed:      "a sweep that sees the wall clock jump past the awake clock gives every session a fresh idle window from that sweep",
		Upstream:   "",
		Mechanism:  "model/provider: the reaper's idle clock across a host suspend (sim: awake clock and host suspend)"})
	model.RegisterMutant(model.MutantInfo{Name: ReaperChecksSuspendFlag, Group: catalog.ProviderSession,
		Doc:        "the sweep skips while the host is flagged suspended, but the frozen process only sweeps after the wake, when the flag is clear",
		Scenario:   "chaos",
		Invariants: []string{"idle-counts-awake-time"}})
}

// reaper is the sweep's state.
type reaper struct {
	started   bool
	origin    time.Duration // awake time of the manager's start (the sweep's phase)
	lastSkew  time.Duration // wall minus awake at the previous sweep
	baseline  time.Duration // wall time of the last detected wake (fresh idle window)
	suspended bool          // hostPower.suspended, as the process last heard it
}

// HostSuspending is the host about to sleep (Electron powerMonitor
// "suspend"); the model's hook to start the sweep (see above).
func (m *Manager) HostSuspending() {
	r := &m.reap
	r.suspended = true
	if r.started || m.dead {
		return
	}
	r.started = true
	r.lastSkew = m.env.Now() - m.env.Awake()
	since := m.env.Awake() - r.origin
	next := (since/ReaperSweepInterval + 1) * ReaperSweepInterval
	m.env.After(next-since, m.sweep) // an awake-time delay: the suspend pushes it back
}

// HostResumed is powerMonitor "resume": the flag clears.
func (m *Manager) HostResumed() { m.reap.suspended = false }

func (m *Manager) sweep() {
	if m.dead {
		return
	}
	if m.sweepFn == nil {
		m.sweepFn = m.sweep // bound once: a method value allocates at every use
	}
	defer m.env.After(ReaperSweepInterval, m.sweepFn)
	r := &m.reap
	now := m.env.Now()
	skew := now - m.env.Awake()
	if skew > r.lastSkew && m.env.Profile.Fixed(ReaperCountsAwakeTime) && !m.env.Profile.Has(ReaperChecksSuspendFlag) {
		m.env.Emit(actor, "reaper.wall-clock-jump", "", sim.A("jump", (skew-r.lastSkew).String()))
		r.baseline = now
	}
	r.lastSkew = skew
	if m.env.Profile.Has(ReaperChecksSuspendFlag) && r.suspended {
		return
	}
	for i := 0; i < len(m.entries); {
		e := m.entries[i]
		seen := max(e.lastActive, r.baseline)
		if e.busy > 0 || e.deferred || m.workPending(e) || now-seen < ReaperInactivityThreshold {
			i++
			continue
		}
		m.env.Emit(actor, "reaper.reap", "", sim.A("providerSessionId", e.ID), sim.A("idle", (now-seen).String()),
			sim.A("last-active", sim.FormatT(e.lastActive)))
		m.releaseEntry(e, ReasonIdleTimeout) // removes e from m.entries
	}
}

// workPending is the reaper's skip for pending work (the triage's
// backgroundLiveness), the same questions the manager's idle release asks:
// background work reported and not yet done, a delegated child owed.
func (m *Manager) workPending(e *Entry) bool {
	p := m.env.Profile
	if p.Fixed(BackgroundWorkPinsSession) && m.env.Now() < e.background {
		return true
	}
	if p.Fixed(DelegatedChildPinsSession) && m.OwesChild != nil {
		for _, t := range e.attached {
			if m.OwesChild(t) {
				return true
			}
		}
	}
	return false
}
