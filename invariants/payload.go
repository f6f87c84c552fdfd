package invariants

import (
	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// probeBatchReusedWithAnotherPayload is the situation receipt-checks-payload
// needs: a create_threads that reuses a clientRequestId of the same
// thread with another batch, refused as a conflict (fixed) or answered
// with other threads than the first call (reported).
var probeBatchReusedWithAnotherPayload = declareProbe(ProbeInfo{Name: "batch-reused-with-another-payload", Group: catalog.Orchestrator,
	Doc: "a create_threads reused a clientRequestId with another batch (refused as a conflict, or answered with other threads)"})

// batchReuse follows create_threads answers per request key, for the
// probe.
type batchReuse struct {
	first map[string]string // request key -> the first answer's result
}

func (b *batchReuse) observe(ev *sim.Event, hit func(string)) {
	if ev.Kind != "create_threads" {
		return
	}
	k, ok := requestKey(ev)
	if !ok {
		return
	}
	if ev.Outcome == "OrchestrationCommandIdConflictError" {
		hit(probeBatchReusedWithAnotherPayload)
		return
	}
	if ev.Outcome != "accepted" && ev.Outcome != "replayed" {
		return
	}
	if b.first == nil {
		b.first = map[string]string{}
	}
	if first, seen := b.first[k]; !seen {
		b.first[k] = ev.Get("result")
	} else if first != ev.Get("result") {
		hit(probeBatchReusedWithAnotherPayload)
	}
}
