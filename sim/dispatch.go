package sim

import (
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Dispatch: which checkers an event feeds. A checker that declares nothing
// is fed every event; one that declares kinds (KindObserver), actor
// prefixes (ActorObserver) or both is fed only the events it declared, and
// a declaring Deadliner also every event at or after its Due. Feeds is the
// definition; the Trace implements it through a table built once per
// checker set (feedTableFor) and shared by every trace whose checkers
// declare the same, so a worker running seed after seed builds it once.

// KindObserver is implemented by a Checker that observes only some event
// kinds. A checker that declares kinds is fed only the events whose Kind is
// one of ObservedKinds (and those ActorObserver and Deadliner add); one
// that declares none (or does not implement KindObserver) and no actors is
// fed every event. The Trace calls ObservedKinds when the checker is
// registered and keeps the slice, which must not change. The declaration
// is a promise: on an event it is not fed the checker's Observe would
// change nothing and return nil.
// Dispatching by kind spares the ~45 checkers' interface calls and kind
// comparisons on the events they ignore, which were most of Emit's cost.
type KindObserver interface {
	ObservedKinds() []string
}

// ActorObserver is implemented by a Checker that observes every event of
// some actors whatever its kind (an agent's tool calls are events of actor
// agent/THREAD whose kind is the tool's name): besides the kinds it
// declares (KindObserver), it is fed every event whose Actor begins with
// one of ObservedActors. Like ObservedKinds, the slice is read once, must
// not change, and is a promise. The checkers of one trace may declare at
// most MaxActorPrefixes distinct prefixes between them.
type ActorObserver interface {
	ObservedActors() []string
}

// MaxActorPrefixes bounds the distinct actor prefixes the checkers of one
// trace declare (AddChecker's caller panics at the first Emit beyond it):
// the trace keeps one feed list per kind for each subset of them.
const MaxActorPrefixes = 4 // masks fit a uint8

// Deadliner is implemented by a declaring checker (KindObserver or
// ActorObserver) whose verdict can also change with time alone: a promise
// with a deadline, judged on the first event after it whatever that
// event's kind. Due returns the earliest virtual time at which an event it
// did not declare could make Observe report (or change anything), or
// NoDeadline. The trace feeds the checker, besides its declared events,
// every event whose At is at or after Due, and asks Due again after every
// event it fed it; Due must depend only on what Observe has seen. An early
// Due is safe (the checker is fed more); a late one loses the verdict's
// event. A checker that declares nothing is fed every event anyway.
type Deadliner interface {
	Due() time.Duration
}

// NoDeadline is Due's answer when nothing is due: no event's At reaches it.
const NoDeadline = time.Duration(math.MaxInt64)

// declaration is what a checker declared when it was registered (nil
// slices: nothing declared).
type declaration struct {
	kinds  []string
	actors []string
	due    bool // a declaring Deadliner
}

// every reports whether the checker is fed every event.
func (d *declaration) every() bool { return d.kinds == nil && d.actors == nil }

func declare(c Checker) declaration {
	var d declaration
	if k, ok := c.(KindObserver); ok {
		if d.kinds = k.ObservedKinds(); len(d.kinds) == 0 {
			d.kinds = nil // declares none
		}
	}
	if a, ok := c.(ActorObserver); ok {
		if d.actors = a.ObservedActors(); len(d.actors) == 0 {
			d.actors = nil
		}
	}
	if !d.every() {
		_, d.due = c.(Deadliner)
	}
	return d
}

// Feeds reports whether a Trace feeds checker c the event ev now, given
// what c has observed so far: the definition the Trace's dispatch
// implements, for tests that replay kept traces into fresh checkers.
func Feeds(c Checker, ev *Event) bool {
	d := declare(c)
	switch {
	case d.every(), slices.Contains(d.kinds, ev.Kind):
		return true
	}
	for _, p := range d.actors {
		if strings.HasPrefix(ev.Actor, p) {
			return true
		}
	}
	return d.due && ev.At >= c.(Deadliner).Due()
}

// feedTable is the dispatch of one checker set: for every kind some
// checker declares (a row; row 0 for every other kind) and every subset of
// the declared actor prefixes an actor matches (a mask), the span of idx
// holding the indices of the checkers such an event feeds, in registration
// order. It is immutable once built, so traces on several goroutines share
// it.
type feedTable struct {
	decl       []declaration
	prefixes   []string         // every declared actor prefix, once
	rows       map[string]int32 // kind -> row
	nmask      int32            // 1 << len(prefixes)
	spans      []feedSpan       // spans[row*nmask + mask]
	idx        []int32
	deadliners []int32 // the declaring Deadliners, ascending
	// byFirst[b] is the set of prefixes whose first byte is b, empty the
	// set of empty prefixes (which every actor begins with).
	byFirst [256]uint8
	empty   uint8
}

// feedSpan is idx[start : start+n]; deadline is set when one of those
// checkers is a Deadliner (whose Due is read again after the event).
type feedSpan struct {
	start, n int32
	deadline bool
}

// mask returns the set of t's actor prefixes actor begins with. Only the
// prefixes that begin with actor's first byte are compared (byFirst):
// most actors begin with none, and a comparison was a call.
func (tb *feedTable) mask(actor string) uint32 {
	m := uint32(tb.empty)
	if len(actor) == 0 {
		return m
	}
	for c := uint32(tb.byFirst[actor[0]]); c != 0; c &= c - 1 {
		j := bits.TrailingZeros32(c)
		if p := tb.prefixes[j]; len(actor) >= len(p) && actor[:len(p)] == p {
			m |= 1 << j
		}
	}
	return m
}

func (tb *feedTable) span(kind string, mask uint32) feedSpan {
	return tb.spans[tb.rows[kind]*tb.nmask+int32(mask)]
}

func buildFeedTable(decl []declaration) *feedTable {
	tb := &feedTable{decl: decl, rows: map[string]int32{}}
	var declBy [][]int32 // row -> checkers declaring its kind, ascending
	declBy = append(declBy, nil)
	actorMask := make([]uint32, len(decl))
	for i := range decl {
		d := &decl[i]
		for _, k := range d.kinds {
			r, ok := tb.rows[k]
			if !ok {
				r = int32(len(declBy))
				tb.rows[k] = r
				declBy = append(declBy, nil)
			}
			if n := len(declBy[r]); n == 0 || declBy[r][n-1] != int32(i) { // a kind listed twice
				declBy[r] = append(declBy[r], int32(i))
			}
		}
		for _, p := range d.actors {
			j := slices.Index(tb.prefixes, p)
			if j < 0 {
				j = len(tb.prefixes)
				tb.prefixes = append(tb.prefixes, p)
			}
			actorMask[i] |= 1 << j
		}
		if d.due {
			tb.deadliners = append(tb.deadliners, int32(i))
		}
	}
	if len(tb.prefixes) > MaxActorPrefixes {
		panic("sim: the checkers declare more than MaxActorPrefixes actor prefixes: " + strings.Join(tb.prefixes, " "))
	}
	tb.nmask = 1 << len(tb.prefixes)
	for j, p := range tb.prefixes {
		if p == "" {
			tb.empty |= 1 << j
		} else {
			tb.byFirst[p[0]] |= 1 << j
		}
	}
	for r := range declBy {
		for m := uint32(0); m < uint32(tb.nmask); m++ {
			start := len(tb.idx)
			span := feedSpan{start: int32(start)}
			k := 0
			for i := range decl {
				byKind := k < len(declBy[r]) && declBy[r][k] == int32(i)
				if byKind {
					k++
				}
				if decl[i].every() || byKind || actorMask[i]&m != 0 {
					tb.idx = append(tb.idx, int32(i))
					span.deadline = span.deadline || decl[i].due
				}
			}
			span.n = int32(len(tb.idx) - start)
			tb.spans = append(tb.spans, span)
		}
	}
	return tb
}

// feedTables keeps the tables built so far, most recent last: a worker
// runs the same scenario's checker set seed after seed, and the checkers
// are new objects every run, so a table holds indices, never checkers.
var feedTables struct {
	sync.Mutex
	list []*feedTable
}

// feedTablesMax bounds feedTables (the oldest is dropped).
const feedTablesMax = 32

// feedTableFor returns the table of the checker set that declared decl,
// built once.
func feedTableFor(decl []declaration) *feedTable {
	feedTables.Lock()
	defer feedTables.Unlock()
	for _, tb := range feedTables.list {
		if sameDeclarations(tb.decl, decl) {
			return tb
		}
	}
	tb := buildFeedTable(slices.Clone(decl))
	if len(feedTables.list) == feedTablesMax {
		feedTables.list = slices.Delete(feedTables.list, 0, 1)
	}
	feedTables.list = append(feedTables.list, tb)
	return tb
}

func sameDeclarations(a, b []declaration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].due != b[i].due || (a[i].kinds == nil) != (b[i].kinds == nil) || (a[i].actors == nil) != (b[i].actors == nil) ||
			!slices.Equal(a[i].kinds, b[i].kinds) || !slices.Equal(a[i].actors, b[i].actors) {
			return false
		}
	}
	return true
}

