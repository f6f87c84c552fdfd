package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestKernel_RunsInTimeThenInsertionOrder(t *testing.T) {
	k := NewKernel(false)
	var order []string
	at := func(d time.Duration, name string) { k.Schedule(d, func() { order = append(order, name) }) }
	at(2*time.Second, "c")
	at(time.Second, "a")
	at(time.Second, "b")
	at(0, "first")
	assert.Equal(t, EndQuiescent, k.Run(Limits{}))
	assert.Equal(t, []string{"first", "a", "b", "c"}, order)
	assert.Equal(t, 2*time.Second, k.Elapsed())
}

func TestKernel_HeapOrderMatchesSort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := NewKernel(false)
		delays := rapid.SliceOfN(rapid.Int64Range(0, 50), 1, 200).Draw(t, "delays")
		stops := rapid.SliceOfN(rapid.Bool(), len(delays), len(delays)).Draw(t, "stops")
		type fired struct {
			at  time.Duration
			idx int
		}
		var got []fired
		var timers []Timer
		for i, d := range delays {
			i := i
			timers = append(timers, k.AfterFunc(time.Duration(d), func() { got = append(got, fired{k.Elapsed(), i}) }))
		}
		for i, s := range stops {
			if s {
				timers[i].Stop()
			}
		}
		k.Run(Limits{})
		for j := 1; j < len(got); j++ {
			prev, cur := got[j-1], got[j]
			if prev.at > cur.at || (prev.at == cur.at && prev.idx > cur.idx) {
				t.Fatalf("event %v ran before %v", prev, cur)
			}
		}
		want := 0
		for _, s := range stops {
			if !s {
				want++
			}
		}
		if len(got) != want {
			t.Fatalf("%d events ran, want %d", len(got), want)
		}
	})
}

func TestKernel_TimerStopAndReset(t *testing.T) {
	k := NewKernel(false)
	fired := []time.Duration{}
	tm := k.AfterFunc(time.Minute, func() { fired = append(fired, k.Elapsed()) })
	k.Schedule(30*time.Second, func() { assert.True(t, tm.Reset(time.Minute)) })
	k.Run(Limits{})
	assert.Equal(t, []time.Duration{90 * time.Second}, fired, "Reset re-arms from now")
	assert.False(t, tm.Stop(), "a fired timer is not pending")
	assert.False(t, tm.Reset(time.Second))
	k.Run(Limits{})
	assert.Equal(t, []time.Duration{90 * time.Second, 91 * time.Second}, fired, "a fired timer can be re-armed")
}

func TestKernel_HorizonStopsBeforeLaterEvents(t *testing.T) {
	k := NewKernel(false)
	ran := 0
	var tick func()
	tick = func() { ran++; k.Schedule(time.Minute, tick) }
	k.Schedule(0, tick)
	assert.Equal(t, EndHorizon, k.Run(Limits{Horizon: time.Hour}))
	assert.Equal(t, 61, ran, "ticks at 0..60 min")
	assert.Equal(t, time.Hour, k.Elapsed())
}

func TestKernel_BudgetIsALivelockGuard(t *testing.T) {
	k := NewKernel(true)
	var spin func()
	spin = func() { k.Schedule(0, spin) }
	k.Schedule(0, spin)
	assert.Equal(t, EndBudget, k.Run(Limits{Horizon: time.Hour, EventBudget: 1000}))
	require.NotNil(t, k.Trace().Violation())
	assert.Equal(t, EventBudgetExceeded, k.Trace().Violation().Invariant)
	assert.Equal(t, uint64(1000), k.Executed())
}

func TestKernel_ModelPanicIsAViolation(t *testing.T) {
	k := NewKernel(true)
	k.Schedule(time.Second, func() { panic("boom in model") })
	later := false
	k.Schedule(2*time.Second, func() { later = true })
	assert.Equal(t, EndViolation, k.Run(Limits{}))
	v := k.Trace().Violation()
	require.NotNil(t, v)
	assert.Equal(t, ModelPanic, v.Invariant)
	assert.Equal(t, "boom in model", v.Message)
	assert.Equal(t, time.Second, v.At)
	assert.False(t, later, "the run stops at the panic")
}

type failAt struct{ kind string }

