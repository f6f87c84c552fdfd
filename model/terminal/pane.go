package terminal

import (
	"github.com/orchsim/orchsim/sim"
)

// Pane is one mounted leaf instance: an AgentTerminalLeaf (terminal view
// mode, the debug inline terminal) or a feed leaf. A remount is a new Pane.
type Pane struct {
	r *Renderer
	// actor is "pane/"+ID, built once at mount (ID is its tail).
	actor   string
	Key     string
	Session string
	// Surface is editor, spotlight or debug.
	Surface string
	Mode    ViewMode
	// Size is the size the leaf measured at mount (xterm fit).
	Size Size
	// pending holds keystrokes typed before attach (cap 256, oldest dropped).
	pending        []Chunk
	backlog        int
	backlogDropped int
	seq            int
	// Failed is the toast on the pane ("" none).
	Failed  string
	Mounted bool
	// Attached: this instance's attach landed while it was mounted.
	Attached       bool
	attachInFlight bool
	// resizePending: the measured size waits for attach (latest only).
	resizePending bool
	needsWake     bool
	// A renderer mounts about a thousand panes in a terminal-remount seed:
	// the fields are ordered so that a Pane is 176 bytes, not 208
	// (TestPane_Size).
}

// panePrefix is the prefix of a pane's actor; ID is what follows it.
const panePrefix = "pane/"

// ID is the pane's id ("p12"), unique in its renderer.
func (p *Pane) ID() string { return p.actor[len(panePrefix):] }

func (p *Pane) emit(kind, outcome string, attrs ...sim.Attr) {
	// On the stack: EmitPrefixed copies the attributes.
	p.r.env.EmitPrefixed(p.actor, kind, outcome, []sim.Attr{sim.A("session", p.Session)}, attrs...)
}

// Pending returns the keystrokes queued before attach.
func (p *Pane) Pending() int { return len(p.pending) }

func (p *Pane) mount() {
	p.Mounted = true
	p.emit("pane.mount", "", sim.A("surface", p.Surface), sim.A("view", string(p.Mode)),
		sim.A("cols", p.r.env.Itoa(p.Size.Cols)), sim.A("rows", p.r.env.Itoa(p.Size.Rows)))
	if p.Mode != Terminal {
		return
	}
	p.resizePending = true
	if p.inline() {
		// AgentInlineTerminal attaches once: no wake, no retry.
		p.requestAttach(false)
		return
	}
	if !p.r.guarded() {
		// Before #597: every mount wakes; attach is chained behind the wake.
		p.r.ensureSessionLive(p.Session, "terminal-leaf.mount", p.ID(), p.afterWake)
		return
	}
	// After #597: attach first; wake only what is not started or exited.
	p.needsWake = p.r.needsWake(p.Session)
	p.requestAttach(false)
}

func (p *Pane) afterWake(err *wakeErr) {
	if err != nil {
		if p.Mounted {
			p.toast(err.msg)
		}
		return
	}
	if !p.Attached && !p.attachInFlight {
		p.requestAttach(false)
	}
}

func (p *Pane) requestAttach(retry bool) {
	p.attachInFlight = true
	a := p.r.app
	// A session closed while its wake ran has no metadata left: not shown
	// in terminal view (main then finds no entry to attach).
	m := a.Meta(p.Session)
	terminalView := m != nil && m.Mode == Terminal
	a.toMainMsg(hopAttach, p, terminalView, retry, Size{}, nil)
}

// inline reports whether the pane is the debug inline terminal
// (AgentInlineTerminal.tsx@428aed2d), whose attach and cleanup #597 did not
// touch: it attaches once when it opens, never wakes or retries, ignores an
// attach that lands after its cleanup, and its cleanup detaches
// unconditionally; it queues no input (term.onData writes at once).
func (p *Pane) inline() bool { return p.Surface == "debug" }

