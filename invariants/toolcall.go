package invariants

import (
	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// OneEffectPerToolCall is written from the idempotency contract of a tool
// call (NousResearch/hermes-agent#57767: "a second dispatch of the same
// logical tool call" must not "spawn a duplicate child-agent tree"; T3's
// derived command ids, MODEL.md §6): a tools/call runs its command at most
// once however often it is delivered, and a new call is never answered
// with another call's receipt. It reads the orchestrator tool events of
// calls without clientRequestId: a second delivery carries redelivered=true
// and its tool-call id, and the transport's tool-call-redelivered fault says
// whether the first delivery ran its command (first=accepted, replayed or
// dispatched) or was refused.
const OneEffectPerToolCall = "one-effect-per-tool-call"

func init() {
	register(Info{Name: OneEffectPerToolCall, Group: catalog.Orchestrator,
		Property: "a tool call without clientRequestId runs its command at most once, however often it is delivered, and a new call is never answered with another call's receipt",
		Source:   "hermes-agent#57767 and PR #57769 (dedup on the provider tool_call_id); MODEL.md §6 derived command ids",
		Reports:  []catalog.Report{"NousResearch/hermes-agent#57767"},
		New:      func() sim.Checker { return &oneEffectPerToolCall{firstRan: map[string]bool{}} }})
}

type oneEffectPerToolCall struct {
	firstRan map[string]bool // tool-call id -> its first delivery ran its command
}

func (*oneEffectPerToolCall) Name() string { return OneEffectPerToolCall }

// ObservedKinds implements sim.KindObserver.
func (*oneEffectPerToolCall) ObservedKinds() []string { return oneEffectPerToolCallKinds }

var oneEffectPerToolCallKinds = joinKinds([]string{"tool-call-redelivered"}, orchestratorToolKinds)

func (o *oneEffectPerToolCall) Observe(ev *sim.Event) *sim.Violation {
	if ev.Actor == "fault" && ev.Kind == "tool-call-redelivered" {
		f := ev.Get("first")
		o.firstRan[ev.Get("tool-call")] = f == "accepted" || f == "replayed" || f == "dispatched"
		return nil
	}
	if !isToolEvent(ev) || !isOrchestratorTool(ev.Kind) || ev.Get("clientRequestId") != "-" {
		return nil
	}
	redelivered := ev.Get("redelivered") == "true"
	switch {
	case redelivered && ev.Outcome == "accepted" && ev.Get("effect") != "" && ev.Get("effect") != "dispose" &&
		o.firstRan[ev.Get("tool-call")]:
		return violation(OneEffectPerToolCall,
			"thread %s's %s tool call %s, delivered a second time at %s, ran again as %s (%s %s): one tool call, two effects",
			ev.Get("thread"), ev.Kind, ev.Get("tool-call"), at(ev.At), ev.Get("command"), ev.Get("effect"), ev.Get("result"))
	case !redelivered && ev.Outcome == "replayed":
		return violation(OneEffectPerToolCall,
			"thread %s's new %s call without clientRequestId at %s was answered with the receipt of %s (%s): another call's result, and nothing ran",
			ev.Get("thread"), ev.Kind, at(ev.At), ev.Get("command"), ev.Get("result"))
	}
	return nil
}

// probeToolCallRedelivered is the situation dedupe-keyless-by-call-id
// needs: a tool call without clientRequestId reached the server twice.
var probeToolCallRedelivered = declareProbe(ProbeInfo{Name: "keyless-tool-call-redelivered", Group: catalog.Orchestrator,
	Doc: "an orchestrator tool call without clientRequestId reached the server a second time"})

func toolCallRedelivered(ev *sim.Event, hit func(string)) {
	if isToolEvent(ev) && ev.Get("redelivered") == "true" {
		hit(probeToolCallRedelivered)
	}
}
