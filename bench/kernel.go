package bench

import (
	"time"

	"github.com/orchsim/orchsim/sim"
)

// kernelEngine runs the workload on orchsim's kernel the way models do:
// timers through the sim.Clock and sim.Timer interfaces, one trace event per
// workload event (hashed into the fingerprint, not kept), the kernel's Run
// loop with a horizon.
type kernelEngine struct {
	k     *sim.Kernel
	trace *sim.Trace
	w     *world
	// timers holds each session's two timers side by side, as a model
	// keeps its timers in the entry they belong to.
	timers []kernelTimers
}

type kernelTimers struct {
	idle, act sim.Timer
}

func newKernelEngine(w *world) *kernelEngine {
	e := &kernelEngine{k: sim.NewKernel(false), w: w}
	e.trace = e.k.Trace()
	e.timers = make([]kernelTimers, len(w.sessions))
	var clock sim.Clock = e.k
	for i := range w.sessions {
		e.timers[i].idle = clock.AfterFunc(IdleTimeout, func() { e.onIdle(i) })
		e.timers[i].act = clock.AfterFunc(w.firstActivity(i), func() { e.onAct(i) })
	}
	return e
}

func (e *kernelEngine) onIdle(i int) {
	resume := e.w.onIdle(i, e.k.Elapsed())
	e.trace.Emit(e.w.sessions[i].name, KindRelease, "")
	e.timers[i].act.Reset(resume)
}

func (e *kernelEngine) onAct(i int) {
	kind, next := e.w.onAct(i, e.k.Elapsed())
	e.trace.Emit(e.w.sessions[i].name, kind, "")
	t := &e.timers[i]
	t.idle.Reset(IdleTimeout)
	t.act.Reset(next)
}

func (e *kernelEngine) advance(to time.Duration) { e.k.Run(sim.Limits{Horizon: to}) }

func (e *kernelEngine) count() uint64 { return e.w.events }

func (e *kernelEngine) digest() uint64 { return e.w.digest }

func (e *kernelEngine) close() {}
