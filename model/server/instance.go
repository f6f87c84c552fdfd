package server

import (
	"fmt"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// A second desktop app instance (t3code#12926). An agent running T3's
// generated agent-device helper execs the Electron app binary without
// ELECTRON_RUN_AS_NODE (AgentDeviceShim.ts, per the triage against
// main), so a second GUI starts. Its resolveDesktopBackendPort
// (apps/desktop/src/app/DesktopApp.ts; PR #1870's sequential scan) finds
// 3773 taken and binds 3774 against the same T3 home, and that backend's
// startup runs reconcileProviderSessions (serverRuntimeStartup.ts,
// "provider-sessions.reconcile") over the shared state: every run the live
// backend is running is settled as if its process had died ("Provider
// session did not survive a server restart. Send a new message to
// continue.") while its agent works on.

// SingleBackendPerHome is the fix PR #9003 ("refuse same-home port
// fallback": packaged desktop uses 3773 or fails before spawning the
// embedded server) and PR #12241's second guard propose: an extra instance
// whose port is taken refuses to start, so no second backend ever opens
// the home. Neither is merged (#9003 open, #12241 closed; #12926 is open
// and confirmed against main), so upstream has it off.
const SingleBackendPerHome model.Switch = "single-backend-per-home"

// HomeLockAfterReconcile is a plausible wrong fix: the extra backend takes
// the home lock (and refuses, finding it held) only after its startup
// passes, so the reconcile has already settled the live backend's runs.
const HomeLockAfterReconcile model.Mutant = "home-lock-after-reconcile"

func init() {
	model.RegisterSwitch(model.SwitchInfo{Name: SingleBackendPerHome, Group: catalog.RestartContinuation,
		Reports:    []catalog.Report{"t3code#12926"},
		Source:     "t3code#12926 (triage against main: AgentDeviceShim.ts without ELECTRON_RUN_AS_NODE, DesktopApp.ts resolveDesktopBackendPort scanning 3773-65535, reconcileProviderSessions at startup); PRs #9003 and #12241",
		Scenario:   "request-retry",
		Invariants: []string{"reconcile-spares-live-runs", "projection-agrees-with-provider"},
		Reported:   "an extra app instance binds a fallback port against the same home and its startup reconcile settles every run of the live backend as lost while the agents work on",
		Fixed:      "an extra instance whose port is taken refuses to start before it opens the home: nothing reconciles a live backend's runs",
		Mechanism:  "model/server: an extra app instance's backend over the shared home (T3World.ExtraInstances)"})
	model.RegisterMutant(model.MutantInfo{Name: HomeLockAfterReconcile, Group: catalog.RestartContinuation,
		Doc:        "the extra backend takes the home lock only after its startup passes, so its reconcile has already settled the live backend's runs",
		Scenario:   "request-retry",
		Invariants: []string{"reconcile-spares-live-runs", "projection-agrees-with-provider"}})
}

// DesktopPort is the packaged desktop backend's default port (3773,
// DesktopApp.ts); FallbackPort the next one its scan binds.
const (
	DesktopPort  = 3773
	FallbackPort = DesktopPort + 1
)

// ExtraInstance is a second app instance launching while s is the live
// backend (why names the launcher, for the trace). With
// SingleBackendPerHome it refuses to start; without, its backend opens the
// shared home on FallbackPort and runs the startup reconcile over it, its
// events carrying instance=extra-N, then sits idle (no client connects to
// it). n numbers the extra instances of the run.
func (s *Server) ExtraInstance(n int, why string) {
	if s.dead {
		return
	}
	name := fmt.Sprintf("extra-%d", n)
	p := s.env.Profile
	refuse := func() {
		s.env.Emit(actor, "instance.extra", "refused", sim.A("instance", name), sim.A("why", why),
			sim.A("port", fmt.Sprint(DesktopPort)), sim.A("live", fmt.Sprint(s.Incarnation)))
	}
	if p.Fixed(SingleBackendPerHome) && !p.Has(HomeLockAfterReconcile) {
		refuse()
		return
	}
	s.env.Emit(actor, "instance.extra", "started", sim.A("instance", name), sim.A("why", why),
		sim.A("port", fmt.Sprint(FallbackPort)), sim.A("live", fmt.Sprint(s.Incarnation)))
	sum := Reconcile(s.Store, "startup", s.env.Now())
	for _, r := range sum.CancelledRuns {
		s.env.Obligations.Discharge(RunSettles, r.ID+" of "+r.ThreadID)
		s.Store.MarkCancelledByRestart(r)
		s.env.Emit(actor, "reconcile", store.RunCancelled, sim.A("trigger", "startup"), sim.A("thread", r.ThreadID),
			sim.A("run", r.ID), sim.A("instance", name))
	}
	if p.Fixed(SingleBackendPerHome) {
		refuse() // the mutant: the lock, taken too late
	}
}
