package orchestrator

import (
	"fmt"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
)

// DedupeKeylessByCallID derives the request key of a call without a
// clientRequestId from the provider's tool-call id, so a tools/call
// delivered twice (a dispatch path or transport that re-drives one tool
// call) replays the first delivery's receipt instead of running again: the
// fix NousResearch/hermes-agent#57767 asks for, PR #57769 (closed
// unmerged there) threading the provider-issued tool_call_id into
// delegate_task as a dedup key. Off is T3 Code's requestKey
// (OrchestratorMcpService.ts at t3code@04058804: clientRequestId, else
// crypto.randomUUIDv4), so each delivery of a keyless call is new work: a
// second child (tree) for one delegate_task tool call. T3 has no such fix;
// the key is drawn in both cases, so the orchestrator's draws stay in
// place.
const DedupeKeylessByCallID model.Switch = "dedupe-keyless-by-call-id"

// DebounceKeylessByTool is a wrong fix: a keyless call is deduplicated by
// its tool within a 30 min window, so a second, genuine keyless call of
// the same tool is answered with the first one's receipt.
const DebounceKeylessByTool model.Mutant = "debounce-keyless-by-tool"

func init() {
	model.RegisterSwitch(model.SwitchInfo{Name: DedupeKeylessByCallID, Group: catalog.Orchestrator,
		Reports:    []catalog.Report{"NousResearch/hermes-agent#57767"},
		Source:     "hermes-agent#57767 and PR #57769 (dedup keyed on the provider tool_call_id); T3's requestKey in OrchestratorMcpService.ts at t3code@04058804 (randomUUIDv4 without clientRequestId)",
		Scenario:   "request-retry",
		Invariants: []string{"one-effect-per-tool-call"},
		Reported:   "a call without clientRequestId gets a random request key, so a second delivery of the same tool call runs again (a second child)",
		Fixed:      "a call without clientRequestId is keyed by its tool-call id: a second delivery replays the first one's receipt",
		Upstream:   "",
		Script:     "scenarios/testdata/request_retry/keyless_redelivery",
		Mechanism:  "model/orchestrator: the request key of a call without clientRequestId"})
	model.RegisterMutant(model.MutantInfo{Name: DebounceKeylessByTool, Group: catalog.Orchestrator,
		Doc:        "keyless calls are deduplicated by tool within a 30 min window, so a new keyless call of that tool replays an old receipt",
		Scenario:   "request-retry",
		Invariants: []string{"one-effect-per-tool-call"}})
}

// keylessKey is the request key of a call without clientRequestId, given
// the random key drawn for it.
func (o *Orchestrator) keylessKey(c Call, random string) string {
	p := o.env.Profile
	if !p.Fixed(DedupeKeylessByCallID) || c.CallID == "" {
		return random
	}
	if p.Has(DebounceKeylessByTool) {
		return fmt.Sprintf("debounce:%s:%d", c.Tool, o.env.Now()/(30*time.Minute))
	}
	return "tool-call:" + c.CallID
}