func (f failAt) Name() string { return "fail-at-" + f.kind }
func (f failAt) Observe(ev *Event) *Violation {
	if ev.Kind == f.kind {
		return &Violation{Invariant: f.Name(), Message: "saw " + ev.Kind}
	}
	return nil
}

func TestKernel_StopsAtFirstViolation(t *testing.T) {
	k := NewKernel(true)
	k.Trace().AddChecker(failAt{"bad"})
	k.Schedule(time.Second, func() { k.Trace().Emit("x", "good", "") })
	k.Schedule(2*time.Second, func() { k.Trace().Emit("x", "bad", ""); k.Trace().Emit("x", "bad", "again") })
	k.Schedule(3*time.Second, func() { k.Trace().Emit("x", "never", "") })
	assert.Equal(t, EndViolation, k.Run(Limits{}))
	ev := k.Trace().Events()
	require.Len(t, ev, 4, "good, bad, the violation, and the rest of that event's steps")
	assert.Equal(t, "invariant", ev[2].Actor)
	assert.Equal(t, 2*time.Second, k.Trace().Violation().At)
}

type liveness struct{ done bool }

func (l *liveness) Name() string                 { return "eventually-done" }
func (l *liveness) Observe(ev *Event) *Violation { l.done = l.done || ev.Kind == "done"; return nil }
func (l *liveness) Finish(time.Duration) *Violation {
	if l.done {
		return nil
	}
	return &Violation{Invariant: l.Name(), Message: "never done"}
}

func TestKernel_FinisherJudgesTheEnd(t *testing.T) {
	k := NewKernel(false)
	k.Trace().AddChecker(&liveness{})
	k.Schedule(time.Second, func() { k.Trace().Emit("x", "step", "") })
	assert.Equal(t, EndViolation, k.Run(Limits{}))

	k = NewKernel(false)
	k.Trace().AddChecker(&liveness{})
	k.Schedule(time.Second, func() { k.Trace().Emit("x", "done", "") })
	assert.Equal(t, EndQuiescent, k.Run(Limits{}))
}

func TestKernel_TieBreakPermutesSameInstant(t *testing.T) {
	order := func(prios []uint64) []int {
		k := NewKernel(false)
		i := 0
		k.SetTieBreak(func() uint64 { p := prios[i]; i++; return p })
		var got []int
		for j := 0; j < len(prios); j++ {
			j := j
			k.Schedule(time.Second, func() { got = append(got, j) })
		}
		k.Run(Limits{})
		return got
	}
	assert.Equal(t, []int{2, 0, 1}, order([]uint64{5, 7, 1}))
}

func TestTrace_FingerprintIsHashOfCanonicalEncoding(t *testing.T) {
	k := NewKernel(true)
	k.Schedule(time.Second, func() {
		k.Trace().Emit("agent/t1", "preview_open", "ok", A("thread", "t1"), A("tab", "tab_1"))
	})
	k.Schedule(time.Hour, func() { k.Trace().Emit("psm", "session.release", "stopped") })
	k.Run(Limits{})
	var buf []byte
	for i := range k.Trace().Events() {
		buf = AppendCanonical(buf, &k.Trace().Events()[i])
	}
	want, err := HashCanonical(buf)
	require.NoError(t, err)
	assert.Equal(t, want, k.Trace().Fingerprint())
	assert.Equal(t, uint64(2), k.Trace().Len())
}

func TestTrace_FingerprintSeesEveryField(t *testing.T) {
	base := Event{At: time.Second, Seq: 1, Actor: "a", Kind: "k", Attrs: []Attr{A("x", "1")}, Outcome: "ok"}
	h := func(e Event) uint64 {
		f, err := HashCanonical(AppendCanonical(nil, &e))
		require.NoError(t, err)
		return f
	}
	variants := []Event{base, base, base, base, base, base, base}
	variants[1].At++
	variants[2].Seq++
	variants[3].Actor = "b"
	variants[4].Kind = "j"
	variants[5].Attrs = []Attr{A("x", "2")}
	variants[6].Outcome = "no"
	seen := map[uint64]int{}
	for i, v := range variants[1:] {
		assert.NotEqual(t, h(base), h(v), "variant %d", i+1)
		seen[h(v)]++
	}
	// Field boundaries are length-prefixed: moving a byte between fields changes the hash.
	a := Event{Actor: "ab", Kind: "c"}
	b := Event{Actor: "a", Kind: "bc"}
	assert.NotEqual(t, h(a), h(b))
}

