package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/report"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
	"github.com/orchsim/orchsim/triage"
)

// formats are the values of --format.
var formats = []string{"text", "json", "mermaid"}

// outFile is an output file flag and its value ("" when not given).
type outFile struct{ flag, path string }

// checkOutputs validates --format and, before anything runs, the output
// files: each must be writable where it is (see checkOutputFile), and no
// two may name the same file, or one output would silently replace the
// other. A bad path is bad input: exit 2 with nothing run, so that a run's
// verdict is never reported as a usage error.
func checkOutputs(format string, files ...outFile) error {
	if !slices.Contains(formats, format) {
		return usageErr("unknown --format %q (want text, json or mermaid)", format)
	}
	for _, f := range files {
		if f.path == "" {
			continue
		}
		if err := notDash(f.flag, f.path); err != nil {
			return err
		}
		if err := checkOutputFile(f.path); err != nil {
			return usageErr("%s %s: %v", f.flag, f.path, err)
		}
		// json and mermaid promise a stdout a parser can read (JSON lines,
		// one diagram): a file written into it would break that.
		if fd, ok := replay.StreamFD(f.path); ok && fd == 1 && format != "text" {
			return usageErr("%s %s: --format %s keeps stdout machine-readable; write %s to a file", f.flag, f.path, format, f.flag)
		}
	}
	return checkDistinct(files...)
}

// checkOutputFile reports why path cannot be written atomically, as
// replay.WriteFileAtomic writes it: a symbolic link is checked at its
// target, and a device or pipe (/dev/null) is taken as it is, since
// probing it would write to it; a stream (/dev/stdout, /dev/fd/N, see
// replay.StreamFD) must name a descriptor open for writing. (A device that then
// refuses the write, such as /dev/full, fails after the run: exit 3.)
func checkOutputFile(path string) error {
	if fd, ok := replay.StreamFD(path); ok {
		return replay.CheckStream(fd, path)
	}
	target, err := replay.WriteTarget(path)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(target); err == nil && !fi.IsDir() && !fi.Mode().IsRegular() {
		return nil
	}
	if err := checkWritable(target); err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("a link to %s: %w", target, err)
		}
		return err
	}
	return nil
}

// checkDistinct refuses two files that are the same file: the same cleaned
// absolute path (after following links), or two names of one existing
// file. Devices, pipes and two streams (/dev/stdout, even redirected to a
// file) are exempt: each write adds to them, none replaces another; a
// stream and the regular file it is redirected to are not (replacing the
// file would lose what goes to the stream). An input is checked with
// checkNotInput, which exempts no stream.
func checkDistinct(files ...outFile) error {
	for i, f := range files {
		for _, g := range files[:i] {
			if f.path != "" && g.path != "" && sameFile(g.path, f.path) {
				return usageErr("%s and %s name the same file %s", g.flag, f.flag, f.path)
			}
		}
	}
	return nil
}

// sameFile reports whether writes to a and b would land on one regular
// file (existing or to be created).
func sameFile(a, b string) bool {
	_, streamA := replay.StreamFD(a)
	_, streamB := replay.StreamFD(b)
	if streamA && streamB {
		return false
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return fa.Mode().IsRegular() && os.SameFile(fa, fb)
	}
	return errA != nil && errB != nil && absTarget(a) == absTarget(b)
}

// checkNotInput refuses an output that would write to the input file in:
// the same file by sameFile, the same descriptor (/dev/fd/5 for both), or
// a stream whose descriptor is open on the input's regular file through
// another name or descriptor (its write would add to, or overwrite, the
// file just read). Unlike checkDistinct, two streams are not exempt.
func checkNotInput(in outFile, outs ...outFile) error {
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		same := sameFile(in.path, o.path)
		fdIn, streamIn := replay.StreamFD(in.path)
		fdOut, streamOut := replay.StreamFD(o.path)
		if streamIn && streamOut && fdIn == fdOut {
			same = true // one descriptor: the output would go where the input came from
		} else if streamOut && !same {
			fi, errI := os.Stat(in.path)
			fo, errO := os.Stat(o.path) // a stream's name stats its descriptor's file
			same = errI == nil && errO == nil && fi.Mode().IsRegular() && os.SameFile(fi, fo)
		}
		if same {
			return usageErr("%s and %s name the same file %s", in.flag, o.flag, o.path)
		}
	}
	return nil
}

