// Package invariants holds the checkers orchsim runs over a history. Each
// checker names its property, the report or acceptance check it guards, and
// produces a violation message naming the actors, ids and virtual times
// involved. Checkers read only the trace (plus nothing else so far), so the
// same checker judges a live run, a replay and a hand-written history.
package invariants

import (
	"fmt"
	"strings"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// Info documents an invariant for `orchsim list`.
type Info struct {
	Name     string
	Property string
	Source   string
	New      func() sim.Checker
}

var registry []Info

func register(i Info) { registry = append(registry, i) }

// All returns every invariant, in registration order (grouped by report).
func All() []Info { return registry }

// Lookup returns the invariant named name.
func Lookup(name string) (Info, bool) {
	for _, i := range registry {
		if i.Name == name {
			return i, true
		}
	}
	return Info{}, false
}

// New builds fresh checkers for names; it panics on an unknown name (the
// scenario tables name them as constants).
func New(names ...string) []sim.Checker {
	out := make([]sim.Checker, 0, len(names))
	for _, n := range names {
		i, ok := Lookup(n)
		if !ok {
			panic("invariants: unknown invariant " + n)
		}
		out = append(out, i.New())
	}
	return out
}

// Tool outcome and names as the server traces them (kept as strings so the
// checkers depend on the trace format, not on model internals).
const (
	outcomeOK = "ok"
	toolOpen  = "preview_open"
)

// acting reports whether kind is a preview tool that drives a tab.
func acting(kind string) bool {
	switch kind {
	case "preview_navigate", "preview_click", "t3_preview_close":
		return true
	}
	return false
}

func isToolEvent(ev *sim.Event) bool { return strings.HasPrefix(ev.Actor, "agent/") }

func at(d time.Duration) string { return sim.FormatT(d) }

func violation(name, format string, args ...any) *sim.Violation {
	return &sim.Violation{Invariant: name, Message: fmt.Sprintf(format, args...)}
}

// authorizedAt returns when the call was authorized: the event's time, or
// its "authorized" attribute when the action ran later (queued behind
// another on the tab).
func authorizedAt(ev *sim.Event) time.Duration {
	if s := ev.Get("authorized"); s != "" {
		if d, err := ParseT(s); err == nil {
			return d
		}
	}
	return ev.At
}

// ParseT parses T+hh:mm:ss.mmm.
func ParseT(s string) (time.Duration, error) {
	var h, m, sec, ms int64
	if _, err := fmt.Sscanf(s, "T+%d:%d:%d.%d", &h, &m, &sec, &ms); err != nil {
		return 0, fmt.Errorf("bad virtual time %q", s)
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second +
		time.Duration(ms)*time.Millisecond, nil
}