func TestFormatT(t *testing.T) {
	assert.Equal(t, "T+00:00:00.000", FormatT(0))
	assert.Equal(t, "T+00:31:02.114", FormatT(31*time.Minute+2*time.Second+114*time.Millisecond))
	assert.Equal(t, "T+123:00:00.001", FormatT(123*time.Hour+time.Millisecond))
}

func TestEvent_Describe(t *testing.T) {
	e := Event{At: time.Minute, Actor: "agent/thread-b", Kind: "t3_preview_close",
		Attrs: []Attr{A("tab", "tab_2")}, Outcome: "agentMismatch"}
	assert.Equal(t, "T+00:01:00.000  agent/thread-b         t3_preview_close           tab=tab_2  -> agentMismatch", e.Describe())
}

// Keep-going: the run goes on past the first violation, every checker
// that has not failed is still fed and finishes, and each other
// invariant's first violation is recorded (once) and traced; the events
// up to the first violation are those of a run that stops there.
func TestKernel_KeepGoingRecordsEachInvariantOnce(t *testing.T) {
	build := func(keep bool) *Kernel {
		k := NewKernel(true)
		k.Trace().AddChecker(failAt{"bad"})
		k.Trace().AddChecker(failAt{"worse"})
		k.Trace().AddChecker(&liveness{})
		k.Trace().SetKeepGoing(keep)
		k.Schedule(time.Second, func() { k.Trace().Emit("x", "good", "") })
		k.Schedule(2*time.Second, func() { k.Trace().Emit("x", "bad", "") })
		k.Schedule(3*time.Second, func() { k.Trace().Emit("x", "bad", "again"); k.Trace().Emit("x", "worse", "") })
		k.Schedule(4*time.Second, func() { k.Trace().Emit("x", "worse", "again") })
		return k
	}
	stop := build(false)
	assert.Equal(t, EndViolation, stop.Run(Limits{}))
	k := build(true)
	assert.Equal(t, EndQuiescent, k.Run(Limits{KeepGoing: true}), "it ran to the end")
	tr := k.Trace()
	require.NotNil(t, tr.Violation())
	assert.Equal(t, "fail-at-bad", tr.Violation().Invariant)
	var later []string
	for _, v := range tr.Later() {
		later = append(later, v.Invariant)
	}
	assert.Equal(t, []string{"fail-at-worse", "eventually-done"}, later, "each other invariant once, the liveness one at the end")
	assert.Equal(t, 3*time.Second, tr.Later()[0].At)
	assert.Equal(t, stop.Trace().Events()[:3], tr.Events()[:3], "the same run up to its first violation")
	violations := 0
	for _, ev := range tr.Events() {
		if ev.Actor == "invariant" {
			violations++
		}
	}
	assert.Equal(t, 3, violations, "each distinct violation traced once")
	assert.Nil(t, stop.Trace().Later())
}

// Keep-going stops at a model panic: the models' state says nothing after it.
func TestKernel_KeepGoingStopsAtAPanic(t *testing.T) {
	k := NewKernel(false)
	k.Trace().SetKeepGoing(true)
	ran := false
	k.Schedule(time.Second, func() { panic("boom") })
	k.Schedule(2*time.Second, func() { ran = true })
	assert.Equal(t, EndViolation, k.Run(Limits{KeepGoing: true}))
	assert.False(t, ran)
	assert.Equal(t, ModelPanic, k.Trace().Violation().Invariant)
}

// A host suspend jumps the wall clock and pushes every pending event back
// by the same amount (awake-time delays), keeping their order; Awake does
// not count the suspend.
func TestKernel_SuspendShiftsPendingEvents(t *testing.T) {
	k := NewKernel(false)
	var got []time.Duration
	k.AfterFunc(10*time.Minute, func() { got = append(got, k.Elapsed()) })
	k.AfterFunc(time.Minute, func() {
		k.Suspend(time.Hour)
		got = append(got, k.Elapsed())
	})
	k.AfterFunc(20*time.Minute, func() { got = append(got, k.Elapsed()) })
	k.Run(Limits{})
	if want := []time.Duration{61 * time.Minute, 70 * time.Minute, 80 * time.Minute}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if k.Awake() != 20*time.Minute {
		t.Fatalf("awake %v, want 20m", k.Awake())
	}
}
