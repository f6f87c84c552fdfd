package model

import (
	"sort"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// CommitPointInfo declares a commit point: a place in a model's lifecycle
// where a durable write and its acknowledgement (or its in-memory
// follow-up) are separated, so a crash or a lost message landing exactly
// there is the coincidence a bug may need (the receipt is stored, its
// reply not yet sent; a release persisted, its credential not yet
// revoked; a spawn claimed, its backend not yet live). Random faults reach
// such a window rarely; the commit strategy places faults in it.
type CommitPointInfo struct {
	Name  string
	Group catalog.Group
	// Doc says which write is done and what is still pending, and what a
	// fault placed there does.
	Doc string
	// Fault names the fault the point places, as the trace names the event
	// that follows "fault commit-point NAME": "server-restart" (the server
	// process crashes), "renderer.reload" (the desktop renderer reloads),
	// "idle-timer" (a timer fires at the same instant), ...
	Fault string
}

var commitPoints []CommitPointInfo

// DeclareCommitPoint adds a commit point; the model (or world) that owns
// it calls this from init. It panics on a duplicate or a missing field.
func DeclareCommitPoint(i CommitPointInfo) {
	if i.Name == "" || !i.Group.Valid() || i.Doc == "" || i.Fault == "" {
		panic("model: commit point " + i.Name + " needs a name, group, doc and fault")
	}
	for _, c := range commitPoints {
		if c.Name == i.Name {
			panic("model: commit point declared twice: " + i.Name)
		}
	}
	commitPoints = append(commitPoints, i)
	sort.Slice(commitPoints, func(a, b int) bool {
		return catalog.Less(commitPoints[a].Group, commitPoints[a].Name, commitPoints[b].Group, commitPoints[b].Name)
	})
}

// CommitPoints returns every declared commit point, in list order.
func CommitPoints() []CommitPointInfo { return commitPoints }

// CommitFaultChance is the chance that the commit strategy places a fault
// at a commit point it reaches (CommitFaultsPerPoint bounds how many).
var CommitFaultChance = sim.Per(1, 3)

// CommitFaultsPerPoint bounds the faults the commit strategy places at each
// commit point per run: a point reached at every tool call would otherwise
// crash the server at every third, and a point reached once a day would
// never get its turn if the points shared one budget.
const CommitFaultsPerPoint = 2

// AtCommitPoint is called by a model at a declared commit point, with the
// ids that identify it. It reports whether a fault is to land here: only
// under the commit strategy (CommitFaults), outside the heal phase, with
// CommitFaultChance drawn from the point's own stream ("commit/NAME", so
// other draws keep their places), and while the point has placed fewer
// than CommitFaultsPerPoint faults in this run. A placed fault is traced
// as fault commit-point NAME; the caller then injects it (a crash, a lost
// reply, a timer firing; CrashProcess for a crash). It panics on an
// undeclared name.
func (e *Env) AtCommitPoint(name string, attrs ...sim.Attr) bool {
	known := false
	for _, c := range commitPoints {
		if c.Name == name {
			known = true
			break
		}
	}
	if !known {
		panic("model: undeclared commit point " + name)
	}
	if !e.CommitFaults || e.Healing || e.commitPlaced[name] >= CommitFaultsPerPoint {
		return false
	}
	if e.CommitReached != nil {
		e.CommitReached(name)
	}
	if !e.Rand("commit/"+name).Chance("fault", CommitFaultChance) {
		return false
	}
	if e.commitPlaced == nil {
		e.commitPlaced = map[string]int{}
	}
	e.commitPlaced[name]++
	e.Emit("fault", "commit-point", name, attrs...)
	return true
}

// CrashProcess crashes the server process at a commit point: at the same
// virtual instant, once the event that reached the point is done (so the
// model's own step completes, as a process that dies on its next
// instruction), the world's Crash hook kills the process and boots the
// next one after an outage. Without a hook (a world with no server
// process) it does nothing and reports false.
func (e *Env) CrashProcess() bool {
	if e.Crash == nil {
		return false
	}
	e.After(0, e.Crash)
	return true
}

// PromptNow has the user of threadID send a prompt at this virtual
// instant, once the event that reached the commit point is done: the
// world's Prompt hook. Without a hook it does nothing and reports false.
func (e *Env) PromptNow(threadID string) bool {
	if e.Prompt == nil {
		return false
	}
	e.Prompt(threadID)
	return true
}