// absTarget is the cleaned absolute path a write to path lands on.
func absTarget(path string) string {
	if t, err := replay.WriteTarget(path); err == nil {
		path = t
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

// output is one file a command writes after its run: the flag that asked
// for it, its path ("" when not asked for) and its bytes.
type output struct {
	flag, path string
	data       func() ([]byte, error)
}

// htmlOutput is the --html report of res.
// When the run violated, the report names its group by root cause
// (triage.MinimalFixes from cfg, the configuration it was run from) and
// links the reports the group reproduces.
func htmlOutput(path string, cfg scenarios.Config, res *scenarios.Result, replayCmd string, nr *report.NoReturn) output {
	return output{"--html", path, func() ([]byte, error) {
		r := report.FromResult(res, replayCmd)
		r.NoReturn = nr
		if v := res.Violation; v != nil && v.Invariant != sim.ModelPanic {
			if key, _, err := triage.MinimalFixes(cfg, v.Invariant); err == nil {
				r.Group = &report.Group{Invariant: key.Invariant, Switches: key.Switches}
				for _, rep := range triage.Reports(key.Switches) {
					r.Group.Reports = append(r.Group.Reports, catalog.Report(rep))
				}
			}
		}
		return report.HTML(r), nil
	}}
}

// stdStreams are the command's stdout and stderr, which an output named
// /dev/stdout or /dev/stderr (or /dev/fd/1, /proc/self/fd/2, ...) is
// written to, in order with what the command prints there.
type stdStreams struct{ out, err io.Writer }

// saveOutputs writes each asked-for file atomically, all of them even when
// one fails; a stream (replay.StreamFD, such as /dev/stdout) is written to
// through its descriptor, never truncated or replaced. Their paths were
// checked before the run, so a failure now (a full disk, /dev/full) is the
// harness failing to save a run that did complete: the error is exit 3,
// and the caller prints the run's last line before returning it.
func saveOutputs(outs ...output) error { return saveOutputsTo(stdStreams{}, outs...) }

// saveOutputsTo is saveOutputs with the command's own stdout and stderr:
// an output naming fd 1 or 2 is written to them, in order with what the
// command printed there before (a buffered timeline included).
func saveOutputsTo(std stdStreams, outs ...output) error {
	var failed []string
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		b, err := o.data()
		if err == nil {
			err = std.write(o.path, b)
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s %s: %v", o.flag, o.path, err))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &exitError{code: exitHarness, msg: fmt.Sprintf("the run completed but could not be saved: %s",
		strings.Join(failed, "; "))}
}

// write writes data to path: to std.out or std.err when path names fd 1
// or 2 and they are set, otherwise with replay.WriteFileAtomic (which
// writes any other stream through its descriptor, and replaces a file
// atomically).
func (std stdStreams) write(path string, data []byte) error {
	var w io.Writer
	if fd, ok := replay.StreamFD(path); ok && fd == 1 {
		w = std.out
	} else if ok && fd == 2 {
		w = std.err
	}
	if w == nil {
		return replay.WriteFileAtomic(path, data)
	}
	_, err := w.Write(data)
	return err
}

// checkFiles checks output files before the work, as run checks its own
// (checkOutputs): each writable where it is, no two the same file. A bad
// one is bad usage, exit 2, with nothing run.
func checkFiles(files ...outFile) error { return checkOutputs("text", files...) }

// checkWritable makes sure an output file can be written before a long
// campaign starts ("" is fine: no file asked for).
func checkWritable(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	probe, err := os.CreateTemp(dir, ".orchsim-write-check-*")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// resolveIn makes a relative *file (a summary's replay file) the one in dir
// (the summary's own directory, a shard's artifact) when it is there.
func resolveIn(dir string, file *string) {
	if *file != "" && !filepath.IsAbs(*file) {
		if p := filepath.Join(dir, *file); exists(p) {
			*file = p
		}
	}
}
