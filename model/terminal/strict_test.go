package terminal

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A new agent under StrictMode mounts a leaf, cleans it up and mounts a
// second one: one pane survives, attached. With guarded-wake it is the only
// PTY reference main holds; before #597 the cleanup's detach came before
// the chained attaches and main holds two (the refcount leak).
func TestNewSessionStrict_MountCleanupMount(t *testing.T) {
	t.Run("guarded-wake", func(t *testing.T) { strictNewSession(t, 1, string(GuardedWake)) })
	t.Run("reported", func(t *testing.T) { strictNewSession(t, 2) })
}

func strictNewSession(t *testing.T, refs int, fixes ...string) {
	f := newFixture(t, fixes...)
	f.app.Boot()
	f.run(2e9)
	f.app.NewSessionStrict(Meta{ID: "s2", Kind: Claude, Cwd: "/work/s2", Mode: Terminal})
	var mounts, unmounts int
	for _, ev := range f.k.Trace().Events() {
		if ev.Get("session") == "s2" {
			switch ev.Kind {
			case "pane.mount":
				mounts++
			case "pane.unmount":
				unmounts++
			}
		}
	}
	assert.Equal(t, 2, mounts)
	assert.Equal(t, 1, unmounts)
	f.run(5e9)
	var panes []string
	for _, p := range f.app.Renderer.Panes {
		if p.Session == "s2" {
			panes = append(panes, p.ID())
			assert.True(t, p.Attached)
		}
	}
	require.Len(t, panes, 1)
	assert.Equal(t, refs, f.m.AttachCount("s2"))
}
