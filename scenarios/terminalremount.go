package scenarios

import (
	"fmt"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/terminal"
	"github.com/orchsim/orchsim/sim"
)

// TerminalRemount is the scenario of report 003 (agent-code #596): Claude,
// Codex and OpenCode agents in terminal and feed view modes, rehydrated at
// app boot, while a user types drafts, answers prompts, presses Send, moves
// between the editor, Spotlight, Reader and Settings, switches tabs and
// remounts leaves quickly; backends sometimes wedge before their composer,
// fail to start or crash.
const TerminalRemount = "terminal-remount"

// TerminalOptions shape the randomized terminal world.
type TerminalOptions struct {
	// KindWeights weigh terminal.Kinds (codex, claude, opencode) for every
	// session, at boot and opened later.
	KindWeights []uint64
	// Faults are the backends' fault rates.
	Faults terminal.Config
	// UserGapMax, when set, bounds the time between the user's actions
	// (the model's default is 40 s: someone working at the app).
	UserGapMax time.Duration
	// DebugWeight, when set, replaces the weight of the user's debug
	// inline terminal toggle (terminal.ActDebug, 2 by default): a user who
	// keeps opening the raw PTY of the agent they look at, the consumer
	// whose unconditional detach QwenLM/qwen-code#7385's family needs.
	DebugWeight uint64
	// SendWeight, when set, replaces the weight of the user's feed Send
	// (terminal.ActSend, 8 by default): a user who keeps prompting the
	// feed-mode agents it looks at.
	SendWeight uint64
	// MoveAfterSend is the user's habit of moving on right after a feed
	// Send (terminal.User.MoveAfterSend); the prompt-protocol dimension
	// draws it.
	MoveAfterSend sim.Ratio
	// EagerTyping is the chance that the user types into a new or retried
	// agent's pane as soon as it attaches (terminal.User.Eager).
	EagerTyping sim.Ratio
	// IdleReaperChance is the chance, drawn from its own stream
	// ("world-idle") when swarm does not draw the reaper itself, that main
	// runs nebula's detached-idle reaper and agents background tool calls
	// (AgentSystemLabs/nebula#78).
	IdleReaperChance sim.Ratio
	// MCPChance is the probability that a session of the workspace has
	// built-in MCP domains (its spawn awaits their registration; see
	// terminal.AtomicSpawnClaim). Drawn from its own stream, so the other
	// draws keep their places; swarm turns it on in a third of its worlds.
	MCPChance sim.Ratio
	// ReloadChance is the user's habit of reloading the window when a pane
	// looks stuck (terminal.User.ReloadChance); swarm turns it on in a
	// third of its worlds, from its own stream.
	ReloadChance sim.Ratio
	// CloseWeight, when set, is the weight of the user's pane close
	// (terminal.ActClose, 0 by default): closeSession's owned kill of a
	// session, which cancels a start in flight. Swarm turns it on in half
	// of its worlds, from its own stream.
	CloseWeight uint64
	// CloseEarly is the user's habit of closing a just-opened or retried
	// pane within 3 s (terminal.User.CloseEarly), on with CloseWeight in
	// swarm worlds.
	CloseEarly sim.Ratio
	// Sessions, when > 0, is the number of sessions (panes) instead of
	// the draw of 2-5, over (Sessions+1)/2 tabs instead of 1-3 (a scaled
	// chaos world, model.Env.Threads).
	Sessions int
	// LateExitChance is the chance, drawn from its own stream
	// ("world-late-exit", "swarm-terminal-late-exit" under swarm), that
	// the world's provider wrappers outlive a start main gave up on and
	// emit their exit late (terminal.Config.LateExitMax, 1 min), with
	// starts that fail at least one time in eight: the failed start whose
	// id a retry reuses, the case agent-code's generation-owned clean-up
	// names (terminal.ExitOwnedByGeneration).
	LateExitChance sim.Ratio
}

// lateExits turns on a world's late exits (LateExitChance).
func lateExits(f *terminal.Config) {
	f.LateExitMax = time.Minute
	if min := sim.Per(1, 8); f.StartFailChance.Numerator*min.Denominator < min.Numerator*f.StartFailChance.Denominator {
		f.StartFailChance = min
	}
}

// DefaultTerminalOptions is the mix the registered scenario runs.
func DefaultTerminalOptions() TerminalOptions {
	return TerminalOptions{
		KindWeights: []uint64{3, 5, 2},
		Faults: terminal.Config{WedgeChance: sim.Per(1, 25), StartFailChance: sim.Per(1, 100),
			CrashChance: sim.Per(1, 10), AskChance: sim.Per(1, 4)},
		EagerTyping:      sim.Per(1, 2),
		IdleReaperChance: sim.Per(1, 3),
		LateExitChance:   sim.Per(1, 3),
	}
}

