package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// integerFlags lists every integer flag of every command: command name,
// flag, and whether its type is signed.
func integerFlags(t *testing.T) (flags []struct {
	cmd    string
	flag   *pflag.Flag
	signed bool
}) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRoot(&out, &errb)
	for _, c := range root.Commands() {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			typ := f.Value.Type()
			switch typ {
			case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
			default:
				return
			}
			// These tests set a value many times to test its parsing; the
			// once wrapper (a flag given twice) is tested on its own.
			g := *f
			if o, ok := g.Value.(*once); ok {
				g.Value = o.Value
			}
			flags = append(flags, struct {
				cmd    string
				flag   *pflag.Flag
				signed bool
			}{c.Name(), &g, !strings.HasPrefix(typ, "u")})
		})
	}
	require.GreaterOrEqual(t, len(flags), 9, "run --seed, --event-budget; fuzz --seeds, --start, --workers, --shrink-runs; shrink --runs; mutants --seeds, --workers; bench --memory-seeds")
	return flags
}

// An integer flag is digits, after a "-": never a "+" (strconv.ParseInt
// takes one), and "-0" is 0 for every type, signed or unsigned (the flag's
// own check decides whether 0 is a value); any other negative value of an
// unsigned type is refused.
func TestFlags_IntegersTakeNoPlusSign(t *testing.T) {
	for _, f := range integerFlags(t) {
		name := f.cmd + " --" + f.flag.Name
		for _, bad := range []string{"+1", "+0", "+010", "++1", "-+1", "+-1", "--0", "-", ""} {
			assert.Error(t, f.flag.Value.Set(bad), "%s %s", name, bad)
		}
		require.NoError(t, f.flag.Value.Set("07"), name)
		assert.Equal(t, "7", f.flag.Value.String(), name)
		require.NoError(t, f.flag.Value.Set("-0"), name)
		assert.Equal(t, "0", f.flag.Value.String(), name)
		require.NoError(t, f.flag.Value.Set("-000"), name)
		assert.Equal(t, "0", f.flag.Value.String(), name)
		if f.signed {
			require.NoError(t, f.flag.Value.Set("-010"), name)
			assert.Equal(t, "-10", f.flag.Value.String(), name)
		} else {
			assert.EqualError(t, f.flag.Value.Set("-010"), "must not be negative (0 to 18446744073709551615)", name)
		}
	}
}

// A value outside the flag type's range is refused, naming the range.
func TestFlags_OutOfRangeNamesTheRange(t *testing.T) {
	for _, f := range integerFlags(t) {
		name := f.cmd + " --" + f.flag.Name
		if f.signed {
			want := "out of range (-9223372036854775808 to 9223372036854775807)"
			assert.EqualError(t, f.flag.Value.Set("9223372036854775808"), want, name)
			assert.EqualError(t, f.flag.Value.Set("-9223372036854775809"), want, name)
			require.NoError(t, f.flag.Value.Set("-9223372036854775808"), name)
		} else {
			assert.EqualError(t, f.flag.Value.Set("18446744073709551616"), "out of range (0 to 18446744073709551615)", name)
			require.NoError(t, f.flag.Value.Set("18446744073709551615"), name)
		}
	}
	code, out, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "18446744073709551616")
	assertUsage(t, code, out, errOut, `"18446744073709551616" for "--seed" flag: out of range (0 to 18446744073709551615)`)
}

// The range a flag type names: 8 to 64 bits, signed and unsigned.
func TestFlags_DecimalRanges(t *testing.T) {
	var i8 int8
	var u16 uint16
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.Int8Var(&i8, "i8", 0, "")
	fs.Uint16Var(&u16, "u16", 0, "")
	assert.EqualError(t, decimal{fs.Lookup("i8").Value}.Set("128"), "out of range (-128 to 127)")
	assert.EqualError(t, decimal{fs.Lookup("u16").Value}.Set("65536"), "out of range (0 to 65535)")
	require.NoError(t, decimal{fs.Lookup("u16").Value}.Set("-0"))
	assert.Equal(t, uint16(0), u16)
}

// On the command line, "+N" for any integer flag of any command is bad
// usage before anything runs: exit 2, one line naming the value and the
// flag (commands that take a file fail on the flag first).
func TestFlags_PlusSignIsBadUsageEverywhere(t *testing.T) {
	for _, f := range integerFlags(t) {
		t.Run(f.cmd+"/"+f.flag.Name, func(t *testing.T) {
			args := []string{f.cmd, "--" + f.flag.Name, "+5"}
			if f.cmd == "shrink" {
				args = append(args, "F")
			}
			code, out, errOut := cliWithMerge(t, args...)
			assertUsage(t, code, out, errOut, `"+5"`, "--"+f.flag.Name, "no + sign")
		})
	}
}

