package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"orchsim/replay"
	"orchsim/scenarios"
)

func newReplayCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Re-run a replay file and verify its fingerprint",
		Long: `Re-run a replay file (written by run --out) and print its timeline. Exit 1 when
the recorded violation reproduces with the recorded fingerprint, 3 when the
fingerprint differs, 0 (with a "fixed:" note) when the run no longer fails.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageErr("unknown --format %q (want text or json)", format)
			}
			f, cfg, err := loadReplay(args[0])
			if err != nil {
				return err
			}
			cfg.KeepTrace = true
			res, err := scenarios.Run(cfg)
			if err != nil {
				return usageErr("%v", err)
			}
			out := cmd.OutOrStdout()
			err = printRun(out, &res, format)
			if err != nil {
				return &exitError{code: exitHarness, msg: err.Error()}
			}
			got := replay.FormatFingerprint(res.Fingerprint)
			switch {
			case res.Violation == nil && f.Violation != nil:
				fmt.Fprintf(out, "fixed: %s no longer fails (recorded %s); delete it or keep it as a passing regression\n",
					args[0], f.Violation.Invariant)
				fmt.Fprintln(out, lastLine(&res))
				return nil
			case got != f.Fingerprint:
				fmt.Fprintln(out, lastLine(&res))
				return &exitError{code: exitHarness, msg: fmt.Sprintf(
					"fingerprint mismatch: %s recorded %s, this run gave %s (nondeterminism, or the models changed since it was recorded)",
					args[0], f.Fingerprint, got)}
			}
			fmt.Fprintf(out, "fingerprint matches: %s\n", got)
			fmt.Fprintln(out, lastLine(&res))
			if res.Failed() {
				return &exitError{code: exitViolation}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "timeline format: text or json")
	return cmd
}
