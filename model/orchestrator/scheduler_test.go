package orchestrator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// nextSlot and lastSlot are nextScheduledRunAt for a daily fixed_time
// schedule: the first slot strictly after from (Schedule.ts skips a
// candidate at or before from), and the latest slot at or before now.
func TestSlots(t *testing.T) {
	h := time.Hour
	assert.Equal(t, 9*h, nextSlot(9*h, 0))
	assert.Equal(t, 33*h, nextSlot(9*h, 9*h), "a slot at from is not next")
	assert.Equal(t, 33*h, nextSlot(9*h, 10*h))
	assert.Equal(t, 57*h, nextSlot(9*h, 40*h))
	assert.Equal(t, time.Duration(-1), lastSlot(9*h, 8*h))
	assert.Equal(t, 9*h, lastSlot(9*h, 9*h))
	assert.Equal(t, 33*h, lastSlot(9*h, 40*h))
}
