package sim

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// Tests of the kernel's fast paths: that they change nothing but speed.

// Emit copies the attributes: the caller's slice may be reused at once, and
// kept events keep their own.
func TestTrace_EmitCopiesAttrs(t *testing.T) {
	k := NewKernel(true)
	attrs := []Attr{A("tab", "tab_1")}
	var seen []string
	k.Trace().OnEvent(func(ev *Event) { seen = append(seen, ev.Get("tab")) })
	k.Trace().Emit("a", "k", "", attrs...)
	attrs[0].Value = "tab_2"
	k.Trace().Emit("a", "k", "", attrs...)
	k.Trace().Emit("a", "none", "")
	evs := k.Trace().Events()
	require.Len(t, evs, 3)
	assert.Equal(t, "tab_1", evs[0].Get("tab"))
	assert.Equal(t, "tab_2", evs[1].Get("tab"))
	assert.Nil(t, evs[2].Attrs)
	assert.Equal(t, []string{"tab_1", "tab_2", ""}, seen)
}

// EmitPrefixed(a, k, o, pre, attrs...) is Emit(a, k, o, append(pre,
// attrs...)...): the same kept events, the same events seen by a sink and
// a checker, the same fingerprint, with and without keeping, over random
// splits of random attribute lists (empty ones too).
func TestEmitPrefixed_IsEmitOfTheJoin(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keep := rapid.Bool().Draw(t, "keep")
		joined, prefixed := NewKernel(keep), NewKernel(keep)
		var sawJoined, sawPrefixed []string
		sink := func(to *[]string) func(*Event) {
			return func(ev *Event) {
				*to = append(*to, fmt.Sprintf("%d %s %s %s %v %v", ev.Seq, ev.Actor, ev.Kind, ev.Outcome, ev.Attrs, ev.Attrs == nil))
			}
		}
		joined.Trace().OnEvent(sink(&sawJoined))
		prefixed.Trace().OnEvent(sink(&sawPrefixed))
		str := rapid.SampledFrom([]string{"", "s1", "session", "backend", "b-2", "a longer value than eight bytes"})
		for range rapid.IntRange(1, 20).Draw(t, "events") {
			attrs := make([]Attr, rapid.IntRange(0, 6).Draw(t, "attrs"))
			for i := range attrs {
				attrs[i] = A(str.Draw(t, "key"), str.Draw(t, "value"))
			}
			cut := rapid.IntRange(0, len(attrs)).Draw(t, "cut")
			actor, kind, outcome := str.Draw(t, "actor"), str.Draw(t, "kind"), str.Draw(t, "outcome")
			pre := append([]Attr{}, attrs[:cut]...)
			joined.Trace().Emit(actor, kind, outcome, append(pre, attrs[cut:]...)...)
			prefixed.Trace().EmitPrefixed(actor, kind, outcome, attrs[:cut], attrs[cut:]...)
		}
		if joined.Trace().Fingerprint() != prefixed.Trace().Fingerprint() {
			t.Fatalf("fingerprints differ")
		}
		if !slices.Equal(sawJoined, sawPrefixed) {
			t.Fatalf("sinks saw\n%v\n%v", sawJoined, sawPrefixed)
		}
		if got, want := fmt.Sprintf("%#v", prefixed.Trace().Events()), fmt.Sprintf("%#v", joined.Trace().Events()); got != want {
			t.Fatalf("kept events differ:\n%s\n%s", got, want)
		}
	})
}

// EmitPrefixed given the attributes a sink was just handed (they live in
// the trace's scratch list), as pre, as attrs or both, emits what Emit of
// their join emits.
func TestEmitPrefixed_OfADeliveredEventsAttrs(t *testing.T) {
	for _, form := range []string{"attrs", "pre", "both", "tail"} {
		joined, prefixed := NewKernel(true), NewKernel(true)
		var last []Attr
		prefixed.Trace().OnEvent(func(ev *Event) { last = ev.Attrs })
		first := []Attr{A("x", "1"), A("y", "2"), A("z", "3")}
		joined.Trace().Emit("a", "k", "", first...)
		prefixed.Trace().Emit("a", "k", "", first...)
		own := []Attr{A("p", "0")}
		switch form {
		case "attrs":
			joined.Trace().Emit("a", "k2", "", append(append([]Attr{}, own...), first...)...)
			prefixed.Trace().EmitPrefixed("a", "k2", "", own, last...)
		case "pre":
			joined.Trace().Emit("a", "k2", "", append(append([]Attr{}, first...), own...)...)
			prefixed.Trace().EmitPrefixed("a", "k2", "", last, own...)
		case "both":
			joined.Trace().Emit("a", "k2", "", append(append([]Attr{}, first...), first...)...)
			prefixed.Trace().EmitPrefixed("a", "k2", "", last, last...)
		case "tail":
			joined.Trace().Emit("a", "k2", "", append(append([]Attr{}, own...), first[1:]...)...)
			prefixed.Trace().EmitPrefixed("a", "k2", "", own, last[1:]...)
		}
		require.Equal(t, joined.Trace().Events(), prefixed.Trace().Events(), form)
		require.Equal(t, joined.Trace().Fingerprint(), prefixed.Trace().Fingerprint(), form)
	}
}

