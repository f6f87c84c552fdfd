package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/orchsim/orchsim/model"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// strictFlags makes every integer flag of cmd and its subcommands read
// plain base 10 (decimal), and every string and list flag refuse an
// empty value (nonEmpty). pflag parses them like Go literals, so --seed 010 ran seed
// 8 and 0x10 seed 16; seed lists are often zero-padded, and a seed is a
// number, not a literal: 010 is 10, and 0x10 or 0b11 is bad usage.
func strictFlags(cmd *cobra.Command) {
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		switch f.Value.Type() {
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
			if _, done := f.Value.(decimal); !done {
				f.Value = decimal{f.Value}
			}
		case "string", "stringSlice":
			if _, done := f.Value.(nonEmpty); !done {
				f.Value = nonEmpty{f.Value}
			}
		}
		// A value flag given twice is a contradiction (which one was
		// meant?), and a list naming one thing twice a typo.
		switch {
		case f.Value.Type() == "count", f.Name == "help":
		default:
			// A boolean given twice too: --keep-going=false --keep-going
			// contradicts itself.
			if _, done := f.Value.(*once); !done {
				f.Value = &once{Value: f.Value, name: f.Name}
			}
		}
	})
	for _, c := range cmd.Commands() {
		strictFlags(c)
	}
}

// nonEmpty is a string or list flag value that refuses an empty value
// ("--profile \"\"", "--out \"\"") and, for a list, an empty name in it
// ("--fix a,,b"): one rule for every flag, where some flags took "" as
// "not given" and others refused it. A flag that is not wanted is left out.
type nonEmpty struct{ pflag.Value }

// Set implements pflag.Value.
func (v nonEmpty) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("must not be empty (leave the flag out instead)")
	}
	if v.Type() == "stringSlice" {
		for _, name := range strings.Split(s, ",") {
			if strings.TrimSpace(name) == "" {
				return fmt.Errorf("%q has an empty name", s)
			}
		}
	}
	return v.Value.Set(s)
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

// unfixUsage is the help of --unfix, on every command that has it.
const unfixUsage = "fix switches to turn off after the preset and --fix, comma-separated (--profile fixed --unfix X: every fix but X)"

// once is a flag value that refuses to be set twice (--seed 5 --seed 6),
// and, for a list, a name repeated in it or across repeats of the flag
// (--fix a,a; --unfix a --unfix a).
type once struct {
	pflag.Value
	name string
	set  bool
}

// Set implements pflag.Value.
func (v *once) Set(s string) error {
	list, isList := sliceOf(v.Value)
	if v.set && !isList {
		return fmt.Errorf("given twice (--%s takes one value)", v.name)
	}
	if err := v.Value.Set(s); err != nil {
		return err
	}
	v.set = true // a refused value does not count
	if isList {
		seen := map[string]bool{}
		for _, n := range list.GetSlice() {
			if seen[n] {
				return fmt.Errorf("names %s twice", n)
			}
			seen[n] = true
		}
	}
	return nil
}

// sliceOf returns the list value under v's wrappers.
func sliceOf(v pflag.Value) (pflag.SliceValue, bool) {
	for {
		switch w := v.(type) {
		case pflag.SliceValue:
			return w, true
		case nonEmpty:
			v = w.Value
		default:
			return nil, false
		}
	}
}

// noReturnUsage is --no-return's help on run and replay.
const noReturnUsage = "on a failure, find its point of no return (the earliest event after which 95% of reseeded continuations fail; about 250 extra runs) and mark it in the timeline, the story and the HTML report"

// noReturnFormat refuses --no-return where nothing would show the point: a
// JSON timeline without an HTML report.
func noReturnFormat(noReturn bool, format, html string) error {
	if noReturn && format == "json" && html == "" {
		return usageErr("--no-return marks the text timeline, the mermaid story or the --html report; --format json has no place for it")
	}
	return nil
}

// unfixOff refuses an --unfix that turns nothing off: a switch the profile
// it applies to (before is the profile without the --unfix) already has
// off, such as any switch under --profile reported or one upstream never
// merged under --profile upstream. Silently accepted, it would read as
// "this bug alone" while the run has it and every other one.
func unfixOff(before model.Profile, unfix []string) error {
	for _, u := range unfix {
		u = strings.TrimSpace(u)
		if u != "" && !before.Fixed(model.Switch(u)) {
			return usageErr("--unfix %s: the switch is already off under profile %s (--unfix turns off a fix the preset or --fix turned on)", u, before)
		}
	}
	return nil
}

// noArgs refuses positional arguments with a message that says so; cobra's
// own NoArgs calls a stray word an "unknown command", which reads as a
// misspelt subcommand when it is usually a flag's value without its flag
// (`fuzz --scenario chaos 1000`).
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErr("%s takes no arguments, got %q (flags start with --)", cmd.Name(), strings.Join(args, " "))
	}
	return nil
}

// oneArg accepts exactly one positional argument, what it names (a replay
// file, say), with a message naming it rather than cobra's "accepts 1
// arg(s), received 0".
func oneArg(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch len(args) {
		case 1:
			return nil
		case 0:
			return usageErr("%s needs %s", cmd.Name(), what)
		default:
			return usageErr("%s takes one argument, %s; got %d: %q", cmd.Name(), what, len(args), strings.Join(args, " "))
		}
	}
}

// someArgs accepts one or more positional arguments, what they name.
func someArgs(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usageErr("%s needs %s", cmd.Name(), what)
		}
		return nil
	}
}
