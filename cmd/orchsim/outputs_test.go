package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/replay"
)

// assertUsage checks the bad-usage contract: exit 2, one line on stderr,
// and nothing run (stdout empty).
func assertUsage(t *testing.T, code int, out, errOut string, wants ...string) {
	t.Helper()
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out, "nothing ran")
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line on stderr, got %q", errOut)
	assert.True(t, strings.HasPrefix(errOut, "orchsim: "), errOut)
	for _, w := range wants {
		assert.Contains(t, errOut, w)
	}
}

func TestRun_TwoFlagsNamingOneFileIsBadUsage(t *testing.T) {
	dir := t.TempDir()
	x := filepath.Join(dir, "x.json")
	existing := filepath.Join(dir, "existing.json")
	require.NoError(t, os.WriteFile(existing, []byte("{}"), 0o644))
	hard := filepath.Join(dir, "hard.json")
	require.NoError(t, os.Link(existing, hard))
	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink(existing, link))
	dangling := filepath.Join(dir, "dangling.json")
	require.NoError(t, os.Symlink(x, dangling))
	base := []string{"run", "--scenario", "tab-ownership", "--seed", "5"}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"out and trace":         {[]string{"--out", x, "--trace", x}, "--out and --trace name the same file " + x},
		"out and html":          {[]string{"--out", x, "--html", filepath.Join(dir, "sub", "..", "x.json")}, "--out and --html name the same file"},
		"trace and html":        {[]string{"--html", x, "--trace", filepath.Join(dir, ".", "x.json")}, "--trace and --html name the same file"},
		"a hard link":           {[]string{"--out", existing, "--trace", hard}, "--out and --trace name the same file " + hard},
		"a symbolic link":       {[]string{"--out", link, "--html", existing}, "--out and --html name the same file " + existing},
		"a dangling link to it": {[]string{"--out", dangling, "--trace", x}, "--out and --trace name the same file " + x},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := cli(t, append(append([]string{}, base...), tc.args...)...)
			assertUsage(t, code, out, errOut, tc.want)
			_, err := os.Stat(x)
			assert.ErrorIs(t, err, os.ErrNotExist, "nothing written")
		})
	}
	// The same device twice is fine: each write adds to it.
	code, _, errOut := cli(t, append(base, "--profile", "fixed", "--horizon", "1h", "--out", os.DevNull, "--trace", os.DevNull)...)
	assert.Equal(t, exitOK, code, errOut)
}

func TestOutputs_AreCheckedBeforeTheRun(t *testing.T) {
	dir := t.TempDir()
	file, _ := failingReplayFile(t)
	missing := filepath.Join(dir, "nonexistent", "d", "f.json")
	run := []string{"run", "--scenario", "tab-ownership", "--seed", "5"}
	for name, args := range map[string][]string{
		"out a directory":         append(append([]string{}, run...), "--out", dir),
		"out in no directory":     append(append([]string{}, run...), "--out", missing),
		"trace a directory":       append(append([]string{}, run...), "--trace", dir),
		"trace in no directory":   append(append([]string{}, run...), "--trace", missing),
		"html a directory":        append(append([]string{}, run...), "--html", dir),
		"html in no directory":    append(append([]string{}, run...), "--html", missing),
		"out dangling to nowhere": append(append([]string{}, run...), "--out", danglingLink(t, dir, missing)),
		"replay html a directory": {"replay", file, "--html", dir},
		"replay html no dir":      {"replay", file, "--html", missing},
		"replay html over itself": {"replay", file, "--html", file},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := cli(t, args...)
			assertUsage(t, code, out, errOut)
		})
	}
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(b, []byte("{")), "the replay file was not overwritten")
}

func danglingLink(t *testing.T, dir, target string) string {
	t.Helper()
	link := filepath.Join(dir, "to-"+filepath.Base(filepath.Dir(target))+".json")
	require.NoError(t, os.Symlink(target, link))
	return link
}

// A write that fails after the run (a full disk) comes after the run's last
// line: exit 3, one line on stderr, never a usage error.
func TestOutputs_AWriteFailingAfterTheRunIsExit3(t *testing.T) {
	needDevFull(t)
	file, _ := failingReplayFile(t)
	run := []string{"run", "--scenario", "tab-ownership", "--seed", "5"}
	for name, args := range map[string][]string{
		"run out":       append(append([]string{}, run...), "--out", "/dev/full"),
		"run trace":     append(append([]string{}, run...), "--trace", "/dev/full"),
		"run html":      append(append([]string{}, run...), "--html", "/dev/full"),
		"replay html":   {"replay", file, "--html", "/dev/full"},
		"run mermaid":   append(append([]string{}, run...), "--trace", "/dev/full", "--format", "mermaid"),
		"run two fails": append(append([]string{}, run...), "--trace", "/dev/full", "--out", filepath.Join(t.TempDir(), "ok.json"), "--html", "/dev/full"),
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := cli(t, args...)
			assert.Equal(t, exitHarness, code)
			assert.Regexp(t, violationLine, strings.TrimPrefix(lastLineOf(out), "%% "), "the run's last line is printed first")
			assert.Equal(t, 1, strings.Count(lastLineOf(errOut), "\n")+1)
			assert.Contains(t, lastLineOf(errOut), "could not be saved")
			assert.Contains(t, lastLineOf(errOut), "/dev/full")
			assert.True(t, strings.HasPrefix(lastLineOf(errOut), "orchsim: "), errOut)
		})
	}
}

