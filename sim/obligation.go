package sim

import (
	"fmt"
	"time"
)

// Obligation is a liveness promise a model made: "entity will reach
// property". It is opened when the promise starts to matter and discharged
// when it is kept; an obligation still open after the heal phase is a
// violation named Name.
type Obligation struct {
	Name     string
	Entity   string
	OpenedAt time.Duration
	// Touched is the last time something happened to the entity, and
	// LastEvent what it was.
	Touched   time.Duration
	LastEvent string
}

// Ledger keeps a run's open obligations in the order they were opened.
// Finding one costs a map lookup, not a scan of every open obligation (a
// world of 1,000 threads keeps thousands open): open keeps the order, with
// a hole (an empty Name) where one was discharged, and at indexes it.
type Ledger struct {
	clock Clock
	open  []Obligation
	at    map[obligationKey]int
	holes int
}

type obligationKey struct{ name, entity string }

// NewLedger returns an empty ledger stamping times with clock.
func NewLedger(clock Clock) *Ledger { return &Ledger{clock: clock} }

func (l *Ledger) find(name, entity string) int {
	if i, ok := l.at[obligationKey{name, entity}]; ok {
		return i
	}
	return -1
}

// compact removes the holes once they outnumber the open obligations (and
// always when asked to), so that the ledger's size follows what is open.
func (l *Ledger) compact(always bool) {
	if l.holes == 0 || !always && (l.holes < 64 || l.holes < len(l.open)-l.holes) {
		return
	}
	out := l.open[:0]
	for _, o := range l.open {
		if o.Name != "" {
			l.at[obligationKey{o.Name, o.Entity}] = len(out)
			out = append(out, o)
		}
	}
	clear(l.open[len(out):])
	l.open, l.holes = out, 0
}

// Open opens (or touches) the obligation name for entity; what describes
// the event that opened it.
func (l *Ledger) Open(name, entity, what string) {
	if l == nil {
		return
	}
	if !declared(name) {
		panic("sim: obligation " + name + " opened but never declared (sim.DeclareObligation)")
	}
	now := Since(l.clock)
	if i := l.find(name, entity); i >= 0 {
		l.open[i].Touched, l.open[i].LastEvent = now, what
		return
	}
	if l.at == nil {
		l.at = map[obligationKey]int{}
	}
	l.at[obligationKey{name, entity}] = len(l.open)
	l.open = append(l.open, Obligation{Name: name, Entity: entity, OpenedAt: now, Touched: now, LastEvent: what})
}

// Touch records that something happened to an open obligation's entity.
func (l *Ledger) Touch(name, entity, what string) {
	if l == nil {
		return
	}
	if i := l.find(name, entity); i >= 0 {
		l.open[i].Touched, l.open[i].LastEvent = Since(l.clock), what
	}
}

// Discharge closes the obligation name for entity, if open.
func (l *Ledger) Discharge(name, entity string) {
	if l == nil {
		return
	}
	if i := l.find(name, entity); i >= 0 {
		delete(l.at, obligationKey{name, entity})
		l.open[i] = Obligation{}
		l.holes++
		l.compact(false)
	}
}

// Pending returns the open obligations, oldest first.
func (l *Ledger) Pending() []Obligation {
	l.compact(true)
	return l.open
}

// Violation reports, as a violation, the oldest obligation opened before
// the given time that is still open; nil when there is none. Obligations
// opened later (during the heal phase itself) had no full window to be kept
// and are not judged, which keeps the check free of tuning.
func (l *Ledger) Violation(now, openedBefore time.Duration) *Violation {
	var late []Obligation
	for _, o := range l.Pending() {
		if o.OpenedAt < openedBefore {
			late = append(late, o)
		}
	}
	if len(late) == 0 {
		return nil
	}
	o := late[0]
	more := ""
	if n := len(late) - 1; n > 0 {
		more = fmt.Sprintf(" (%d more obligations open)", n)
	}
	return &Violation{Invariant: o.Name, At: now, Message: fmt.Sprintf(
		"%s still open after the heal phase: opened at %s, %s old, last touched at %s by %s%s",
		o.Entity, FormatT(o.OpenedAt), (now - o.OpenedAt).Round(time.Second), FormatT(o.Touched), o.LastEvent, more)}
}

// Violations reports, for the keep-going mode, the oldest still-open
// obligation of each name opened before the given time, oldest first: the
// first is Violation's.
func (l *Ledger) Violations(now, openedBefore time.Duration) []Violation {
	var out []Violation
	first := l.Violation(now, openedBefore)
	if first == nil {
		return nil
	}
	out = append(out, *first)
	seen := map[string]bool{first.Invariant: true}
	for _, o := range l.Pending() {
		if o.OpenedAt >= openedBefore || seen[o.Name] {
			continue
		}
		seen[o.Name] = true
		out = append(out, Violation{Invariant: o.Name, At: now, Message: fmt.Sprintf(
			"%s still open after the heal phase: opened at %s, %s old, last touched at %s by %s",
			o.Entity, FormatT(o.OpenedAt), (now - o.OpenedAt).Round(time.Second), FormatT(o.Touched), o.LastEvent)})
	}
	return out
}

// ObligationInfo declares an obligation kind. The model that opens it
// declares it from init, beside the code that opens and discharges it.
type ObligationInfo struct {
	// Name is the violation's name when the obligation is left open.
	Name string
	// Property says what must eventually happen; Source where it comes from.
	Property string
	Source   string
	// Group is the component it belongs to (a catalog.Group; sim knows no
	// components, so it is kept as a label here).
	Group string
}

var obligations []ObligationInfo

// DeclareObligation adds an obligation kind. It panics on a duplicate or an
// empty field (a programming error any test catches).
func DeclareObligation(i ObligationInfo) {
	if i.Name == "" || i.Property == "" || i.Source == "" || i.Group == "" {
		panic("sim: obligation " + i.Name + " needs a name, property, source and group")
	}
	for _, o := range obligations {
		if o.Name == i.Name {
			panic("sim: obligation declared twice: " + i.Name)
		}
	}
	obligations = append(obligations, i)
}

// Obligations returns every declared obligation kind, in declaration
// order (callers that list them sort them).
func Obligations() []ObligationInfo { return obligations }

func declared(name string) bool {
	for _, o := range obligations {
		if o.Name == name {
			return true
		}
	}
	return false
}
