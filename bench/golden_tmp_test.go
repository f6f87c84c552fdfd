package bench

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"syscall"
	"testing"
	"time"

	"orchsim/model"
	"orchsim/scenarios"
	"orchsim/sim"
)

func TestGoldenTmp(t *testing.T) {
	if os.Getenv("GOLDEN_OUT") == "" {
		t.Skip()
	}
	out, _ := os.Create(os.Getenv("GOLDEN_OUT"))
	defer out.Close()
	for _, sc := range scenarios.All() {
		for _, p := range []string{model.PresetReported, model.PresetFixed} {
			for seed := uint64(1); seed <= 100; seed++ {
				r, _ := scenarios.Run(scenarios.Config{Scenario: sc.Name, Seed: seed, Profile: model.MustProfile(p, nil, nil)})
				fmt.Fprintf(out, "%s %s %d %016x %d %d\n", sc.Name, p, seed, r.Fingerprint, r.Events, r.Executed)
			}
		}
	}
	for _, n := range []int{1, 100, 10000} {
		in, _ := Open(Kernel, n, 5)
		in.Advance(time.Duration(48*100/n+1) * time.Hour)
		fmt.Fprintf(out, "bench %d %016x %d\n", n, in.Fingerprint(), in.Total())
	}
	// random op streams, with and without tie-break
	for s := uint64(1); s <= 300; s++ {
		fmt.Fprintf(out, "ops %d %016x\n", s, opsFingerprint(s))
	}
}

func opsFingerprint(seed uint64) uint64 {
	rng := sim.NewPRNG(seed)
	k := sim.NewKernel(false)
	if seed%2 == 0 {
		tb := sim.NewPRNG(seed * 7)
		k.SetTieBreak(func() uint64 { return tb.Below(1 + seed%5*3) })
	}
	var timers []sim.Timer
	var act func(id int)
	act = func(id int) {
		k.Trace().Emit(fmt.Sprint("a", id), "fire", fmt.Sprint(k.Pending()))
		for j := 0; j < int(rng.Below(3)); j++ {
			switch rng.Below(5) {
			case 0:
				n := len(timers)
				timers = append(timers, k.AfterFunc(time.Duration(rng.Below(20))*time.Millisecond, func() { act(n) }))
			case 1:
				if len(timers) > 0 {
					i := rng.Below(uint64(len(timers)))
					k.Trace().Emit("stop", fmt.Sprint(timers[i].Stop()), "")
				}
			case 2:
				if len(timers) > 0 {
					i := rng.Below(uint64(len(timers)))
					k.Trace().Emit("reset", fmt.Sprint(timers[i].Reset(time.Duration(rng.Below(30))*time.Millisecond)), "")
				}
			case 3:
				m := int(rng.Below(100))
				k.Schedule(time.Duration(rng.Below(10))*time.Millisecond, func() { act(1000 + m) })
			case 4:
				k.Trace().Emit("self", fmt.Sprint(id), fmt.Sprint(k.Pending()))
				if id < len(timers) {
					timers[id].Reset(time.Duration(rng.Below(15)) * time.Millisecond)
				}
			}
		}
	}
	for i := 0; i < 20; i++ {
		n := len(timers)
		timers = append(timers, k.AfterFunc(time.Duration(rng.Below(50))*time.Millisecond, func() { act(n) }))
	}
	k.Run(sim.Limits{EventBudget: 3000, KeepGoing: true})
	return k.Trace().Fingerprint() ^ uint64(k.Pending())<<1 ^ k.Executed()<<20
}

func TestQuickTmp(t *testing.T) {
	if os.Getenv("QUICK_TMP") == "" {
		t.Skip()
	}
	p := QuickPlan()
	if os.Getenv("QUICK_TMP") == "full" {
		p = FullPlan()
	}
	rep, err := RunPlan(p, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	rep.Write(os.Stdout)
}

func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestCPUTmp(t *testing.T) {
	if os.Getenv("CPU_TMP") == "" {
		t.Skip()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	debug.SetGCPercent(-1)
	defer debug.SetGCPercent(100)
	ns := []int{100, 10000}
	engines := []string{"cmov", "branchy", Bare}
	if os.Getenv("CPU_N") != "" {
		ns = []int{10000}
		engines = []string{"cmov", "nocache", Bare}
	}
	for _, n := range ns {
		for _, engine := range engines {
			var per []float64
			for rep := 0; rep < 7; rep++ {
				setSel(engine)
				e := engine
				if e != Bare {
					e = Kernel
				}
				in, _ := Open(e, n, 1)
				in.Advance(2 * time.Hour)
				c0 := threadCPU()
				r := in.Measure(1_000_000)
				per = append(per, float64(threadCPU()-c0)/float64(r.Events))
				in.Close()
			}
			sort.Float64s(per)
			fmt.Printf("%s N=%d %s cpu-ns/event median %.1f (min %.1f max %.1f)\n", os.Getenv("CPU_TMP"), n, engine, per[3], per[0], per[6])
		}
	}
}

var setSel = func(string) {}
