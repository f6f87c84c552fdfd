package script

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/terminal"
	"github.com/orchsim/orchsim/sim"
)

// # The terminal script language
//
// A file whose language line is "# language: terminal" is a scripted story
// of the agent-code desktop app (model/terminal) whose expected output is
// the trace. A script drives one app at a time on its own kernel. Every random draw of
// the model gets its simplest outcome (a zero tape) unless new is given a
// seed: IPC hops take 1 ms, a provider starts in 300 ms and paints its
// composer 500 ms later, a turn is one 1 s step printing 1 KB, nothing asks
// for permission, wedges or crashes unless a command says so. Commands run
// at the current virtual time and print the events they cause at once; run
// advances time and prints what happened meanwhile, one event per line (see
// sim.Event.Describe). Invariant violations are printed in the stream as
//
//	!! <invariant>: <message>
//
// and the story goes on (each invariant reports its first violation only).
// Arguments are key=value (a comma-separated list where noted) or a bare
// word; a misspelt or unused argument fails the test.
//
//	new [profile=reported|fixed] [fix=a,b] [unfix=a,b] [mutant=m] [check=a,b|terminal|none] [seed=N] [reaper]
//	    Starts a fresh app at T+0 under the profile; check names the
//	    invariants that judge it, "terminal" standing for every terminal
//	    invariant (the default). Prints "profile P, checking C" with C as
//	    the script wrote it (or "terminal"), never the group's members;
//	    reaper runs main's detached-idle reaper (5 min, nebula#78).
//	    Example: new profile=reported fix=guarded-wake check=live-agent-survives-remount
//
//	agent <id> [kind=claude|codex|opencode] [mode=terminal|feed] [tab=N] [resume] [wedge] [mcp]
//	    Adds a session to workspace.json before boot (default claude,
//	    terminal, tab 0); wedge makes its first spawn never paint its composer;
//	    mcp gives it built-in MCP domains (main registers them before start).
//	    Example: agent s1 kind=codex mode=terminal tab=1
//
//	boot
//	    Launches the app: rehydrates every session, renders the active tab.
//
//	reload
//	    Reloads the renderer (Cmd-R, a renderer crash): main and its backends
//	    stay; the new renderer rehydrates every session and renders the editor.
//
//	run [for=D]
//	    Advances virtual time by D (default 1s), printing the events.
//	    Example: run for=31s
//
//	spotlight <id>|off      enter Spotlight on a session, or leave it
//	reader on|off           open or close Reader
//	settings on|off         open or close Settings
//	tab <N>                 switch to tab N
//	fullscreen on|off       toggle editor fullscreen (leaves stay mounted)
//	debug <id>|off          show a session in the debug inline terminal, or close it
//	strict-remount <id>     remount a session's leaf with StrictMode double effects
//	    Example: spotlight s1
//
//	type <id> [n=N] [key=text|enter|clear|answer]
//	    Types N chunks (default 1) into the session's visible terminal pane.
//	    Example: type s1 n=300
//
//	send <id>       press Send in the session's feed leaf
//	answer <id>     answer the prompt on the session's feed prompt card
//	retry <id>      press Retry on the session's pane
//	new-agent <id> [kind=..] [mode=..] [strict]
//	    Opens a new agent in the active tab at run time; with strict, as a
//	    StrictMode (development) build mounts it: its leaf's effects run
//	    mount, cleanup, mount.
//
//	prompt <id>     the session's backend shows a permission prompt
//	background <id> [for=D]
//	    The session's live backend backgrounds a tool call that runs for D
//	    (default 10m) after its turn (a run_in_background Bash, a Monitor).
//	output <id> [kb=N]
//	    The session's backend prints N KB (default 4) at the PTY's width.
//	crash <id>      the session's backend exits with code 1
//	wedge-next <id> the session's next spawn never paints its composer
//
//	state
//	    Prints the renderer's runtimes and panes and main's backends, PTY
//	    attach counts, sizes and replay buffers.
//
//	finish
//	    Judges the end-of-run (liveness) properties at the current time.
//
// terminalGroup is the name a script uses for every terminal-session
// invariant.
const terminalGroup = "terminal"

// terminalInvariants returns the members of terminalGroup (the one place
// this language reads the list).
func terminalInvariants() []string { return invariants.InGroups(catalog.TerminalSession) }

type ddChecker struct {
	c      sim.Checker
	failed bool
}

type terminalHarness struct {
	k        *sim.Kernel
	env      *model.Env
	app      *terminal.App
	checkers []*ddChecker
	out      strings.Builder
}

