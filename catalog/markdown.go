package catalog

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown renders c as docs/bugs.md: the public record, one row per
// report, then one table per kind of declaration, in list order, each
// report linked to its page. exp gives each target's measured medians
// (ParseExploration of docs/exploration.md); nil leaves that column "-".
// The file is generated (`orchsim list --format markdown --exploration
// docs/exploration.md`) and a test keeps it current.
func WriteMarkdown(w io.Writer, c Catalog, exp map[string]Medians) error {
	var b strings.Builder
	b.WriteString("# The bugs orchsim models\n\n")
	b.WriteString("Generated from the declarations by `orchsim list --format markdown --exploration docs/exploration.md`; do not edit\n")
	b.WriteString("(`go test ./cmd/orchsim -run TestDocs -update` regenerates it). A switch is off under the\n")
	b.WriteString("`reported` profile and on under `fixed`; `--profile fixed --unfix NAME` leaves that one bug\n")
	b.WriteString("in, and a seed of its scenario finds it. \"Merged upstream\" is judged from the upstream sources read\n")
	b.WriteString("for the models (pingdotgg/t3code files at the commits docs/fidelity.md names, Juliusolsson05/agent-code at\n")
	b.WriteString("428aed2d): `--profile upstream` turns on exactly those fixes.\n\n")
	writeRecord(&b, c, exp)
	b.WriteString("## Switches\n\n| group | switch | reports | mechanism | found alone in | by | reported | fixed | merged upstream | script |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range c.Switches {
		up := s.Upstream
		if up == "" {
			up = "not merged"
		}
		script := "-"
		if s.Script != "" {
			script = "`" + s.Script + "`"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s | %s | %s | %s | %s |\n", s.Group, s.Name, links(s.Reports), cell(s.Mechanism), s.Scenario,
			code(s.Invariants), cell(s.Reported), cell(s.Fixed), cell(up), script)
	}
	b.WriteString("\n## Mutants (wrong fixes the invariants must catch)\n\n| group | mutant | killed in | by | gate | what it does |\n|---|---|---|---|---|---|\n")
	for _, m := range c.Mutants {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %d seeds, %s | %s |\n", m.Group, m.Name, m.Scenario, code(m.Invariants),
			m.GateSeeds, m.GateStrategy, cell(m.Doc))
	}
	b.WriteString("\n## Invariants\n\n| group | invariant | kind | property | source | reports |\n|---|---|---|---|---|---|\n")
	for _, i := range c.Invariants {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s |\n", i.Group, i.Name, i.Kind, cell(i.Property), cell(i.Source), links(i.Reports))
	}
	b.WriteString("\n## Liveness obligations (judged after the heal phase)\n\n| group | obligation | property | source |\n|---|---|---|---|\n")
	for _, o := range c.Obligations {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", o.Group, o.Name, cell(o.Property), cell(o.Source))
	}
	b.WriteString("\n## Probes (situations a campaign should reach)\n\n| group | probe | situation |\n|---|---|---|\n")
	for _, p := range c.Probes {
		fmt.Fprintf(&b, "| %s | `%s` | %s |\n", p.Group, p.Name, cell(p.Doc))
	}
	b.WriteString("\n## Commit points (where `--strategy commit` places its faults)\n\n| group | commit point | fault | what is written, what is pending |\n|---|---|---|---|\n")
	for _, p := range c.CommitPoints {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", p.Group, p.Name, p.Fault, cell(p.Doc))
	}
	b.WriteString("\n## Scenarios\n\n| scenario | judged by | what it runs |\n|---|---|---|\n")
	for _, s := range c.Scenarios {
		groups := make([]string, len(s.Groups))
		for i, g := range s.Groups {
			groups[i] = string(g)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", s.Name, strings.Join(groups, ", "), cell(s.Doc))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func links(rs []Report) string {
	if len(rs) == 0 {
		return "-"
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("[%s](%s)", r, r.URL())
	}
	return strings.Join(out, ", ")
}

func code(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + n + "`"
	}
	return strings.Join(out, ", ")
}

// cell escapes what would break a table cell or read as HTML.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

// writeRecord renders the public record: every report, the switches that
// cover it with what catches them and how fast, or why it is left out.
func writeRecord(b *strings.Builder, c Catalog, exp map[string]Medians) {
	byName := map[string]Switch{}
	for _, s := range c.Switches {
		byName[s.Name] = s
	}
	covered := map[Place]int{}
	total := map[Place]int{}
	for _, r := range c.Record {
		total[r.Place]++
		if len(r.Switches) > 0 {
			covered[r.Place]++
		}
	}
	b.WriteString("## The public record\n\n")
	fmt.Fprintf(b, "Every report of the team's record (../shared/seeds, BUGS.md's entries and its appendix), with the switches that\n"+
		"model it (derived from each switch's reports) or why it is left out. Covered: %d of %d seed reports, %d of %d entries,\n"+
		"%d of %d appendix lines. Median seeds are to the first failure with the switch off alone, in its scenario, per\n"+
		"strategy (random / swarm / pct / commit, from docs/exploration.md; >300 is the cap, - not measured); cost is the files and lines its commits took.\n\n",
		covered[Seed], total[Seed], covered[Entry], total[Entry], covered[Appendix], total[Appendix])
	b.WriteString("| record | report | what happens | switch | mechanism | found alone in | by | median seeds | script | cost or why left out |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range c.Record {
		where := fmt.Sprintf("%s %d", r.Place, r.N)
		if len(r.Switches) == 0 {
			why := r.LeftOut
			if why == "" {
				why = "not modelled yet"
			}
			fmt.Fprintf(b, "| %s | %s | %s | - | - | - | - | - | - | %s |\n", where, links([]Report{r.Report}), cell(r.Summary), cell(why))
			continue
		}
		for _, name := range r.Switches {
			s := byName[name]
			med := "-"
			if m, ok := exp["switch/"+name]; ok {
				med = m.String()
			}
			script := "-"
			if s.Script != "" {
				script = "`" + s.Script + "`"
			}
			cost := r.Cost
			if c, ok := r.SwitchCost[name]; ok {
				cost = c
			}
			if cost == "" {
				cost = "-"
			}
			fmt.Fprintf(b, "| %s | %s | %s | `%s` | %s | %s | %s | %s | %s | %s |\n", where, links([]Report{r.Report}), cell(r.Summary),
				name, cell(s.Mechanism), s.Scenario, code(s.Invariants), med, script, cell(cost))
		}
	}
	b.WriteString("\n")
}
