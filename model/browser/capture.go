package browser

import (
	"strconv"

	"github.com/orchsim/orchsim/sim"
)

// Captures and viewer screencasts of the newest stored ServerBrowser.ts
// (read_file id 70905931248: withScreencastsPaused, attachViewer's
// startScreencast, pause and resume, and its screencastParams chain). A
// scaled capture repaints every screencast, so the tab's viewers (and its
// recording) are paused around it under the capture lock, then resumed by a
// cleanup with its own short lease and budget. Each viewer's screencast
// parameter changes run one after another; a change waits for the previous
// one only until that one's budget gave up, so an abandoned pause whose
// stop never answers cannot pin the viewer or the tab's queue.

// Native reads of captures and screencasts (Surfaces.Stage names).
const (
	StageCapture         = "capture"
	StageViewerPause     = "viewer screencast pause"
	StageViewerStop      = "viewer screencast stop"
	StageViewerStart     = "viewer screencast start"
	StageRecordingPause  = "recording screencast pause"
	StageRecordingResume = "recording screencast resume"
)

// viewerStream is one attached viewer's screencast (ViewerState): its
// surface lease, its parameter chain and the size its panel asked for.
type viewerStream struct {
	viewer string
	lease  *lease
	tail   *paramOp
	// requested is the panel size the viewer last asked for (nil: a
	// passive viewer never asks); order ranks requests server-wide.
	requested *Viewport
	order     int
	// starts and pauses count screencast starts and finished pauses.
	starts, pauses int
}

// paramOp is one screencast parameter change in a viewer's chain.
type paramOp struct {
	settled bool
	waiters []func()
}

// ScreencastStarts returns how many times viewer's screencast on t started
// (its attach and every resume), or -1 when it has no stream.
func (t *Tab) ScreencastStarts(viewer string) int {
	if v := t.stream(viewer); v != nil {
		return v.starts
	}
	return -1
}

func (t *Tab) stream(viewer string) *viewerStream {
	if t.surf == nil {
		return nil
	}
	for _, v := range t.surf.streams {
		if v.viewer == viewer {
			return v
		}
	}
	return nil
}

// params queues a parameter change run on v's chain: it starts once the
// previous change settled; it settles when run reports, or rejected at once
// when k aborts (waiting for the previous change included).
func (b *ServerBrowser) params(v *viewerStream, k *budget, run func(done func(ok bool)), then func(ok bool)) {
	prev := v.tail
	op := &paramOp{}
	v.tail = op
	settle := func(ok bool) {
		if op.settled {
			return
		}
		op.settled = true
		ws := op.waiters
		op.waiters = nil
		for _, w := range ws {
			w()
		}
		then(ok)
	}
	k.onAbort(func() { settle(false) })
	start := func() {
		if !op.settled {
			run(settle)
		}
	}
	if prev == nil || prev.settled {
		start()
		return
	}
	prev.waiters = append(prev.waiters, start)
}

// startScreencast is startScreencast: after the previous change, unless a
// capture is rendering, the viewer's screencast is stopped and started
// again.
func (b *ServerBrowser) startScreencast(t *Tab, v *viewerStream, k *budget, then func(ok bool)) {
	b.params(v, k, func(done func(bool)) {
		if t.surf.Capturing > 0 {
			done(true)
			return
		}
		k.reads(t, []string{StageViewerStop, StageViewerStart}, func(ok bool) {
			if ok {
				v.starts++
			}
			done(ok)
		})
	}, then)
}

// pauseScreencast is viewer.pause: the viewer's screencast stops, within the
// capture's budget.
func (b *ServerBrowser) pauseScreencast(t *Tab, v *viewerStream, k *budget, then func(ok bool)) {
	b.params(v, k, func(done func(bool)) {
		k.read(t, StageViewerPause, func(ok bool) {
			if ok {
				v.pauses++
			}
			done(ok)
		}, nil)
	}, then)
}