func (h *terminalHarness) exec(d *Command, a *cmdArgs) string {
	h.out.Reset()
	if d.Cmd != "new" && h.app == nil {
		a.fail("%s before new", d.Cmd)
	}
	switch d.Cmd {
	case "new":
		h.handleNew(a)
	case "agent":
		h.handleAgent(a)
	case "boot":
		a.done()
		h.app.Boot()
	case "reload":
		a.done()
		h.app.ReloadRenderer()
	case "run":
		span := a.duration("for", time.Second)
		a.done()
		h.k.RunUntil(h.k.Elapsed() + span)
		fmt.Fprintf(&h.out, "-- %s\n", sim.FormatT(h.k.Elapsed()))
	case "spotlight", "reader", "settings", "tab", "fullscreen", "debug", "strict-remount":
		h.handleView(a, d.Cmd)
	case "type":
		id := a.pos("session")
		n := a.integer("n", 1)
		key := terminal.Key(a.oneOf("key", "text", "text", "enter", "clear", "answer"))
		a.done()
		h.app.Type(id, key, n)
	case "send", "answer", "retry", "prompt", "crash", "wedge-next":
		id := a.pos("session")
		a.done()
		h.session(id)
		map[string]func(string){"send": h.app.Send, "answer": h.app.AnswerInFeed, "retry": h.app.Retry,
			"prompt": h.app.AskPermission, "crash": h.app.Crash, "wedge-next": h.app.Main.WedgeNextSpawn}[d.Cmd](id)
	case "background":
		id := a.pos("session")
		d := a.duration("for", 10*time.Minute)
		a.done()
		h.session(id)
		h.app.BackgroundJob(id, d)
	case "output":
		id := a.pos("session")
		kb := a.integer("kb", 4)
		a.done()
		h.session(id)
		h.app.Output(id, kb*1024)
	case "new-agent":
		id := a.pos("session")
		kind := terminal.Kind(a.oneOf("kind", "claude", "claude", "codex", "opencode"))
		mode := terminal.ViewMode(a.oneOf("mode", "terminal", "terminal", "feed"))
		strict := a.flag("strict")
		a.done()
		meta := terminal.Meta{ID: id, Kind: kind, Cwd: "/work/" + id, Mode: mode}
		if strict {
			h.app.NewSessionStrict(meta)
		} else {
			h.app.NewSession(meta)
		}
	case "state":
		a.done()
		h.describe()
	case "finish":
		a.done()
		for _, c := range h.checkers {
			if f, ok := c.c.(sim.Finisher); ok && !c.failed {
				if v := f.Finish(h.k.Elapsed()); v != nil {
					c.failed = true
					fmt.Fprintf(&h.out, "!! %s: %s\n", v.Invariant, v.Message)
				}
			}
		}
		fmt.Fprintf(&h.out, "-- finished at %s\n", sim.FormatT(h.k.Elapsed()))
	default:
		a.fail("unknown command %q", d.Cmd)
	}
	return h.out.String()
}

func (h *terminalHarness) session(id string) {
	if h.app.Meta(id) == nil {
		h.out.WriteString("(no session " + id + ")\n")
	}
}

func (h *terminalHarness) handleNew(a *cmdArgs) {
	preset := a.oneOf("profile", model.PresetReported, model.PresetReported, model.PresetFixed)
	prof, err := model.Spec{Preset: preset, Fix: a.list("fix"), Unfix: a.list("unfix"), Mutants: a.list("mutant")}.Profile()
	if err != nil {
		a.fail("new: %v", err)
	}
	// The header says what the script named (or the group), never the
	// group's members: a new invariant must not change every golden.
	checking := terminalGroup
	if v, ok := a.lookup("check"); ok {
		checking = v
	}
	var names []string
	for _, n := range strings.Split(checking, ",") {
		switch {
		case n == "none":
		case n == terminalGroup:
			names = append(names, terminalInvariants()...)
		default:
			if _, ok := invariants.Lookup(n); !ok {
				a.fail("new: unknown invariant %q", n)
			}
			names = append(names, n)
		}
	}
	seed := a.integer("seed", -1)
	reaper := a.flag("reaper")
	a.done()
	h.k = sim.NewKernel(false)
	var src sim.Source = sim.NewTapeSource(nil, false)
	if seed >= 0 {
		src = sim.NewSeededSource(uint64(seed), false)
	}
	h.checkers = nil
	for _, c := range invariants.New(names...) {
		h.checkers = append(h.checkers, &ddChecker{c: c})
	}
	tr := h.k.Trace()
	tr.OnEvent(h.observe)
	h.env = &model.Env{Clock: h.k, Trace: tr, Source: src, Profile: prof, EnvironmentID: EnvironmentID}
	cfg := terminal.Config{}
	if reaper {
		cfg.DetachedIdleTimeout = terminal.DetachedIdleTimeout
	}
	h.app = terminal.NewApp(h.env, cfg)
	fmt.Fprintf(&h.out, "profile %s, checking %s\n", prof, checking)
}

