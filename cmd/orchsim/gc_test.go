package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/bench"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

// The policy: GOGC=400 and half the machine's memory as a soft limit,
// unless the environment sets either GOGC or GOMEMLIMIT.
func TestDecideGC(t *testing.T) {
	const mem = 8 << 30
	assert.Equal(t, gcPolicy{Apply: true, Percent: 400, Limit: 4 << 30}, decideGC(env(nil), mem))
	assert.Equal(t, gcPolicy{Apply: true, Percent: 400}, decideGC(env(nil), 0), "memory unknown: no limit")
	for _, kv := range []map[string]string{{"GOGC": "100"}, {"GOGC": "off"}, {"GOMEMLIMIT": "1GiB"},
		{"GOGC": "50", "GOMEMLIMIT": "2GiB"}} {
		assert.Equal(t, gcPolicy{}, decideGC(env(kv), mem), "%v", kv)
	}
}

// applySeedGC on the real process: unset -> set; set -> untouched.
func TestApplySeedGC(t *testing.T) {
	old := bench.CurrentGC()
	defer func() { debug.SetGCPercent(old.Percent); debug.SetMemoryLimit(old.Limit) }()

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	applySeedGC()
	got := bench.CurrentGC()
	assert.Equal(t, seedGCPercent, got.Percent)
	if m := machineMemory(); m > 0 {
		assert.Equal(t, m/2, got.Limit)
	}

	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Setenv("GOGC", "")
		t.Setenv("GOMEMLIMIT", "")
		t.Setenv(name, map[string]string{"GOGC": "123", "GOMEMLIMIT": "3GiB"}[name])
		debug.SetGCPercent(123)
		debug.SetMemoryLimit(3 << 30)
		applySeedGC()
		assert.Equal(t, bench.GC{Percent: 123, Limit: 3 << 30}, bench.CurrentGC(), "%s set", name)
	}
}

// Every command that runs seeds applies the policy; the others do not.
func TestSeedCommandsApplyThePolicy(t *testing.T) {
	old := bench.CurrentGC()
	defer func() { debug.SetGCPercent(old.Percent); debug.SetMemoryLimit(old.Limit) }()
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	for _, c := range [][]string{{"list"}, {"run", "--scenario", "tab-ownership", "--seed", "1", "--horizon", "1m"}} {
		debug.SetGCPercent(100)
		cli(t, c...)
		assert.Equal(t, c[0] == "run", bench.CurrentGC().Percent == seedGCPercent, "%v", c)
	}
	root := newRoot(nil, nil)
	for name := range seedCommands {
		c, _, err := root.Find([]string{name})
		require.NoError(t, err)
		assert.Equal(t, name, c.Name(), "seedCommands names a command that does not exist")
	}
}

func TestMachineMemoryParsing(t *testing.T) {
	assert.Equal(t, int64(24683500*1024), memTotal("MemTotal:       24683500 kB\nMemFree:        17681772 kB\n"))
	assert.Zero(t, memTotal("MemFree: 1 kB\n"))
	assert.Zero(t, memTotal("MemTotal: x kB\n"))
	assert.Equal(t, int64(2<<30), cgroupLimit("2147483648\n"))
	assert.Zero(t, cgroupLimit("max\n"))
	assert.Zero(t, cgroupLimit(""))
}

// A GOGC Go does not read (Go then runs at 100 and the policy stays off)
// gets one warning line; unset, off and integers none.
func TestGOGCWarning(t *testing.T) {
	for v, warn := range map[string]bool{"": false, "off": false, "100": false, "-1": false, "400": false, "abc": true, "4O0": true, " 100": true} {
		got := gogcWarning(func(k string) string {
			if k == "GOGC" {
				return v
			}
			return ""
		})
		if warn {
			assert.Contains(t, got, "neither an integer nor off", "GOGC=%q", v)
			assert.NotContains(t, got, "\n")
		} else {
			assert.Empty(t, got, "GOGC=%q", v)
		}
	}
}
