package scenarios

import (
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/agent"
	"github.com/orchsim/orchsim/sim"
)

// Chaos runs every model in one world, on one clock and one event queue:
// a T3 server whose agents use both the preview and the orchestrator tools
// under every T3 fault kind (crashes, capability changes, stale
// credentials, restarts graceful or not, provider switches, lost
// responses, the stop button), next to the desktop app's terminal
// sessions with their remounts, drafts, prompts and wedged spawns. Every
// invariant judges it, so interleavings across components are explored
// (with --strategy pct, also their order within an instant).
const Chaos = "chaos"

func init() {
	register(Scenario{
		Name:    Chaos,
		Doc:     "every model in one world: preview tabs, orchestrator tools and terminal sessions under every fault kind",
		Horizon: 24 * time.Hour,
		Groups:  catalog.Groups,
		// Config.Threads scales it: that many threads, with one agent and
		// one user each, preview hosts and terminal panes in proportion.
		Scalable: true,
		Build: func(env *model.Env) {
			w := NewT3World(env)
			w.Repertoire = agent.Repertoire{Preview: true, Orchestrator: true}
			r := env.Rand("world")
			w.Store.Settings.ContinueThreadsAfterServerUpdate = r.Chance("continue-after-update", sim.Per(1, 2))
			w.ResponseLoss = sim.Per(1+r.Below("response-loss", 3), 20)
			w.KeyReuse = sim.Per(1, 20)        // t3code#5231: a clientRequestId reused for a new request
			w.NestedDelegation = sim.Per(1, 4) // claude-code#95138: a child delegates a task of its own
			w.ReplanRetry = sim.Per(1, 4)      // a create_threads retried with one entry more, same key
			w.Scheduling = true                // claude-code#74055: schedule_task rows fire daily
			w.PageLifecycle = true             // page dialogs, load failures, desktop withdrawals (pagelife.go)
			w.CompletionDelivery = true        // delegated results delivered to their parent runs
			w.CallRedelivery = sim.Per(1, 10)  // hermes-agent#57767: one tool call delivered twice
			w.ImpatienceMin, w.ImpatienceMax = 20*time.Minute, 90*time.Minute
			w.Faults = FaultMix{GapMin: 10 * time.Minute, GapMax: 4 * time.Hour,
				Crash: 25, CapabilityChange: 20, StaleCall: 20, ServerRestart: 15, ProviderSwitch: 10}
			w.RuntimeRestarts = true
			w.MaxRestarts = 3
			w.Habits.Steer = sim.Per(1, 10)   // swarm redraws it (t3code#4561)
			w.Storms, w.Steering = true, true // t3code#6560, t3code#4561
			w.ExtraInstances = true           // t3code#12926: agent-device launches a second app
			w.FirstTurnCrash = sim.Per(1, 10) // t3code#2336: a CLI killed before its first turn
			w.HostSuspends = true             // t3code#11805: the host sleeps
			w.HostSuspendsUntil = 20 * time.Hour
			w.Start()
			// Over a day the desktop app's user comes and goes: an action
			// every few seconds to five minutes rather than every 40 s.
			opts := DefaultTerminalOptions()
			opts.UserGapMax = 5 * time.Minute
			opts.Sessions = env.Threads // one pane per thread in a scaled world
			BuildTerminalWorld(env, opts)
		},
	})
}
