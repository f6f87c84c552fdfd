package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// Attr is one attribute of a trace event, such as thread=t1 or tab=tab_2.
type Attr struct {
	Key   string `json:"k"`
	Value string `json:"v"`
}

// A returns the Attr key=value.
func A(key, value string) Attr { return Attr{Key: key, Value: value} }

// Event is one observable step of a run: who (Actor) did what (Kind) with
// which ids (Attrs) and what came of it (Outcome, "" when it has none).
// At is virtual time since the run's start; Seq numbers events from 0.
type Event struct {
	At      time.Duration
	Seq     uint64
	Actor   string
	Kind    string
	Attrs   []Attr
	Outcome string
}

// Get returns the value of attribute key, or "".
func (e *Event) Get(key string) string {
	for _, a := range e.Attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// Has reports whether the event carries attribute key.
func (e *Event) Has(key string) bool {
	for _, a := range e.Attrs {
		if a.Key == key {
			return true
		}
	}
	return false
}

// Describe renders the event as one deterministic timeline line:
//
//	T+00:31:02.114  agent/thread-b     t3_preview_close  tab=tab_2 cred=9f3a  -> agentMismatch
func (e *Event) Describe() string {
	var b strings.Builder
	b.WriteString(FormatT(e.At))
	b.WriteString("  ")
	fmt.Fprintf(&b, "%-22s %-26s", e.Actor, e.Kind)
	for _, a := range e.Attrs {
		b.WriteByte(' ')
		b.WriteString(a.Key)
		b.WriteByte('=')
		b.WriteString(a.Value)
	}
	if e.Outcome != "" {
		b.WriteString("  -> ")
		b.WriteString(e.Outcome)
	}
	return strings.TrimRight(b.String(), " ")
}

// FormatT renders virtual time as T+hh:mm:ss.mmm (hours may exceed 99).
// Invariants call it for their messages and timelines for every line, so
// it does not go through fmt.
func FormatT(d time.Duration) string {
	ms := d.Milliseconds()
	if ms < 0 {
		return formatTSlow(ms)
	}
	h, m, s, frac := ms/3_600_000, ms/60_000%60, ms/1000%60, ms%1000
	var buf [32]byte
	b := append(buf[:0], 'T', '+')
	if h < 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, h, 10)
	b = append(b, ':', byte('0'+m/10), byte('0'+m%10), ':', byte('0'+s/10), byte('0'+s%10),
		'.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	return string(b)
}

// formatTSlow is FormatT's definition, kept for negative times.
func formatTSlow(ms int64) string {
	h := ms / 3_600_000
	m := ms / 60_000 % 60
	s := ms / 1000 % 60
	return fmt.Sprintf("T+%02d:%02d:%02d.%03d", h, m, s, ms%1000)
}

// Violation is a broken invariant: its name, when it was detected and a
// message naming the actors, ids and virtual times involved.
type Violation struct {
	Invariant string        `json:"invariant"`
	At        time.Duration `json:"at"`
	Message   string        `json:"message"`
}

// Checker is a safety invariant fed every event as it is appended. It
// returns nil while the property holds, or the violation. The event, its
// Attrs included, is valid only during the call: copy what you keep.
type Checker interface {
	Name() string
	Observe(ev *Event) *Violation
}

// Finisher is implemented by checkers that also judge the end state of a run
// (liveness at quiescence or horizon).
type Finisher interface {
	Finish(end time.Duration) *Violation
}

// Trace is the history of one run. It fingerprints every event over a
// canonical binary encoding (see HashCanonical), feeds the checkers, and keeps
// the events for the timeline when asked to.
//
// Emit does not allocate unless the trace keeps its events: the event is
// built in a reused scratch value and its attributes are copied into a
// reused buffer, so the caller's variadic slice does not escape either. The
// timeline is formatted only on demand (Event.Describe).
type Trace struct {
	clock Clock
	// kernel is clock when it is a *Kernel: Emit reads its elapsed time
	// directly instead of going through time.Time.
	kernel   *Kernel
	keep     bool
	events   []Event
	count    uint64
	hash     uint64
	checkers []Checker
	// declared[i] is checker i's declaration (kinds, actors, deadline).
	declared []declaration
	// table is the dispatch table of declared (feedTableFor), shared with
	// every trace whose checkers declare the same; nil until the first
	// Emit after a checker was added. recent caches the last (kind, actor
	// class) pairs looked up, so that most events skip the table's map
	// (last in the struct, away from the fields every Emit touches).
	table *feedTable
	// due[j] is the Due of deadliner table.deadliners[j] after the last
	// event it was fed; nextDue is the earliest of those not muted
	// (NoDeadline: none). merged is the due path's scratch feed.
	due       []time.Duration
	nextDue   time.Duration
	merged    []int32
	violation *Violation
	// keepGoing: after the first violation, every checker that has not
	// failed yet is still fed (SetKeepGoing); later holds the first
	// violation of each other invariant, muted the checkers that failed.
	keepGoing bool
	later     []Violation
	muted     []bool
	panicked  bool
	sink      func(*Event)
	scratch   Event  // reused so that Emit does not allocate
	attrs     []Attr // the scratch event's attributes
	slab      []Attr // kept events' attributes are carved out of it
	recent    [kindCacheSize]kindEntry
}

// NewTrace returns an empty trace stamping events with clock. With keep set
// it retains every event (for timelines and trace files); without, it keeps
// only the count and the fingerprint.
func NewTrace(clock Clock, keep bool) *Trace {
	t := &Trace{clock: clock, keep: keep, hash: fpSeed, attrs: make([]Attr, 0, 8)}
	t.kernel, _ = clock.(*Kernel)
	return t
}

// AddChecker registers a safety checker; checkers run in registration order.
// A checker that declares what it observes (KindObserver, ActorObserver,
// Deadliner) is fed only that.
func (t *Trace) AddChecker(c Checker) {
	t.checkers = append(t.checkers, c)
	t.muted = append(t.muted, false)
	t.declared = append(t.declared, declare(c))
	t.table = nil // built again, with c, at the next Emit
}

// Checkers returns the registered checkers.
func (t *Trace) Checkers() []Checker { return t.checkers }

// OnEvent sets a function called with every appended event (streaming
// output). The event, its Attrs included, is valid only during the call.
func (t *Trace) OnEvent(f func(*Event)) { t.sink = f }

// elapsed is Since(t.clock), read directly from the kernel when there is one.
func (t *Trace) elapsed() time.Duration {
	if t.kernel != nil {
		return t.kernel.now
	}
	return Since(t.clock)
}

// Emit appends an event at the current virtual time and runs the checkers.
// After the first violation events are still recorded but no longer checked.
// Checkers and sinks get a pointer that is valid only during the call.
//
// The fingerprint is folded from the arguments directly (fpEmit); the
// event itself is built only when something reads it (a kept trace, a
// sink, a checker to feed).
func (t *Trace) Emit(actor, kind, outcome string, attrs ...Attr) {
	at := t.elapsed()
	seq := t.count
	t.count = seq + 1
	t.hash = fpEmit(t.hash, at, seq, actor, kind, outcome, attrs)
	feed := len(t.checkers) != 0 && (t.violation == nil || t.keepGoing)
	if !feed && !t.keep && t.sink == nil {
		return
	}
	ev := &t.scratch
	ev.At, ev.Seq = at, seq
	ev.Actor, ev.Kind, ev.Outcome = actor, kind, outcome
	if attrs == nil {
		ev.Attrs = nil
	} else {
		// Copied rather than referenced, so attrs does not escape and a
		// call like Emit(a, k, o, A("tab", id)) does not allocate. Element
		// by element: for a few attributes that is cheaper than append's
		// typed copy (two calls per event).
		if cap(t.attrs) < len(attrs) {
			t.attrs = make([]Attr, len(attrs), max(len(attrs), 16))
		}
		dst := t.attrs[:len(attrs)]
		for i := range dst {
			dst[i] = attrs[i]
		}
		t.attrs = dst
		ev.Attrs = dst
	}
	t.record(ev)
	if feed {
		t.dispatch(ev)
	}
}

// inScratch says whether x's elements lie in scratch's backing array
// (from its start to its capacity).
func inScratch(x, scratch []Attr) bool {
	if len(x) == 0 || cap(scratch) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(scratch)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(x)))
	return p >= lo && p < lo+uintptr(cap(scratch))*unsafe.Sizeof(Attr{})
}

