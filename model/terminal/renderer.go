package terminal

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

// Surface is what MainSurface renders.
type Surface string

// Surfaces. Spotlight, Reader and Settings render outside GlobalEditorShell,
// so every leaf of the tile tree unmounts on entry and remounts on exit;
// Spotlight renders one leaf for its session.
const (
	SurfaceEditor    Surface = "editor"
	SurfaceSpotlight Surface = "spotlight"
	SurfaceReader    Surface = "reader"
	SurfaceSettings  Surface = "settings"
)

// Runtime statuses (SessionRuntime.processStatus; "" before any recovery).
const (
	StatusSpawning = "spawning"
	StatusStarted  = "started"
	StatusFailed   = "failed"
	StatusExited   = "exited"
)

// Runtime is the renderer's in-memory SessionRuntime.
type Runtime struct {
	Status      string
	Error       string
	FailureCode string
	InputReady  bool
	Rev         int
	Exited      bool
	// Backend is the backend the last recovery reported.
	Backend string
}

// View is the renderer's layout state.
type View struct {
	Surface    Surface
	Spotlight  string
	Tab        int
	Tabs       int
	Fullscreen bool
	// Debug is the session shown in the debug inline terminal ("" closed).
	Debug string
}

type wakeErr struct{ code, msg string }

type wake struct {
	id          string
	session     string
	kind        Kind
	cwd         string
	waiters     []func(*wakeErr)
	disposition string
	waitStart   time.Duration
	sawExit     bool
	// repoll is poll(w) bound once per wake: a wake polls every 50 ms for
	// up to 30 s, and a closure per poll was a sixth of chaos's allocations.
	repoll func()
}

// Renderer is the renderer process: session runtimes, the single-flight
// wake per session (wakeInFlightRef), and the mounted panes.
type Renderer struct {
	app *App
	env *model.Env
	// runtimes are the sessions' runtimes, by session (lookup only). A
	// closed session's runtime is dropped, but a late answer from main
	// (its kill's exit, a readiness notice) creates it again, so a
	// workspace that opens and closes agents all day holds dozens: a scan
	// was most of every readiness poll. rtCache remembers the entries
	// looked up by the address of the session id's bytes (a poll, act or
	// attach asks with the id its metadata holds; a map lookup hashed it).
	runtimes map[string]*Runtime
	rtCache  sim.AddrCache[*Runtime]
	wakes    map[string]*wake
	// guard is Fixed(GuardedWake), read once (every mount, attach and
	// unmount asks).
	guard   bool
	wakeSeq int
	paneSeq int
	// Panes are the mounted panes, in mount order.
	Panes []*Pane
	View  View
	// gone: this renderer reloaded; its timers and IPC deliveries are void.
	gone bool
	// reloaded: this renderer came up by a reload, over a main process
	// that kept its backends, with none of its predecessor's runtimes.
	reloaded bool
	// prompts draws feed Send texts and promptSeq numbers them
	// (Config.PromptProtocol).
	prompts   *sim.Rand
	promptSeq int
	// wantBuf and panesBuf are renderStrict's scratch buffers.
	wantBuf  []slot
	panesBuf []*Pane
}

// fromMain delivers f, sent by main in answer to this renderer, unless the
// renderer reloaded meanwhile (the answer has no one to reach).
func (r *Renderer) fromMain(f func()) { r.app.toRendererFor(r, f) }

func newRenderer(app *App) *Renderer {
	return &Renderer{app: app, env: app.env, wakes: map[string]*wake{},
		View: View{Surface: SurfaceEditor, Tabs: 1}, guard: app.Profile().Fixed(GuardedWake)}
}

func (r *Renderer) emit(kind, outcome string, attrs ...sim.Attr) {
	r.env.Emit("renderer", kind, outcome, attrs...)
}

func (r *Renderer) guarded() bool { return r.guard }

// Runtime returns session's runtime, creating an empty one.
func (r *Renderer) Runtime(session string) *Runtime {
	if rt, ok := r.rtCache.Get(session); ok {
		return rt
	}
	rt := r.runtimes[session]
	if rt == nil {
		if r.runtimes == nil {
			r.runtimes = map[string]*Runtime{}
		}
		rt = &Runtime{}
		r.runtimes[session] = rt
	}
	r.rtCache.Put(session, rt)
	return rt
}

// dropRuntime forgets session's runtime (a closed pane's session).
func (r *Renderer) dropRuntime(session string) {
	delete(r.runtimes, session)
	r.rtCache.Forget(session)
}

