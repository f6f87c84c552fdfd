package browser

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A remote desktop that disconnects keeps its sessions but not its pages:
// the agent's reuse of its tab there waits for the page and fails while
// the desktop is away, a new tab is refused rather than opened headless,
// and once the desktop is back its page connects again and new tabs open
// on it.
func TestDesktopHostAwayAndBack(t *testing.T) {
	w, d := newDesktopSB(t, false, catalogue("desktop-b", "work", work))
	first := w.settled(OpOpen, newTab)
	require.Equal(t, OK, first.Outcome)
	tab := w.b.Tab(sbThread, first.TabID)
	require.Equal(t, "desktop-b", tab.DesktopHostID)
	w.b.DesktopHostGone("desktop-b")
	assert.Empty(t, d.Hosts)
	assert.False(t, tab.HasPage(), "its page detached")
	fresh := w.settled(OpOpen, newTab)
	assert.Equal(t, RemoteUnavailable, fresh.Outcome, "the retained desktop is away: no tab elsewhere")
	assert.Len(t, w.b.Tabs(), 1)
	status := w.as("agent-a", OpStatus, onTab(tab, nil))
	w.run(DesktopAttachTimeout - time.Millisecond)
	assert.False(t, status.done, "the page is awaited")
	w.run(time.Second)
	require.True(t, status.done)
	assert.Equal(t, TabNotFound, status.Outcome)
	assert.True(t, w.b.Tab(sbThread, tab.TabID) == tab, "the session stays")

	w.b.DesktopHostBack(catalogue("desktop-b", "work", work))
	again := w.settled(OpStatus, onTab(tab, nil))
	assert.Equal(t, OK, again.Outcome)
	assert.True(t, tab.HasPage())
	assert.Equal(t, OK, w.settled(OpOpen, newTab).Outcome)
	assert.Equal(t, 3, w.b.DesktopConnections, "two native opens and one reconnection")
}