// kindEntry is one slot of the trace's cache of recent (kind, actor
// class) pairs: the kind string (kept, so the comparison that finds it is
// a pointer compare for a constant kind), the actor mask and the span.
type kindEntry struct {
	kind  string
	span  feedSpan
	mask  uint8
	valid bool
}

// kindCacheSize is the kind cache's slots (a power of two), in sets of
// two: a kind's set is picked by kindSet, the most recently used of its
// two entries first.
const kindCacheSize = 256

// kindSet picks kind's cache set (its first slot, even) from the address
// of its bytes and its length: model code emits constant kinds, whose
// addresses are distinct and fixed, so they rarely collide, and two that
// share a set both stay (a kind built at run time only misses more often;
// the slot never decides what is fed).
func kindSet(kind string, mask uint32) int {
	p := uintptr(unsafe.Pointer(unsafe.StringData(kind))) + uintptr(len(kind))
	h := p>>3 ^ p>>10 ^ p>>17 ^ uintptr(mask)*0x55
	return int(h&(kindCacheSize/2-1)) * 2
}

// bind attaches the table of the registered checkers and reads every
// Deadliner's Due.
func (t *Trace) bind() {
	t.table = feedTableFor(t.declared)
	t.recent = [kindCacheSize]kindEntry{}
	t.due = make([]time.Duration, len(t.table.deadliners))
	t.refreshDue()
}