// needsWake is the post-#597 gate: not started, or exited.
func (r *Renderer) needsWake(session string) bool {
	rt := r.Runtime(session)
	return rt.Status != StatusStarted || rt.Exited
}

// BelievedLive reports whether the runtime shows the agent running: what a
// user goes by before typing into its pane.
func (r *Renderer) BelievedLive(session string) bool {
	rt := r.Runtime(session)
	return rt.Status == StatusStarted && !rt.Exited
}

// rehydrate recovers a session at boot: runtime from the snapshot, no
// readiness wait and no kill (AC-31).
func (r *Renderer) rehydrate(m *Meta) {
	id := m.ID
	req := RecoverRequest{Session: id, Kind: m.Kind, Cwd: m.Cwd, Resume: m.Resume, Caller: "rehydrate"}
	reply := func(res RecoverResult) { r.fromMain(func() { r.rehydrated(id, res) }) }
	if r.reloaded && r.visibleAtBoot(id) {
		p := r.app.Profile()
		switch {
		case p.Has(AdoptSettledOnly):
			r.emit("rehydrate", "", sim.A("session", id), sim.A("kind", string(m.Kind)), sim.A("mode", string(m.Mode)),
				sim.A("path", "adopt-live-or-spawn"))
			r.app.toMain(func() { r.app.Main.AdoptLiveOrSpawn(req, reply) })
			return
		case !p.Fixed(AdoptBeforeSpawn):
			// Before #548 (rehydrate.ts spawned visible persisted leaves
			// directly; stablyai/orca#11006's no-candidate cold restore):
			// the reloaded renderer has no restored candidate, so the
			// visible leaf is cold-restored without asking main.
			r.emit("rehydrate", "", sim.A("session", id), sim.A("kind", string(m.Kind)), sim.A("mode", string(m.Mode)),
				sim.A("path", "cold-restore"))
			r.app.toMain(func() { r.app.Main.ColdSpawn(req, reply) })
			return
		}
	}
	r.emit("rehydrate", "", sim.A("session", id), sim.A("kind", string(m.Kind)), sim.A("mode", string(m.Mode)))
	r.app.toMain(func() { r.app.Main.Recover(req, reply) })
}

// visibleAtBoot reports whether session's leaf is in the restored layout's
// active tab (the leaves rehydrate.ts spawned; the rest stayed dormant).
func (r *Renderer) visibleAtBoot(session string) bool {
	for _, s := range r.slots() {
		if sameID(s.session, session) {
			return true
		}
	}
	return false
}

func (r *Renderer) rehydrated(id string, res RecoverResult) {
	rt := r.Runtime(id)
	if !res.OK {
		rt.Status, rt.Error, rt.FailureCode, rt.InputReady = StatusFailed, res.Message, res.Code, false
		r.emit("rehydrate.recover", res.Code, sim.A("session", id))
		r.toastPanes(id, res.Message)
		return
	}
	s := res.Snapshot
	r.emit("rehydrate.recover", "ok", sim.A("session", id), sim.A("backend", s.Backend), sim.A("disposition", res.Disposition),
		sim.A("lifecycle", s.Lifecycle), sim.A("ready", b2s(s.Ready)), sim.A("rev", r.env.Itoa(s.Rev)))
	r.applySnapshot(rt, s, false)
}

func (r *Renderer) applySnapshot(rt *Runtime, s Snapshot, sawExit bool) {
	if sawExit {
		return
	}
	rt.Backend = s.Backend
	rt.Error, rt.FailureCode = "", ""
	if s.Lifecycle == Live {
		rt.Status = StatusStarted
	} else {
		rt.Status = StatusSpawning
	}
	rt.Exited = false
	if s.Rev >= rt.Rev {
		rt.InputReady, rt.Rev = s.Ready, s.Rev
	}
}

// ensureSessionLive wakes session once at a time: a call while a wake is in
// flight joins it. done gets nil or the wake's error.
func (r *Renderer) ensureSessionLive(session, caller, by string, done func(*wakeErr)) {
	if w := r.wakes[session]; w != nil {
		w.waiters = append(w.waiters, done)
		r.emit("wake", "joined", sim.A("session", session), sim.A("wake", w.id), sim.A("caller", caller), sim.A("by", by))
		return
	}
	meta := r.app.Meta(session)
	rt := r.Runtime(session)
	if meta == nil || !validKind(meta.Kind) {
		rt.Status, rt.Error, rt.InputReady = StatusFailed, MsgUnsupported, false
		r.emit("wake", "unsupported", sim.A("session", session), sim.A("caller", caller), sim.A("by", by))
		done(&wakeErr{CodeStartFailed, MsgUnsupported})
		return
	}
	r.wakeSeq++
	w := &wake{id: r.env.Str().Join("w", r.wakeSeq), session: session, kind: meta.Kind, cwd: meta.Cwd,
		waiters: []func(*wakeErr){done}}
	r.wakes[session] = w
	rt.Status, rt.Exited = StatusSpawning, false
	r.emit("wake", "", sim.A("session", session), sim.A("wake", w.id), sim.A("caller", caller), sim.A("by", by))
	req := RecoverRequest{Session: session, Kind: meta.Kind, Cwd: meta.Cwd, Resume: meta.Resume, Caller: w.id}
	r.app.toMain(func() {
		r.app.Main.Recover(req, func(res RecoverResult) {
			r.fromMain(func() { r.recovered(w, res) })
		})
	})
}