// observe prints every event and feeds the checkers, which (unlike a
// scenario run) do not stop the story at the first violation.
func (h *terminalHarness) observe(ev *sim.Event) {
	h.out.WriteString(ev.Describe())
	h.out.WriteByte('\n')
	for _, c := range h.checkers {
		if c.failed {
			continue
		}
		if v := c.c.Observe(ev); v != nil {
			c.failed = true
			fmt.Fprintf(&h.out, "!! %s: %s\n", v.Invariant, v.Message)
		}
	}
}

func (h *terminalHarness) handleAgent(a *cmdArgs) {
	id := a.pos("session")
	kind := terminal.Kind(a.oneOf("kind", "claude", "claude", "codex", "opencode"))
	mode := terminal.ViewMode(a.oneOf("mode", "terminal", "terminal", "feed"))
	tab := a.integer("tab", 0)
	resume := a.flag("resume")
	wedge := a.flag("wedge")
	mcp := a.flag("mcp")
	a.done()
	if h.app.Meta(id) != nil {
		a.fail("agent: session %s is declared twice", id)
	}
	h.app.AddSession(terminal.Meta{ID: id, Kind: kind, Cwd: "/work/" + id, Mode: mode, Tab: tab, Resume: resume, MCP: mcp})
	if wedge {
		h.app.Main.WedgeNextSpawn(id)
	}
}

func (h *terminalHarness) handleView(a *cmdArgs, cmd string) {
	arg := a.pos("argument")
	a.done()
	app := h.app
	onOff := func() bool {
		switch arg {
		case "on":
			return true
		case "off":
			return false
		}
		a.fail("%s: want on or off, got %q", cmd, arg)
		return false
	}
	switch cmd {
	case "spotlight":
		if arg == "off" {
			app.LeaveSpotlight()
		} else {
			app.EnterSpotlight(arg)
		}
	case "reader":
		if onOff() {
			app.OpenReader()
		} else {
			app.CloseOverlay()
		}
	case "settings":
		if onOff() {
			app.OpenSettings()
		} else {
			app.CloseOverlay()
		}
	case "tab":
		n, err := strconv.Atoi(arg)
		if err != nil {
			a.fail("tab: %q is not a number", arg)
		}
		app.SwitchTab(n)
	case "fullscreen":
		app.SetFullscreen(onOff())
	case "debug":
		if arg == "off" {
			arg = ""
		}
		app.OpenDebug(arg)
	case "strict-remount":
		app.StrictRemount(arg)
	}
}

// describe prints the app's state, one line per thing.
func (h *terminalHarness) describe() {
	w := &h.out
	r, m := h.app.Renderer, h.app.Main
	v := r.View
	fmt.Fprintf(w, "view: %s", v.Surface)
	if v.Surface == terminal.SurfaceSpotlight {
		fmt.Fprintf(w, " %s", v.Spotlight)
	}
	fmt.Fprintf(w, " tab=%d/%d fullscreen=%v debug=%s\n", v.Tab, v.Tabs, v.Fullscreen, orDash(v.Debug))
	for _, meta := range h.app.Sessions() {
		id := meta.ID
		rt := r.Runtime(id)
		fmt.Fprintf(w, "%s (%s, %s): runtime %s ready=%v rev=%d", id, meta.Kind, meta.Mode, orDash(rt.Status), rt.InputReady, rt.Rev)
		if rt.Error != "" {
			fmt.Fprintf(w, " error=%q", rt.Error)
		}
		if b := m.Backend(id); b != nil {
			fmt.Fprintf(w, "; backend %s live=%v interactive=%v draft=%d prompt=%v", b.ID, b.Live(), b.Interactive(), b.Draft(), b.Prompt())
		} else {
			w.WriteString("; no backend")
		}
		size, owner := m.PTYSize(id)
		bytes, widths := m.ReplayBuffer(id)
		fmt.Fprintf(w, "; pty count=%d size=%s by %s replay=%dB widths=%s\n", m.AttachCount(id), size, orDash(owner), bytes, widths)
	}
	for _, p := range r.Panes {
		fmt.Fprintf(w, "pane %s: %s %s %s %s attached=%v pending=%d", p.ID(), p.Session, p.Surface, p.Mode, p.Size, p.Attached, p.Pending())
		if p.Failed != "" {
			fmt.Fprintf(w, " toast=%q", p.Failed)
		}
		w.WriteByte('\n')
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
