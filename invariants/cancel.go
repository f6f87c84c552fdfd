package invariants

import (
	"slices"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// CancelReachesDescendants is written from task_cancel's contract in
// OrchestratorMcpService.cancelTask (t3code@04058804): "Cancelling stops
// the child and every task under it", "including ... the tasks it
// delegated". Once task_cancel answers for a task (accepted or replayed),
// every task delegated under it (by its child thread, by that child's
// children, ...) is terminal within CancelGrace: none keeps running, and
// none completes or fails afterwards. It reads delegate_task's result
// task=..., the orchestrator's task.delegated (task, parent-task) and
// task.settled, and task_cancel's task attribute.
const CancelReachesDescendants = "cancel-reaches-descendants"

// CancelGrace is how long after task_cancel answers a descendant may
// still run: the stop of a thread's run is asynchronous upstream
// (thread.stop dispatches; the run settles when its provider turn ends).
const CancelGrace = time.Minute

func init() {
	register(Info{Name: CancelReachesDescendants, Group: catalog.Orchestrator,
		Property: "after task_cancel answers for a task, every task delegated under it is terminal within a minute: none keeps running or completes afterwards",
		Source:   "OrchestratorMcpService.cancelTask at t3code@04058804 (\"Cancelling stops the child and every task under it\"; stopDelegatedTasks)",
		Reports:  []catalog.Report{"anthropics/claude-code#95138"},
		New:      func() sim.Checker { return &cancelTree{index: map[string]int{}, children: map[string][]int32{}} }})
}

type taskNode struct {
	id, parent string // parent: the task whose child delegated it ("" for an agent's task)
	created    time.Duration
	running    bool
	settledAt  time.Duration
	// cancelledBy and cancelledAt name the first cancel of an ancestor
	// that this task outlived ("" while none).
	cancelledBy string
	cancelledAt time.Duration
	// cancelledAwake is cancelledAt on the awake clock: CancelGrace is
	// the server's timer, which stops while the host sleeps.
	cancelledAwake time.Duration
	by             string // the thread that cancelled
}

type cancelTree struct {
	nodes []taskNode // creation order; a slice keeps the checker free of map ranges
	index map[string]int
	// children lists, by parent task id, the nodes (indexes into nodes,
	// in creation order) whose parent it is: a cancel walks down from its
	// task instead of walking up from every node (nodes' parents never
	// change; a parent of "" is none and is not listed).
	children map[string][]int32
	stack    []descent // scratch of the walk down
	// pending counts the running tasks an ancestor's cancel should have
	// stopped, so most events skip the scan.
	pending int
	clock   awakeClock
}

func (*cancelTree) Name() string { return CancelReachesDescendants }

// ObservedKinds implements sim.KindObserver: the events that add, settle
// or cancel tasks, and the awake clock's. A cancelled descendant becomes
// overdue on any event: Due names the first event that can find it so.
func (*cancelTree) ObservedKinds() []string { return cancelTreeKinds }

var cancelTreeKinds = append([]string{"delegate_task", "task.delegated", "task.settled", "task_cancel"}, awakeClockKinds...)

// Due implements sim.Deadliner: overdue reports a cancelled descendant
// once the awake time since its ancestor's cancel exceeds CancelGrace,
// that is at the first event after cancelledAwake + slept + CancelGrace
// (slept grows only on the awake clock's events, which are declared).
func (c *cancelTree) Due() time.Duration {
	if c.pending == 0 {
		return sim.NoDeadline
	}
	due := sim.NoDeadline
	for i := range c.nodes {
		if n := &c.nodes[i]; n.running && n.cancelledBy != "" {
			due = min(due, n.cancelledAwake+c.clock.slept+CancelGrace+1)
		}
	}
	return due
}

func (c *cancelTree) add(id, parent string, at time.Duration) {
	if _, seen := c.index[id]; seen || id == "" {
		return
	}
	c.index[id] = len(c.nodes)
	if parent != "" {
		c.children[parent] = append(c.children[parent], int32(len(c.nodes)))
	}
	c.nodes = append(c.nodes, taskNode{id: id, parent: parent, created: at, running: true})
}

// descent is a node reached walking down from a cancelled task, and its
// distance from that task.
type descent struct {
	node  int32
	depth int
}

// cancelUnder marks every running, not yet cancelled task under root (a
// task whose ancestors within under's 64 steps include root): the nodes
// under would accept, found from root's children down, each reached at
// most 64 steps from root. Marking does not change what under accepts,
// so the order of the walk does not matter.
func (c *cancelTree) cancelUnder(root, by string, at time.Duration) {
	if root == "" {
		return
	}
	st := c.stack[:0]
	for _, i := range c.children[root] {
		st = append(st, descent{i, 1})
	}
	for len(st) > 0 {
		d := st[len(st)-1]
		st = st[:len(st)-1]
		n := &c.nodes[d.node]
		if n.running && n.cancelledBy == "" {
			n.cancelledBy, n.cancelledAt, n.by = root, at, by
			n.cancelledAwake = c.clock.awake(at)
			c.pending++
		}
		if d.depth < 64 {
			for _, i := range c.children[n.id] {
				st = append(st, descent{i, d.depth + 1})
			}
		}
	}
	c.stack = st
}

func (c *cancelTree) Observe(ev *sim.Event) *sim.Violation {
	c.clock.observe(ev)
	switch {
	case isToolEvent(ev) && ev.Kind == "delegate_task" && ev.Outcome == "accepted":
		c.add(resultField(ev.Get("result"), "task"), "", ev.At)
	case ev.Actor == "orchestrator" && ev.Kind == "task.delegated":
		c.add(ev.Get("task"), ev.Get("parent-task"), ev.At)
	case ev.Actor == "orchestrator" && ev.Kind == "task.settled":
		if i, ok := c.index[ev.Get("task")]; ok {
			n := &c.nodes[i]
			if n.running && n.cancelledBy != "" {
				c.pending--
			}
			n.running, n.settledAt = false, ev.At
			if n.cancelledBy != "" && ev.Outcome != "interrupted" {
				return violation(CancelReachesDescendants,
					"task %s, delegated at %s under task %s, kept working and %s at %s although thread %s's task_cancel of %s answered at %s: the cancel did not reach the tasks its child delegated",
					n.id, at(n.created), n.cancelledBy, ev.Outcome, at(ev.At), n.by, n.cancelledBy, at(n.cancelledAt))
			}
		}
	case isToolEvent(ev) && ev.Kind == "task_cancel" && (ev.Outcome == "accepted" || ev.Outcome == "replayed"):
		c.cancelUnder(ev.Get("task"), ev.Get("thread"), ev.At)
	}
	return c.overdue(ev.At, false)
}

// overdue reports a cancelled descendant still running CancelGrace of
// awake time after its ancestor's cancel, or at all when the run ended.
func (c *cancelTree) overdue(now time.Duration, end bool) *sim.Violation {
	if c.pending == 0 {
		return nil
	}
	for _, n := range c.nodes {
		if n.running && n.cancelledBy != "" && (end || c.clock.awake(now)-n.cancelledAwake > CancelGrace) {
			return violation(CancelReachesDescendants,
				"task %s, delegated at %s under task %s, is still running at %s, %s%s after thread %s's task_cancel of %s answered at %s: the cancel did not reach the tasks its child delegated",
				n.id, at(n.created), n.cancelledBy, at(now), c.clock.awake(now)-n.cancelledAwake, awakeNote(c.clock.sleptSince(n.cancelledAt, n.cancelledAwake, now)), n.by, n.cancelledBy, at(n.cancelledAt))
		}
	}
	return nil
}

// Finish implements sim.Finisher: a descendant still running at the end
// of the run outlived its ancestor's cancel.
func (c *cancelTree) Finish(end time.Duration) *sim.Violation {
	return c.overdue(end, true)
}

// probeCancelWithLiveDescendant is the situation cancel-reaches-descendants
// needs: a task_cancel answered for a task while a task its child (or a
// deeper descendant) delegated was running, whether the cancel then
// stopped it (fixed) or left it running (reported).
var probeCancelWithLiveDescendant = declareProbe(ProbeInfo{Name: "cancel-with-live-descendant", Group: catalog.Orchestrator,
	Doc: "a task_cancel answered for a task while a task delegated under it was running"})

// nestedTasks follows the tasks delegated by delegated children, for the
// probe.
type nestedTasks struct {
	ids       []string
	parent    map[string]string
	live      map[string]bool
	stoppedAt map[string]time.Duration
	// children lists, by parent task id, the ids whose parent (as parent
	// holds it now) it is; "" is none and is not listed. A cancel walks
	// down from its task instead of up from every id delegated so far.
	children map[string][]string
	stack    []nestedDescent // scratch of the walk down
}

// nestedDescent is an id reached walking down from a cancelled task, and
// its distance from that task.
type nestedDescent struct {
	id    string
	depth int
}

func (n *nestedTasks) observe(ev *sim.Event, hit func(string)) {
	switch {
	case ev.Actor == "orchestrator" && ev.Kind == "task.delegated":
		if n.parent == nil {
			n.parent, n.live, n.stoppedAt = map[string]string{}, map[string]bool{}, map[string]time.Duration{}
			n.children = map[string][]string{}
		}
		id, parent := ev.Get("task"), ev.Get("parent-task")
		n.ids = append(n.ids, id)
		if old, had := n.parent[id]; !had || old != parent {
			if had && old != "" {
				kids := n.children[old]
				if i := slices.Index(kids, id); i >= 0 {
					n.children[old] = slices.Delete(kids, i, i+1)
				}
			}
			if parent != "" {
				n.children[parent] = append(n.children[parent], id)
			}
		}
		n.parent[id], n.live[id] = parent, true
	case ev.Actor == "orchestrator" && ev.Kind == "task.settled" && n.live[ev.Get("task")]:
		n.live[ev.Get("task")] = false
		if ev.Outcome == "interrupted" {
			n.stoppedAt[ev.Get("task")] = ev.At
		}
	case isToolEvent(ev) && ev.Kind == "task_cancel" && (ev.Outcome == "accepted" || ev.Outcome == "replayed"):
		if n.liveUnder(ev.Get("task"), ev.At) {
			hit(probeCancelWithLiveDescendant)
		}
	}
}

// liveUnder reports whether a task delegated under root (root among its
// ancestors within 64 steps, as parent holds them) is live, or stopped at
// now: found from root's children down, each id reached at most 64 steps
// from root.
func (n *nestedTasks) liveUnder(root string, now time.Duration) bool {
	if root == "" {
		return false
	}
	st := n.stack[:0]
	for _, id := range n.children[root] {
		st = append(st, nestedDescent{id, 1})
	}
	found := false
	for len(st) > 0 {
		d := st[len(st)-1]
		st = st[:len(st)-1]
		if at, stopped := n.stoppedAt[d.id]; n.live[d.id] || stopped && at == now {
			found = true
			break
		}
		if d.depth < 64 {
			for _, id := range n.children[d.id] {
				st = append(st, nestedDescent{id, d.depth + 1})
			}
		}
	}
	n.stack = st[:0]
	return found
}
