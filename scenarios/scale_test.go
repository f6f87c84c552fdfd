package scenarios

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/orchsim/orchsim/model"
)

// Thread ids are bijective base 26 over a-z: the first 26 as the default
// world always named them, then two letters, then three.
func TestThreadID(t *testing.T) {
	for i, want := range map[int]string{0: "thread-a", 3: "thread-d", 25: "thread-z", 26: "thread-aa", 27: "thread-ab",
		51: "thread-az", 52: "thread-ba", 701: "thread-zz", 702: "thread-aaa"} {
		assert.Equal(t, want, ThreadID(i), "ThreadID(%d)", i)
	}
}

// Config.Threads gives chaos a world of that many threads, each with its
// agent and user, and one terminal pane per thread; the scaled run is as
// deterministic as any other, and a scenario that does not scale refuses a
// size.
func TestRun_ThreadsScalesChaos(t *testing.T) {
	prof := model.MustProfile(model.PresetFixed, nil, nil)
	const n = 30
	cfg := Config{Scenario: Chaos, Seed: 3, Profile: prof, Horizon: 2 * time.Hour, Threads: n, KeepTrace: true}
	a := mustRun(t, cfg)
	threads, panes := map[string]bool{}, map[string]bool{}
	for _, ev := range a.Trace {
		if ev.Actor == "world" && ev.Kind == "thread" {
			threads[ev.Get("thread")] = true
		}
		if ev.Actor == "renderer" && ev.Kind == "rehydrate" {
			panes[ev.Get("session")] = true
		}
	}
	assert.Len(t, threads, n)
	assert.True(t, threads[ThreadID(n-1)], "the last thread, %s", ThreadID(n-1))
	assert.Len(t, panes, n, "one terminal session per thread")
	b := mustRun(t, cfg)
	assert.Equal(t, a.Fingerprint, b.Fingerprint)
	cfg.Threads = 0
	def := mustRun(t, cfg)
	assert.NotEqual(t, a.Fingerprint, def.Fingerprint)

	_, err := Run(Config{Scenario: TabOwnership, Seed: 1, Profile: prof, Threads: 10})
	assert.ErrorContains(t, err, `scenario "tab-ownership": a world of 10 threads`)
	_, err = Run(Config{Scenario: Chaos, Seed: 1, Profile: prof, Threads: -1})
	assert.ErrorContains(t, err, fmt.Sprintf("a world of %d threads", -1))
}
