package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A PrefixSource answers from its tape until switched, then as a seeded
// source of its seed would (the draws it has not replayed), and records
// what it answered, so its tape replays the whole run.
func TestPrefixSource_ReplaysThenDrawsFresh(t *testing.T) {
	rec := NewSeededSource(7, true)
	a := NewRand(rec, "a")
	for i := 0; i < 5; i++ {
		a.Below("x", 1000)
	}
	p := NewPrefixSource(rec.Tape(), 99, true)
	pa := NewRand(p, "a")
	var got []uint64
	for i := 0; i < 3; i++ {
		got = append(got, pa.Below("x", 1000))
	}
	for i, c := range rec.Tape()[:3] {
		assert.Equal(t, c.Value, got[i], "draw %d of the prefix", i)
	}
	p.Switch()
	assert.True(t, p.Switched())
	fresh := NewRand(NewSeededSource(99, false), "a")
	for i := 0; i < 3; i++ {
		v := pa.Below("x", 1000)
		got = append(got, v)
		assert.Equal(t, fresh.Below("x", 1000), v, "draw %d after the switch", i)
	}
	again := NewRand(NewTapeSource(p.Tape(), false), "a")
	for i, v := range got {
		assert.Equal(t, v, again.Below("x", 1000), "replayed draw %d", i)
	}
}
