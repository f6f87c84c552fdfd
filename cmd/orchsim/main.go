// Command orchsim runs deterministic simulations of agent-orchestration
// servers (T3 Code's provider sessions, MCP credentials and preview tabs),
// finds the reported lifecycle bugs from random seeds, and replays them.
//
// Exit status: 0 all invariants held; 1 a violation was found; 2 bad usage
// or input; 3 the harness itself failed (nondeterminism, a fingerprint that
// does not match its replay file, an output or stdout itself that could
// not be written), with one line on stderr.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses (DESIGN.md CLI contract).
const (
	exitOK        = 0
	exitViolation = 1
	exitUsage     = 2
	exitHarness   = 3
)

// exitError carries an exit status; msg, when set, is printed on stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI with args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "orchsim: internal error: %v\n", r)
			code = exitHarness
		}
	}()
	out := &checkedWriter{w: stdout}
	root := newRoot(out, stderr)
	root.SetArgs(args)
	err := root.Execute()
	var ee *exitError
	isExit := errors.As(err, &ee)
	if out.err != nil {
		// One rule for every subcommand: output that could not be written
		// to stdout (a full disk, /dev/full, a closed pipe) is the harness
		// failing, whatever the command found: exit 3, one line on stderr.
		msg := fmt.Sprintf("cannot write to stdout: %v", out.err)
		if isExit && ee.code == exitHarness && ee.msg != "" && !strings.Contains(ee.msg, out.err.Error()) {
			msg += "; and " + ee.msg
		}
		fmt.Fprintf(stderr, "orchsim: %s\n", msg)
		return exitHarness
	}
	if err == nil {
		return exitOK
	}
	if isExit {
		if ee.msg != "" {
			fmt.Fprintf(stderr, "orchsim: %s\n", ee.msg)
		}
		return ee.code
	}
	// Anything else comes from cobra's flag and argument parsing.
	fmt.Fprintf(stderr, "orchsim: %s\n", oneLine(err.Error()))
	return exitUsage
}

// oneLine keeps an error from cobra's parsing on the one line every bad
// usage gets, should one span several.
func oneLine(msg string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(msg), "\n", " ; ")), " ")
}

// checkedWriter is the commands' stdout: it keeps the first write error,
// after which it writes nothing more (a full stdout stays full), so run
// can report it whichever command printed.
type checkedWriter struct {
	w   io.Writer
	err error
}

// Write implements io.Writer.
func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	c.err = err
	return n, err
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "orchsim",
		Short: "Deterministic simulation of agent-orchestration server lifecycles",
		Long: `orchsim runs models of T3 Code's provider sessions, MCP credential registry and
preview browser host on a virtual clock, through seeded randomized restarts, idle
timeouts and faults, and checks invariants over what happened.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newListCmd(), newRunCmd(), newReplayCmd(), newFuzzCmd(), newShrinkCmd(), newExplainCmd(), newMutantsCmd(), newMergeCmd(), newBenchCmd(), newScriptCmd())
	// cobra's completion command prints its help and exits 0 on an unknown
	// shell; like every other command, an unknown argument is bad usage.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if run := c.RunE; seedCommands[c.Name()] && run != nil {
			c.RunE = func(cmd *cobra.Command, args []string) error {
				applySeedGC()
				if w := gogcWarning(os.Getenv); w != "" {
					fmt.Fprintln(cmd.ErrOrStderr(), w)
				}
				return run(cmd, args)
			}
		}
		if c.Name() == "completion" {
			c.Args = cobra.ArbitraryArgs
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					return usageErr("completion: unknown shell %q (want bash, fish, powershell or zsh)", args[0])
				}
				return cmd.Help()
			}
		}
	}
	// Bare orchsim is a call without a command (as for go(1), exit 2): the
	// help on stdout, one line on stderr. An unknown command names the
	// nearest ones on the same line; `orchsim help TOPIC` of an unknown
	// topic is bad usage too (cobra prints a notice and exits 0).
	root.SuggestionsMinimumDistance = 2
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.Name())
		if near := cmd.SuggestionsFor(args[0]); len(near) > 0 {
			msg += " (did you mean " + strings.Join(near, " or ") + "?)"
		}
		return usageErr("%s", msg)
	}
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cmd.Help(); err != nil {
			return err
		}
		return usageErr("no command given: orchsim COMMAND [flags] (orchsim help lists the commands)")
	}
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			c.RunE = func(cmd *cobra.Command, args []string) error {
				target, rest, err := root.Find(args)
				if err != nil || len(rest) > 0 || target == nil {
					msg := fmt.Sprintf("help: unknown command %q", strings.Join(args, " "))
					var near []string
					if len(args) > 0 {
						near = root.SuggestionsFor(args[0])
					}
					if len(near) > 0 {
						msg += " (did you mean " + strings.Join(near, " or ") + "?)"
					} else {
						msg += " (orchsim help lists them)"
					}
					return usageErr("%s", msg)
				}
				return target.Help()
			}
			c.Run = nil
		}
	}
	strictFlags(root)
	return root
}
