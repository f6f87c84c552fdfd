package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// ghostWorld is a random program of events on one kernel: real events log
// what they see and schedule more events, no-op events (through
// ScheduleTicket) do nothing. With ghost set, real events also make random
// pending no-ops ghosts; the draws do not depend on it, so both runs make
// the same calls in the same order.
type ghostWorld struct {
	k       *Kernel
	p       *PRNG
	ghost   bool
	log     []string
	noops   []Ticket
	next    int
	ghosted int
}

func (w *ghostWorld) real(id int) func() {
	return func() {
		w.log = append(w.log, fmt.Sprintf("%d@%v executed=%d pending=%d", id, w.k.Elapsed(), w.k.Executed(), w.k.Pending()))
		if w.p.Below(10) != 0 { // a chain of real events, until the horizon
			w.next++
			w.k.Schedule(time.Duration(1+w.p.Below(5))*time.Millisecond, w.real(w.next))
		}
		for range w.p.Below(4) {
			d := time.Duration(w.p.Below(6)) * time.Millisecond
			switch w.p.Below(7) {
			case 0, 1:
				if w.p.Below(4) == 0 { // a branch
					w.next++
					w.k.Schedule(d, w.real(w.next))
				}
			case 2, 3, 4:
				w.noops = append(w.noops, w.k.ScheduleTicket(d, func() {}))
			case 5:
				i := len(w.noops) - 1 - int(w.p.Below(uint64(min(len(w.noops), 8)))) // a recent one
				if w.ghost && w.k.Ghost(w.noops[i]) {
					w.ghosted++
					assert.False(nil2t{}, w.k.TicketPending(w.noops[i]))
				}
			case 6:
				if w.p.Below(8) == 0 {
					w.k.Suspend(d)
				}
			}
		}
	}
}

// nil2t lets assert run where no *testing.T is at hand; a failure panics.
type nil2t struct{}

func (nil2t) Errorf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// runGhostWorld runs the program of seed with or without ghosts, driven by
// Run (mode 0), Step (1) or RunUntil (2), and returns everything the run
// shows.
func runGhostWorld(seed uint64, ghost bool, mode int, horizon time.Duration, budget uint64) ([]string, int) {
	k := NewKernel(false)
	tie := NewPRNG(seed ^ 0x5eed)
	if seed%2 == 0 {
		k.SetTieBreak(func() uint64 { return tie.Below(3) })
	}
	w := &ghostWorld{k: k, p: NewPRNG(seed), ghost: ghost}
	for i := range 5 {
		w.next++
		k.Schedule(time.Duration(i)*time.Millisecond, w.real(w.next))
		w.noops = append(w.noops, k.ScheduleTicket(time.Duration(i+1)*time.Millisecond, func() {}))
	}
	end := "-"
	switch mode {
	case 0:
		end = k.Run(Limits{Horizon: horizon, EventBudget: budget}).String()
	case 1:
		for n := 0; n < 400 && k.Step(); n++ {
		}
	case 2:
		for t := time.Duration(0); t < horizon; t += 7 * time.Millisecond {
			k.RunUntil(t)
			w.log = append(w.log, fmt.Sprintf("until %v: executed=%d pending=%d", t, k.Executed(), k.Pending()))
		}
	}
	w.log = append(w.log, fmt.Sprintf("end %s at %v executed=%d pending=%d", end, k.Elapsed(), k.Executed(), k.Pending()))
	return w.log, w.ghosted
}

// A run whose no-op events are made ghosts is the same run: the same real
// events at the same times and places in the order, the same Executed and
// Pending at each, the same end (horizon, quiescence or budget), with
// ties broken by insertion order or by a tie-break, host suspends, and
// every driver (Run, Step, RunUntil).
func TestKernel_GhostsRunAsNoOps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		mode := rapid.IntRange(0, 2).Draw(t, "mode")
		horizon := time.Duration(rapid.IntRange(1, 80).Draw(t, "horizon-ms")) * time.Millisecond
		budget := uint64(rapid.IntRange(0, 300).Draw(t, "budget"))
		want, _ := runGhostWorld(seed, false, mode, horizon, budget)
		got, _ := runGhostWorld(seed, true, mode, horizon, budget)
		require.Equal(t, want, got)
	})
}

// The property above is not vacuous: its programs make ghosts, and a
// ghost's ticket then names nothing.
func TestKernel_GhostsAreMade(t *testing.T) {
	total := 0
	for seed := range uint64(50) {
		want, _ := runGhostWorld(seed, false, 0, 60*time.Millisecond, 0)
		got, ghosted := runGhostWorld(seed, true, 0, 60*time.Millisecond, 0)
		require.Equal(t, want, got, "seed %d", seed)
		total += ghosted
	}
	assert.Greater(t, total, 100, "ghosts made")

	k := NewKernel(false)
	ran := false
	tk := k.ScheduleTicket(time.Second, func() { ran = true })
	assert.True(t, k.TicketPending(tk))
	assert.True(t, k.Ghost(tk))
	assert.False(t, k.TicketPending(tk))
	assert.False(t, k.Ghost(tk), "already a ghost")
	assert.Equal(t, 1, k.Pending())
	assert.Equal(t, EndQuiescent, k.Run(Limits{}))
	assert.False(t, ran, "a ghost's callback never runs")
	assert.Equal(t, uint64(1), k.Executed())
	assert.Equal(t, time.Second, k.Elapsed())
	assert.False(t, k.Ghost(Ticket{}), "the zero ticket names nothing")

	fired := k.ScheduleTicket(0, func() {})
	k.Run(Limits{})
	assert.False(t, k.Ghost(fired), "fired")
	other := k.ScheduleTicket(time.Second, func() {}) // reuses fired's slot
	assert.False(t, k.Ghost(fired), "a stale ticket does not name the slot's new event")
	assert.True(t, k.TicketPending(other))
}