func (r *Renderer) recovered(w *wake, res RecoverResult) {
	rt := r.Runtime(w.session)
	if !res.OK {
		r.emit("wake.recover", res.Code, sim.A("session", w.session), sim.A("wake", w.id))
		r.failWake(w, res.Code, res.Message)
		return
	}
	s := res.Snapshot
	w.disposition = res.Disposition
	r.emit("wake.recover", "ok", sim.A("session", w.session), sim.A("wake", w.id), sim.A("backend", s.Backend),
		sim.A("disposition", res.Disposition), sim.A("lifecycle", s.Lifecycle), sim.A("ready", b2s(s.Ready)),
		sim.A("reason", s.Reason), sim.A("rev", r.env.Itoa(s.Rev)))
	r.applySnapshot(rt, s, w.sawExit)
	wait := !s.Ready
	if r.guarded() && res.Disposition == Adopted && s.Lifecycle == Live {
		wait = false
	}
	if !wait {
		r.succeedWake(w)
		return
	}
	w.waitStart = r.env.Now()
	r.emit("wake.wait", "", sim.A("session", w.session), sim.A("wake", w.id), sim.A("timeout", r.env.Str().Duration(ReadinessTimeout)))
	r.poll(w)
}

// poll is waitForSessionInputReady: every 50 ms, up to 30 s.
func (r *Renderer) poll(w *wake) {
	if r.gone {
		return
	}
	rt := r.Runtime(w.session)
	waited := r.env.Now() - w.waitStart
	switch {
	case rt.InputReady && rt.Status == StatusStarted && !rt.Exited:
		r.emit("wake.wait", "ready", sim.A("session", w.session), sim.A("wake", w.id), sim.A("waited", r.env.Str().Duration(waited)))
		r.succeedWake(w)
	case rt.Status == StatusFailed:
		msg := rt.Error
		if msg == "" {
			msg = MsgFailedToStart
		}
		r.waitFailed(w, "failed", msg, waited)
	case rt.Exited:
		r.waitFailed(w, "exited", MsgExitedEarly, waited)
	case waited >= ReadinessTimeout:
		r.waitFailed(w, "timeout", MsgTimedOut, waited)
	default:
		if w.repoll == nil {
			w.repoll = func() { r.poll(w) }
		}
		r.env.After(ReadinessPoll, w.repoll)
	}
}

// waitFailed kills the backend if owned: before #597 always, after it only
// when this wake spawned it.
func (r *Renderer) waitFailed(w *wake, outcome, msg string, waited time.Duration) {
	r.emit("wake.wait", outcome, sim.A("session", w.session), sim.A("wake", w.id), sim.A("waited", r.env.Str().Duration(waited)))
	kill := true
	if r.guarded() {
		kill = w.disposition == Spawned
	}
	if outcome == "timeout" && r.app.Profile().Has(NeverKillOnTimeout) {
		kill = false
	}
	if !kill {
		r.failWake(w, CodeStartFailed, msg)
		return
	}
	r.emit("kill.request", "", sim.A("session", w.session), sim.A("wake", w.id), sim.A("disposition", w.disposition))
	m := r.app.Main
	r.app.toMain(func() {
		m.KillOwned(w.session, w.kind, w.cwd, "readiness-timeout", w.id)
		r.fromMain(func() { r.failWake(w, CodeStartFailed, msg) })
	})
}

func (r *Renderer) failWake(w *wake, code, msg string) {
	rt := r.Runtime(w.session)
	rt.Status, rt.Error, rt.FailureCode, rt.InputReady = StatusFailed, msg, code, false
	r.emit("wake.done", "failed", sim.A("session", w.session), sim.A("wake", w.id), sim.A("code", code), sim.A("error", msg))
	r.endWake(w, &wakeErr{code, msg})
}

