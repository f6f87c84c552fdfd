package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"orchsim/model"
	"orchsim/replay"
	"orchsim/report"
	"orchsim/scenarios"
	"orchsim/sim"
)

type runFlags struct {
	scenario    string
	seed        uint64
	profile     string
	fixes       []string
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
first and its minimal story drawn); stdout stays one valid diagram, so the last
line is that line as a Mermaid comment ("%% violation: ..."), and the line itself
goes to stderr. --html FILE writes a self-contained HTML timeline of the run.`,
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
			if f.eventBudget < 0 {
				return usageErr("--event-budget must be positive")
			}
			if err := checkOutputs(f.format, f.html); err != nil {
				return err
			}
			prof, err := model.NewProfile(f.profile, f.fixes, f.mutants)
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
	fl.StringSliceVar(&f.mutants, "mutant", nil, "mutants to turn on, comma-separated")
	fl.DurationVar(&f.horizon, "horizon", 0, "virtual duration (default: the scenario's)")
	fl.StringVar(&f.trace, "trace", "", "also write the trace as JSON lines to FILE")
	fl.Int64Var(&f.eventBudget, "event-budget", 0, "most events a run may execute before it is reported as event-budget-exceeded (default 5,000,000; raise it for very long horizons)")
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

// checkOutputs validates --format and, before any run, that the directory
// of --html exists (a bad path is bad input: exit 2 with nothing run).
func checkOutputs(format, htmlPath string) error {
	if !contains(formats, format) {
		return usageErr("unknown --format %q (want text, json or mermaid)", format)
	}
	if htmlPath != "" {
		if st, err := os.Stat(filepath.Dir(htmlPath)); err != nil || !st.IsDir() {
			return usageErr("--html %s: directory %s does not exist", htmlPath, filepath.Dir(htmlPath))
		}
	}
	return nil
}

// execute runs cfg, prints the timeline and the last line, writes the
// requested files, and returns the exit status as an error (nil for ok).
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
	if o.trace != "" {
		if err := writeTrace(o.trace, res.Trace); err != nil {
			w.Flush()
			return &exitError{code: exitUsage, msg: fmt.Sprintf("writing trace: %v", err)}
		}
	}
	if o.out != "" {
		if err := replay.Write(o.out, replayFile(&res)); err != nil {
			w.Flush()
			return &exitError{code: exitUsage, msg: fmt.Sprintf("writing replay file: %v", err)}
		}
	}
	if err := writeHTML(o.html, &res, replayCmd); err != nil {
		w.Flush()
		return err
	}
	status := statusLines{out: w, err: stderr, mermaid: o.format == "mermaid"}
	status.last(lastLine(&res))
	if err := w.Flush(); err != nil {
		return &exitError{code: exitHarness, msg: err.Error()}
	}
	if res.Failed() {
		return &exitError{code: exitViolation}
	}
	return nil
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

// writeHTML writes the HTML report of res to path (nothing when path is
// empty), atomically.
func writeHTML(path string, res *scenarios.Result, replayCmd string) error {
	if path == "" {
		return nil
	}
	if err := replay.WriteFileAtomic(path, report.HTML(report.FromResult(res, replayCmd))); err != nil {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("writing HTML report: %v", err)}
	}
	return nil
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

func replayFile(res *scenarios.Result) *replay.File {
	return &replay.File{Scenario: res.Scenario, Strategy: string(res.Strategy), Off: res.Off,
		Profile: res.Profile.Preset(), Fixes: res.Profile.Fixes(),
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

func writeTrace(path string, events []sim.Event) error {
	var buf []byte
	for i := range events {
		b, err := json.Marshal(jsonEvent(&events[i]))
		if err != nil {
			return err
		}
		buf = append(append(buf, b...), '\n')
	}
	return replay.WriteFileAtomic(path, buf)
}