// The review's command lines, and "-0" where 0 is not a valid value.
func TestFlags_ReviewedCommandLines(t *testing.T) {
	for _, args := range [][]string{
		{"shrink", "F", "--runs", "+5"},
		{"run", "--scenario", "tab-ownership", "--seed", "5", "--event-budget", "+5"},
		{"fuzz", "--scenario", "request-retry", "--seeds", "1", "--workers", "+1"},
		{"fuzz", "--scenario", "request-retry", "--seeds", "1", "--shrink-runs", "+3"},
		{"mutants", "--seeds", "1", "--workers", "+1"},
		{"bench", "--quick", "--memory-seeds", "+1"},
		{"fuzz", "--scenario", "request-retry", "--seeds", "1", "--workers", "-0"},
		{"mutants", "--seeds", "1", "--workers", "-0"},
		{"bench", "--quick", "--memory-seeds", "-0"},
		{"fuzz", "--scenario", "request-retry", "--seeds", "-0"},
		{"mutants", "--seeds", "-0"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := cli(t, args...)
			assertUsage(t, code, out, errOut)
		})
	}
	// -0 is 0 where 0 is a value: no shrinking, seed 0, a campaign from seed 0.
	code, out, errOut := cli(t, "fuzz", "--scenario", "request-retry", "--profile", "fixed", "--seeds", "1", "--shrink-runs", "-0")
	assert.Equal(t, exitOK, code, "%s%s", out, errOut)
	code, out, errOut = cli(t, "run", "--scenario", "tab-ownership", "--seed", "-0")
	_, zeroOut, _ := cli(t, "run", "--scenario", "tab-ownership", "--seed", "0")
	assert.Contains(t, []int{exitOK, exitViolation}, code, errOut)
	assert.Equal(t, zeroOut, out, "run --seed -0 is run --seed 0")
	code, out, errOut = cli(t, "fuzz", "--scenario", "request-retry", "--profile", "fixed", "--seeds", "1", "--start", "-0")
	assert.Equal(t, exitOK, code, "%s%s", out, errOut)
}

// --workers is 1 to maxWorkers; not given, it is the number of CPUs; no
// more workers start than there are jobs (and at least one).
func TestWorkersFlag(t *testing.T) {
	parse := func(args ...string) *cobra.Command {
		c := &cobra.Command{}
		c.Flags().Int("workers", 0, "")
		require.NoError(t, c.Flags().Parse(args))
		return c
	}
	for _, tc := range []struct {
		args    []string
		workers int
		jobs    int64
		want    int
	}{
		{nil, 0, -1, defaultWorkers()},
		{nil, 0, 1, 1},
		{[]string{"--workers", "3"}, 3, -1, 3},
		{[]string{"--workers", "3"}, 3, 2, 2},
		{[]string{"--workers", "3"}, 3, 0, 1},
		{[]string{"--workers", fmt.Sprint(maxWorkers())}, maxWorkers(), 40, 40},
		{[]string{"--workers", fmt.Sprint(maxWorkers())}, maxWorkers(), 1 << 40, maxWorkers()},
	} {
		got, err := workersFlag(parse(tc.args...), tc.workers, tc.jobs)
		require.NoError(t, err, "%v jobs %d", tc.args, tc.jobs)
		assert.Equal(t, tc.want, got, "%v jobs %d", tc.args, tc.jobs)
	}
	for _, w := range []int{0, -1, maxWorkers() + 1, 100_000_000} {
		_, err := workersFlag(parse("--workers", fmt.Sprint(w)), w, 3)
		var ee *exitError
		require.ErrorAs(t, err, &ee, "%d", w)
		assert.Equal(t, exitUsage, ee.code)
	}
	assert.LessOrEqual(t, defaultWorkers(), maxWorkers())
}

// --event-budget has a real default; 0 and negatives are bad usage.
func TestRun_EventBudgetMustBePositive(t *testing.T) {
	for _, v := range []string{"0", "-1"} {
		code, _, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "1", "--event-budget", v)
		assert.Equal(t, exitUsage, code, v)
		assert.Equal(t, "orchsim: --event-budget must be positive (default 5000000), got "+v+"\n", errOut)
	}
}

// A bad input reports the error the user made first, in words that name
// it: a misspelt scenario before a missing flag, a stray word as a stray
// argument (not as an unknown command), a missing file as a missing file.
func TestBadInput_NamesTheMistake(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--scenario", "nope"}, `orchsim: unknown scenario "nope"`},
		{[]string{"fuzz", "--scenario", "nope"}, `orchsim: unknown scenario "nope"`},
		{[]string{"bench", "extra"}, `orchsim: bench takes no arguments, got "extra"`},
		{[]string{"fuzz", "--scenario", "chaos", "1000"}, `orchsim: fuzz takes no arguments, got "1000"`},
		{[]string{"list", "bugs"}, `orchsim: list takes no arguments, got "bugs"`},
		{[]string{"replay"}, "orchsim: replay needs a replay file"},
		{[]string{"replay", "a.json", "b.json"}, `orchsim: replay takes one argument, a replay file (FILE); got 2: "a.json b.json"`},
		{[]string{"shrink"}, "orchsim: shrink needs a replay file"},
		{[]string{"explain"}, "orchsim: explain needs a replay file"},
		{[]string{"script"}, "orchsim: script needs a script file or directory"},
	}
	for _, c := range cases {
		code, _, errOut := cli(t, c.args...)
		assert.Equal(t, exitUsage, code, "%v", c.args)
		assert.True(t, strings.HasPrefix(errOut, c.want), "%v: stderr %q, want it to start %q", c.args, errOut, c.want)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%v: one line, got %q", c.args, errOut)
	}
}
