package bench

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
)

// GC is a setting of the collector: GOGC (Percent, -1 for off) and the
// soft memory limit in bytes (math.MaxInt64 for none).
type GC struct {
	Percent int
	Limit   int64
}

// DefaultGC is Go's own setting when neither GOGC nor GOMEMLIMIT is set:
// collect once the heap has doubled, no memory limit.
var DefaultGC = GC{Percent: 100, Limit: math.MaxInt64}

// CurrentGC reads the process' setting (runtime/metrics; the setting
// itself is not touched). Where a metric cannot be read, its DefaultGC
// value stands in.
func CurrentGC() GC {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	g := DefaultGC
	if s[0].Value.Kind() == metrics.KindUint64 {
		// GOGC=off reads as the uint64 of -1.
		if p := s[0].Value.Uint64(); p > math.MaxInt32 {
			g.Percent = -1
		} else {
			g.Percent = int(p)
		}
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		if l := s[1].Value.Uint64(); l < math.MaxInt64 {
			g.Limit = int64(l)
		}
	}
	return g
}

// set makes g the process' setting and returns the one it replaced.
func (g GC) set() GC {
	old := CurrentGC()
	debug.SetGCPercent(g.Percent)
	debug.SetMemoryLimit(g.Limit)
	return old
}

// String renders g as "GOGC=400, memory limit 11.8 GiB", "GOGC=off, no
// memory limit".
func (g GC) String() string {
	pct := "off"
	if g.Percent >= 0 {
		pct = fmt.Sprint(g.Percent)
	}
	limit := "no memory limit"
	if g.Limit < math.MaxInt64 {
		limit = fmt.Sprintf("memory limit %.1f GiB", float64(g.Limit)/(1<<30))
	}
	return "GOGC=" + pct + ", " + limit
}

// gcSource says where the setting came from: the environment (GOGC or
// GOMEMLIMIT set), Go's default, or the program (orchsim's commands that
// run seeds set their own: cmd/orchsim/gc.go).
func gcSource(g GC) string {
	switch {
	case os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "":
		return "from GOGC/GOMEMLIMIT"
	case g == DefaultGC:
		return "Go's default"
	}
	return "set by the program, GOGC and GOMEMLIMIT unset"
}
