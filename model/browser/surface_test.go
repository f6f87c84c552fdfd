package browser

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tab the desktop takes back, or that closes, holds no surface lease
// afterwards (dropTab releases the recording's and every viewer's), and a
// page that comes back starts with no recording of the old one.
func TestSurfaces_DroppedTabHoldsNoLease(t *testing.T) {
	for _, end := range []string{"withdraw", "close"} {
		t.Run(end, func(t *testing.T) {
			x := newSurf(t)
			tab := x.native()
			x.b.AttachViewer(tab, "viewer", false)
			require.Equal(t, OK, x.as("agent-a", OpRecordingStart, onTab(tab, nil)).Outcome)
			require.Len(t, tab.Surface().Held, 2, "the viewer's and the recording's")
			old := tab.Surface()
			if end == "withdraw" {
				x.b.DesktopWithdraw(tab)
			} else {
				require.Equal(t, OK, x.as("agent-a", OpClose, onTab(tab, nil)).Outcome)
			}
			assert.Empty(t, old.Held)
			assert.Nil(t, old.Recording)
			assert.Equal(t, old.EncodersOpened, old.EncodersClosed)
			acquired, released := 0, 0
			for _, c := range x.calls {
				if c.Action == SurfaceAcquire {
					acquired++
				} else {
					released++
				}
			}
			assert.Equal(t, acquired, released, "every lease acquired was released")
			if end == "withdraw" {
				stop := x.as("agent-a", OpRecordingStop, onTab(tab, nil))
				x.run(time.Second)
				assert.Equal(t, RecordingNotActive, stop.Cause, "the reconnected page has no recording")
			}
		})
	}
}
