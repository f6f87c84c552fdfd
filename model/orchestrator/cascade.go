package orchestrator

import (
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// CancelCascadesToDescendants is task_cancel as OrchestratorMcpService
// has it at t3code@04058804: "Cancelling stops the child and every task
// under it" (thread.stop on the child thread, then stopDelegatedTasks,
// which stops the tasks the child delegated, theirs, and so on; a retry
// with the same clientRequestId repeats only the stops that failed), and
// a cancel of a task that already settled still stops the work under it.
// Off is the earlier cancelTask (stored at t3code@5f5abdff): one
// run.interrupt of the child's active run, and an early return for a
// settled task, so a task the child delegated keeps running with nobody
// to stop it (anthropics/claude-code#95138: a grandchild worked on for 30
// min after its parent was stopped). BUGS.md describes a "no live
// children" notice; T3 Code's task_cancel answers cancel_requested (or
// the settled status) and sends no such notice, so the model checks what
// the answer implies: the cancelled tree stops.
const CancelCascadesToDescendants model.Switch = "cancel-cascades-to-descendants"

// CascadeSkipsSettledTask is a wrong fix: a cancel of a running task
// stops its whole tree, but a cancel of a task that already settled keeps
// the early return and leaves the tasks its child delegated running.
const CascadeSkipsSettledTask model.Mutant = "cascade-skips-settled-task"

// Nested delegation: a delegated child delegates tasks of its own.
const (
	// MaxNestedDepth bounds the delegation tree below an agent's task
	// (the child's tasks are depth 1).
	MaxNestedDepth = 3
	// NestedAfterMin and NestedAfterMax bound when a child delegates,
	// from its start (claude-code#95138: 8 s).
	NestedAfterMin = 5 * time.Second
	NestedAfterMax = 10 * time.Minute
)

func init() {
	model.RegisterSwitch(model.SwitchInfo{Name: CancelCascadesToDescendants, Group: catalog.Orchestrator,
		Reports:    []catalog.Report{"anthropics/claude-code#95138"},
		Source:     "OrchestratorMcpService.cancelTask at t3code@04058804 (thread.stop + stopDelegatedTasks) against t3code@5f5abdff (run.interrupt of the child's active run)",
		Scenario:   "request-retry",
		Invariants: []string{"cancel-reaches-descendants"},
		Reported:   "task_cancel interrupts the child's run only; the tasks the child delegated keep running, and a settled task's cancel stops nothing",
		Fixed:      "task_cancel stops the child and every task delegated under it, also when the cancelled task already settled",
		Upstream:   "t3code@04058804",
		Script:     "scenarios/testdata/request_retry/cancel_nested",
		Mechanism:  "model/orchestrator: task_cancel over the delegation tree (nested delegated tasks)"})
	model.RegisterMutant(model.MutantInfo{Name: CascadeSkipsSettledTask, Group: catalog.Orchestrator,
		Doc:        "a cancel of a running task stops its whole tree, but a cancel of a settled task still returns early and stops nothing under it",
		Scenario:   "request-retry",
		Invariants: []string{"cancel-reaches-descendants"}})
}

// spawnNested lets t's child delegate a task of its own, with the
// orchestrator's Nested chance, drawn from a stream of its own (so a
// world without nesting draws everything else as before). The child
// delegates only while it still runs in this process.
func (o *Orchestrator) spawnNested(t *store.Task, depth int) {
	if depth > MaxNestedDepth || !o.nested.Chance("child-delegates", o.Nested) {
		return
	}
	after := o.nested.Duration("delegates-after", NestedAfterMin, NestedAfterMax)
	o.env.After(after, func() {
		if o.dead || t.Status != store.TaskRunning {
			return
		}
		id := o.cat(t.CommandID, ":nested")
		g := store.NewRow(&o.st.Rows.Tasks, store.Task{ID: o.cat("node:delegated-task:", id), ParentThread: t.ChildThreadID, ParentTask: t.ID,
			ChildThreadID: o.cat("thread:delegated-task:", id), CommandID: id, Status: store.TaskRunning, Delivery: "pending",
			Text: o.cat("part of: ", t.Text)})
		root := t.ParentThread
		if p := o.st.Thread(t.ChildThreadID); p != nil && p.RootParent != "" {
			root = p.RootParent
		}
		o.st.Threads = append(o.st.Threads, store.NewRow(&o.st.Rows.Threads, store.Thread{ID: g.ChildThreadID, ProjectID: o.projectOf(t.ChildThreadID),
			ParentThread: t.ChildThreadID, CreatedBy: "agent", Relationship: "subagent", RootParent: root, CreationSource: "mcp"}))
		o.st.Tasks = append(o.st.Tasks, g)
		o.env.Obligations.Open(TaskSettles, g.ID, "delegated by the child of "+t.ID)
		o.env.Emit(actor, "task.delegated", "", sim.A("task", g.ID), sim.A("parent-task", t.ID),
			sim.A("parent", t.ChildThreadID), sim.A("depth", itoa(depth)))
		o.armChild(g)
		o.spawnNested(g, depth+1)
	})
}

// stopDescendants is stopDelegatedTasks: every running task delegated
// under t (its child's tasks, theirs, ...) is stopped, in creation order.
func (o *Orchestrator) stopDescendants(t *store.Task) {
	for _, d := range o.st.TasksUnder(t.ID) {
		if d.Status == store.TaskRunning {
			o.settle(d, store.TaskCancelled)
		}
		o.stopDescendants(d)
	}
}

// cascades reports whether a cancel of a task in status stops the tasks
// under it.
func (o *Orchestrator) cascades(running bool) bool {
	p := o.env.Profile
	return p.Fixed(CancelCascadesToDescendants) && (running || !p.Has(CascadeSkipsSettledTask))
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