// refreshDue reads every Deadliner's Due again (a muted one has none).
func (t *Trace) refreshDue() {
	t.nextDue = NoDeadline
	for j, i := range t.table.deadliners {
		d := NoDeadline
		if !t.muted[i] {
			d = t.checkers[i].(Deadliner).Due()
		}
		t.due[j] = d
		t.nextDue = min(t.nextDue, d)
	}
}

// spanFor returns the span of the checkers an event of kind and actor
// feeds. It does not allocate.
func (t *Trace) spanFor(kind, actor string) feedSpan {
	var mask uint32
	if len(t.table.prefixes) > 0 {
		mask = t.table.mask(actor)
	}
	i := kindSet(kind, mask)
	set := t.recent[i : i+2 : i+2]
	if e := &set[0]; e.valid && uint32(e.mask) == mask && e.kind == kind {
		return e.span
	}
	if e := &set[1]; e.valid && uint32(e.mask) == mask && e.kind == kind {
		set[0], set[1] = set[1], set[0]
		return set[0].span
	}
	span := t.table.span(kind, mask)
	set[1] = set[0]
	set[0] = kindEntry{kind: kind, mask: uint8(mask), valid: true, span: span}
	return span
}

// dispatch feeds ev to the checkers it feeds, in registration order: the
// first violation fails the run, or in the keep-going mode every checker
// that has not failed yet is fed and each one's first violation recorded.
func (t *Trace) dispatch(ev *Event) {
	if t.table == nil {
		t.bind()
	}
	span := t.spanFor(ev.Kind, ev.Actor)
	feed := t.table.idx[span.start : span.start+span.n]
	refresh := span.deadline
	if ev.At >= t.nextDue {
		feed, refresh = t.withDue(feed, ev.At), true
	}
	if t.keepGoing {
		for _, i := range feed {
			if t.muted[i] {
				continue
			}
			if v := t.checkers[i].Observe(ev); v != nil {
				t.muted[i] = true
				t.Fail(*v)
			}
		}
	} else {
		for _, i := range feed {
			if v := t.checkers[i].Observe(ev); v != nil {
				t.Fail(*v)
				return
			}
		}
	}
	if refresh {
		t.refreshDue()
	}
}

// withDue returns feed with every Deadliner due at at added, in
// registration order.
func (t *Trace) withDue(feed []int32, at time.Duration) []int32 {
	t.merged = append(t.merged[:0], feed...)
	for j, i := range t.table.deadliners {
		if t.due[j] > at {
			continue
		}
		k, found := slices.BinarySearch(t.merged, i)
		if !found {
			t.merged = slices.Insert(t.merged, k, i)
		}
	}
	return t.merged
}