// --out through a dangling link writes the link's target, as the doc of
// replay.WriteFileAtomic says, and leaves the link a link.
func TestRun_OutThroughADanglingLinkWritesItsTarget(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "failure.json")
	require.NoError(t, os.Symlink("real.json", link))
	code, out, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "5", "--out", link)
	require.Equal(t, exitViolation, code, errOut)
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSymlink, "the link is still a link")
	_, err = os.Stat(target)
	require.NoError(t, err, "its target was created")
	code, rout, _ := cli(t, "replay", link)
	assert.Equal(t, exitViolation, code)
	assert.Equal(t, lastLineOf(out), lastLineOf(rout))
}

// Seeds are base-10 numbers: zero-padded lists are common, so 010 is 10,
// and Go literal prefixes (0x, 0b, 0o) are bad usage, not other seeds.
func TestRun_SeedIsBase10(t *testing.T) {
	code, padded, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "010", "--profile", "fixed", "--horizon", "2h")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, lastLineOf(padded), " seed=10 ")
	_, plain, _ := cli(t, "run", "--scenario", "tab-ownership", "--seed", "10", "--profile", "fixed", "--horizon", "2h")
	assert.Equal(t, plain, padded)
	for _, seed := range []string{"0x10", "0b11", "0o7", "1_000", "-1", "18446744073709551616"} {
		code, out, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", seed)
		assertUsage(t, code, out, errOut, `"`+seed+`"`)
	}
}

// Every integer flag of every command reads base 10 (fuzz --start and
// --seeds included): they all go through pflag's literal parser otherwise.
func TestFlags_IntegersAreBase10(t *testing.T) {
	var out, errb bytes.Buffer
	root := newRoot(&out, &errb)
	n := 0
	for _, c := range append(root.Commands(), root) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			switch f.Value.Type() {
			case "int", "int64", "uint", "uint64":
			default:
				return
			}
			n++
			name := c.Name() + " --" + f.Name
			require.NoError(t, f.Value.Set("010"), name)
			assert.Equal(t, "10", f.Value.String(), name)
			for _, bad := range []string{"0x10", "0b11", "0o7", "1e3", ""} {
				assert.Error(t, f.Value.Set(bad), "%s %s", name, bad)
			}
		})
	}
	assert.GreaterOrEqual(t, n, 5, "run --seed and --event-budget, fuzz --seeds, --start and --workers at least")
}

// shrink checks the file it will write before it spends its budget.
func TestShrink_OutputIsCheckedBeforeShrinking(t *testing.T) {
	file, _ := failingReplayFile(t)
	min := strings.TrimSuffix(file, ".json") + ".min.json"
	require.NoError(t, os.Mkdir(min, 0o755))
	code, out, errOut := cli(t, "shrink", file)
	assertUsage(t, code, out, errOut, min, "is a directory")
}

// With stdout redirected to a file, /dev/stdout resolves to that file; an
// output named /dev/stdout (or /dev/fd/1, /proc/self/fd/1) is a stream: the
// file keeps the timeline, gets the output after it, and the last line
// stays last. Run as its own process, so that stdout is a real descriptor.
func TestRun_OutputsToARedirectedStdoutAreStreams(t *testing.T) {
	dir := t.TempDir()
	for i, args := range [][]string{
		{"--out", "/dev/stdout"},
		{"--out", "/proc/self/fd/1", "--trace", "/dev/fd/1"},
		{"--out", "/dev/stdout", "--html", "/dev/stdout"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("r%d.txt", i))
			stdout, err := os.Create(path)
			require.NoError(t, err)
			var stderr bytes.Buffer
			cmd := command(t, runTab("1", args...)...)
			cmd.Stdout, cmd.Stderr = stdout, &stderr
			err = cmd.Run()
			require.NoError(t, stdout.Close())
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, stderr.String())
			assert.Equal(t, exitViolation, ee.ExitCode(), stderr.String())
			assert.Empty(t, stderr.String())
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			out := string(b)
			assert.True(t, strings.HasPrefix(out, "SEED 1 scenario=tab-ownership "), "the timeline is kept: %.80q", out)
			assert.Contains(t, out, "agentMismatch")
			assert.Regexp(t, violationLine, lastLineOf(out), "the last line is last")
			start := strings.Index(out, "{\n  \"format\": \"orchsim-replay\"")
			require.GreaterOrEqual(t, start, 0, "the replay file is in it")
			end := strings.Index(out[start:], "\n}\n")
			require.Positive(t, end)
			f, err := replay.Parse([]byte(out[start : start+end+3]))
			require.NoError(t, err, "the replay file is whole")
			assert.Equal(t, uint64(1), f.Seed)
			assert.Less(t, strings.Index(out, "agentMismatch"), start, "after the timeline")
		})
	}
}