// EmitPrefixed is Emit(actor, kind, outcome, append(pre, attrs...)...)
// without the joined list: pre and attrs are copied straight into the
// trace's scratch attributes, once, where a caller that prepends its own
// attributes (a pane's session, a backend's session and id) copied them
// twice. Same event, same fingerprint (TestEmitPrefixed_IsEmitOfTheJoin),
// also when pre or attrs is (part of) an event's Attrs that a sink or
// checker was handed: those live in the scratch list, so they are joined
// into a list of their own first.
func (t *Trace) EmitPrefixed(actor, kind, outcome string, pre []Attr, attrs ...Attr) {
	n := len(pre) + len(attrs)
	if n == 0 {
		t.Emit(actor, kind, outcome, []Attr{}...) // the join: empty, not nil
		return
	}
	if inScratch(pre, t.attrs) || inScratch(attrs, t.attrs) {
		t.Emit(actor, kind, outcome, append(append(make([]Attr, 0, n), pre...), attrs...)...)
		return
	}
	if cap(t.attrs) < n {
		t.attrs = make([]Attr, n, max(n, 16))
	}
	dst := t.attrs[:n]
	for i := range pre {
		dst[i] = pre[i]
	}
	rest := dst[len(pre):]
	for i := range rest {
		rest[i] = attrs[i]
	}
	t.attrs = dst
	at := t.elapsed()
	seq := t.count
	t.count = seq + 1
	t.hash = fpEmit(t.hash, at, seq, actor, kind, outcome, dst)
	feed := len(t.checkers) != 0 && (t.violation == nil || t.keepGoing)
	if !feed && !t.keep && t.sink == nil {
		return
	}
	ev := &t.scratch
	ev.At, ev.Seq = at, seq
	ev.Actor, ev.Kind, ev.Outcome = actor, kind, outcome
	ev.Attrs = dst
	t.record(ev)
	if feed {
		t.dispatch(ev)
	}
}

