package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"orchsim/replay"
	"orchsim/scenarios"
)

func newReplayCmd() *cobra.Command {
	var format, htmlPath string
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Re-run a replay file and verify its fingerprint",
		Long: `Re-run a replay file (written by run --out) and print its timeline. Exit 1 when
the recorded violation reproduces with the recorded fingerprint, 3 when the
fingerprint differs, 0 (with a "fixed:" note) when the run no longer fails.

--format mermaid prints a Mermaid sequence diagram instead of the timeline (a
failing run of more than 60 events is shrunk first and its story drawn); the
lines after it are Mermaid comments, and the last line also goes to stderr.
--html FILE writes a self-contained HTML timeline of the replayed run.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputs(format, htmlPath); err != nil {
				return err
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
			replayCmd := "orchsim replay " + args[0]
			err = printReport(out, cfg, &res, format, replayCmd)
			if err != nil {
				return &exitError{code: exitHarness, msg: err.Error()}
			}
			if err := writeHTML(htmlPath, &res, replayCmd); err != nil {
				return err
			}
			status := statusLines{out: out, err: cmd.ErrOrStderr(), mermaid: format == "mermaid"}
			got := replay.FormatFingerprint(res.Fingerprint)
			switch {
			case res.Violation == nil && f.Violation != nil:
				status.note(fmt.Sprintf("fixed: %s no longer fails (recorded %s; fingerprint now %s, recorded %s: the models changed, or the file was edited); delete it or keep it as a passing regression",
					args[0], f.Violation.Invariant, replay.FormatFingerprint(res.Fingerprint), f.Fingerprint))
				status.last(lastLine(&res))
				return nil
			case !f.FingerprintComparable():
				status.note(fmt.Sprintf("not compared: %s is replay format %d, whose fingerprint this build no longer computes (this run gave %s); re-record it with orchsim shrink %s",
					args[0], f.Version, got, args[0]))
				status.last(lastLine(&res))
				if res.Failed() {
					return &exitError{code: exitViolation}
				}
				return nil
			case got != f.Fingerprint:
				status.last(lastLine(&res))
				return &exitError{code: exitHarness, msg: fmt.Sprintf(
					"fingerprint mismatch: %s recorded %s, this run gave %s (nondeterminism, or the models changed since it was recorded)",
					args[0], f.Fingerprint, got)}
			}
			status.note("fingerprint matches: " + got)
			status.last(lastLine(&res))
			if res.Failed() {
				return &exitError{code: exitViolation}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "timeline format: text, json or mermaid")
	cmd.Flags().StringVar(&htmlPath, "html", "", "also write a self-contained HTML timeline to FILE")
	return cmd
}
