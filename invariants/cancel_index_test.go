package invariants

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/orchsim/orchsim/sim"
)

// The scans that cancelTree's and nestedTasks' walks down from the
// cancelled task replaced, kept here as they were: over any sequence of
// their events the walks must cancel the same tasks (same violations, same
// messages, same deadlines) and hit the probe at the same events.

// scanUnder is cancelTree.under as it was: whether n's ancestors include
// root.
func scanUnder(c *cancelTree, n taskNode, root string) bool {
	for depth := 0; n.parent != "" && depth < 64; depth++ {
		if n.parent == root {
			return true
		}
		i, ok := c.index[n.parent]
		if !ok {
			return false
		}
		n = c.nodes[i]
	}
	return false
}

// scanCancelTree is cancelTree with its cancel scanning every node.
type scanCancelTree struct{ cancelTree }

func (c *scanCancelTree) Observe(ev *sim.Event) *sim.Violation {
	if isToolEvent(ev) && ev.Kind == "task_cancel" && (ev.Outcome == "accepted" || ev.Outcome == "replayed") {
		c.clock.observe(ev)
		root := ev.Get("task")
		for i := range c.nodes {
			n := &c.nodes[i]
			if n.running && n.cancelledBy == "" && scanUnder(&c.cancelTree, *n, root) {
				n.cancelledBy, n.cancelledAt, n.by = root, ev.At, ev.Get("thread")
				n.cancelledAwake = c.clock.awake(ev.At)
				c.pending++
			}
		}
		return c.overdue(ev.At, false)
	}
	return c.cancelTree.Observe(ev)
}

// scanNestedTasks is nestedTasks with its cancel walking up from every id.
type scanNestedTasks struct{ nestedTasks }

func (n *scanNestedTasks) observe(ev *sim.Event, hit func(string)) {
	if !(isToolEvent(ev) && ev.Kind == "task_cancel" && (ev.Outcome == "accepted" || ev.Outcome == "replayed")) {
		n.nestedTasks.observe(ev, hit)
		return
	}
	root := ev.Get("task")
	for _, id := range n.ids {
		if at, stopped := n.stoppedAt[id]; !n.live[id] && !(stopped && at == ev.At) {
			continue
		}
		for p, depth := n.parent[id], 0; p != "" && depth < 64; p, depth = n.parent[p], depth+1 {
			if p == root {
				hit(probeCancelWithLiveDescendant)
				return
			}
		}
	}
}

// cancelIndexEvent draws one event of the kinds both read, over few task
// ids, so that tasks are delegated twice (under another parent for the
// probe), form cycles, name parents never delegated, settle twice and are
// cancelled at the instant they stopped; chains deeper than 64 come from
// the numbered ids.
func cancelIndexEvent(t *rapid.T, at time.Duration, chain int) *sim.Event {
	tasks := []string{"", "k1", "k2", "k3", "k4", "k5", "k6"}
	task := rapid.SampledFrom(tasks).Draw(t, "task")
	parent := rapid.SampledFrom(tasks).Draw(t, "parent")
	if rapid.IntRange(0, 4).Draw(t, "deep") == 0 {
		i := rapid.IntRange(0, chain).Draw(t, "link")
		task, parent = fmt.Sprintf("d%d", i+1), fmt.Sprintf("d%d", i)
		if i == 0 {
			parent = "k1"
		}
	}
	ev := &sim.Event{At: at, Actor: "orchestrator"}
	switch rapid.IntRange(0, 5).Draw(t, "kind") {
	case 0:
		ev.Actor, ev.Kind = "agent/t1", "delegate_task"
		ev.Outcome = rapid.SampledFrom([]string{"accepted", "rejected"}).Draw(t, "outcome")
		ev.Attrs = []sim.Attr{sim.A("thread", "t1"), sim.A("result", "task="+task)}
	case 1, 2:
		ev.Kind = "task.delegated"
		ev.Attrs = []sim.Attr{sim.A("task", task), sim.A("parent-task", parent)}
	case 3:
		ev.Kind = "task.settled"
		ev.Outcome = rapid.SampledFrom([]string{"interrupted", "completed", "failed"}).Draw(t, "outcome")
		ev.Attrs = []sim.Attr{sim.A("task", task)}
	default:
		ev.Actor, ev.Kind = "agent/"+rapid.SampledFrom([]string{"t1", "t2"}).Draw(t, "agent"), "task_cancel"
		ev.Outcome = rapid.SampledFrom([]string{"accepted", "replayed", "rejected"}).Draw(t, "outcome")
		if chain > 64 && rapid.Bool().Draw(t, "cancel-deep") {
			task = rapid.SampledFrom([]string{"k1", "d1", "d2", "d5", "d7"}).Draw(t, "deep-task")
		}
		ev.Attrs = []sim.Attr{sim.A("thread", ev.Actor[len("agent/"):]), sim.A("task", task)}
	}
	return ev
}