func (p *Pane) onAttach(res AttachResult, retry bool) {
	p.attachInFlight = false
	if p.inline() {
		switch {
		case !p.Mounted:
			// The cleanup's detach went first; nothing releases here.
		case !res.OK:
			p.emit("pane.attach", "null")
		default:
			p.landed(res)
		}
		return
	}
	if !p.r.guarded() {
		if !p.Mounted {
			// The cleanup already ran its unconditional detach; this
			// reference is never released.
			p.emit("pane.attach", "late-ignored")
			return
		}
		// A missing entry answers '' before #597: it looks like an empty
		// buffer, so the pane shows itself attached.
		p.landed(res)
		return
	}
	if !res.OK {
		if !p.Mounted {
			return
		}
		p.emit("pane.attach", "null")
		if retry {
			p.toast(MsgNotAvailable)
			return
		}
		again := func(err *wakeErr) {
			if err != nil {
				if p.Mounted {
					p.toast(err.msg)
				}
				return
			}
			if p.Mounted && !p.Attached && !p.attachInFlight {
				p.requestAttach(true)
			}
		}
		if p.r.needsWake(p.Session) {
			p.needsWake = false
			p.r.ensureSessionLive(p.Session, "terminal-leaf.mount", p.ID(), again)
			return
		}
		again(nil)
		return
	}
	if !p.Mounted {
		p.emit("pane.attach", "released")
		p.r.app.toMainMsg(hopDetach, p, false, false, Size{}, nil)
		return
	}
	p.landed(res)
	if p.needsWake {
		p.needsWake = false
		p.r.ensureSessionLive(p.Session, "terminal-leaf.mount", p.ID(), func(err *wakeErr) {
			if err != nil && p.Mounted {
				p.toast(err.msg)
			}
		})
	}
}

// landed writes the replay buffer and backlog, marks the pane attached and
// flushes the remembered resize and the queued input.
func (p *Pane) landed(res AttachResult) {
	p.Attached = true
	replay := res.replay
	if replay == "" {
		replay = fmtBytes(p.r.env, res.Bytes)
	}
	p.emit("pane.attach", "attached", sim.A("replay", replay), sim.A("widths", orDash(res.Widths)),
		sim.A("backlog", p.r.env.Itoa(p.backlog)), sim.A("backlog-dropped", p.r.env.Itoa(p.backlogDropped)))
	p.backlog, p.backlogDropped = 0, 0
	a := p.r.app
	if p.resizePending {
		p.resizePending = false
		a.toMainMsg(hopResize, p, false, false, p.Size, nil)
	}
	if len(p.pending) > 0 {
		chunks := p.pending
		p.pending = nil
		a.toMainMsg(hopWrite, p, false, false, Size{}, chunks)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (p *Pane) unmount() {
	p.Mounted = false
	p.r.removePane(p)
	var attrs []sim.Attr
	if len(p.pending) > 0 {
		attrs = append(attrs, sim.A("pending", seqRange(p.r.env, p.pending)))
	}
	p.emit("pane.unmount", "", attrs...)
	if p.Mode != Terminal {
		return
	}
	if !p.r.guarded() || p.Attached || p.inline() {
		p.r.app.toMainMsg(hopDetach, p, false, false, Size{}, nil)
	}
	p.Attached = false
}

// typeChunks types n chunks of key: written at once when attached, else
// queued (the oldest dropped past PendingInputCap, reported).
func (p *Pane) typeChunks(key Key, n int) {
	chunks := make([]Chunk, n)
	for i := range chunks {
		p.seq++
		chunks[i] = Chunk{Seq: p.seq, Key: key}
	}
	attrs := []sim.Attr{sim.A("session", p.Session), sim.A("pane", p.ID()), sim.A("key", string(key)), sim.A("seq", seqRange(p.r.env, chunks))}
	a := p.r.app
	if p.Attached || p.inline() {
		// The inline terminal queues nothing: its onData writes at once.
		p.r.env.Emit("user", "type", "sent", attrs...)
		a.toMainMsg(hopWrite, p, false, false, Size{}, chunks)
		return
	}
	p.r.env.Emit("user", "type", "queued", attrs...)
	p.pending = append(p.pending, chunks...)
	if over := len(p.pending) - PendingInputCap; over > 0 {
		dropped := p.pending[:over]
		p.emit("input.drop", "dropped", sim.A("seq", seqRange(p.r.env, dropped)), sim.A("cap", p.r.env.Itoa(PendingInputCap)))
		p.pending = append([]Chunk(nil), p.pending[over:]...)
	}
}

// retry is the pane's Retry button.
func (p *Pane) retry() {
	p.Failed = ""
	r := p.r
	onErr := func(err *wakeErr) {
		if err != nil && p.Mounted {
			p.toast(err.msg)
		}
	}
	if p.Mode != Terminal {
		r.ensureSessionLive(p.Session, "retry", p.ID(), onErr)
		return
	}
	if !r.guarded() {
		r.ensureSessionLive(p.Session, "retry", p.ID(), p.afterWake)
		return
	}
	if !p.Attached && !p.attachInFlight {
		p.needsWake = r.needsWake(p.Session)
		p.requestAttach(false)
		return
	}
	if r.needsWake(p.Session) {
		r.ensureSessionLive(p.Session, "retry", p.ID(), onErr)
	}
}

func (p *Pane) toast(msg string) {
	p.Failed = msg
	p.emit("pane.toast", msg)
}