func (r *Renderer) succeedWake(w *wake) {
	r.emit("wake.done", "ok", sim.A("session", w.session), sim.A("wake", w.id))
	r.endWake(w, nil)
}

func (r *Renderer) endWake(w *wake, err *wakeErr) {
	if r.wakes[w.session] == w {
		delete(r.wakes, w.session)
	}
	for _, done := range w.waiters {
		done(err)
	}
}

// onInputReadiness applies an input-readiness event whose revision is not
// older than the runtime's.
func (r *Renderer) onInputReadiness(session string, ready bool, rev int) {
	rt := r.Runtime(session)
	if rev >= rt.Rev {
		rt.InputReady, rt.Rev = ready, rev
	}
}

// onExit applies a session-exit event of the backend the runtime follows.
func (r *Renderer) onExit(session, backend string, code int, cause string) {
	rt := r.Runtime(session)
	if backend == "" {
		// An exit without a backend id (the payload {sessionId, exitCode}
		// of main's id-only exit listener before agent-code PR #548) is
		// the exit of whatever backend the runtime follows.
		backend = rt.Backend
	}
	if rt.Backend != "" && rt.Backend != backend {
		return
	}
	rt.Exited, rt.InputReady = true, false
	if w := r.wakes[session]; w != nil {
		w.sawExit = true
	}
	msg := MsgExited
	if cause == "spawn-deadline" {
		rt.Status, rt.Error, rt.FailureCode = StatusFailed, MsgSpawnDeadline, CodeStartFailed
		msg = MsgSpawnDeadline
	} else if rt.Status != StatusFailed {
		rt.Status, rt.Error = StatusExited, MsgExited
	}
	r.emit("session.exit", r.env.Itoa(code), sim.A("session", session), sim.A("backend", backend), sim.A("cause", cause))
	r.toastPanes(session, msg)
}

func (r *Renderer) toastPanes(session, msg string) {
	for _, p := range r.Panes {
		if sameID(p.Session, session) {
			p.toast(msg)
		}
	}
}

// onPTYData queues forwarded PTY data in the backlog of every mounted,
// not yet attached terminal pane of session.
func (r *Renderer) onPTYData(session string, chunks int) {
	for _, p := range r.Panes {
		if !sameID(p.Session, session) || p.Mode != Terminal || p.Attached {
			continue
		}
		p.backlog += chunks
		if p.backlog > BacklogCap {
			p.backlogDropped += p.backlog - BacklogCap
			p.backlog = BacklogCap
		}
	}
}

type slot struct {
	key     string
	session string
	surface string
	mode    ViewMode
	size    Size
}

// slots returns the leaves the current view renders, in render order.
func (r *Renderer) slots() []slot { return r.appendSlots(nil) }

// appendSlots appends slots() to out (keys built by the run's Strings).
func (r *Renderer) appendSlots(out []slot) []slot {
	str := r.env.Str()
	switch r.View.Surface {
	case SurfaceEditor:
		n := 0
		for _, m := range r.app.metas {
			if m.Tab == r.View.Tab {
				n++
			}
		}
		for _, m := range r.app.metas {
			if m.Tab != r.View.Tab {
				continue
			}
			size := Size{Cols: (EditorArea.Cols - (n - 1)) / n, Rows: EditorArea.Rows}
			if m.editorKey == "" || m.editorKeyTab != m.Tab || m.editorKeyID != m.ID {
				var kb [64]byte
				key := strconv.AppendInt(append(kb[:0], "editor/"...), int64(m.Tab), 10)
				key = append(append(key, '/'), m.ID...)
				m.editorKey, m.editorKeyTab, m.editorKeyID = str.Bytes(key), m.Tab, m.ID
			}
			out = append(out, slot{key: m.editorKey, session: m.ID, surface: "editor",
				mode: m.Mode, size: size})
		}
	case SurfaceSpotlight:
		if m := r.app.Meta(r.View.Spotlight); m != nil {
			out = append(out, slot{key: str.Concat("spotlight/", m.ID), session: m.ID, surface: "spotlight", mode: m.Mode, size: SpotlightArea})
		}
	}
	if r.View.Debug != "" {
		out = append(out, slot{key: str.Concat("debug/", r.View.Debug), session: r.View.Debug, surface: "debug", mode: Terminal, size: DebugArea})
	}
	return out
}

func (r *Renderer) setView(s Surface, spotlight string) {
	r.View.Surface, r.View.Spotlight = s, spotlight
	r.render()
}

// render commits the view: removed leaves run their cleanup first, then new
// leaves run their mount effects (React's commit order).
func (r *Renderer) render() { r.renderStrict("") }

