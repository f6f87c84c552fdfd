package browser

import "github.com/orchsim/orchsim/sim"

// Recording of the newest stored ServerBrowser.ts (read_file id
// 70905931248: startRecording, stopRecording, and the recordingStop lookup
// of runOperation). Under the capture lock a start acquires the recording's
// own persistent surface lease, opens an encoder page, sets it up, seeds it
// with a frame, opens a CDP session and starts its screencast; only then is
// the recording published. A start cancelled at any read (its request's
// deadline) releases the request's lease, closes what it opened, releases
// the recording lease and the lock, and a resource that arrives later is
// disposed at once and never starts a screencast. A stop (also under the
// lock) always unpublishes the recording, closes its encoder, cleans its
// session up in a short cleanup and releases its lease, even when its
// deadline cancels it midway.

// Native reads of a recording (Surfaces.Stage names).
const (
	StageRecordingSurface     = "recording surface"
	StageRecordingEncoder     = "recording encoder"
	StageRecordingSetup       = "recording encoder setup"
	StageRecordingSeed        = "recording seed frame"
	StageRecordingSession     = "recording CDP session"
	StageRecordingStart       = "recording screencast start"
	StageRecordingStop        = "recording screencast stop"
	StageRecordingFrames      = "recording final frames"
	StageRecordingDetach      = "recording session detach"
	StageRecordingEncoderStop = "recording encoder stop"
	StageRecordingCleanup     = "recording cleanup"
)

// RecordingNotActive is PreviewAutomationRecordingNotActiveError, the cause
// of the execution error a stop without an active recording answers.
const RecordingNotActive = "RecordingNotActiveError"

// MsgRecordingNotActive is that error's message for a thread.
const MsgRecordingNotActive = "No recording is active for this thread."

// startRecording runs recordingStart's body on t (the request holds lease
// l): done(OK) once the recording is published (or was already).
func (b *ServerBrowser) startRecording(t *Tab, k *budget, l *lease, res *Result, done func(outcome string)) {
	s := b.surface(t)
	s.starting = true
	s.lock.run(func(ok bool, unlock func()) {
		end := func(outcome string) {
			s.starting = false
			unlock()
			done(outcome)
		}
		switch {
		case !ok:
			end(ReasonClosed)
			return
		case k.aborted:
			end(ErrTimeout)
			return
		case s.Recording != nil:
			end(OK)
			return
		}
		active := true
		var rl *lease
		encoder, session := false, false
		fail := func(outcome string) {
			active = false
			b.releaseSurface(t, l)
			if encoder {
				s.EncodersClosed++
			}
			release := func() {
				b.releaseSurface(t, rl)
				end(outcome)
			}
			if !encoder && !session {
				release()
				return
			}
			b.nativeCleanup(t, func(ck *budget, cend func()) {
				ck.read(t, StageRecordingCleanup, func(bool) {
					if session {
						s.SessionsDetached++
					}
					cend()
				}, nil)
			}, release)
		}
		late := func(f func()) func() {
			return func() {
				f()
				s.LateDisposed++
				b.env.Emit(actor, "recording.late-disposed", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
			}
		}
		step := func(stage string, then func(), lateDispose func()) {
			k.read(t, stage, func(ok bool) {
				if !ok || !active || s.closing {
					if ok && lateDispose != nil {
						// It arrived, but the start is over: dispose of it.
						lateDispose()
					}
					if active {
						fail(ErrTimeout)
					}
					return
				}
				then()
			}, lateDispose)
		}
		step(StageRecordingSurface, func() {
			var reason string
			rl, reason = b.persistentLease(t)
			if reason != "" {
				res.Detail = reason
				fail(ErrRemoteUnavailable)
				return
			}
			step(StageRecordingEncoder, func() {
				encoder = true
				s.EncodersOpened++
				step(StageRecordingSetup, func() {
					step(StageRecordingSeed, func() {
						step(StageRecordingSession, func() {
							session = true
							s.SessionsOpened++
							step(StageRecordingStart, func() {
								s.RecordingScreencasts++
								s.Recording = &Recording{Lease: leaseID(rl), StartedAt: b.env.Now(), lease: rl}
								b.env.Emit(actor, "recording.start", "", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
								end(OK)
							}, nil)
						}, late(func() { s.SessionsOpened++; s.SessionsDetached++ }))
					}, nil)
				}, nil)
			}, late(func() { s.EncodersOpened++; s.EncodersClosed++ }))
		}, nil)
	})
}

func leaseID(l *lease) string {
	if l == nil {
		return ""
	}
	return l.id
}

// recordingActive reports whether t has a recording or one starting (the
// recordingStop lookup).
func (b *ServerBrowser) recordingActive(t *Tab) bool {
	return t.surf != nil && (t.surf.Recording != nil || t.surf.starting)
}

// stopRecording runs recordingStop's body on t (the request holds lease
// l): the recording ends whatever its reads do.
func (b *ServerBrowser) stopRecording(t *Tab, k *budget, l *lease, res *Result, done func(outcome string)) {
	s := b.surface(t)
	s.lock.run(func(ok bool, unlock func()) {
		rec := s.Recording
		if !ok || rec == nil {
			unlock()
			res.Message, res.Cause = "No recording is active for this tab.", RecordingNotActive
			done(ExecutionError)
			return
		}
		finish := func(outcome string) {
			s.Recording = nil
			b.releaseSurface(t, l)
			s.EncodersClosed++
			b.nativeCleanup(t, func(ck *budget, cend func()) {
				ck.read(t, StageRecordingCleanup, func(bool) {
					s.SessionsDetached++
					cend()
				}, nil)
			}, func() {
				b.releaseSurface(t, rec.lease)
				b.env.Emit(actor, "recording.stop", outcome, sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
				unlock()
				done(outcome)
			})
		}
		k.reads(t, []string{StageRecordingStop, StageRecordingFrames, StageRecordingDetach, StageRecordingEncoderStop},
			func(ok bool) {
				if !ok {
					finish(ErrTimeout)
					return
				}
				res.Value = "recording"
				finish(OK)
			})
	})
}
