package scenarios

import (
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/agent"
	"github.com/orchsim/orchsim/sim"
)

// RequestRetry is the scenario of report 002 (T3 Code #16184): agents call
// the orchestrator tools with clientRequestIds, lose answers (dropped
// responses, client timeouts, turns cut by crashes, restarts and the stop
// button) and retry with the same key, while credentials are re-issued by
// server restarts (graceful or crash, with or without restart continuation),
// idle release and resume, provider crashes and capability changes.
const RequestRetry = "request-retry"

func init() {
	register(Scenario{
		Name: RequestRetry,
		Doc: "report 002 (#16184): clientRequestId retries across server restarts, idle release, " +
			"provider crashes and capability changes",
		Horizon: 24 * time.Hour,
		Groups:  []catalog.Group{catalog.Orchestrator, catalog.RestartContinuation},
		Build: func(env *model.Env) {
			w := NewT3World(env)
			w.Repertoire = agent.Repertoire{Orchestrator: true}
			r := env.Rand("world")
			// The setting is off by default upstream; half of the runs turn it on.
			w.Store.Settings.ContinueThreadsAfterServerUpdate = r.Chance("continue-after-update", sim.Per(1, 2))
			w.ResponseLoss = sim.Per(1+r.Below("response-loss", 4), 20)
			w.KeyReuse = sim.Per(1, 20)        // t3code#5231: a clientRequestId reused for a new request
			w.NestedDelegation = sim.Per(1, 4) // claude-code#95138: a child delegates a task of its own
			w.ReplanRetry = sim.Per(1, 4)      // a create_threads retried with one entry more, same key
			w.Scheduling = true                // claude-code#74055: schedule_task rows fire daily
			w.CompletionDelivery = true        // delegated results delivered to their parent runs
			w.CallRedelivery = sim.Per(1, 10)  // hermes-agent#57767: one tool call delivered twice
			w.ImpatienceMin, w.ImpatienceMax = 20*time.Minute, 90*time.Minute
			w.Faults = FaultMix{GapMin: 10 * time.Minute, GapMax: 4 * time.Hour,
				Crash: 30, CapabilityChange: 20, ServerRestart: 20}
			w.Habits = agent.Habits{}       // no preview tools in this scenario
			w.Habits.Steer = sim.Per(1, 10) // swarm redraws it (t3code#4561)
			w.MaxRestarts = 3
			w.Storms, w.Steering = true, true // t3code#6560, t3code#4561
			w.ExtraInstances = true           // t3code#12926: agent-device launches a second app
			env.Emit("world", "settings", "", sim.A("continueThreadsAfterServerUpdate",
				boolString(w.Store.Settings.ContinueThreadsAfterServerUpdate)), sim.A("response-loss", ratioString(w.ResponseLoss)))
			w.Start()
		},
	})
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func ratioString(r sim.Ratio) string {
	if r.Numerator == 0 {
		return "0"
	}
	return itoa(r.Numerator) + "/" + itoa(r.Denominator)
}

func itoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for v > 0 {
		b = append([]byte{byte('0' + v%10)}, b...)
		v /= 10
	}
	return string(b)
}
