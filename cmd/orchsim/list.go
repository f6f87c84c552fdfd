package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/scenarios"
)

func newListCmd() *cobra.Command {
	var format, exploration string
	cmd := &cobra.Command{
		Use:   "list [--format text|json|markdown]",
		Short: "List scenarios, invariants, obligations, probes, commit points, switches and mutants",
		Long: `List everything this build declares. Each table is ordered by component group
(provider-session, mcp-credential, preview-tab, orchestrator-idempotency,
restart-continuation, terminal-session, other), then by name. --format json prints
one object with the arrays switches, invariants, obligations, mutants, probes,
commit_points, scenarios, harness, profiles and record (fields documented in package catalog);
--format markdown prints docs/bugs.md (with --exploration docs/exploration.md, the
measured median seeds of each switch).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := scenarios.Catalog()
			if exploration != "" && format != "markdown" {
				return usageErr("--exploration needs --format markdown")
			}
			switch format {
			case "text":
				return listWritten(printCatalog(cmd.OutOrStdout(), c))
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return listWritten(enc.Encode(c))
			case "markdown":
				var exp map[string]catalog.Medians
				if exploration != "" {
					raw, err := replay.ReadInput(exploration, replay.MaxInputBytes)
					if err != nil {
						return usageErr("--exploration: %v", err)
					}
					if exp, err = catalog.ParseExploration(bytes.NewReader(raw)); err != nil {
						return usageErr("--exploration %s: %v", exploration, err)
					}
					for _, s := range c.Switches {
						if _, ok := exp["switch/"+s.Name]; !ok {
							return usageErr("--exploration %s: no row for switch/%s (re-run the benchmark the page names)", exploration, s.Name)
						}
					}
				}
				return listWritten(catalog.WriteMarkdown(cmd.OutOrStdout(), c, exp))
			}
			return usageErr("unknown --format %q (want text, json or markdown)", format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text, json or markdown")
	cmd.Flags().StringVar(&exploration, "exploration", "", "with --format markdown: fill the median-seeds column from this exploration table (docs/exploration.md)")
	return cmd
}

// listWritten turns a failed write to stdout into a harness failure (exit 3).
func listWritten(err error) error {
	if err != nil {
		return &exitError{code: exitHarness, msg: "writing stdout: " + err.Error()}
	}
	return nil
}

func reports(rs []catalog.Report) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}

func printCatalog(out io.Writer, c catalog.Catalog) error {
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SCENARIOS")
	for _, s := range c.Scenarios {
		groups := make([]string, len(s.Groups))
		for i, g := range s.Groups {
			groups[i] = string(g)
		}
		fmt.Fprintf(w, "  %s\t%s (horizon %s; judged by %s)\n", s.Name, s.Doc, fmtMs(s.HorizonMs), strings.Join(groups, ", "))
	}
	fmt.Fprintln(w, "\nINVARIANTS (group: name)")
	for _, i := range c.Invariants {
		kind := ""
		if i.Kind == "liveness" {
			kind = " (liveness)"
		}
		fmt.Fprintf(w, "  %s: %s\t%s%s [%s]\n", i.Group, i.Name, i.Property, kind, i.Source)
	}
	fmt.Fprintln(w, "\nHARNESS (reported like invariants)")
	for _, h := range c.Harness {
		fmt.Fprintf(w, "  %s\t%s\n", h.Name, h.Doc)
	}
	fmt.Fprintln(w, "\nLIVENESS OBLIGATIONS (judged after the heal phase)")
	for _, o := range c.Obligations {
		fmt.Fprintf(w, "  %s: %s\t%s [%s]\n", o.Group, o.Name, o.Property, o.Source)
	}
	fmt.Fprintln(w, "\nPROBES (coverage counted by fuzz)")
	for _, p := range c.Probes {
		fmt.Fprintf(w, "  %s: %s\t%s\n", p.Group, p.Name, p.Doc)
	}
	fmt.Fprintln(w, "\nCOMMIT POINTS (where --strategy commit places faults)")
	for _, p := range c.CommitPoints {
		fmt.Fprintf(w, "  %s: %s\t%s: %s\n", p.Group, p.Name, p.Fault, p.Doc)
	}
	fmt.Fprintln(w, "\nSWITCHES (off = reported, on = fixed; --fix NAME, --unfix NAME)")
	for _, s := range c.Switches {
		up := s.Upstream
		if up == "" {
			up = "not merged upstream"
		} else {
			up = "merged upstream: " + up
		}
		fmt.Fprintf(w, "  %s: %s\t%s; found alone in %s by %s; reported: %s; fixed: %s; %s [%s]\n", s.Group, s.Name,
			reports(s.Reports), s.Scenario, strings.Join(s.Invariants, ", "), s.Reported, s.Fixed, up, s.Source)
	}
	fmt.Fprintln(w, "\nMUTANTS (deliberately wrong fixes; --mutant NAME)")
	for _, m := range c.Mutants {
		fmt.Fprintf(w, "  %s: %s\t%s (killed in %s by %s; gate: %d seeds, %s)\n", m.Group, m.Name, m.Doc, m.Scenario,
			strings.Join(m.Invariants, ", "), m.GateSeeds, m.GateStrategy)
	}
	fmt.Fprintln(w, "\nPROFILES")
	for _, p := range c.Profiles {
		fmt.Fprintf(w, "  %s\t%s\n", p.Name, p.Doc)
	}
	return w.Flush()
}

func fmtMs(ms int64) string {
	if ms%3_600_000 == 0 {
		return fmt.Sprintf("%dh", ms/3_600_000)
	}
	return fmt.Sprintf("%dms", ms)
}