// renderStrict is render with StrictMode's double effects (mount, cleanup,
// mount) for the leaves of session it mounts ("" for none).
func (r *Renderer) renderStrict(session string) {
	// The slot and pane buffers are taken while in use, so a nested render
	// (none today) would build its own.
	want, panes := r.appendSlots(r.wantBuf[:0]), append(r.panesBuf[:0], r.Panes...)
	r.wantBuf, r.panesBuf = nil, nil
	defer func() {
		clear(panes)
		r.wantBuf, r.panesBuf = want[:0], panes[:0]
	}()
	for _, p := range panes {
		keep := false
		for _, s := range want {
			if sameID(s.key, p.Key) {
				keep = true
				break
			}
		}
		if !keep {
			p.unmount()
		}
	}
	for _, s := range want {
		if r.mountedKey(s.key) == nil {
			if session != "" && s.session == session {
				r.mount(s).unmount()
			}
			r.mount(s)
		}
	}
}

func (r *Renderer) mountedKey(key string) *Pane {
	for _, p := range r.Panes {
		if sameID(p.Key, key) {
			return p
		}
	}
	return nil
}

// VisiblePane returns the pane the user sees for session: its leaf in the
// current surface, else the debug inline terminal; nil when none is visible
// (Reader, Settings, editor fullscreen, another tab).
func (r *Renderer) VisiblePane(session string) *Pane {
	var debug *Pane
	for _, p := range r.Panes {
		if !sameID(p.Session, session) {
			continue
		}
		if p.Surface == "debug" {
			debug = p
			continue
		}
		if p.Surface == "editor" && r.View.Fullscreen {
			continue
		}
		return p
	}
	return debug
}

func (r *Renderer) mount(s slot) *Pane {
	r.paneSeq++
	p := &Pane{r: r, actor: r.env.Str().Join(panePrefix+"p", r.paneSeq), Key: s.key, Session: s.session, Surface: s.surface,
		Mode: s.mode, Size: s.size}
	r.Panes = append(r.Panes, p)
	p.mount()
	return p
}

func (r *Renderer) removePane(p *Pane) {
	for i, q := range r.Panes {
		if q == p {
			r.Panes = append(r.Panes[:i], r.Panes[i+1:]...)
			return
		}
	}
}

// strictRemount replaces session's leaf in the current surface with a new
// instance whose effects run mount, cleanup, mount (React StrictMode).
func (r *Renderer) strictRemount(session string) {
	var old *Pane
	for _, p := range r.Panes {
		if sameID(p.Session, session) && p.Surface != "debug" {
			old = p
			break
		}
	}
	if old == nil {
		return
	}
	s := slot{key: old.Key, session: old.Session, surface: old.Surface, mode: old.Mode, size: old.Size}
	old.unmount()
	first := r.mount(s)
	first.unmount()
	r.mount(s)
}

// send is TileLeaf.send: a feed Send wakes the session first when the
// runtime is not input-ready, then delivers the prompt.
func (r *Renderer) send(session string) {
	deliver := func() {
		m := r.app.Main
		if r.app.cfg.PromptProtocol {
			prompt := r.draftPrompt()
			r.app.toMain(func() { m.DeliverPromptToAgent(session, prompt, nil, nil, func(DeliveryResult) {}) })
			return
		}
		r.app.toMain(func() { m.DeliverPrompt(session) })
	}
	if r.Runtime(session).InputReady {
		deliver()
		return
	}
	by := ""
	if p := r.VisiblePane(session); p != nil {
		by = p.ID()
	}
	r.ensureSessionLive(session, "tile-leaf.send", by, func(err *wakeErr) {
		if err != nil {
			if p := r.VisiblePane(session); p != nil {
				p.toast(err.msg)
			}
			return
		}
		deliver()
	})
}

// draftPrompt draws the text of a feed Send (PromptProtocol): mostly a
// short line, sometimes a dictated multi-line prompt (the paste route,
// inlined) or a big paste Claude collapses into a placeholder.
func (r *Renderer) draftPrompt() string {
	if r.prompts == nil {
		r.prompts = r.app.env.Rand("user/prompt")
	}
	r.promptSeq++
	switch r.prompts.Pick("prompt-shape", 6, 3, 1) {
	case 1:
		return fmt.Sprintf("<stt>\nplease look at item %d\n</stt>", r.promptSeq)
	case 2:
		return strings.Repeat(fmt.Sprintf("line %d of a long paste\n", r.promptSeq), 5)
	}
	return fmt.Sprintf("fix bug %d", r.promptSeq)
}
