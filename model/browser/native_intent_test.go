package browser

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

// A close whose answer is lost with the host opens native-close-settles;
// the returning host is probed and sent the same close, whose answer
// settles it. A host that never comes back leaves it open, and a server
// process that dies settles it (the page dies with it).
func TestNativeCloseLostSettlesAtReconnect(t *testing.T) {
	for _, next := range []string{"reconnect", "stays-away", "process-dies"} {
		t.Run(next, func(t *testing.T) {
			w, h := nativeSB(t, "local", "default")
			w.env.Profile = model.MustProfile(model.PresetFixed, nil, nil)
			w.env.Obligations = sim.NewLedger(w.k)
			tab := w.openRoot()
			h.Close = func(*NativePage, int, func(string)) {} // delivered, never answered
			outcome, reason := "", ""
			w.b.ManagerCloseNative(tab, func(o, r string) { outcome, reason = o, r })
			h.Disconnect()
			require.Equal(t, NativeCloseError, outcome)
			require.Equal(t, NativeCloseUnavailable, reason)
			require.Len(t, w.env.Obligations.Pending(), 1)
			assert.Equal(t, NativeCloseSettles, w.env.Obligations.Pending()[0].Name)
			h.Close = nil
			switch next {
			case "stays-away":
				assert.Len(t, w.env.Obligations.Pending(), 1)
				assert.Same(t, tab, w.b.Tab(sbThread, tab.TabID))
			case "process-dies":
				w.b.Kill()
				assert.Empty(t, w.env.Obligations.Pending())
			default:
				w.b.ConnectNativeHost(h)
				closes := h.Sent(CmdCloseRoot)
				require.Len(t, closes, 2, "the close is replayed")
				assert.Equal(t, closes[0].Request, closes[1].Request)
				assert.Empty(t, w.env.Obligations.Pending())
				assert.Empty(t, w.b.Tabs(), "the replayed close retired the root")
			}
		})
	}
}
