package terminal

import (
	"slices"
	"time"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

// IPC latency bounds of one renderer <-> main message (model choice: a
// local Electron pipe).
const (
	IPCLatencyMin = time.Millisecond
	IPCLatencyMax = 20 * time.Millisecond
)

// App is one agent-code desktop app: the main process, the renderer, the
// IPC pipes between them, and the workspace's sessions. Its exported
// methods other than the accessors are user actions: each emits a "user"
// event, then lets the renderer react.
type App struct {
	env      *model.Env
	cfg      Config
	Main     *Manager
	Renderer *Renderer
	metas    []*Meta
	// added counts the sessions ever added, so a new session's id stays
	// fresh after a close.
	added int
	ipc   *sim.Rand
	// Delivery times of the last message each way: Electron IPC is FIFO.
	toMainAt, toRendererAt time.Duration
	// hops are spent deliveries, for reuse (see hop).
	hops []*hop
}

// hop is one IPC delivery in flight: f runs unless a renderer it names
// (from or to, and the renderer an answer is for) reloaded meanwhile. Most
// of a run's kernel events are deliveries, so hops are reused, each with its
// fire bound once, instead of a wrapping closure per message.
//
// The commonest messages (a pane's attach, its answer, detach, resize and
// write) are typed: op names the message and p, res, flag, retry, size and chunks
// carry what a closure would have captured, so sending one allocates
// nothing. f is the message otherwise (op hopFunc).
type hop struct {
	a      *App
	f      func()
	r1, r2 *Renderer
	run    func()

	op     hopOp
	p      *Pane
	res    AttachResult
	flag   bool // hopAttach: terminal view
	retry  bool // hopAttach, hopAttached: the attach is a retry
	size   Size
	chunks []Chunk
	// hopPTYData, hopReadiness: the session, and the chunk count or the
	// readiness revision.
	session string
	n       int
}

// hopOp names a typed IPC message (see hop).
type hopOp uint8

const (
	hopFunc      hopOp = iota // run f
	hopAttach                 // main: Attach p, answer p's renderer with hopAttached
	hopAttached               // renderer: p.onAttach(res, retry)
	hopDetach                 // main: Detach p
	hopResize                 // main: Resize p to size
	hopWrite                  // main: Write chunks to p
	hopPTYData                // renderer: onPTYData(session, n)
	hopReadiness              // renderer: onInputReadiness(session, flag, n)
)

// toMainMsg delivers a typed message to main after one IPC hop, in send
// order with toMain's; void once the renderer reloaded, as toMain.
func (a *App) toMainMsg(op hopOp, p *Pane, flag, retry bool, size Size, chunks []Chunk) {
	h := a.hop0(a.Renderer, nil)
	h.op, h.p, h.flag, h.retry, h.size, h.chunks = op, p, flag, retry, size, chunks
	a.toMainAt = a.deliver(a.toMainAt, h.run)
}

// toRendererMsg delivers a typed message (hopPTYData, hopReadiness) to the
// current renderer after one IPC hop, in send order with toRenderer's; void
// once that renderer reloaded, as toRenderer.
func (a *App) toRendererMsg(op hopOp, session string, flag bool, n int) {
	h := a.hop0(a.Renderer, nil)
	h.op, h.session, h.flag, h.n = op, session, flag, n
	a.toRendererAt = a.deliver(a.toRendererAt, h.run)
}

// attached answers p's attach in renderer r (fromMain's delivery).
func (a *App) attached(r *Renderer, p *Pane, res AttachResult, retry bool) {
	h := a.hop0(a.Renderer, r)
	h.op, h.p, h.res, h.retry = hopAttached, p, res, retry
	a.toRendererAt = a.deliver(a.toRendererAt, h.run)
}

// hop returns a delivery of f that is void once r1 (or r2, when not nil)
// is gone.
func (a *App) hop(r1, r2 *Renderer, f func()) func() {
	h := a.hop0(r1, r2)
	h.f = f
	return h.run
}

// hop0 returns a spent hop (or a new one) for a delivery void once r1 (or
// r2, when not nil) is gone; the caller sets its message.
func (a *App) hop0(r1, r2 *Renderer) *hop {
	var h *hop
	if n := len(a.hops); n > 0 {
		h = a.hops[n-1]
		a.hops = a.hops[:n-1]
	} else {
		h = &hop{a: a}
		h.run = h.fire
	}
	h.r1, h.r2 = r1, r2
	return h
}

func (h *hop) fire() {
	a, f, r1, r2 := h.a, h.f, h.r1, h.r2
	op, p, res, flag, retry, size, chunks := h.op, h.p, h.res, h.flag, h.retry, h.size, h.chunks
	session, n := h.session, h.n
	*h = hop{a: h.a, run: h.run}
	a.hops = append(a.hops, h)
	if r1.gone || r2 != nil && r2.gone {
		return
	}
	switch op {
	case hopFunc:
		f()
	case hopAttach:
		res := a.Main.Attach(p.Session, p.ID(), flag)
		a.attached(p.r, p, res, retry)
	case hopAttached:
		p.onAttach(res, retry)
	case hopDetach:
		a.Main.Detach(p.Session, p.ID())
	case hopResize:
		a.Main.Resize(p.Session, p.ID(), size)
	case hopWrite:
		a.Main.Write(p.Session, p.ID(), chunks)
	case hopPTYData:
		r1.onPTYData(session, n)
	case hopReadiness:
		r1.onInputReadiness(session, flag, n)
	}
}

// NewApp returns an app with no sessions; add them with AddSession, then Boot.
func NewApp(env *model.Env, cfg Config) *App {
	a := &App{env: env, cfg: cfg, ipc: env.Rand("ipc")}
	a.Main = newManager(a)
	a.Renderer = newRenderer(a)
	return a
}

// Profile returns the run's profile.
func (a *App) Profile() model.Profile { return a.env.Profile }

// Sessions returns the workspace's sessions in creation order.
func (a *App) Sessions() []*Meta { return a.metas }

// Meta returns the session named id, or nil.
func (a *App) Meta(id string) *Meta {
	for _, m := range a.metas {
		if sameID(m.ID, id) {
			return m
		}
	}
	return nil
}

// AddSession adds a session to workspace.json before boot.
func (a *App) AddSession(m Meta) *Meta {
	meta := m
	a.metas = append(a.metas, &meta)
	a.added++
	if meta.Tab >= a.Renderer.View.Tabs {
		a.Renderer.View.Tabs = meta.Tab + 1
	}
	return &meta
}

func (a *App) latency() time.Duration { return a.ipc.Duration("latency", IPCLatencyMin, IPCLatencyMax) }

// toMain delivers f in the main process after one IPC hop, in send order.
// A message the renderer sent before it reloaded is lost with its
// webContents (model choice: the reload tears the pipe down both ways).
func (a *App) toMain(f func()) {
	a.toMainAt = a.deliver(a.toMainAt, a.hop(a.Renderer, nil, f))
}

// toRenderer delivers f in the renderer after one IPC hop, in send order;
// a renderer that reloaded meanwhile gets nothing.
func (a *App) toRenderer(f func()) { a.toRendererFor(nil, f) }

// toRendererFor is toRenderer of an answer to renderer r: void also when r
// reloaded meanwhile (nil: any renderer).
func (a *App) toRendererFor(r *Renderer, f func()) {
	a.toRendererAt = a.deliver(a.toRendererAt, a.hop(a.Renderer, r, f))
}

func (a *App) deliver(last time.Duration, f func()) time.Duration {
	now := a.env.Now()
	at := now + a.latency()
	if at < last {
		at = last
	}
	a.env.After(at-now, f)
	return at
}

func (a *App) user(kind string, attrs ...sim.Attr) { a.env.Emit("user", kind, "", attrs...) }

// Boot launches the app: the renderer rehydrates every session of the
// workspace (recover with no readiness wait and no kill, as the rehydrate
// path does), then renders the active tab.
func (a *App) Boot() {
	a.env.Emit("app", "boot", "", sim.A("sessions", a.env.Itoa(len(a.metas))), sim.A("tabs", a.env.Itoa(a.Renderer.View.Tabs)))
	for _, m := range a.metas {
		a.Renderer.rehydrate(m)
	}
	a.Renderer.render()
}

// ReloadRenderer reloads the renderer (Cmd-R, a renderer crash, or in
// stablyai/orca#11006's terms a transport drop): the main process and its
// backends stay; every pane goes without running its clean-up (keystrokes
// it held are reported dropped, cause=reload), main forgets the old
// renderer's PTY references, messages in flight either way are lost, and a
// new renderer with no runtimes restores the workspace: it rehydrates every
// session and renders the active tab of the editor (Spotlight, overlays,
// fullscreen and the debug terminal are not restored).
func (a *App) ReloadRenderer() {
	old := a.Renderer
	a.user("renderer.reload", sim.A("panes", a.env.Itoa(len(old.Panes))))
	old.gone = true
	for _, p := range append([]*Pane(nil), old.Panes...) {
		p.Mounted = false
		old.removePane(p)
		if len(p.pending) > 0 {
			p.emit("input.drop", "dropped", sim.A("seq", seqRange(a.env, p.pending)), sim.A("cause", "reload"))
			p.pending = nil
		}
		p.emit("pane.unmount", "", sim.A("cause", "reload"))
	}
	a.Main.rendererReloaded()
	r := newRenderer(a)
	r.reloaded = true
	r.wakeSeq, r.paneSeq = old.wakeSeq, old.paneSeq
	r.View.Tab, r.View.Tabs = old.View.Tab, old.View.Tabs
	a.Renderer = r
	for _, m := range a.metas {
		r.rehydrate(m)
	}
	r.render()
}

// ClosePane is the user closing session's pane (closeSession,
// src/renderer/src/workspace/hook/actions/pane.ts@428aed2d): the renderer
// asks main to kill the backend with the pane's owner tuple
// (killOwnedSession: a start in flight is cancelled, an unrelated backend
// is refused), drops the session from the workspace (keystrokes its panes
// held are reported dropped, cause=close) and unmounts its leaves. The
// workspace model's Close (workspace.go) adds detached children and Undo
// Close; the worlds have neither.
func (a *App) ClosePane(session string) {
	m := a.Meta(session)
	if m == nil {
		return
	}
	a.user("pane.close", sim.A("session", session), sim.A("kind", string(m.Kind)))
	kind, cwd := m.Kind, m.Cwd
	a.toMain(func() { a.Main.KillOwned(session, kind, cwd, "close", "") })
	r := a.Renderer
	for _, p := range r.Panes {
		if sameID(p.Session, session) && len(p.pending) > 0 {
			p.emit("input.drop", "dropped", sim.A("seq", seqRange(a.env, p.pending)), sim.A("cause", "close"))
			p.pending = nil
		}
	}
	a.metas = slices.DeleteFunc(a.metas, func(x *Meta) bool { return x.ID == session })
	if r.View.Surface == SurfaceSpotlight && r.View.Spotlight == session {
		r.View.Surface, r.View.Spotlight = SurfaceEditor, ""
	}
	if r.View.Debug == session {
		r.View.Debug = ""
	}
	r.render()
	r.dropRuntime(session)
}

// NewSession creates a session in the active tab at run time (the user
// opens a new agent); its leaf mounts and wakes it.
func (a *App) NewSession(m Meta) *Meta {
	m.Tab = a.Renderer.View.Tab
	meta := a.AddSession(m)
	a.user("agent.new", sim.A("session", m.ID), sim.A("kind", string(m.Kind)), sim.A("mode", string(m.Mode)))
	if a.Renderer.View.Surface == SurfaceEditor {
		a.Renderer.render()
	}
	return meta
}

// NewSessionStrict is NewSession in a StrictMode (development) build:
// React runs the new leaf's effects mount, cleanup, mount, so its first
// mount is at once undone and redone (as StrictRemount does for an
// existing leaf).
func (a *App) NewSessionStrict(m Meta) *Meta {
	m.Tab = a.Renderer.View.Tab
	meta := a.AddSession(m)
	a.user("agent.new", sim.A("session", m.ID), sim.A("kind", string(m.Kind)), sim.A("mode", string(m.Mode)), sim.A("strict", "true"))
	if a.Renderer.View.Surface == SurfaceEditor {
		a.Renderer.renderStrict(m.ID)
	}
	return meta
}

// EnterSpotlight shows session alone, outside the editor shell.
func (a *App) EnterSpotlight(session string) {
	a.user("spotlight.enter", sim.A("session", session))
	a.Renderer.setView(SurfaceSpotlight, session)
}

// LeaveSpotlight returns to the editor.
func (a *App) LeaveSpotlight() {
	a.user("spotlight.leave", sim.A("session", a.Renderer.View.Spotlight))
	a.Renderer.setView(SurfaceEditor, "")
}

// OpenReader and OpenSettings render outside the editor shell; Close
// returns to the editor.
func (a *App) OpenReader() {
	a.user("reader.open")
	a.Renderer.setView(SurfaceReader, "")
}

// OpenSettings opens Settings.
func (a *App) OpenSettings() {
	a.user("settings.open")
	a.Renderer.setView(SurfaceSettings, "")
}

// CloseOverlay closes Reader or Settings.
func (a *App) CloseOverlay() {
	a.user(string(a.Renderer.View.Surface) + ".close")
	a.Renderer.setView(SurfaceEditor, "")
}

// SwitchTab renders only tab's tree.
func (a *App) SwitchTab(tab int) {
	a.user("tab.switch", sim.A("tab", a.env.Itoa(tab)))
	a.Renderer.View.Tab = tab
	a.Renderer.render()
}

// SetFullscreen toggles editor fullscreen: leaves stay mounted (display:none).
func (a *App) SetFullscreen(on bool) {
	a.user("editor.fullscreen", sim.A("on", b2s(on)))
	a.Renderer.View.Fullscreen = on
	a.Renderer.render()
}

// OpenDebug shows session in the debug inline terminal (a second PTY
// consumer that stays mounted across surfaces); "" closes it.
func (a *App) OpenDebug(session string) {
	if session == "" {
		a.user("debug.close", sim.A("session", a.Renderer.View.Debug))
	} else {
		a.user("debug.open", sim.A("session", session))
	}
	a.Renderer.View.Debug = session
	a.Renderer.render()
}

// StrictRemount remounts session's leaf with StrictMode's double effects:
// the leaf is replaced, and the new instance runs mount, cleanup, mount.
func (a *App) StrictRemount(session string) {
	a.user("strict-remount", sim.A("session", session))
	a.Renderer.strictRemount(session)
}

// Type types n chunks of key into the visible terminal pane of session.
func (a *App) Type(session string, key Key, n int) {
	p := a.Renderer.VisiblePane(session)
	if p == nil || p.Mode != Terminal {
		a.user("type", sim.A("session", session))
		return
	}
	p.typeChunks(key, n)
}

// Send presses Send in session's feed leaf.
func (a *App) Send(session string) {
	a.user("send", sim.A("session", session))
	a.Renderer.send(session)
}

// AnswerInFeed answers the prompt on session's feed prompt card.
func (a *App) AnswerInFeed(session string) {
	a.user("answer", sim.A("session", session), sim.A("via", "feed"))
	id := session
	a.toMain(func() { a.Main.Answer(id) })
}

// Retry presses Retry on session's visible pane.
func (a *App) Retry(session string) {
	a.user("retry", sim.A("session", session))
	if p := a.Renderer.VisiblePane(session); p != nil {
		p.retry()
	}
}

// AskPermission makes session's live backend show a permission prompt.
func (a *App) AskPermission(session string) {
	if b := a.Main.Backend(session); b != nil {
		b.AskPermission()
	}
}

// Output makes session's live backend print n bytes.
func (a *App) Output(session string, n int) {
	if b := a.Main.Backend(session); b != nil && b.Live() {
		a.Main.output(b, n)
	}
}

// Crash makes session's live backend exit with code 1.
func (a *App) Crash(session string) {
	if b := a.Main.Backend(session); b != nil && b.Live() {
		a.Main.exited(b, 1, "crash")
	}
}

// BackgroundJob makes session's live backend background a tool call that
// runs for d (scripts).
func (a *App) BackgroundJob(session string, d time.Duration) {
	b := a.Main.Backend(session)
	if b == nil || !b.Live() {
		return
	}
	b.startJob(d)
}
