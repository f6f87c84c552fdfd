package scenarios

import (
	"sort"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/sim"
)

// Catalog gathers every declaration of this build (switches, invariants,
// obligations, mutants, probes, scenarios, the harness's own failures and
// the profiles) into one document, each table in list order: group, then
// name (scenarios by name). `orchsim list` prints it; every other list
// (the mutation gate, exploration targets, docs/bugs.md) derives from the
// same declarations.
func Catalog() catalog.Catalog {
	var c catalog.Catalog
	for _, s := range model.Switches() {
		c.Switches = append(c.Switches, catalog.Switch{Name: string(s.Name), Group: s.Group, Reports: s.Reports,
			Source: s.Source, Scenario: s.Scenario, Invariants: s.Invariants, Reported: s.Reported, Fixed: s.Fixed,
			Upstream: s.Upstream, Script: s.Script, Mechanism: s.Mechanism})
	}
	for _, i := range invariants.All() {
		reports := i.Reports
		if reports == nil {
			reports = []catalog.Report{}
		}
		c.Invariants = append(c.Invariants, catalog.Invariant{Name: i.Name, Group: i.Group, Kind: i.Kind,
			Property: i.Property, Source: i.Source, Reports: reports})
	}
	for _, o := range sim.Obligations() {
		c.Obligations = append(c.Obligations, catalog.Obligation{Name: o.Name, Group: catalog.Group(o.Group),
			Property: o.Property, Source: o.Source})
	}
	sort.Slice(c.Obligations, func(a, b int) bool {
		return catalog.Less(c.Obligations[a].Group, c.Obligations[a].Name, c.Obligations[b].Group, c.Obligations[b].Name)
	})
	for _, m := range model.Mutants() {
		seeds, strategy := m.Gate()
		c.Mutants = append(c.Mutants, catalog.Mutant{Name: string(m.Name), Group: m.Group, Doc: m.Doc,
			Scenario: m.Scenario, Invariants: m.Invariants, GateSeeds: seeds, GateStrategy: strategy})
	}
	for _, p := range invariants.Probes {
		c.Probes = append(c.Probes, catalog.Probe{Name: p.Name, Group: p.Group, Doc: p.Doc})
	}
	for _, p := range model.CommitPoints() {
		c.CommitPoints = append(c.CommitPoints, catalog.CommitPoint{Name: p.Name, Group: p.Group, Doc: p.Doc, Fault: p.Fault})
	}
	for _, s := range All() {
		c.Scenarios = append(c.Scenarios, catalog.Scenario{Name: s.Name, Doc: s.Doc, HorizonMs: s.Horizon.Milliseconds(),
			Groups: s.Groups, Invariants: s.Invariants})
	}
	c.Harness = []catalog.Harness{
		{Name: sim.ModelPanic, Doc: "a model panicked; the run stops and reports the panic with its seed"},
		{Name: sim.EventBudgetExceeded, Doc: "the run executed its event budget without reaching the horizon (livelock guard; run --event-budget)"},
	}
	c.Profiles = []catalog.Profile{
		{Name: model.PresetReported, Doc: "every switch as reported (default)"},
		{Name: model.PresetFixed, Doc: "every fix on (--unfix NAME turns one off again)"},
		{Name: model.PresetUpstream, Doc: "the fixes upstream merged on, the rest as reported: which reports are still live upstream"},
	}
	c.Record = catalog.RecordRows(c.Switches)
	return c
}
