package sim

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkKernel measures the kernel alone on a timer-heavy workload: n
// sessions, each with a 30 min idle timer that activity re-arms at random
// earlier times, with tracing and fingerprinting on (events not kept). One
// b.N iteration is one kernel event; read ns/op as ns/event and allocs/op
// as allocs/event.
func BenchmarkKernel(b *testing.B) {
	for _, n := range []int{1, 100, 10_000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			k := NewKernel(false)
			r := NewRand(NewSeededSource(1, false), "bench")
			timers := make([]Timer, n)
			for i := range timers {
				i := i
				var t Timer
				t = k.AfterFunc(r.Duration("first", 0, 30*time.Minute), func() {
					k.Trace().Emit("session", "activity", "")
					// Activity re-arms the idle timer somewhere inside the window.
					t.Reset(r.Duration("gap", time.Second, 30*time.Minute))
				})
				timers[i] = t
			}
			// Warm up so the heap and trace are in steady state.
			for i := 0; i < 4*n; i++ {
				k.Step()
			}
			start := k.Elapsed()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k.Step()
			}
			b.StopTimer()
			if v := k.Trace().Violation(); v != nil {
				b.Fatal(v)
			}
			b.ReportMetric(float64(k.Elapsed()-start)/float64(time.Second)/b.Elapsed().Seconds(), "virtual-s/wall-s")
		})
	}
}