func rangeInts(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestCancelWalks_AgreeWithTheScans(t *testing.T) {
	for range 5 {
		rapid.Check(t, cancelWalksAgree)
	}
}

func cancelWalksAgree(t *rapid.T) {
	ix := &cancelTree{index: map[string]int{}, children: map[string][]int32{}}
	scan := &scanCancelTree{cancelTree{index: map[string]int{}, children: map[string][]int32{}}}
	var nix nestedTasks
	var nscan scanNestedTasks
	chain := rapid.SampledFrom([]int{3, 70}).Draw(t, "chain")
	now := time.Duration(0)
	var prelude []*sim.Event
	if chain > 64 {
		// A chain k1 <- d1 <- ... <- d70, delegated in a drawn order, so
		// the walks' 64-step bound is met from both sides.
		for _, i := range rapid.Permutation(rangeInts(chain+1)).Draw(t, "chain-order") {
			parent := fmt.Sprintf("d%d", i)
			if i == 0 {
				parent = "k1"
			}
			prelude = append(prelude, &sim.Event{Actor: "orchestrator", Kind: "task.delegated",
				Attrs: []sim.Attr{sim.A("task", fmt.Sprintf("d%d", i+1)), sim.A("parent-task", parent)}})
		}
		// d1 ... dm settled: the nearest live task under k1 is m+1 steps down.
		for i := range rapid.SampledFrom([]int{0, 62, 63, 64, 65}).Draw(t, "settled-links") {
			prelude = append(prelude, &sim.Event{Actor: "orchestrator", Kind: "task.settled", Outcome: "completed",
				Attrs: []sim.Attr{sim.A("task", fmt.Sprintf("d%d", i+1))}})
		}
	}
	n := rapid.IntRange(0, 200).Draw(t, "events")
	for i := range len(prelude) + n {
		var ev *sim.Event
		if i < len(prelude) {
			ev = prelude[i]
		} else {
			now += rapid.SampledFrom([]time.Duration{0, 0, time.Second, 2 * time.Minute}).Draw(t, "gap")
			ev = cancelIndexEvent(t, now, chain)
		}
		got, want := ix.Observe(ev), scan.Observe(ev)
		if (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Fatalf("cancelTree, event %d (%s %s %s %v): walk %v, scan %v", i, ev.Actor, ev.Kind, ev.Outcome, ev.Attrs, got, want)
		}
		if ix.pending != scan.pending || ix.Due() != scan.Due() {
			t.Fatalf("cancelTree, event %d: pending %d due %v, scan %d due %v", i, ix.pending, ix.Due(), scan.pending, scan.Due())
		}
		var hits, want2 int
		nix.observe(ev, func(string) { hits++ })
		nscan.observe(ev, func(string) { want2++ })
		if hits != want2 {
			t.Fatalf("nestedTasks, event %d (%s %s %s %v): walk hit %d, scan %d", i, ev.Actor, ev.Kind, ev.Outcome, ev.Attrs, hits, want2)
		}
	}
	if got, want := ix.Finish(now), scan.Finish(now); (got == nil) != (want == nil) || got != nil && *got != *want {
		t.Fatalf("cancelTree Finish: walk %v, scan %v", got, want)
	}
}