// In the process itself, /dev/stdout and /dev/stderr are the command's own
// stdout and stderr: the output comes after the timeline, before the last
// line; two streams are not "the same file".
func TestOutputs_StdoutAndStderrAreTheCommandsStreams(t *testing.T) {
	code, out, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "1", "--out", "/dev/stdout", "--html", "/dev/stderr", "--trace", "/dev/stdout")
	assert.Equal(t, exitViolation, code, errOut)
	assert.Regexp(t, violationLine, lastLineOf(out))
	assert.Contains(t, out, `"format": "orchsim-replay"`)
	assert.Contains(t, out, `"actor":"invariant"`)
	assert.True(t, strings.HasPrefix(errOut, "<!DOCTYPE html>"), "%.40q", errOut)

	file, _ := failingReplayFile(t)
	code, out, errOut = cli(t, "replay", file, "--html", "/dev/stdout")
	assert.Equal(t, exitViolation, code, errOut)
	assert.Contains(t, out, "<!DOCTYPE html>")
	assert.Less(t, strings.Index(out, "agentMismatch"), strings.Index(out, "<!DOCTYPE html>"))
	assert.Regexp(t, violationLine, lastLineOf(out))
}

// A stream output must be a descriptor open for writing: /dev/stdin or a
// descriptor redirected with < is bad usage (exit 2, nothing run), not a
// whole run and then exit 3. Run as its own process, for real descriptors.
func TestOutputs_AReadOnlyStreamIsBadUsage(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	require.NoError(t, os.WriteFile(in, []byte("x"), 0o644))
	for _, out := range []string{"/dev/stdin", "/dev/fd/3"} {
		r1, err := os.Open(in)
		require.NoError(t, err)
		r2, err := os.Open(in)
		require.NoError(t, err)
		var stdout, stderr bytes.Buffer
		cmd := command(t, "run", "--scenario", "tab-ownership", "--seed", "1", "--out", out)
		cmd.Stdin, cmd.ExtraFiles, cmd.Stdout, cmd.Stderr = r1, []*os.File{r2}, &stdout, &stderr
		err = cmd.Run()
		r1.Close()
		r2.Close()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, out)
		assertUsage(t, ee.ExitCode(), stdout.String(), stderr.String(), "--out "+out+": ", "open for reading only")
	}
}

// An output on the replay file's own descriptor, or on a descriptor open
// on the replay file, would write into the file just read: bad usage, and
// the file is left as it was.
func TestReplay_AnOutputOnTheInputsDescriptorIsBadUsage(t *testing.T) {
	b := reported(t, "003-")
	file := filepath.Join(t.TempDir(), "c5.json")
	for name, args := range map[string][]string{
		"one descriptor":    {"replay", "/dev/fd/3", "--html", "/dev/fd/3"},
		"two descriptors":   {"replay", "/dev/fd/3", "--html", "/dev/fd/4"},
		"a file and its fd": {"replay", file, "--html", "/dev/fd/4"},
	} {
		require.NoError(t, os.WriteFile(file, b, 0o644))
		rw, err := os.OpenFile(file, os.O_RDWR, 0)
		require.NoError(t, err)
		app, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		var stdout, stderr bytes.Buffer
		cmd := command(t, args...)
		cmd.ExtraFiles, cmd.Stdout, cmd.Stderr = []*os.File{rw, app}, &stdout, &stderr
		err = cmd.Run()
		rw.Close()
		app.Close()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, name)
		assertUsage(t, ee.ExitCode(), stdout.String(), stderr.String(), "the replay file and --html name the same file")
		got, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Equal(t, string(b), string(got), name)
	}
}

// Under --format json or mermaid stdout stays machine-readable: an output
// file may not be written into it.
func TestOutputs_MachineReadableStdoutTakesNoFiles(t *testing.T) {
	for _, format := range []string{"json", "mermaid"} {
		code, out, errOut := cli(t, "run", "--scenario", "tab-ownership", "--seed", "1", "--format", format, "--out", "/dev/stdout")
		assert.Equal(t, exitUsage, code, format)
		assert.Empty(t, out, format)
		assert.Equal(t, "orchsim: --out /dev/stdout: --format "+format+" keeps stdout machine-readable; write --out to a file\n", errOut)
	}
}

// needDevFull makes sure /dev/full (a device every write to fails with
// ENOSPC) is there: Linux always has it, so its absence there fails the
// test; elsewhere the test cannot be run and is skipped.
func needDevFull(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/full"); err != nil {
		if runtime.GOOS == "linux" {
			t.Fatalf("/dev/full is missing: %v", err)
		}
		t.Skipf("no /dev/full on %s", runtime.GOOS)
	}
}
