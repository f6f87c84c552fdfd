package sim

import (
	"time"

	"github.com/benbjohnson/clock"
)

// WallClock adapts github.com/benbjohnson/clock to Clock, for watching a model
// in real time. It is not deterministic: its callbacks run on their own
// goroutines, so it must never drive a seeded run.
type WallClock struct {
	c clock.Clock
}

var _ Clock = WallClock{}

// NewWallClock wraps c (clock.New() for the real clock, or a *clock.Mock).
func NewWallClock(c clock.Clock) WallClock { return WallClock{c: c} }

// Now implements Clock.
func (w WallClock) Now() time.Time { return w.c.Now() }

// AfterFunc implements Clock.
func (w WallClock) AfterFunc(d time.Duration, f func()) Timer {
	return wallTimer{w.c.AfterFunc(d, f)}
}

type wallTimer struct{ t *clock.Timer }

func (t wallTimer) Stop() bool                 { return t.t.Stop() }
func (t wallTimer) Reset(d time.Duration) bool { return t.t.Reset(d) }
