package terminal

import (
	"time"

	"github.com/orchsim/orchsim/sim"
)

// DetachedIdleTimeout is the idle reaper's default timeout: nebula's
// session_idle_timeout (5 min, AgentSystemLabs/nebula#78). agent-code has
// no such reaper; the model adds it, as main would run it, only when a
// world asks (Config.DetachedIdleTimeout).
const DetachedIdleTimeout = 5 * time.Minute

// BackgroundJobMin and BackgroundJobMax bound a background job's run (a
// run_in_background Bash call or a Monitor watch; model choice).
const (
	BackgroundJobMin = time.Minute
	BackgroundJobMax = 20 * time.Minute
)

// job is one background job of a backend: it outlives the turn that
// started it and dies with the backend's process tree.
type job struct {
	id  string
	end time.Duration
}

// touch restarts the backend's idle clock: what nebula's reaper counts as
// activity (the TUI's output, input and hook-fed status changes; not a
// background job, unless IdleSparesBackgroundWork).
func (b *Backend) touch() { b.activeAt = b.m.env.Now() }

// maybeStartJob is a turn step that backgrounds a tool call (drawn from the
// backend's own "bg/<session>" stream, so the agent's draws keep their
// places).
func (b *Backend) maybeStartJob() {
	if b.m.cfg.BackgroundChance.Numerator == 0 {
		return
	}
	if b.bg == nil {
		b.bg = b.m.env.Rand("bg/" + b.Session)
	}
	if !b.bg.Chance("background", b.m.cfg.BackgroundChance) {
		return
	}
	b.startJob(b.bg.Duration("background-for", BackgroundJobMin, BackgroundJobMax))
}

func (b *Backend) startJob(d time.Duration) {
	b.jobSeq++
	j := &job{id: b.m.env.Str().Join(b.ID+"/j", b.jobSeq), end: b.m.env.Now() + d}
	b.jobs = append(b.jobs, j)
	b.emit("bg.start", "", sim.A("job", j.id), sim.A("for", b.m.env.Str().Duration(d)))
	b.m.env.After(d, func() { b.endJob(j) })
}

func (b *Backend) endJob(j *job) {
	if b.state != live {
		return
	}
	for i, x := range b.jobs {
		if x == j {
			b.jobs = append(b.jobs[:i], b.jobs[i+1:]...)
			break
		}
	}
	b.emit("bg.end", "", sim.A("job", j.id))
	if p := b.m.app.Profile(); p.Fixed(IdleSparesBackgroundWork) && !p.Has(SparesOnlyWhileRunning) && len(b.jobs) == 0 {
		// PR #80: the idle clock restarts when the job ends.
		b.touch()
		b.m.armReaper(b.Session, DetachedIdleTimeout)
	}
}

// killJobs reports the background jobs a stopped process tree took with it.
func (b *Backend) killJobs() {
	for _, j := range b.jobs {
		b.m.env.Emit(b.actor, "bg.killed", "", sim.A("session", b.Session), sim.A("backend", b.ID), sim.A("job", j.id))
	}
	b.jobs = nil
}

// armReaper schedules the detached-idle check of session after d, when a
// reaper runs and the session is detached from every terminal (its last
// terminal-view attach released). A later arm or attach supersedes it.
func (m *Manager) armReaper(session string, d time.Duration) {
	st := m.sess(session)
	if m.cfg.DetachedIdleTimeout == 0 || !st.leafSized || st.count > 0 {
		return
	}
	st.reapGen++
	gen := st.reapGen
	o := m.reapFree
	if o != nil {
		m.reapFree = o.next
	} else {
		o = &reapOp{m: m}
	}
	o.session, o.gen, o.next = session, gen, nil
	m.env.RunAfter(d, o)
}

// reapOp is one pending reapCheck (sim.Runner): a terminal-remount seed
// arms a few hundred, so they are reused from m.reapFree instead of a
// closure each. The kernel lets go of a Runner before running it, so Run
// frees the op before it checks.
type reapOp struct {
	m       *Manager
	session string
	gen     int
	next    *reapOp // in m.reapFree
}

func (o *reapOp) Run() {
	m, session, gen := o.m, o.session, o.gen
	o.session, o.next, m.reapFree = "", m.reapFree, o
	m.reapCheck(session, gen)
}

// reapCheck is reap_idle_sessions for one detached session: an agent that
// is running a turn or waiting at a prompt (nebula's RUNNING and NEEDS
// FEEDBACK) is spared; under IdleSparesBackgroundWork so is one with a
// running background job (re-armed when it ends); otherwise a session idle
// for the timeout is killed, process tree and background jobs with it.
func (m *Manager) reapCheck(session string, gen int) {
	b := m.sess(session).entry
	if st := m.sess(session); st.reapGen != gen || st.count > 0 || b == nil || !b.Live() {
		return
	}
	timeout := m.cfg.DetachedIdleTimeout
	now := m.env.Now()
	spares := m.app.Profile().Fixed(IdleSparesBackgroundWork)
	switch {
	case b.busy || b.prompt:
		m.armReaper(session, timeout)
	case len(b.jobs) > 0 && spares:
		m.emit("reap", "spared", sim.A("session", session), sim.A("backend", b.ID), sim.A("why", "background-work"),
			sim.A("jobs", m.env.Itoa(len(b.jobs))))
		if m.app.Profile().Has(SparesOnlyWhileRunning) {
			m.armReaper(session, timeout)
		}
	case now-b.activeAt < timeout:
		m.armReaper(session, b.activeAt+timeout-now)
	default:
		m.emit("reap", "detached-idle", sim.A("session", session), sim.A("backend", b.ID),
			sim.A("idle-since", m.env.Str().T(b.activeAt)), sim.A("jobs", m.env.Itoa(len(b.jobs))))
		m.kill(session, "detached-idle", "")
	}
}
