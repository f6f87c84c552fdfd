package sim

import (
	"fmt"
	"testing"
	"time"
)

// Micro-benchmarks of the kernel's parts. The kernel as a whole, against
// its alternatives, is BenchmarkCompare (compare_bench_test.go).

// BenchmarkTraceEmit is one Emit with tracing and fingerprinting on and
// events not kept, with 0, 2 and 4 inline attributes. It must not allocate.
func BenchmarkTraceEmit(b *testing.B) {
	for _, attrs := range []int{0, 2, 4} {
		b.Run(fmt.Sprintf("attrs=%d", attrs), func(b *testing.B) {
			k := NewKernel(false)
			tr := k.Trace()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				k.now += time.Millisecond
				switch attrs {
				case 0:
					tr.Emit("agent/thread-1", "t3_preview_navigate", "ok")
				case 2:
					tr.Emit("agent/thread-1", "t3_preview_navigate", "ok", A("thread", "thread-1"), A("tab", "tab_12"))
				default:
					tr.Emit("agent/thread-1", "t3_preview_navigate", "ok", A("thread", "thread-1"), A("tab", "tab_12"),
						A("cred", "cred-9f3a"), A("tab-thread", "thread-1"))
				}
			}
		})
	}
}

// BenchmarkTimerReset re-arms one pending timer among n (a re-key in place
// and a sift), the way activity pushes an idle timer back.
func BenchmarkTimerReset(b *testing.B) {
	for _, n := range []int{2, 200, 20_000} {
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			k := NewKernel(false)
			p := NewPRNG(1)
			timers := make([]Timer, n)
			for i := range timers {
				timers[i] = k.AfterFunc(time.Duration(p.Below(uint64(time.Hour))), func() {})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				timers[i%n].Reset(time.Duration(p.Below(uint64(time.Hour))))
			}
		})
	}
}

// BenchmarkFormatT renders one virtual time (invariants' messages and
// every timeline line).
func BenchmarkFormatT(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = FormatT(time.Duration(i) * 1_234_567 * time.Microsecond)
	}
}