func init() {
	register(Scenario{
		Name: TerminalRemount,
		Doc: "report 003 (agent-code #596): pane remounts (Spotlight, Reader, Settings, tab switch, StrictMode) " +
			"of Claude/Codex/OpenCode agents with drafts and prompts; wedged spawns, start failures, crashes",
		Horizon: time.Hour,
		// The terminal world opens no ledger obligations (its liveness
		// invariant judges the end of the run), so a short heal suffices.
		HealWindow: 5 * time.Minute,
		Groups:     []catalog.Group{catalog.TerminalSession},
		Build:      func(env *model.Env) { BuildTerminalWorld(env, DefaultTerminalOptions()) },
	})
}

// BuildTerminalWorld draws a workspace of 2-5 sessions over 1-3 tabs, boots
// the app and starts the user (unless the shrinker switched "user" off).
// The mix is fixed: the swarm strategy draws nothing more here.
func BuildTerminalWorld(env *model.Env, opts TerminalOptions) *terminal.App {
	if env.Swarm {
		opts = swarmTerminal(env, opts)
	}
	if !env.Swarm && opts.IdleReaperChance.Numerator > 0 && opts.Faults.DetachedIdleTimeout == 0 {
		if d := env.Rand("world-idle"); d.Chance("reaper", opts.IdleReaperChance) {
			opts.Faults.DetachedIdleTimeout = terminal.DetachedIdleTimeout
			opts.Faults.BackgroundChance = sim.Per(1+d.Below("background", 4), 8)
		}
	}
	if !env.Swarm && opts.LateExitChance.Numerator > 0 && opts.Faults.LateExitMax == 0 {
		if d := env.Rand("world-late-exit"); d.Chance("late-exit", opts.LateExitChance) {
			lateExits(&opts.Faults)
		}
	}
	world := env.Rand("world")
	app := terminal.NewApp(env, opts.Faults)
	var sessions, tabs int
	if opts.Sessions > 0 {
		sessions, tabs = opts.Sessions, (opts.Sessions+1)/2
	} else {
		sessions = 2 + world.IntN("sessions", 4)
		tabs = 1 + world.IntN("tabs", 3)
	}
	if tabs > sessions {
		tabs = sessions
	}
	var mcp *sim.Rand
	if opts.MCPChance.Numerator > 0 {
		mcp = env.Rand("world-mcp")
	}
	for i := 0; i < sessions; i++ {
		kind := terminal.Kinds[world.Pick("kind", opts.KindWeights...)]
		mode := []terminal.ViewMode{terminal.Feed, terminal.Terminal}[world.Pick("mode", 1, 3)]
		app.AddSession(terminal.Meta{ID: fmt.Sprintf("s%d", i+1), Kind: kind, Cwd: fmt.Sprintf("/work/proj-%d", i%2),
			Mode: mode, Tab: i % tabs, Resume: world.Chance("resume", sim.Per(1, 2)),
			MCP: mcp != nil && mcp.Chance("mcp", opts.MCPChance)})
	}
	app.Boot()
	u := terminal.NewUser(app)
	u.KindWeights = opts.KindWeights
	if opts.UserGapMax > 0 {
		u.GapMax = opts.UserGapMax
	}
	u.ReloadChance = opts.ReloadChance
	if opts.CloseWeight > 0 {
		u.Weights[terminal.ActClose] = opts.CloseWeight
	}
	u.CloseEarly = opts.CloseEarly
	if opts.DebugWeight > 0 {
		u.Weights[terminal.ActDebug] = opts.DebugWeight
	}
	if opts.SendWeight > 0 {
		u.Weights[terminal.ActSend] = opts.SendWeight
	}
	u.Eager = opts.EagerTyping
	u.MoveAfterSend = opts.MoveAfterSend
	if env.Enabled("user") {
		u.Start()
	}
	return app
}

