package main

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/bench"
)

// tinyPlan is QuickPlan cut down to a fraction of a second.
func tinyPlan() bench.Plan {
	p := bench.QuickPlan()
	p.Sessions = []int{1, 100}
	p.Warmup = time.Hour
	p.Events = []uint64{2000, 2000}
	p.MockEvents = []uint64{3, 3}
	p.SynctestEvents = []uint64{200, 200}
	p.ScenarioSeeds = 1
	p.MemorySeeds = 1
	p.MemoryScenario = "tab-ownership"
	p.ScaleThreads, p.ScaleHorizon = []int{2, 4}, time.Hour
	return p
}

func TestBench_PrintsEveryTable(t *testing.T) {
	var out, errb bytes.Buffer
	require.NoError(t, runBench(&out, &errb, tinyPlan(), true))
	s := out.String()
	for _, want := range []string{"KERNEL WORKLOAD", "RATIOS", "SCENARIOS", "MEMORY", "orchsim/bare", "Mock/orchsim",
		"synctest/orchsim", "tab-ownership", "growth from 1 to 10 seeds",
		"load average (1, 5, 15 min): ", "SCALE: chaos with N threads", "growth from 2 to 4 threads (2x): "} {
		assert.Contains(t, s, want)
	}
	for _, engine := range bench.Engines {
		assert.Contains(t, s, engine)
	}
	assert.Contains(t, errb.String(), "repeat 1/1: synctest, 100 sessions")
	assert.Contains(t, errb.String(), "scale: chaos with 4 threads, 1 seeds")
}

func TestBench_BadFlags(t *testing.T) {
	cmd := newBenchCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"--quick", "--memory-seeds", "0"})
	err := cmd.Execute()
	var ee *exitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitUsage, ee.code)
	assert.Contains(t, ee.msg, "--memory-seeds must be at least 1")

	cmd = newBenchCmd()
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"--quick", "--memory-seeds", "9223372036854775807"})
	err = cmd.Execute()
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitUsage, ee.code)
	assert.Contains(t, ee.msg, "--memory-seeds must be at most 100000000")

	p := tinyPlan()
	p.MemoryScenario = "no-such"
	err = runBench(&out, &out, p, false)
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitUsage, ee.code)
	assert.True(t, strings.Contains(ee.msg, `unknown scenario "no-such"`), ee.msg)
}

// The header prints the collector's setting the report ran with; the scale
// table runs at Go's default and the setting is restored after it.
func TestBench_PrintsItsCollectorSetting(t *testing.T) {
	old := bench.CurrentGC()
	defer func() { debug.SetGCPercent(old.Percent); debug.SetMemoryLimit(old.Limit) }()
	debug.SetGCPercent(321)
	debug.SetMemoryLimit(5 << 30)
	var out bytes.Buffer
	p := tinyPlan()
	p.Sessions, p.Events, p.MockEvents, p.SynctestEvents = []int{1}, []uint64{100}, []uint64{1}, []uint64{10}
	require.NoError(t, runBench(&out, &out, p, false))
	assert.Contains(t, out.String(), "\ncollector: GOGC=321, memory limit 5.0 GiB (")
	assert.Contains(t, out.String(), "the scale table at GOGC=100, no memory limit (Go's default)\n")
	assert.Equal(t, bench.GC{Percent: 321, Limit: 5 << 30}, bench.CurrentGC())
}
