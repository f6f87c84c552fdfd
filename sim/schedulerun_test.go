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
