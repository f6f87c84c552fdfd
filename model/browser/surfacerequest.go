package browser

import (
	"time"

	"github.com/orchsim/orchsim/sim"
)

// The agent requests the newest stored ServerBrowser.ts serves with
// deadlines, captures and recordings (read_file id 70905931248:
// handleRequest, runOperation, executeTabOperation): snapshot, resize,
// recordingStart and recordingStop, while ServerBrowser.Surfaces is set.
// Each runs on the tab's queue as agent work (a snapshot of a tab the
// caller cannot act on now is read in place) under a request lease on a
// desktop page. A request's deadline (timeoutMs less min(500 ms, a tenth))
// answers TimeoutError at once and aborts its reads; its cleanup then
// releases the queue. Other operations keep their paths, with a request
// lease on a desktop page (leaseAct, leasedRun).

// SurfaceRequest is what a request carries for the newest version.
//
// The request's timeoutMs is Request.Timeout (0: no deadline).
type SurfaceRequest struct {
	// Setting is resize's viewport (nil: fill).
	Setting *ViewportSetting
	// NoImage is snapshot's includeImage false.
	NoImage bool
	// Reveal is open's open (or show) true: the agent asks for the tab to
	// be shown.
	Reveal bool
}

// SurfaceResult is what a result carries for the newest version.
//
// A remote-unavailable error's reason (the desktop's surface refusal) is
// Result.Detail; status's visibility is Result.Visible, NativePresented
// and StreamViewers.
type SurfaceResult struct {
	// Cause is an execution error's cause tag: RecordingNotActive.
	Cause string
	// Viewport is status's viewport (a desktop page's measured one) and
	// resize's applied one.
	Viewport *Viewport
	// Screenshot: the snapshot carries an image.
	Screenshot bool
	// RevealRequested: a reveal was asked and nothing shows the tab yet.
	RevealRequested bool
}

// MsgDeadline is PreviewAutomationTimeoutError's message.
const MsgDeadline = "The browser operation exceeded its execution deadline."

// hostDeadline is handleRequest's deadline for timeoutMs d.
func hostDeadline(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return max(time.Millisecond, d-min(500*time.Millisecond, d/10))
}

// serveSurfaced serves req on tab if it is one of the newest version's
// request kinds; it reports whether it did.
func (b *ServerBrowser) serveSurfaced(tab *Tab, req Request, ignore bool, res Result, finish func(Result)) bool {
	if b.Surfaces == nil {
		return false
	}
	var body func(k *budget, l *lease, res *Result, done func(string))
	switch req.Op {
	case OpSnapshot:
		body = func(k *budget, l *lease, res *Result, done func(string)) {
			if req.NoImage {
				k.read(tab, StageCapture, func(ok bool) {
					if ok {
						res.Ref, res.LoadError = b.ref(tab), b.LoadErrorOf(tab)
						done(OK)
						return
					}
					done(ErrTimeout)
				}, nil)
				return
			}
			b.captureImage(tab, k, l, res, done)
		}
	case OpResize:
		body = func(_ *budget, _ *lease, res *Result, done func(string)) { b.resize(tab, req, res, done) }
	case OpRecordingStart:
		body = func(k *budget, l *lease, res *Result, done func(string)) { b.startRecording(tab, k, l, res, done) }
	case OpRecordingStop:
		if !b.recordingActive(tab) {
			res.Outcome, res.Message, res.Cause = ExecutionError, MsgRecordingNotActive, RecordingNotActive
			finish(res)
			return true
		}
		body = func(k *budget, l *lease, res *Result, done func(string)) { b.stopRecording(tab, k, l, res, done) }
	default:
		return false
	}
	answered := false
	var k *budget
	answer := func(o string) {
		if answered {
			return
		}
		answered = true
		if !k.aborted {
			k.close()
		}
		res.Outcome = o
		if o == ErrTimeout {
			res.Message = MsgDeadline
		}
		finish(res)
	}
	timeout := req.Timeout
	if timeout == 0 {
		timeout = b.Surfaces.DefaultTimeout
	}
	k = b.newBudget(hostDeadline(timeout))
	k.onAbort(func() {
		b.env.Emit(actor, "request.deadline", req.Op, sim.A("thread", tab.ThreadID), sim.A("tab", tab.TabID))
		answer(ErrTimeout)
	})
	run := func(complete func(string)) {
		if tab.dialog != nil {
			complete(ReasonDialogPending)
			return
		}
		l, ok := b.requestLease(tab, &res)
		if !ok {
			complete(ErrRemoteUnavailable)
			return
		}
		body(k, l, &res, func(o string) {
			b.releaseSurface(tab, l)
			complete(o)
		})
	}
	if req.Op == OpSnapshot && tab.Control.AgentID != req.AgentSessionID && !tab.Control.CanActNow(req.AgentSessionID) {
		// observe: another's tab, or the user's while they drive, is read
		// in place without queueing.
		if !tab.Control.Observe(func() { run(answer) }) {
			answer(ReasonClosed)
		}
		return true
	}
	sig := &Signal{}
	k.onAbort(func() { sig.Abort("deadline") })
	tab.Control.Submit(Item{Kind: ItemAgent, Actor: req.AgentSessionID, IgnoreOwner: ignore, Signal: sig,
		Run: run, Done: answer})
	return true
}