// Emit with inline attributes does not allocate when events are not kept.
func TestTrace_EmitDoesNotAllocate(t *testing.T) {
	k := NewKernel(false)
	tab := "tab_" + fmt.Sprint(3)
	allocs := testing.AllocsPerRun(1000, func() {
		k.Trace().Emit("agent/t1", "t3_preview_navigate", "ok", A("thread", "t1"), A("tab", tab))
	})
	assert.Zero(t, allocs)
}

// refKernel is the kernel's specification: a list of pending events, the
// least (time, priority, sequence) runs next.
type refKernel struct {
	now     time.Duration
	seq     uint64
	pending []*refTimer
	prio    func() uint64
}

type refTimer struct {
	r         *refKernel
	at        time.Duration
	prio, seq uint64
	fn        func()
}

func (r *refKernel) AfterFunc(d time.Duration, f func()) Timer {
	t := &refTimer{r: r, fn: f}
	t.Reset(d)
	return t
}

func (r *refKernel) Now() time.Time { return Epoch.Add(r.now) }

func (t *refTimer) Reset(d time.Duration) bool {
	was := t.Stop()
	r := t.r
	r.seq++
	t.at, t.prio, t.seq = r.now+max(d, 0), 0, r.seq
	if r.prio != nil {
		t.prio = r.prio()
	}
	r.pending = append(r.pending, t)
	return was
}

func (t *refTimer) Stop() bool {
	for i, p := range t.r.pending {
		if p == t {
			t.r.pending = append(t.r.pending[:i], t.r.pending[i+1:]...)
			return true
		}
	}
	return false
}

func (r *refKernel) step() bool {
	if len(r.pending) == 0 {
		return false
	}
	sort.Slice(r.pending, func(i, j int) bool {
		a, b := r.pending[i], r.pending[j]
		if a.at != b.at {
			return a.at < b.at
		}
		if a.prio != b.prio {
			return a.prio < b.prio
		}
		return a.seq < b.seq
	})
	t := r.pending[0]
	r.pending = r.pending[1:]
	r.now = t.at
	t.fn()
	return true
}

// runScript drives a scheduler (the kernel or the reference) with ops, the
// same way whichever it is, and logs what it observes.
// Delays are mostly milliseconds, sometimes hours, so that events sit at
// every scale of the queue's buckets; between steps, the script sometimes
// runs the clock to an instant short of the next event (a horizon) and acts
// from outside, scheduling before the next event.
func runScript(clock Clock, pending func() int, step func() bool, until func(time.Duration), ops []int) []string {
	var log []string
	var timers []Timer
	next := 0
	op := func() int {
		v := ops[next%len(ops)]
		next++
		return v
	}
	now := func() time.Duration { return Since(clock) }
	var act func(from int)
	newTimer := func() {
		id := len(timers)
		timers = append(timers, clock.AfterFunc(delay(op()), func() {
			log = append(log, fmt.Sprintf("%d@%s pending=%d", id, now(), pending()))
			act(id)
		}))
	}
	act = func(from int) {
		if next > 3*len(ops) {
			return
		}
		for n := op() % 3; n > 0; n-- {
			v := op()
			d := delay(op())
			i := -1
			if len(timers) > 0 {
				i = v / 6 % len(timers)
				if from >= 0 && v%12 < 6 {
					i = from // the firing timer itself
				}
			}
			switch {
			case v%6 == 0:
				newTimer()
			case v%6 <= 2 && i >= 0:
				log = append(log, fmt.Sprint("reset ", i, timers[i].Reset(d)))
			case v%6 == 3 && i >= 0:
				log = append(log, fmt.Sprint("stop ", i, timers[i].Stop()))
			case v%6 == 4:
				m := v % 97
				clock.AfterFunc(d, func() { log = append(log, fmt.Sprint("once ", m, "@", now())) })
			default:
				log = append(log, fmt.Sprint("pending ", pending()))
			}
		}
	}
	for range 1 + op()%10 {
		newTimer()
	}
	act(-1)
	for steps := 0; steps < 2000; steps++ {
		if v := op(); v%5 == 0 {
			until(now() + time.Duration(v%30)*time.Millisecond)
			log = append(log, fmt.Sprint("until ", now(), " pending ", pending()))
			act(-1)
			continue
		}
		if !step() {
			break
		}
	}
	return append(log, fmt.Sprint("end ", now(), " pending ", pending()))
}

