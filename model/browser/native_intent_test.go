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
// settles it. Under native-close-forgets-intent the intent is dropped, the
// returning host is sent nothing, and the obligation stays open.
func TestNativeCloseLostSettlesAtReconnect(t *testing.T) {
	for _, c := range []struct {
		name    string
		profile model.Profile
		settled bool
	}{
		{"fixed", model.MustProfile(model.PresetFixed, nil, nil), true},
		{"forgets-intent", model.MustProfile(model.PresetFixed, nil, []string{string(NativeCloseForgetsIntent)}), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, h := nativeSB(t, "local", "default")
			w.env.Profile = c.profile
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
			w.b.ConnectNativeHost(h)
			closes := h.Sent(CmdCloseRoot)
			if c.settled {
				require.Len(t, closes, 2, "the close is replayed")
				assert.Equal(t, closes[0].Request, closes[1].Request)
				assert.Empty(t, w.env.Obligations.Pending())
				assert.Empty(t, w.b.Tabs(), "the replayed close retired the root")
				return
			}
			assert.Len(t, closes, 1, "nothing replayed")
			assert.Len(t, w.env.Obligations.Pending(), 1)
			assert.Same(t, tab, w.b.Tab(sbThread, tab.TabID), "the user's close never happened")
		})
	}
}
