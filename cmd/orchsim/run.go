package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/report"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
)

type runFlags struct {
	scenario    string
	seed        uint64
	profile     string
	fixes       []string
	unfix       []string
	mutants     []string
	horizon     time.Duration
	trace       string
	out         string
	format      string
	html        string
	strategy    string
	eventBudget int64
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run --scenario S --seed N",
		Short: "Run one seeded simulation and print its timeline",
		Long: `Run one seeded simulation and print its timeline, one event per line. The last
line is exactly one of
  violation: <invariant> at T+<hh:mm:ss.mmm> seed=<N> fingerprint=<16 hex>   (exit 1)
  ok: <events> events, <virtual duration> virtual, seed=<N> fingerprint=<16 hex>   (exit 0)

--format json prints one JSON object per event, then that line. --format mermaid
prints a Mermaid sequence diagram (a failing run of more than 60 events is shrunk
first, within 200 candidate runs, and that story drawn, the same on every
machine); stdout stays one valid diagram, so the last
line is that line as a Mermaid comment ("%% violation: ..."), and the line itself
goes to stderr. --html FILE writes a self-contained HTML timeline of the run.

--out, --trace and --html are checked before the run: a file that cannot be
written (no such directory, a directory) or two flags naming the same file is bad
usage (exit 2, nothing run). A write that still fails after the run (a full disk)
comes after the last line: exit 3, with the error on stderr, since the run
completed but could not be saved. Files are replaced atomically, except
/dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N, which are streams: the
output is written to them after the timeline and before the last line, never
truncating or replacing the file they may be redirected to (a stream not open
for writing, such as /dev/stdin, is bad usage).`,
		Example: `  orchsim run --scenario tab-ownership --seed 3
  orchsim run --scenario tab-ownership --seed 3 --profile fixed
  orchsim run --scenario tab-ownership --seed 3 --out failure.json
  orchsim run --scenario tab-ownership --seed 3 --format mermaid > story.mmd
  orchsim run --scenario tab-ownership --seed 3 --html report.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("scenario") || f.scenario == "" {
				return usageErr("run needs --scenario (see orchsim list)")
			}
			if !cmd.Flags().Changed("seed") {
				return usageErr("run needs --seed N")
			}
			if f.horizon < 0 || cmd.Flags().Changed("horizon") && f.horizon == 0 {
				return usageErr("--horizon must be positive, got %s", f.horizon)
			}
			for _, name := range []string{"trace", "out", "html"} {
				if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed && fl.Value.String() == "" {
					return usageErr("--%s needs a file name", name)
				}
			}
			if f.eventBudget < 1 {
				return usageErr("--event-budget must be positive (default %d), got %d", scenarios.DefaultEventBudget, f.eventBudget)
			}
			if err := checkOutputs(f.format, outFile{"--out", f.out}, outFile{"--trace", f.trace}, outFile{"--html", f.html}); err != nil {
				return err
			}
			prof, err := model.Spec{Preset: f.profile, Fix: f.fixes, Unfix: f.unfix, Mutants: f.mutants}.Profile()
			if err != nil {
				return usageErr("%v", err)
			}
			if _, err := scenarios.Lookup(f.scenario); err != nil {
				return usageErr("%v", err)
			}
			strategy, err := scenarios.ParseStrategy(f.strategy)
			if err != nil {
				return usageErr("%v", err)
			}
			cfg := scenarios.Config{Scenario: f.scenario, Seed: f.seed, Profile: prof, Horizon: f.horizon,
				EventBudget: uint64(f.eventBudget),
				Strategy:    strategy, KeepTrace: true, RecordTape: f.out != ""}
			return execute(cmd.OutOrStdout(), cmd.ErrOrStderr(), cfg, outputs{format: f.format, trace: f.trace, out: f.out, html: f.html})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scenario, "scenario", "", "scenario name (see orchsim list)")
	fl.Uint64Var(&f.seed, "seed", 0, "run seed")
	fl.StringVar(&f.profile, "profile", model.PresetReported, "preset: reported or fixed")
	fl.StringSliceVar(&f.fixes, "fix", nil, "fix switches to turn on, comma-separated")
	fl.StringSliceVar(&f.unfix, "unfix", nil, unfixUsage)
	fl.StringSliceVar(&f.mutants, "mutant", nil, "mutants to turn on, comma-separated")
	fl.DurationVar(&f.horizon, "horizon", 0, "virtual duration (default: the scenario's)")
	fl.StringVar(&f.trace, "trace", "", "also write the trace as JSON lines to FILE")
	fl.Int64Var(&f.eventBudget, "event-budget", scenarios.DefaultEventBudget, "most events a run may execute before it is reported as event-budget-exceeded (raise it for very long horizons)")
	fl.StringVar(&f.out, "out", "", "write a replay file to FILE")
	fl.StringVar(&f.format, "format", "text", "timeline format: text, json or mermaid")
	fl.StringVar(&f.html, "html", "", "also write a self-contained HTML timeline to FILE")
	fl.StringVar(&f.strategy, "strategy", string(scenarios.DefaultStrategy), "exploration strategy: random, swarm or pct")
	return cmd
}

// outputs are what run prints and writes besides its last line.
type outputs struct {
	format string // text, json or mermaid
	trace  string // --trace FILE.jsonl
	out    string // --out REPLAY.json
	html   string // --html FILE
}

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

// execute runs cfg, prints the timeline, writes the requested files and
// prints the last line, and returns the exit status as an error (nil for
// ok). The files were checked before (checkOutputs); a write that fails
// anyway is a harness failure reported after the last line (saveOutputs).
func execute(stdout, stderr io.Writer, cfg scenarios.Config, o outputs) error {
	res, err := scenarios.Run(cfg)
	if err != nil {
		return usageErr("%v", err)
	}
	replayCmd := report.RunCommand(&res)
	if o.out != "" {
		replayCmd = "orchsim replay " + o.out
	}
	w := bufio.NewWriter(stdout)
	if err := printReport(w, cfg, &res, o.format, replayCmd); err != nil {
		return &exitError{code: exitHarness, msg: err.Error()}
	}
	saveErr := saveOutputsTo(stdStreams{out: w, err: stderr},
		output{"--trace", o.trace, func() ([]byte, error) { return traceJSON(res.Trace) }},
		output{"--out", o.out, func() ([]byte, error) { return replay.Marshal(replayFile(cfg, &res)) }},
		htmlOutput(o.html, &res, replayCmd))
	status := statusLines{out: w, err: stderr, mermaid: o.format == "mermaid"}
	status.last(lastLine(&res))
	if err := w.Flush(); err != nil {
		return &exitError{code: exitHarness, msg: err.Error()}
	}
	if saveErr != nil {
		return saveErr
	}
	if res.Failed() {
		return &exitError{code: exitViolation}
	}
	return nil
}

// output is one file a command writes after its run: the flag that asked
// for it, its path ("" when not asked for) and its bytes.
type output struct {
	flag, path string
	data       func() ([]byte, error)
}

// htmlOutput is the --html report of res.
func htmlOutput(path string, res *scenarios.Result, replayCmd string) output {
	return output{"--html", path, func() ([]byte, error) {
		return report.HTML(report.FromResult(res, replayCmd)), nil
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

// printReport writes the run in format: the text timeline, JSON lines, or
// a Mermaid diagram of its story (report.Story shrinks a long failing run
// first). cfg is the configuration res was run from.
func printReport(w io.Writer, cfg scenarios.Config, res *scenarios.Result, format, replayCmd string) error {
	if format != "mermaid" {
		return printRun(w, res, format)
	}
	_, err := w.Write(report.Mermaid(report.Story(cfg, res, replayCmd, report.StoryShrink)))
	return err
}

// statusLines prints the lines that follow a timeline (the last line, and
// replay's notes). For text and json they go to stdout as they are. For
// mermaid, stdout must stay one valid diagram: they go there as Mermaid
// comments ("%% violation: ..."), and the last line also goes to stderr,
// exactly as the contract spells it.
type statusLines struct {
	out, err io.Writer
	mermaid  bool
}

// note prints a line that is not the last.
func (s statusLines) note(line string) {
	if s.mermaid {
		line = "%% " + line
	}
	fmt.Fprintln(s.out, line)
}

// last prints the last line.
func (s statusLines) last(line string) {
	s.note(line)
	if s.mermaid {
		fmt.Fprintln(s.err, line)
	}
}

// printRun writes the banner and timeline (text) or one JSON object per
// event (json).
func printRun(out io.Writer, res *scenarios.Result, format string) error {
	w := bufio.NewWriter(out)
	if format == "json" {
		for i := range res.Trace {
			b, err := json.Marshal(jsonEvent(&res.Trace[i]))
			if err != nil {
				return err
			}
			w.Write(append(b, '\n'))
		}
		return w.Flush()
	}
	fmt.Fprintf(w, "SEED %d scenario=%s profile=%s strategy=%s horizon=%s", res.Seed, res.Scenario, res.Profile, res.Strategy, res.Horizon)
	if len(res.Off) > 0 {
		fmt.Fprintf(w, " off=%s", strings.Join(res.Off, ","))
	}
	fmt.Fprintln(w)
	for i := range res.Trace {
		fmt.Fprintln(w, res.Trace[i].Describe())
	}
	return w.Flush()
}

func durationOf(d replay.Duration) time.Duration { return time.Duration(d) }

func lastLine(res *scenarios.Result) string {
	if v := res.Violation; v != nil {
		return fmt.Sprintf("violation: %s at %s seed=%d fingerprint=%s", v.Invariant, sim.FormatT(v.At), res.Seed,
			replay.FormatFingerprint(res.Fingerprint))
	}
	return fmt.Sprintf("ok: %d events, %s virtual, seed=%d fingerprint=%s", res.Events, res.Virtual, res.Seed,
		replay.FormatFingerprint(res.Fingerprint))
}

// replayFile is the replay file of res, run from cfg: its event budget is
// recorded when it is not the default.
func replayFile(cfg scenarios.Config, res *scenarios.Result) *replay.File {
	var budget uint64
	if cfg.EventBudget != scenarios.DefaultEventBudget {
		budget = cfg.EventBudget
	}
	return &replay.File{EventBudget: budget, Scenario: res.Scenario, Strategy: string(res.Strategy), Off: res.Off,
		Profile: res.Profile.Preset(), Fixes: res.Profile.Fixes(), Unfix: res.Profile.Unfixed(),
		Mutants: res.Profile.MutantNames(), Seed: res.Seed, Horizon: replay.Duration(res.Horizon),
		Violation: res.Violation, Fingerprint: replay.FormatFingerprint(res.Fingerprint), Events: res.Events,
		Tape: res.Tape}
}

// traceEvent is the documented JSON shape of one trace event (one per line
// in --trace files and --format json).
type traceEvent struct {
	T       string     `json:"t"`
	AtNanos int64      `json:"at_ns"`
	Seq     uint64     `json:"seq"`
	Actor   string     `json:"actor"`
	Kind    string     `json:"kind"`
	Attrs   []sim.Attr `json:"attrs,omitempty"`
	Outcome string     `json:"outcome,omitempty"`
}

func jsonEvent(e *sim.Event) traceEvent {
	return traceEvent{T: sim.FormatT(e.At), AtNanos: int64(e.At), Seq: e.Seq, Actor: e.Actor, Kind: e.Kind,
		Attrs: e.Attrs, Outcome: e.Outcome}
}

// traceJSON encodes events as JSON lines, one traceEvent per line.
func traceJSON(events []sim.Event) ([]byte, error) {
	var buf []byte
	for i := range events {
		b, err := json.Marshal(jsonEvent(&events[i]))
		if err != nil {
			return nil, err
		}
		buf = append(append(buf, b...), '\n')
	}
	return buf, nil
}
