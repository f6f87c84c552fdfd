package orchestrator

// Fidelity cases of the upstream inventory (scenarios/testdata/fidelity/
// UPSTREAM.tsv) that need a thread the tools cannot create: run against
// the orchestrator directly. Each test is named after its case id; the
// registry of cases is scenarios/fidelity_upstream_test.go.

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/mcp"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// orch is a parent thread on codex in project-1 calling with the
// credential (and namespace) ns-parent.
type orch struct {
	st *store.Store
	o  *Orchestrator
	s  mcp.Scope
}

func newOrch() *orch {
	k := sim.NewKernel(false)
	env := &model.Env{Clock: k, Trace: k.Trace(), Source: sim.NewTapeSource(nil, false),
		Profile: model.MustProfile(model.PresetReported, nil, nil), EnvironmentID: "env-1"}
	st := &store.Store{}
	st.Projects = append(st.Projects, &store.Project{ID: "project-1"})
	st.Threads = append(st.Threads, &store.Thread{ID: "parent", ProjectID: "project-1", Instance: "codex"})
	s := mcp.Scope{EnvironmentID: "env-1", RequestNamespace: "ns-parent", Capabilities: mcp.CapOrchestration,
		Thread: &mcp.ThreadScope{ThreadID: "parent", ProviderSessionID: "ns-parent", ProviderInstanceID: "codex"}}
	return &orch{st: st, o: New(env, st), s: s}
}

func (x *orch) call(tool, key, target string) Answer {
	var got Answer
	x.o.Dispatch(Call{Scope: x.s, ToolCall: model.ToolCall{Tool: tool, ClientRequestID: key, Target: target}},
		func(Answer) {}, func(a Answer, _ model.ToolResult) { got = a })
	return got
}

func (x *orch) count(id string) int {
	n := 0
	for _, t := range x.st.Threads {
		if t.ID == id {
			n++
		}
	}
	return n
}

// TestOMN23_ForkToOccupiedTargetFails is OM-N23 and OM-N24, upstream
// scenarios "t3_thread_fork to an occupied target id fails and leaves the
// target untouched" and "... to a deleted occupied target fails and leaves
// it deleted" (OrchestratorMcpToolkit.integration.test.ts @ 006bb815).
func TestOMN23_ForkToOccupiedTargetFails(t *testing.T) {
	x := newOrch()
	free := x.call(ToolThreadFork, "free-target", "parent")
	require.Equal(t, Accepted, free.Outcome)
	require.Len(t, free.Result.ThreadIDs, 1)
	target := func(key string) string { return "thread:mcp-fork:ns-parent:" + key }
	assert.Equal(t, target("free-target"), free.Result.ThreadIDs[0], "the derived target id")

	for _, c := range []struct {
		key     string
		deleted bool
	}{{"occupied-target", false}, {"deleted-occupied-target", true}} { // OM-N23, OM-N24
		existing := &store.Thread{ID: target(c.key), ProjectID: "project-1", Instance: "codex", Title: "Existing target must survive",
			Deleted: c.deleted}
		x.st.Threads = append(x.st.Threads, existing)
		got := x.call(ToolThreadFork, c.key, "parent")
		assert.Equal(t, ErrDispatch, got.Outcome, "%s: orchestration_error", c.key)
		assert.Equal(t, 1, x.count(existing.ID), "no second thread with the id")
		assert.Equal(t, "Existing target must survive", existing.Title)
		assert.Equal(t, c.deleted, existing.Deleted, "a deleted target stays deleted")
		assert.Nil(t, x.st.Receipt(got.CommandID), "no receipt for the refused fork")
	}
}