// append appends ev (its Seq the next one): the count, the fingerprint,
// and what record does.
func (t *Trace) append(ev *Event) {
	t.count++
	t.hash = fpEvent(t.hash, ev)
	t.record(ev)
}

// record keeps ev if the trace keeps its events and passes it to the sink.
func (t *Trace) record(ev *Event) {
	if t.keep {
		kept := *ev
		kept.Attrs = t.keepAttrs(ev.Attrs)
		t.events = append(t.events, kept)
	}
	if t.sink != nil {
		t.sink(ev)
	}
}

// keepAttrs returns a copy of attrs that no later Emit overwrites, carved
// out of a slab to allocate once per many events (nil stays nil).
func (t *Trace) keepAttrs(attrs []Attr) []Attr {
	if attrs == nil {
		return nil
	}
	n := len(attrs)
	if cap(t.slab)-len(t.slab) < n {
		t.slab = make([]Attr, 0, max(256, n))
	}
	start := len(t.slab)
	t.slab = append(t.slab, attrs...)
	return t.slab[start : start+n : start+n]
}

// SetKeepGoing sets the keep-going mode (before the first event): after
// the first violation the run goes on, every checker that has not failed
// is still fed, and the first violation of each other invariant is
// recorded (Later) and appended to the trace like the first. A checker
// stops being fed once it fails. The events before the first violation
// are the same in both modes.
func (t *Trace) SetKeepGoing(on bool) { t.keepGoing = on }

// KeepGoing reports whether the trace is in the keep-going mode.
func (t *Trace) KeepGoing() bool { return t.keepGoing }

// Stopped reports whether the run must stop: a violation without the
// keep-going mode, or a model panic (after which the models' state says
// nothing) in it.
func (t *Trace) Stopped() bool {
	return t.violation != nil && (!t.keepGoing || t.panicked)
}

// Fail records v as the run's violation (only the first one counts) and
// appends it to the trace as an event of actor "invariant". In the
// keep-going mode the first violation of every other invariant is
// recorded too (Later) and appended the same way.
func (t *Trace) Fail(v Violation) {
	if t.violation != nil {
		if !t.keepGoing || v.Invariant == t.violation.Invariant {
			return
		}
		for _, l := range t.later {
			if l.Invariant == v.Invariant {
				return
			}
		}
	}
	v.At = t.elapsed()
	if v.Invariant == ModelPanic {
		t.panicked = true
	}
	if t.violation == nil {
		t.violation = &v
	} else {
		t.later = append(t.later, v)
	}
	ev := Event{At: v.At, Seq: t.count, Actor: "invariant", Kind: v.Invariant, Outcome: "VIOLATED: " + v.Message}
	t.append(&ev)
}

// Violation returns the first violation, or nil.
func (t *Trace) Violation() *Violation { return t.violation }

// Later returns the first violation of each other invariant after the
// first, in order (keep-going mode; nil otherwise).
func (t *Trace) Later() []Violation { return t.later }

// finishAll lets the checkers that have not failed judge the end state
// (keep-going mode).
func (t *Trace) finishAll(end time.Duration) {
	for i, c := range t.checkers {
		if t.muted[i] {
			continue
		}
		if f, ok := c.(Finisher); ok {
			if v := f.Finish(end); v != nil {
				t.muted[i] = true
				t.Fail(*v)
			}
		}
	}
}

// Events returns the kept events (nil unless keeping).
func (t *Trace) Events() []Event { return t.events }

// Len returns the number of events appended.
func (t *Trace) Len() uint64 { return t.count }

// Fingerprint returns the 64-bit fingerprint of every event so far (see
// HashCanonical for its definition).
func (t *Trace) Fingerprint() uint64 { return fpFinish(t.hash) }

// AppendCanonical appends the canonical binary encoding of ev to buf: its
// time and sequence number as uvarints, then actor, kind, the number of
// attributes, each attribute's key and value, and the outcome, every string
// prefixed with its uvarint length. The fingerprint is a function of these
// bytes alone (HashCanonical).
func AppendCanonical(buf []byte, ev *Event) []byte {
	buf = appendUvarint(buf, uint64(ev.At))
	buf = appendUvarint(buf, ev.Seq)
	buf = appendLenString(buf, ev.Actor)
	buf = appendLenString(buf, ev.Kind)
	buf = appendUvarint(buf, uint64(len(ev.Attrs)))
	for _, a := range ev.Attrs {
		buf = appendLenString(buf, a.Key)
		buf = appendLenString(buf, a.Value)
	}
	return appendLenString(buf, ev.Outcome)
}

func appendUvarint(buf []byte, v uint64) []byte {
	for v >= 0x80 {
		buf = append(buf, byte(v)|0x80)
		v >>= 7
	}
	return append(buf, byte(v))
}

func appendLenString(buf []byte, s string) []byte {
	return append(appendUvarint(buf, uint64(len(s))), s...)
}
