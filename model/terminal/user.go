package terminal

import (
	"fmt"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// User is the person at the desktop app. At random gaps it types drafts
// into the focused agent's TUI, submits or clears them, answers permission
// prompts it can see, presses Send in feed mode, moves focus, enters and
// leaves Spotlight, Reader and Settings, switches tabs, toggles editor
// fullscreen and the debug inline terminal, retries failed panes, opens new
// agents, and (a dev build) remounts a leaf under StrictMode.
type User struct {
	app  *App
	rand *sim.Rand
	// GapMin and GapMax bound the think time between actions.
	GapMin, GapMax time.Duration
	// MaxSessions bounds the sessions the user opens.
	MaxSessions int
	// Kinds and KindWeights are what a new agent runs.
	Kinds       []Kind
	KindWeights []uint64
	focus       string
	newSeq      int
	// seen holds the backends the user has seen in an attached pane;
	// seenLast is the last one added (the user mostly looks at the same
	// backend, so most acts skip the map).
	seen     map[string]bool
	seenLast *Backend
	// ReloadChance is the probability that, at an action while a pane looks
	// stuck (its session spawning, or a failure shown), the user reloads the
	// window instead (Cmd-R); drawn from its own stream. Zero: never.
	ReloadChance sim.Ratio
	reload       *sim.Rand
	// Weights are this user's action weights, by Act index (ActionWeights
	// unless a world changes them).
	Weights [numActs]uint64
	// Eager is the chance that, right after opening a new agent or
	// pressing Retry, the user types into its pane as soon as it attaches,
	// without waiting for the TUI (agent-orchestrator#3023's user). Its
	// draws come from their own stream, "user/eager".
	Eager sim.Ratio
	eager *sim.Rand
	// CloseEarly is the chance that, right after opening a new agent or
	// pressing Retry, the user changes their mind and closes the pane
	// 0.1-3 s later, usually while its start is still in flight (the close
	// that cancels a blocked startup, sessionRecovery.integration.test.ts);
	// drawn from its own stream, "user/close". Zero: never.
	CloseEarly sim.Ratio
	closer     *sim.Rand
	// MoveAfterSend is the chance that, right after a feed Send, the user
	// moves on at once (0-1 s later) in a way that remounts the session's
	// pane (a StrictMode remount of its leaf, or Spotlight on it), so the
	// remount lands while the delivery is in flight. Its draws come from
	// their own stream, "user/move".
	MoveAfterSend sim.Ratio
	move          *sim.Rand
	// actFn is act bound once (a method value allocates at every use).
	actFn func()
}

// User actions, drawn with ActionWeights (idle first: a zero draw does
// nothing).
const (
	ActIdle = iota
	ActType
	ActSubmit
	ActClear
	ActAnswer
	ActSend
	ActFocus
	ActSpotlight
	ActReader
	ActSettings
	ActTab
	ActFullscreen
	ActStrictRemount
	ActDebug
	ActRetry
	ActNewAgent
	// ActClose closes the focused session's pane (App.ClosePane). Its
	// default weight is 0: a world turns it on (the close swarm dimension),
	// so worlds that do not keep their draws.
	ActClose
	numActs
)

// ActionWeights are the default weights of the user actions, by Act index.
var ActionWeights = [numActs]uint64{
	ActIdle: 8, ActType: 18, ActSubmit: 8, ActClear: 2, ActAnswer: 10, ActSend: 8, ActFocus: 6,
	ActSpotlight: 3, ActReader: 3, ActSettings: 3, ActTab: 7, ActFullscreen: 2, ActStrictRemount: 2,
	ActDebug: 2, ActRetry: 6, ActNewAgent: 1,
}

// NewUser returns the user of app, acting every 1-40 s.
func NewUser(app *App) *User {
	return &User{app: app, rand: app.env.Rand("user"), GapMin: time.Second, GapMax: 40 * time.Second,
		MaxSessions: 6, Kinds: Kinds, KindWeights: []uint64{3, 5, 2}, seen: map[string]bool{}, Weights: ActionWeights}
}

// Start schedules the first action.
func (u *User) Start() { u.app.env.After(u.gap(), u.next()) }

// next returns act, bound once.
func (u *User) next() func() {
	if u.actFn == nil {
		u.actFn = u.act
	}
	return u.actFn
}

func (u *User) gap() time.Duration { return u.rand.Duration("gap", u.GapMin, u.GapMax) }

// focused returns the session the user looks at, refocusing onto a visible
// leaf when needed ("" when none is visible).
func (u *User) focused() string {
	r := u.app.Renderer
	if r.View.Surface == SurfaceSpotlight {
		return r.View.Spotlight
	}
	// A closed session (App.ClosePane) is no longer the workspace's: the
	// user has no control that names it, whatever pane still unmounts.
	if u.focus != "" && r.VisiblePane(u.focus) != nil && u.app.Meta(u.focus) != nil {
		return u.focus
	}
	u.focus = ""
	for _, p := range r.Panes {
		if p.Surface == "editor" && !r.View.Fullscreen && u.app.Meta(p.Session) != nil {
			u.focus = p.Session
			break
		}
	}
	return u.focus
}

func (u *User) act() {
	defer u.app.env.After(u.gap(), u.next())
	a, r := u.app, u.app.Renderer
	if u.ReloadChance.Numerator > 0 && u.stuck() {
		if u.reload == nil {
			u.reload = a.env.Rand("user/reload")
		}
		if u.reload.Chance("reload", u.ReloadChance) {
			a.ReloadRenderer()
			return
		}
	}
	switch r.View.Surface {
	case SurfaceReader, SurfaceSettings:
		if u.rand.Chance("leave-overlay", sim.Per(1, 2)) {
			a.CloseOverlay()
		}
		return
	}
	if r.View.Fullscreen {
		if u.rand.Chance("leave-fullscreen", sim.Per(1, 2)) {
			a.SetFullscreen(false)
		}
		return
	}
	s := u.focused()
	var p *Pane
	var b *Backend
	if s != "" {
		p = r.VisiblePane(s)
		b = a.Main.Backend(s)
	}
	terminal := p != nil && p.Mode == Terminal
	sees := p != nil && (p.Mode == Feed || p.Attached) && b != nil && b.Live()
	if sees && b.Interactive() && u.seenLast != b {
		u.seen[b.ID] = true
		u.seenLast = b
	}
	switch u.rand.Pick("action", u.Weights[:]...) {
	case ActType:
		// The user types on into a blank pane only when the runtime shows
		// the agent running and it is one the user has been using (seen in
		// an attached pane); a pane that never showed this backend, or
		// shows a failure with Retry, gets no input.
		if terminal && p.Failed == "" && r.BelievedLive(s) && b != nil && (sees || u.seen[b.ID]) && !(sees && b.Prompt()) {
			a.Type(s, KeyText, 1+u.rand.IntN("keys", 12))
		}
	case ActSubmit:
		if terminal && sees && b.Draft() > 0 {
			a.Type(s, KeyEnter, 1)
		}
	case ActClear:
		if terminal && sees && b.Draft() > 0 {
			a.Type(s, KeyClear, 1)
		}
	case ActAnswer:
		if sees && b.Prompt() {
			if terminal {
				a.Type(s, KeyAnswer, 1)
			} else {
				a.AnswerInFeed(s)
			}
		}
	case ActSend:
		if p != nil && p.Mode == Feed && p.Failed == "" {
			a.Send(s)
			u.moveAfterSend(s)
		}
	case ActFocus:
		if r.View.Surface == SurfaceEditor {
			var leaves []string
			for _, q := range r.Panes {
				if q.Surface == "editor" {
					leaves = append(leaves, q.Session)
				}
			}
			if len(leaves) > 0 {
				u.focus = leaves[u.rand.IntN("focus", len(leaves))]
			}
		}
	case ActSpotlight:
		if r.View.Surface == SurfaceSpotlight {
			a.LeaveSpotlight()
		} else if s != "" {
			a.EnterSpotlight(s)
		}
	case ActReader:
		a.OpenReader()
	case ActSettings:
		a.OpenSettings()
	case ActTab:
		if r.View.Tabs > 1 {
			if r.View.Surface == SurfaceSpotlight {
				a.LeaveSpotlight()
			}
			t := u.rand.IntN("tab", r.View.Tabs-1)
			if t >= r.View.Tab {
				t++
			}
			a.SwitchTab(t)
		}
	case ActFullscreen:
		if r.View.Surface == SurfaceEditor {
			a.SetFullscreen(true)
		}
	case ActStrictRemount:
		if s != "" {
			a.StrictRemount(s)
		}
	case ActDebug:
		if r.View.Debug != "" {
			a.OpenDebug("")
		} else if s != "" {
			a.OpenDebug(s)
		}
	case ActRetry:
		if p != nil && (p.Failed != "" || !r.BelievedLive(s) && r.Runtime(s).Status != StatusSpawning) {
			a.Retry(s)
			u.typeEagerly(s)
			u.closeEarly(s)
		}
	case ActNewAgent:
		if len(a.metas) < u.MaxSessions {
			u.newSeq++
			id := fmt.Sprintf("s%d", a.added+1)
			kind := u.Kinds[u.rand.Pick("new-kind", u.KindWeights...)]
			mode := []ViewMode{Feed, Terminal}[u.rand.Pick("new-mode", 1, 3)]
			a.NewSession(Meta{ID: id, Kind: kind, Cwd: fmt.Sprintf("/work/proj-%d", u.newSeq%2), Mode: mode})
			u.focus = id
			u.typeEagerly(id)
			u.closeEarly(id)
		}
	case ActClose:
		if s != "" {
			a.ClosePane(s)
			u.focus = ""
		}
	}
}

// closeEarly closes session's pane shortly after it opened, with chance
// CloseEarly.
func (u *User) closeEarly(session string) {
	if u.CloseEarly.Numerator == 0 {
		return
	}
	if u.closer == nil {
		u.closer = u.app.env.Rand("user/close")
	}
	if !u.closer.Chance("close-early", u.CloseEarly) {
		return
	}
	d := u.closer.Duration("close-after", 100*time.Millisecond, 3*time.Second)
	u.app.env.After(d, func() { u.app.ClosePane(session) })
}

// stuck reports whether a mounted pane looks stuck: its session's runtime
// is spawning, or the pane shows a failure.
func (u *User) stuck() bool {
	r := u.app.Renderer
	for _, p := range r.Panes {
		if p.Failed != "" || r.Runtime(p.Session).Status == StatusSpawning {
			return true
		}
	}
	return false
}

// typeEagerly is the user who starts typing into an agent's terminal the
// moment it shows up: with chance Eager, 0.2-3 s later, into the session's
// pane if it is an attached terminal pane showing no failure.
func (u *User) typeEagerly(session string) {
	if u.Eager.Numerator == 0 {
		return
	}
	if u.eager == nil {
		u.eager = u.app.env.Rand("user/eager")
	}
	if !u.eager.Chance("eager", u.Eager) {
		return
	}
	n := 1 + u.eager.IntN("eager-keys", 8)
	u.app.env.After(u.eager.Duration("eager-after", 200*time.Millisecond, 3*time.Second), func() {
		if p := u.app.Renderer.VisiblePane(session); p != nil && p.Mode == Terminal && p.Attached && p.Failed == "" {
			u.app.Type(session, KeyText, n)
		}
	})
}

// moveAfterSend is the user who presses Send and moves on at once: with
// chance MoveAfterSend, 0-1 s later, the session's leaf remounts (StrictMode)
// or the user enters Spotlight on it.
func (u *User) moveAfterSend(session string) {
	if u.MoveAfterSend.Numerator == 0 {
		return
	}
	if u.move == nil {
		u.move = u.app.env.Rand("user/move")
	}
	if !u.move.Chance("move", u.MoveAfterSend) {
		return
	}
	spotlight := u.move.Chance("spotlight", sim.Per(1, 2))
	u.app.env.After(u.move.Duration("move-after", 0, time.Second), func() {
		r := u.app.Renderer
		if r.View.Surface != SurfaceEditor || r.View.Fullscreen || u.app.Meta(session) == nil {
			return // a session closed in the meantime has no leaf to move
		}
		if spotlight {
			u.app.EnterSpotlight(session)
			return
		}
		u.app.StrictRemount(session)
	})
}
