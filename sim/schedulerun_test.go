package sim

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// hop is a Runner that logs "name@time" and, while it has delays left,
// schedules itself again (as a call record's next hop does).
type hop struct {
	k     *Kernel
	log   *[]string
	name  string
	again []time.Duration
}

func (h *hop) Run() {
	*h.log = append(*h.log, h.name+"@"+h.k.Elapsed().String())
	if len(h.again) > 0 {
		d := h.again[0]
		h.again = h.again[1:]
		h.k.ScheduleRun(d, h)
	}
}

// runHops runs the program: event i first at delays[i], re-armed after
// each of agains[i]; through ScheduleRun where asRunner[i] is set, else
// through Schedule with a closure. It returns the log and Executed.
func runHops(delays []int64, agains [][]int64, asRunner []bool, tie bool) ([]string, uint64) {
	k := NewKernel(false)
	if tie {
		p := NewPRNG(7)
		k.SetTieBreak(func() uint64 { return p.Uint64() })
	}
	var log []string
	for i := range delays {
		name := string(rune('A'+i%26)) + string(rune('0'+i/26))
		var again []time.Duration
		for _, a := range agains[i] {
			again = append(again, time.Duration(a))
		}
		if asRunner != nil && asRunner[i] {
			k.ScheduleRun(time.Duration(delays[i]), &hop{k: k, log: &log, name: name, again: again})
			continue
		}
		var step func()
		step = func() {
			log = append(log, name+"@"+k.Elapsed().String())
			if len(again) > 0 {
				d := again[0]
				again = again[1:]
				k.Schedule(d, step)
			}
		}
		k.Schedule(time.Duration(delays[i]), step)
	}
	k.Run(Limits{})
	return log, k.Executed()
}

// ScheduleRun events are keyed, ordered and counted exactly as Schedule's:
// a program run through Schedule alone and through any mix of Schedule and
// ScheduleRun runs the same callbacks at the same times, with and without
// a tie-break.
func TestKernel_ScheduleRunOrdersAsSchedule(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 60).Draw(t, "n")
		delays := rapid.SliceOfN(rapid.Int64Range(0, 5), n, n).Draw(t, "delays")
		agains := rapid.SliceOfN(rapid.SliceOfN(rapid.Int64Range(0, 5), 0, 3), n, n).Draw(t, "agains")
		asRunner := rapid.SliceOfN(rapid.Bool(), n, n).Draw(t, "asRunner")
		tie := rapid.Bool().Draw(t, "tie")
		want, wantN := runHops(delays, agains, nil, tie)
		got, gotN := runHops(delays, agains, asRunner, tie)
		if gotN != wantN {
			t.Fatalf("executed %d events, want %d", gotN, wantN)
		}
		if len(got) != len(want) {
			t.Fatalf("%d callbacks, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("callback %d: %s, want %s\ngot  %v\nwant %v", i, got[i], want[i], got, want)
			}
		}
	})
}

type nop struct{ n int }

func (r *nop) Run() { r.n++ }

// A ScheduleRun event allocates nothing once the kernel's pool is warm.
func TestKernel_ScheduleRunAllocatesNothing(t *testing.T) {
	k := NewKernel(false)
	r := &nop{}
	for i := 0; i < 8; i++ {
		k.ScheduleRun(time.Duration(i), r)
	}
	k.Run(Limits{})
	allocs := testing.AllocsPerRun(100, func() {
		for i := 0; i < 8; i++ {
			k.ScheduleRun(time.Duration(i), r)
		}
		for k.Step() {
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per 8 events, want 0", allocs)
	}
}

// tree is a Runner for TestKernel_ReusedFiringTimerOrdersAsFresh: node i
// logs itself and schedules its children.
type tree struct {
	k     *Kernel
	log   *[]string
	kids  [][]int // per node, the nodes it schedules when it runs
	delay []int64 // per node, its delay from its parent's run
	via   []int   // per node: 0 AfterFunc, 1 Schedule, 2 ScheduleRun
	fresh bool    // every event through AfterFunc (the reference)
	node  int     // the node a Runner copy stands for
	stop  []bool  // per node: an AfterFunc timer stopped right after arming
	held  []Timer // AfterFunc handles, by node
}

func (t *tree) Run() { t.run(t.node) }

func (t *tree) run(i int) {
	*t.log = append(*t.log, string(rune('A'+i%26))+string(rune('0'+i/26))+"@"+t.k.Elapsed().String())
	for _, c := range t.kids[i] {
		t.schedule(c)
	}
}

func (t *tree) schedule(c int) {
	d := time.Duration(t.delay[c])
	switch {
	case t.fresh || t.via[c] == 0:
		t.held[c] = t.k.AfterFunc(d, func() { t.run(c) })
		if t.stop[c] {
			t.held[c].Stop()
		}
	case t.via[c] == 1:
		t.k.Schedule(d, func() { t.run(c) })
	default:
		r := *t
		r.node = c
		t.k.ScheduleRun(d, &r)
	}
}

// A Schedule or ScheduleRun from the callback of a Schedule or ScheduleRun
// event takes over the firing timer's queue entry (Kernel.reusable); the
// events still run in the order and number of fresh timers, with and
// without a tie-break, however many events one callback schedules and
// whatever mix of handles, stops and pooled events it uses.
func TestKernel_ReusedFiringTimerOrdersAsFresh(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 80).Draw(rt, "n")
		roots := rapid.IntRange(1, 6).Draw(rt, "roots")
		kids := make([][]int, n)
		for c := roots; c < n; c++ {
			p := rapid.IntRange(0, c-1).Draw(rt, "parent")
			kids[p] = append(kids[p], c)
		}
		delay := rapid.SliceOfN(rapid.Int64Range(0, 4), n, n).Draw(rt, "delay")
		via := rapid.SliceOfN(rapid.IntRange(0, 2), n, n).Draw(rt, "via")
		stop := rapid.SliceOfN(rapid.Bool(), n, n).Draw(rt, "stop")
		tie := rapid.Bool().Draw(rt, "tie")
		run := func(fresh bool) ([]string, uint64, int) {
			k := NewKernel(false)
			if tie {
				p := NewPRNG(11)
				k.SetTieBreak(func() uint64 { return p.Uint64() })
			}
			var log []string
			tr := &tree{k: k, log: &log, kids: kids, delay: delay, via: via, fresh: fresh, stop: make([]bool, n), held: make([]Timer, n)}
			for c := range stop {
				// Stops only where the event has a handle in both runs.
				tr.stop[c] = stop[c] && via[c] == 0
			}
			for c := 0; c < min(roots, n); c++ {
				tr.schedule(c)
			}
			pending := k.Pending()
			k.Run(Limits{})
			return log, k.Executed(), pending
		}
		want, wantN, wantP := run(true)
		got, gotN, gotP := run(false)
		if gotN != wantN || gotP != wantP {
			rt.Fatalf("executed %d, pending %d at start; want %d, %d", gotN, gotP, wantN, wantP)
		}
		if len(got) != len(want) {
			rt.Fatalf("%d callbacks, want %d\ngot  %v\nwant %v", len(got), len(want), got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				rt.Fatalf("callback %d: %s, want %s\ngot  %v\nwant %v", i, got[i], want[i], got, want)
			}
		}
	})
}