// surfaceAttach is attachViewer's part: a native tab's viewer holds a
// persistent lease while attached, and its screencast starts.
func (b *ServerBrowser) surfaceAttach(t *Tab, viewer string) {
	if b.Surfaces == nil {
		return
	}
	s := b.surface(t)
	v := &viewerStream{viewer: viewer}
	v.lease, _ = b.persistentLease(t)
	s.streams = append(s.streams, v)
	b.startScreencast(t, v, b.newBudget(0), func(bool) {})
}

// surfaceDetach is the end of a viewer's scope: its lease is released, and a
// viewer that had sized a fill viewport gives way to the remaining viewers'
// latest size (or the unattached fill size).
func (b *ServerBrowser) surfaceDetach(t *Tab, viewer string) {
	if b.Surfaces == nil || t.surf == nil {
		return
	}
	s := t.surf
	for i, v := range s.streams {
		if v.viewer != viewer {
			continue
		}
		s.streams = append(s.streams[:i], s.streams[i+1:]...)
		b.releaseSurface(t, v.lease)
		if !s.closing && v.requested != nil && s.Setting.Tag == "fill" {
			b.applySetting(t, s.Setting)
		}
		return
	}
}

// captureImage is withScreencastsPaused around an image capture: under the
// capture lock, every viewer and the recording pause, the page is
// captured, then (capturing done and the request's lease let go) streams
// resume in a cleanup. A budget that aborts rejects the pause or capture it
// waits on; the cleanup and the lock still end.
func (b *ServerBrowser) captureImage(t *Tab, k *budget, l *lease, res *Result, done func(outcome string)) {
	s := b.surface(t)
	s.lock.run(func(ok bool, unlock func()) {
		if !ok {
			unlock()
			done(ReasonClosed)
			return
		}
		if k.aborted {
			unlock()
			done(ErrTimeout)
			return
		}
		s.Capturing++
		rec := s.Recording
		streams := append([]*viewerStream(nil), s.streams...)
		finish := func(outcome string) {
			if outcome != OK {
				b.env.Emit(actor, "capture.abandoned", outcome, sim.A("thread", t.ThreadID), sim.A("tab", t.TabID),
					sim.A("viewers", strconv.Itoa(len(streams))))
			}
			s.Capturing--
			b.releaseSurface(t, l)
			if len(s.streams) == 0 && (rec == nil || s.Recording != rec) {
				unlock()
				done(outcome)
				return
			}
			b.nativeCleanup(t, func(ck *budget, end func()) {
				current := append([]*viewerStream(nil), s.streams...)
				parts := len(current)
				if rec != nil && s.Recording == rec {
					parts++
				}
				all(parts, func(i int, d func(bool)) {
					if i == len(current) {
						ck.read(t, StageRecordingResume, func(ok bool) {
							if ok {
								s.RecordingScreencasts++
							}
							d(ok)
						}, nil)
						return
					}
					b.startScreencast(t, current[i], b.newBudget(ViewerResumeBudget), d)
				}, func(bool) { end() })
			}, func() {
				unlock()
				done(outcome)
			})
		}
		parts := len(streams)
		if rec != nil {
			parts++
		}
		all(parts, func(i int, d func(bool)) {
			if i == len(streams) {
				k.read(t, StageRecordingPause, d, nil)
				return
			}
			b.pauseScreencast(t, streams[i], k, d)
		}, func(ok bool) {
			if !ok {
				finish(ErrTimeout)
				return
			}
			k.read(t, StageCapture, func(ok bool) {
				if !ok {
					finish(ErrTimeout)
					return
				}
				s.Captures++
				res.Screenshot = true
				res.Ref = b.ref(t)
				res.LoadError = b.LoadErrorOf(t)
				finish(OK)
			}, nil)
		})
	})
}

// nativeCleanup is withNativeCleanup: op runs with a short lease of its own
// and NativeCleanupBudget; then runs when op ends or the budget gives up,
// after the lease is released. A refused lease does not stop the cleanup.
func (b *ServerBrowser) nativeCleanup(t *Tab, op func(k *budget, end func()), then func()) {
	k := b.newBudget(NativeCleanupBudget)
	l, _ := b.persistentLease(t)
	over := false
	end := func() {
		if over {
			return
		}
		over = true
		b.releaseSurface(t, l)
		then()
	}
	k.onAbort(end)
	op(k, end)
}
