package orchestrator

import (
	"strconv"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/store"
)

// ReceiptChecksPayload replays a create_threads receipt only to a call
// with the same normalized payload as the one that created it, and
// answers a reuse of the clientRequestId with another payload (more,
// fewer or other entries) with OrchestrationCommandIdConflictError,
// before it creates anything: the contract of t3code#5231's invariant
// (BUGS.md entry 14: a receipt is replayed only if command id, aggregate
// and normalized payload match; "the same contract as clientRequestId on
// create_threads"). Off is upstream: OrchestratorMcpService.createThreads
// (t3code@04058804, and @5f5abdff before it) dispatches one thread.create
// per entry under command:mcp:<ns>:create-thread:<key>:<index>, and PR
// #5246's receipt check compares the aggregate only (the entry's derived
// thread id, the same on a retry), so a reuse with more entries replays
// the first call's threads and creates the extra ones, answered as a
// success. Not merged upstream: a candidate finding of this model (the
// createThreads tests at @7e1bab52 reuse a key only with the same input).
const ReceiptChecksPayload model.Switch = "receipt-checks-payload"

// PayloadCheckedPerEntry is a wrong fix: each entry's receipt carries its
// entry's payload and a changed entry conflicts, but an entry the first
// call did not have has no receipt to compare with and is created.
const PayloadCheckedPerEntry model.Mutant = "payload-checked-per-entry"

func init() {
	model.RegisterSwitch(model.SwitchInfo{Name: ReceiptChecksPayload, Group: catalog.Orchestrator,
		Reports:    []catalog.Report{"t3code#5231"},
		Source:     "OrchestratorMcpService.createThreads at t3code@04058804 (per-entry create-thread:<key>:<index> command ids, no request fingerprint); BUGS.md entry 14's invariant",
		Scenario:   "request-retry",
		Invariants: []string{"one-effect-per-request", "retry-returns-original"},
		Reported:   "a create_threads that reuses a clientRequestId with more entries replays the first call's threads and creates the extra ones, answered as a success",
		Fixed:      "create_threads receipts carry the batch's normalized payload; a reuse of the key with another payload fails with OrchestrationCommandIdConflictError and creates nothing",
		Upstream:   "",
		Script:     "scenarios/testdata/request_retry/batch_reuse",
		Mechanism:  "model/orchestrator: command receipts (request payload of create_threads)"})
	model.RegisterMutant(model.MutantInfo{Name: PayloadCheckedPerEntry, Group: catalog.Orchestrator,
		Doc:        "each create_threads entry is compared with its own receipt, so an entry the first call did not have is created",
		Scenario:   "request-retry",
		Invariants: []string{"one-effect-per-request", "retry-returns-original"}})
}

// batchPayload is the normalized payload of a create_threads call: the
// number of entries and each entry's title, prompt and instance.
func batchPayload(n int, specs []ThreadSpec) string {
	var buf [512]byte
	b := strconv.AppendInt(append(buf[:0], "entries="...), int64(n), 10)
	for i := 0; i < n; i++ {
		b = appendEntryPayload(append(b, ';'), specAt(specs, i))
	}
	return string(b)
}

func specAt(specs []ThreadSpec, i int) ThreadSpec {
	if i < len(specs) {
		return specs[i]
	}
	return ThreadSpec{Title: "created"}
}

// entryPayload is one entry's normalized payload,
// fmt.Sprintf("title=%q prompt=%q instance=%q", ...) (fmt's %q of a string is
// strconv.Quote).
func entryPayload(s ThreadSpec) string {
	var buf [256]byte
	return string(appendEntryPayload(buf[:0], s))
}

func appendEntryPayload(b []byte, s ThreadSpec) []byte {
	b = strconv.AppendQuote(append(b, "title="...), s.Title)
	b = strconv.AppendQuote(append(b, " prompt="...), s.Prompt)
	return strconv.AppendQuote(append(b, " instance="...), s.Instance)
}

// batchConflict reports whether a create_threads whose first entry's
// command is first0 reuses an accepted batch with another payload.
func (o *Orchestrator) batchConflict(first0, payload string) bool {
	p := o.env.Profile
	if !p.Fixed(ReceiptChecksPayload) || p.Has(PayloadCheckedPerEntry) {
		return false
	}
	r := o.st.Receipt(first0)
	return r != nil && r.Status == store.ReceiptAccepted && r.Payload != "" && r.Payload != payload
}

// entryConflict is the per-entry check of PayloadCheckedPerEntry.
func (o *Orchestrator) entryConflict(id, entry string) bool {
	if !o.env.Profile.Fixed(ReceiptChecksPayload) || !o.env.Profile.Has(PayloadCheckedPerEntry) {
		return false
	}
	r := o.st.Receipt(id)
	return r != nil && r.EntryPayload != "" && r.EntryPayload != entry
}

// stamp records the payloads on the receipt a create_threads entry
// stored.
func (o *Orchestrator) stamp(id, payload, entry string) {
	if r := o.st.Receipt(id); r != nil {
		r.Payload, r.EntryPayload = payload, entry
	}
}
