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
}

var commitPoints []CommitPointInfo

// DeclareCommitPoint adds a commit point; the model (or world) that owns
// it calls this from init. It panics on a duplicate or a missing field.
func DeclareCommitPoint(i CommitPointInfo) {
	if i.Name == "" || !i.Group.Valid() || i.Doc == "" {
		panic("model: commit point " + i.Name + " needs a name, group and doc")
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
// at a commit point it reaches (the world bounds how many it places).
var CommitFaultChance = sim.Per(1, 3)

// AtCommitPoint is called by a model at a declared commit point, with the
// ids that identify it. It reports whether a fault is to land here: only
// under the commit strategy (CommitFaults), outside the heal phase, with
// CommitFaultChance drawn from the point's own stream ("commit/NAME", so
// other draws keep their places), and while the world's budget allows
// (CommitBudget). A placed fault is traced as fault commit-point NAME;
// the caller then injects it (a crash, a lost reply). It panics on an
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
	if !e.CommitFaults || e.Healing || e.CommitBudget <= 0 {
		return false
	}
	if !e.Rand("commit/"+name).Chance("fault", CommitFaultChance) {
		return false
	}
	e.CommitBudget--
	e.Emit("fault", "commit-point", name, attrs...)
	return true
}
