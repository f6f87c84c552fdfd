// Package invariants holds the checkers orchsim runs over a history. Each
// checker names its property, the report or acceptance check it guards, and
// produces a violation message naming the actors, ids and virtual times
// involved. Checkers read only the trace (plus nothing else so far), so the
// same checker judges a live run, a replay and a hand-written history.
package invariants

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Kinds of invariant (Info.Kind).
const (
	// Safety: checked after every event; the first bad event violates it.
	Safety = "safety"
	// Liveness: judged at the end of a run (a sim.Finisher) or at the end
	// of the heal phase.
	Liveness = "liveness"
)

// Info declares an invariant; the file that implements its checker
// registers it from init.
type Info struct {
	Name string
	// Group is the component whose contract it states; scenarios pick
	// their invariants by group (InGroups).
	Group catalog.Group
	// Kind is Safety (the default when empty) or Liveness.
	Kind     string
	Property string
	// Source names the contract: a report's acceptance check, an upstream
	// tool description or comment, a MODEL.md section.
	Source string
	// Reports are the public reports whose bug it catches (may be empty for
	// an invariant written from a contract alone).
	Reports []catalog.Report
	New     func() sim.Checker
}

var registry []Info

// register adds i, keeping the registry in list order (group, name). It
// panics on a duplicate or a missing field.
func register(i Info) {
	if _, dup := Lookup(i.Name); dup {
		panic("invariants: registered twice: " + i.Name)
	}
	if i.Kind == "" {
		i.Kind = Safety
	}
	if i.Name == "" || !i.Group.Valid() || i.Property == "" || i.Source == "" || i.New == nil ||
		(i.Kind != Safety && i.Kind != Liveness) {
		panic("invariants: " + i.Name + " needs a name, group, kind, property, source and checker")
	}
	for _, r := range i.Reports {
		if _, err := catalog.ParseReport(string(r)); err != nil {
			panic("invariants: " + i.Name + ": " + err.Error())
		}
	}
	registry = append(registry, i)
	sort.Slice(registry, func(a, b int) bool {
		return catalog.Less(registry[a].Group, registry[a].Name, registry[b].Group, registry[b].Name)
	})
}

// All returns every invariant, in list order (group, then name).
func All() []Info { return registry }

// InGroups returns the names of the invariants of the given groups, in
// list order: what a scenario judged by those components checks.
func InGroups(groups ...catalog.Group) []string {
	var out []string
	for _, i := range registry {
		if slices.Contains(groups, i.Group) {
			out = append(out, i.Name)
		}
	}
	return out
}

// Lookup returns the invariant named name.
func Lookup(name string) (Info, bool) {
	for _, i := range registry {
		if i.Name == name {
			return i, true
		}
	}
	return Info{}, false
}

// IsObligation reports whether name is a declared liveness obligation
// (sim.DeclareObligation).
func IsObligation(name string) bool {
	for _, o := range sim.Obligations() {
		if o.Name == name {
			return true
		}
	}
	return false
}

// IsLiveness reports whether a violation named name is a liveness failure
// (an obligation left open after the heal phase, or a liveness invariant
// judged at the end of a run) rather than a safety one.
func IsLiveness(name string) bool {
	if i, ok := Lookup(name); ok {
		return i.Kind == Liveness
	}
	return IsObligation(name)
}

// KindOf returns "liveness" or "safety" for a violation name.
func KindOf(name string) string {
	if IsLiveness(name) {
		return Liveness
	}
	return Safety
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

// acting reports whether kind is a preview tool that drives a tab (one of
// actingKinds).
func acting(kind string) bool {
	switch kind {
	case "preview_navigate", "preview_click", "t3_preview_close":
		return true
	}
	return false
}

// actingKinds are the kinds acting accepts, for the checkers' declared
// kinds (sim.KindObserver).
var actingKinds = []string{"preview_navigate", "preview_click", "t3_preview_close"}

// joinKinds concatenates kind lists, for a checker's declared kinds (a
// duplicate is harmless).
func joinKinds(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func isToolEvent(ev *sim.Event) bool { return strings.HasPrefix(ev.Actor, "agent/") }

// agentActors declares (sim.ActorObserver) the actors of isToolEvent.
var agentActors = []string{"agent/"}

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