func delay(v int) time.Duration {
	switch {
	case v%7 == 0:
		return time.Duration(v%50) * time.Hour
	case v%3 == 0:
		return 0 // same instants, often
	}
	return time.Duration(v%25) * time.Millisecond
}

func (r *refKernel) until(t time.Duration) {
	for len(r.pending) > 0 {
		first := r.pending[0]
		for _, p := range r.pending[1:] {
			if p.at < first.at || p.at == first.at && (p.prio < first.prio || p.prio == first.prio && p.seq < first.seq) {
				first = p
			}
		}
		if first.at > t {
			break
		}
		r.step()
	}
	r.now = max(r.now, t)
}

// The kernel runs exactly the events the reference runs, in the same order
// and at the same times, under any mix of AfterFunc, Stop and Reset, from
// outside and from inside callbacks (a timer re-arming or stopping itself
// included), with and without a tie-break; Stop, Reset and Pending answer
// the same.
func TestKernel_MatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ops := rapid.SliceOfN(rapid.IntRange(0, 1<<20), 1, 300).Draw(t, "ops")
		k := NewKernel(false)
		ref := &refKernel{}
		if rapid.Bool().Draw(t, "tieBreak") {
			a, b := NewPRNG(1), NewPRNG(1)
			n := rapid.Uint64Range(1, 4).Draw(t, "prios")
			k.SetTieBreak(func() uint64 { return a.Below(n) })
			ref.prio = func() uint64 { return b.Below(n) }
		}
		want := runScript(ref, func() int { return len(ref.pending) }, ref.step, ref.until, ops)
		got := runScript(k, k.Pending, k.Step, func(t time.Duration) { k.RunUntil(t) }, ops)
		require.Equal(t, want, got)
	})
}

// A callback that panics after re-arming its own timer leaves it armed,
// and the kernel reports the panic as a violation.
func TestKernel_PanicAfterRearm(t *testing.T) {
	k := NewKernel(false)
	var tm Timer
	fired := 0
	tm = k.AfterFunc(time.Second, func() {
		fired++
		if fired == 1 {
			tm.Reset(time.Second)
			panic("boom")
		}
	})
	assert.Equal(t, EndViolation, k.Run(Limits{}))
	assert.Equal(t, ModelPanic, k.Trace().Violation().Invariant)
	assert.Equal(t, 1, k.Pending())
	assert.True(t, k.Step())
	assert.Equal(t, 2, fired)
	assert.Equal(t, 0, k.Pending())
}

// Running the kernel from inside a callback is a programming error.
func TestKernel_RunFromCallbackPanics(t *testing.T) {
	k := NewKernel(false)
	k.Schedule(0, func() { k.Run(Limits{}) })
	assert.Equal(t, EndViolation, k.Run(Limits{}))
	assert.Contains(t, k.Trace().Violation().Message, "called from inside an event callback")
}

// FormatT without fmt renders exactly what its fmt definition renders.
func TestFormatT_MatchesDefinition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.Int64().Draw(t, "d"))
		if rapid.Bool().Draw(t, "small") {
			d = time.Duration(rapid.Int64Range(-1e13, 1e15).Draw(t, "small d"))
		}
		require.Equal(t, formatTSlow(d.Milliseconds()), FormatT(d))
	})
}

// A timer re-armed for the current instant runs after the events already
// due at that instant: its new sequence number orders it, in the queue's
// same-instant heap as anywhere.
func TestKernel_RearmAtSameInstantGoesLast(t *testing.T) {
	k := NewKernel(false)
	var order []string
	var b Timer
	k.AfterFunc(time.Second, func() {
		order = append(order, "a")
		b.Reset(0)
	})
	b = k.AfterFunc(time.Second, func() { order = append(order, "b") })
	k.AfterFunc(time.Second, func() { order = append(order, "c") })
	k.AfterFunc(time.Second, func() { order = append(order, "d") })
	k.Run(Limits{})
	assert.Equal(t, []string{"a", "c", "d", "b"}, order)
}