// swarmTerminal redraws the terminal world's options from the seed: which
// backend faults are on and how often, the mix of agent kinds (at least one
// kind stays), and how busy the user is; the draw is traced as the
// "terminal swarm" banner.
func swarmTerminal(env *model.Env, opts TerminalOptions) TerminalOptions {
	r := env.Rand("swarm-terminal")
	rate := func(name string, base sim.Ratio) sim.Ratio {
		if base.Numerator == 0 || !r.Chance("enable-"+name, sim.Per(2, 3)) {
			return sim.Ratio{}
		}
		return sim.Per(1+r.Below(name, 2*base.Numerator*4), base.Denominator*4)
	}
	f := &opts.Faults
	f.WedgeChance = rate("wedge", f.WedgeChance)
	f.StartFailChance = rate("start-fail", f.StartFailChance)
	f.CrashChance = rate("crash", f.CrashChance)
	f.AskChance = rate("ask", f.AskChance)
	weights := make([]uint64, len(opts.KindWeights))
	var total uint64
	for i, w := range opts.KindWeights {
		weights[i] = r.Below(fmt.Sprintf("kind-%d", i), 2*w+1)
		total += weights[i]
	}
	if total == 0 {
		weights[0] = 1 // the first kind stays, so a zero draw is still a world
	}
	opts.KindWeights = weights
	if opts.UserGapMax == 0 {
		opts.UserGapMax = r.Duration("user-gap-max", 5*time.Second, 2*time.Minute)
	}
	// The debug-churn dimension has its own stream, so the draws above keep
	// their places in every seed.
	if d := env.Rand("swarm-terminal-debug"); opts.DebugWeight == 0 && d.Chance("debug-churn", sim.Per(1, 2)) {
		opts.DebugWeight = 10 + d.Below("debug-weight", 21)
	}
	show := func(x sim.Ratio) string {
		if x.Numerator == 0 {
			return "0"
		}
		return fmt.Sprintf("%d/%d", x.Numerator, x.Denominator)
	}
	attrs := []sim.Attr{sim.A("wedge", show(f.WedgeChance)), sim.A("start-fail", show(f.StartFailChance)),
		sim.A("crash", show(f.CrashChance)), sim.A("ask", show(f.AskChance)),
		sim.A("kinds", fmt.Sprint(weights)), sim.A("user-gap-max", opts.UserGapMax.String())}
	if opts.DebugWeight > 0 {
		attrs = append(attrs, sim.A("debug-weight", fmt.Sprint(opts.DebugWeight)))
	}
	// The idle-reaper dimension (nebula#78): main reaps detached terminal
	// sessions after 5 min idle, and turns background tool calls.
	if d := env.Rand("swarm-terminal-idle"); f.DetachedIdleTimeout == 0 && d.Chance("enable-reaper", sim.Per(1, 2)) {
		f.DetachedIdleTimeout = terminal.DetachedIdleTimeout
		f.BackgroundChance = sim.Per(1+d.Below("background", 4), 8)
		attrs = append(attrs, sim.A("reaper", f.DetachedIdleTimeout.String()), sim.A("background", show(f.BackgroundChance)))
	}
	// Dimensions added later draw from their own streams and show in the
	// banner only when on, so the worlds and traces of other seeds stay.
	if d := env.Rand("swarm-terminal-mcp"); opts.MCPChance.Numerator == 0 && d.Chance("enable-mcp", sim.Per(1, 3)) {
		opts.MCPChance = sim.Per(1+d.Below("mcp", 3), 4)
		attrs = append(attrs, sim.A("mcp", show(opts.MCPChance)))
	}
	if d := env.Rand("swarm-terminal-reload"); opts.ReloadChance.Numerator == 0 && d.Chance("enable-reload", sim.Per(1, 3)) {
		opts.ReloadChance = sim.Per(1+d.Below("reload", 4), 8)
		attrs = append(attrs, sim.A("reload", show(opts.ReloadChance)))
	}
	if d := env.Rand("swarm-terminal-late-exit"); opts.LateExitChance.Numerator > 0 && f.LateExitMax == 0 && d.Chance("enable-late-exit", opts.LateExitChance) {
		lateExits(f)
		attrs = append(attrs, sim.A("late-exit", f.LateExitMax.String()), sim.A("start-fail", show(f.StartFailChance)))
	}
	// The teardown dimensions (sessionManager.ts@428aed2d): the user closes
	// panes, and a kill's first stop may block, holding the generation's
	// teardown (and the fence of a start it cancelled) until it settles.
	if d := env.Rand("swarm-terminal-close"); opts.CloseWeight == 0 && d.Chance("enable-close", sim.Per(1, 2)) {
		opts.CloseWeight = 1 + d.Below("close-weight", 4)
		opts.CloseEarly = sim.Per(1+d.Below("close-early", 3), 6)
		attrs = append(attrs, sim.A("close-weight", fmt.Sprint(opts.CloseWeight)), sim.A("close-early", show(opts.CloseEarly)))
	}
	if d := env.Rand("swarm-terminal-stop"); f.SlowStopChance.Numerator == 0 && d.Chance("enable-slow-stop", sim.Per(1, 2)) {
		f.SlowStopChance = sim.Per(1+d.Below("slow-stop", 3), 4)
		attrs = append(attrs, sim.A("slow-stop", show(f.SlowStopChance)))
	}
	// The prompt-protocol dimension: feed Sends run agent-code's prompt
	// delivery (main's reservation, readiness, composer absorption, JSONL
	// acceptance) on TUIs that absorb written text in 1 ms up to 30 ms-3 s.
	if d := env.Rand("swarm-terminal-prompt"); !f.PromptProtocol && d.Chance("enable-prompt-protocol", sim.Per(1, 2)) {
		f.PromptProtocol = true
		f.AbsorbMax = d.Duration("absorb-max", 30*time.Millisecond, 3*time.Second)
		if opts.SendWeight == 0 {
			opts.SendWeight = 20 + d.Below("send-weight", 41)
		}
		if opts.MoveAfterSend.Numerator == 0 {
			opts.MoveAfterSend = sim.Per(1+d.Below("move-after-send", 4), 8)
		}
		attrs = append(attrs, sim.A("prompt-protocol", "on"), sim.A("absorb-max", f.AbsorbMax.String()),
			sim.A("send-weight", fmt.Sprint(opts.SendWeight)), sim.A("move-after-send", show(opts.MoveAfterSend)))
	}
	env.Emit("world", "terminal swarm", "", attrs...)
	return opts
}
