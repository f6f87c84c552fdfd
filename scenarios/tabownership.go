package scenarios

import (
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
)

// TabOwnership is the scenario of report 000 (T3 Code #23021): threads on
// codex, claudeAgent and Bob open preview tabs, idle past the 30 min release,
// resume and act on the tabs they remember, while providers crash, browser
// access is toggled, stale credentials are replayed, providers are switched
// and the server restarts.
const TabOwnership = "tab-ownership"

func init() {
	register(Scenario{
		Name: TabOwnership,
		Doc: "report 000 (#23021): preview tabs across idle release, resume, provider crash, " +
			"capability change, 24 h liveness and server restart",
		Horizon: 24 * time.Hour,
		Groups:  []catalog.Group{catalog.ProviderSession, catalog.PreviewTab, catalog.MCPCredential},
		Build: func(env *model.Env) {
			w := NewT3World(env)
			w.Faults = FaultMix{GapMin: 10 * time.Minute, GapMax: 4 * time.Hour,
				Crash: 30, CapabilityChange: 25, StaleCall: 25, ServerRestart: 10, ProviderSwitch: 10}
			w.RuntimeRestarts = true
			w.MaxRestarts = 2
			w.Start()
		},
	})
}
