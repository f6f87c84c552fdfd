package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orchsim/orchsim/script"
)

func newScriptCmd() *cobra.Command {
	var rewrite bool
	cmd := &cobra.Command{
		Use:   "script FILE|DIR... [--rewrite]",
		Short: "Run script files and compare their output with the files'",
		Long: `Run hand-written script files (package script; each names its language on a
"# language: t3|terminal" line) and print what every command printed. A
directory stands for the script files under it. Exit 1 when a command's
output differs from the file's expected output (a unified diff per command
is printed), 0 when all match; --rewrite writes the actual output into the
files instead (atomically) and exits 0. A parse error or a bad command is
exit 2; a failed write exit 3.`,
		Args: someArgs("a script file or directory (FILE|DIR...)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if err := notDash("script", a); err != nil {
					return err
				}
			}
			files, err := script.Expand(args)
			if err != nil {
				return usageErr("%v", err)
			}
			w := cmd.OutOrStdout()
			var diffs string
			commands, differ, differFiles, rewrote := 0, 0, 0, 0
			for _, path := range files {
				res, err := script.RunFile(path)
				if err != nil {
					return usageErr("%v", err)
				}
				fmt.Fprintf(w, "== %s\n%s", path, res.Transcript())
				commands += len(res.Outputs)
				n := len(res.Mismatches())
				if n == 0 {
					continue
				}
				differ, differFiles = differ+n, differFiles+1
				if rewrite {
					if err := script.WriteAtomic(path, res.Rewritten()); err != nil {
						return &exitError{code: exitHarness, msg: fmt.Sprintf("rewrite %s: %v", path, err)}
					}
					rewrote++
					continue
				}
				diffs += res.Diff()
			}
			switch {
			case rewrite:
				fmt.Fprintf(w, "ok: %d script files, %d commands; rewrote %d files (%d commands changed)\n", len(files), commands, rewrote, differ)
			case differ > 0:
				fmt.Fprintf(w, "%smismatch: %d of %d commands differ in %d of %d script files\n", diffs, differ, commands, differFiles, len(files))
				return &exitError{code: exitViolation}
			default:
				fmt.Fprintf(w, "ok: %d script files, %d commands match\n", len(files), commands)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&rewrite, "rewrite", false, "write the actual output into the files (review the diff)")
	return cmd
}
