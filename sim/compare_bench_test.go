package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/orchsim/orchsim/bench"
)

// BenchmarkCompare runs the shared timer-heavy workload of package bench
// (N sessions, each with a 30 min idle timer that activity resets at random
// earlier times; on firing the session is released and resumed after 0-60
// min) on four engines in one run: orchsim's kernel with tracing and
// fingerprinting on, a bare 4-ary heap loop with inline callbacks (the
// baseline), benbjohnson/clock's Mock (AfterFunc + Add) and testing/synctest
// (time.AfterFunc in a bubble). Every engine draws from the same per-session
// sim.PRNG streams, so all four run the same events (bench.Check).
//
// b.N is the number of events; set-up and a 2 h virtual warm-up are not
// timed. Read ns/event, allocs/event and virtual-s/wall-s; the ratios
// between engines are the result, absolute times depend on the machine.
// The Mock sleeps 1 ms per timer, so at 10,000 sessions it gets no warm-up
// (it would take a minute) and -benchtime bounds its events as for the others.
//
//	go test ./sim -run '^$' -bench Compare -count 5
func BenchmarkCompare(b *testing.B) {
	for _, sessions := range []int{1, 100, 10_000} {
		for _, engine := range bench.Engines {
			b.Run(fmt.Sprintf("sessions=%d/engine=%s", sessions, engine), func(b *testing.B) {
				benchmarkEngine(b, engine, sessions)
			})
		}
	}
}

// compareWarmup is the untimed virtual time each run starts with: enough for
// every session to have cycled through release and resume a few times.
const compareWarmup = 2 * time.Hour

func benchmarkEngine(b *testing.B, engine string, sessions int) {
	warmup := compareWarmup
	if engine == bench.Mock && sessions >= 10_000 {
		warmup = 0
	}
	b.ReportAllocs()
	var total bench.Result
	events := uint64(b.N)
	for total.Events < events {
		// One instance runs at most bench.MaxEvents (100 virtual years); a
		// long run at one session goes on with a fresh one, set up untimed.
		b.StopTimer()
		in, err := bench.Open(engine, sessions, 1)
		if err != nil {
			b.Fatal(err)
		}
		in.Advance(warmup)
		b.StartTimer()
		total.Add(in.Measure(min(events-total.Events, bench.MaxEvents(sessions))))
		b.StopTimer()
		in.Close()
	}
	b.ReportMetric(total.NsPerEvent(), "ns/event")
	b.ReportMetric(total.AllocsPerEvent(), "allocs/event")
	b.ReportMetric(total.VirtualPerWall(), "virtual-s/wall-s")
}
