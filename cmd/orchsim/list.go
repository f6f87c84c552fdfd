package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
)

func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List scenarios, invariants, switches and mutants",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(w, "SCENARIOS")
			for _, s := range scenarios.All() {
				fmt.Fprintf(w, "  %s\t%s (horizon %s)\n", s.Name, s.Doc, s.Horizon)
			}
			fmt.Fprintln(w, "\nINVARIANTS")
			for _, i := range invariants.All() {
				fmt.Fprintf(w, "  %s\t%s [%s]\n", i.Name, i.Property, i.Source)
			}
			fmt.Fprintln(w, "\nHARNESS (reported like invariants)")
			fmt.Fprintf(w, "  %s\ta model panicked; the run stops and reports the panic with its seed\n", sim.ModelPanic)
			fmt.Fprintf(w, "  %s\tthe run executed its event budget without reaching the horizon (livelock guard; run --event-budget)\n", sim.EventBudgetExceeded)
			fmt.Fprintln(w, "\nLIVENESS OBLIGATIONS (judged after the heal phase)")
			for _, o := range invariants.Obligations {
				fmt.Fprintf(w, "  %s\t%s [%s]\n", o.Name, o.Property, o.Source)
			}
			fmt.Fprintln(w, "\nPROBES (coverage counted by fuzz)")
			for _, p := range invariants.Probes {
				fmt.Fprintf(w, "  %s\t%s\n", p.Name, p.Doc)
			}
			fmt.Fprintln(w, "\nSWITCHES (off = reported, on = fixed; --fix NAME)")
			for _, s := range model.Switches() {
				fmt.Fprintf(w, "  %s\treported: %s; fixed: %s [%s]\n", s.Name, s.Reported, s.Fixed, s.Report)
			}
			fmt.Fprintln(w, "\nMUTANTS (deliberately wrong fixes; --mutant NAME)")
			for _, m := range model.Mutants() {
				fmt.Fprintf(w, "  %s\t%s\n", m.Name, m.Doc)
			}
			fmt.Fprintln(w, "\nPROFILES")
			fmt.Fprintf(w, "  %s\tevery switch as reported (default)\n", model.PresetReported)
			fmt.Fprintf(w, "  %s\tevery fix on\n", model.PresetFixed)
			return w.Flush()
		},
	}
}
