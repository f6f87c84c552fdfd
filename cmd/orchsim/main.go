// Command orchsim runs deterministic simulations of agent-orchestration
// servers (T3 Code's provider sessions, MCP credentials and preview tabs),
// finds the reported lifecycle bugs from random seeds, and replays them.
//
// Exit status: 0 all invariants held; 1 a violation was found; 2 bad usage
// or input; 3 the harness itself failed (nondeterminism, a fingerprint that
// does not match its replay file).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(stderr, "orchsim: %s\n", ee.msg)
		}
		return ee.code
	}
	// Anything else comes from cobra's flag and argument parsing.
	fmt.Fprintf(stderr, "orchsim: %v\n", err)
	return exitUsage
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
	decimalIntegers(root)
	return root
}

// decimalIntegers makes every integer flag of cmd and its subcommands read
// plain base 10. pflag parses them like Go literals, so --seed 010 ran seed
// 8 and 0x10 seed 16; seed lists are often zero-padded, and a seed is a
// number, not a literal: 010 is 10, and 0x10 or 0b11 is bad usage.
func decimalIntegers(cmd *cobra.Command) {
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		switch f.Value.Type() {
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
			if _, done := f.Value.(decimal); !done {
				f.Value = decimal{f.Value}
			}
		}
	})
	for _, c := range cmd.Commands() {
		decimalIntegers(c)
	}
}

// decimal is an integer flag value that accepts base-10 digits only
// (leading zeros are fine), after a leading "-": no "+" (strconv.ParseInt
// takes one, pflag's unsigned types do not). "-0" is 0 for every type,
// signed or not (the flag's own checks then accept or refuse 0); any other
// negative value of an unsigned type is refused. A value outside the
// type's range is refused, naming the range.
type decimal struct{ pflag.Value }

// intBits is the size in bits of an integer flag type ("int", "uint64", ...).
func intBits(typ string) int {
	bits, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(typ, "u"), "int"))
	if err != nil {
		return strconv.IntSize
	}
	return bits
}

// Set implements pflag.Value.
func (d decimal) Set(s string) error {
	if strings.HasPrefix(s, "+") {
		return errors.New("want a base-10 integer (no + sign)")
	}
	typ := d.Type()
	bits := intBits(typ)
	var canon, span string
	var err error
	if strings.HasPrefix(typ, "u") {
		digits, negative := strings.CutPrefix(s, "-")
		var v uint64
		v, err = strconv.ParseUint(digits, 10, bits)
		span = "0 to " + strconv.FormatUint(^uint64(0)>>(64-bits), 10)
		switch {
		case err == nil && negative && v != 0:
			return fmt.Errorf("must not be negative (%s)", span)
		case negative && errors.Is(err, strconv.ErrRange):
			return fmt.Errorf("must not be negative (%s)", span)
		}
		canon = strconv.FormatUint(v, 10)
	} else {
		var v int64
		v, err = strconv.ParseInt(s, 10, bits)
		most := int64(^uint64(0) >> (65 - bits))
		span = strconv.FormatInt(-most-1, 10) + " to " + strconv.FormatInt(most, 10)
		canon = strconv.FormatInt(v, 10)
	}
	switch {
	case errors.Is(err, strconv.ErrRange):
		return fmt.Errorf("out of range (%s)", span)
	case err != nil:
		return errors.New("want a base-10 integer")
	}
	// The wrapped value parses the canonical digits (no leading zero left
	// to read as octal, no "-0").
	return d.Value.Set(canon)
}
