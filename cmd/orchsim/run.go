package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
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
	noReturn    bool
	keepGoing   bool
	branch      string // --branch ROOT:AT
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
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("scenario") || f.scenario == "" {
				return usageErr("run needs --scenario (see orchsim list)")
			}
			// The name before the other flags: a misspelt scenario is the
			// error to report, not a flag that only matters once it is right.
			if _, err := scenarios.Lookup(f.scenario); err != nil {
				return usageErr("%v", err)
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
			if err := noReturnFormat(f.noReturn, f.format, f.html); err != nil {
				return err
			}
			if err := checkOutputs(f.format, outFile{"--out", f.out}, outFile{"--trace", f.trace}, outFile{"--html", f.html}); err != nil {
				return err
			}
			prof, err := model.Spec{Preset: f.profile, Fix: f.fixes, Unfix: f.unfix, Mutants: f.mutants}.Profile()
			if err != nil {
				return usageErr("%v", err)
			}
			if before, err := (model.Spec{Preset: f.profile, Fix: f.fixes}).Profile(); err == nil {
				if err := unfixOff(before, f.unfix); err != nil {
					return err
				}
			}
			strategy, err := scenarios.ParseStrategy(f.strategy)
			if err != nil {
				return usageErr("%v", err)
			}
			from, err := parseBranch(f.branch, strategy)
			if err != nil {
				return err
			}
			cfg := scenarios.Config{Scenario: f.scenario, Seed: f.seed, Profile: prof, Horizon: f.horizon,
				EventBudget: uint64(f.eventBudget), Branch: from,
				Strategy: strategy, KeepTrace: true, RecordTape: f.out != "", KeepGoing: f.keepGoing}
			return execute(cmd.OutOrStdout(), cmd.ErrOrStderr(), cfg, outputs{format: f.format, trace: f.trace, out: f.out, html: f.html, noReturn: f.noReturn})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scenario, "scenario", "", "scenario name (see orchsim list)")
	fl.Uint64Var(&f.seed, "seed", 0, "run seed")
	fl.StringVar(&f.profile, "profile", model.PresetReported, "preset: reported, fixed or upstream")
	fl.StringSliceVar(&f.fixes, "fix", nil, "fix switches to turn on, comma-separated")
	fl.StringSliceVar(&f.unfix, "unfix", nil, unfixUsage)
	fl.StringSliceVar(&f.mutants, "mutant", nil, "mutants to turn on, comma-separated")
	fl.DurationVar(&f.horizon, "horizon", 0, "virtual duration (default: the scenario's)")
	fl.StringVar(&f.trace, "trace", "", "also write the trace as JSON lines to FILE")
	fl.Int64Var(&f.eventBudget, "event-budget", scenarios.DefaultEventBudget, "most events a run may execute before it is reported as event-budget-exceeded (raise it for very long horizons)")
	fl.StringVar(&f.out, "out", "", "write a replay file to FILE")
	fl.StringVar(&f.format, "format", "text", "timeline format: text, json or mermaid")
	fl.StringVar(&f.html, "html", "", "also write a self-contained HTML timeline to FILE")
	fl.BoolVar(&f.noReturn, "no-return", false, noReturnUsage)
	fl.StringVar(&f.strategy, "strategy", string(scenarios.DefaultStrategy), "exploration strategy: random, swarm, pct, commit or branch (branch: a campaign strategy; one run under it is a commit run)")
	fl.StringVar(&f.branch, "branch", "", "with --strategy branch: run a branch continuation, ROOT:AT (the root seed's draws through its event AT, then this --seed's); fuzz --json's failed_seeds gives both")
	fl.BoolVar(&f.keepGoing, "keep-going", false, "go on past the first violation and report every distinct invariant broken, each with its first event (a \"broken:\" line each, before the last line, which names the first)")
	return cmd
}

// outputs are what run prints and writes besides its last line.
type outputs struct {
	format string // text, json or mermaid
	trace  string // --trace FILE.jsonl
	out    string // --out REPLAY.json
	html   string // --html FILE
	// noReturn (--no-return) marks the point of no return of a failure.
	noReturn bool
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
	nr := findNoReturn(o.noReturn, cfg, &res)
	if err := printReport(w, cfg, &res, o.format, replayCmd, nr); err != nil {
		return &exitError{code: exitHarness, msg: err.Error()}
	}
	saveErr := saveOutputsTo(stdStreams{out: w, err: stderr},
		output{"--trace", o.trace, func() ([]byte, error) { return traceJSON(res.Trace) }},
		output{"--out", o.out, func() ([]byte, error) { return replay.Marshal(replayFile(cfg, &res)) }},
		htmlOutput(o.html, cfg, &res, replayCmd, nr.point))
	status := statusLines{out: w, err: stderr, mermaid: o.format == "mermaid"}
	brokenNotes(status, &res)
	if nr.note != "" {
		status.note(nr.note)
	}
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

// replayFile is the replay file of res, run from cfg: its event budget is
// recorded when it is not the default.
func replayFile(cfg scenarios.Config, res *scenarios.Result) *replay.File {
	var budget uint64
	if cfg.EventBudget != scenarios.DefaultEventBudget {
		budget = cfg.EventBudget
	}
	spec := res.Profile.Spec()
	return &replay.File{EventBudget: budget, Scenario: res.Scenario, Strategy: string(res.Strategy), Off: res.Off,
		Profile: spec.Preset, Fixes: spec.Fix, Unfix: spec.Unfix,
		Mutants: res.Profile.MutantNames(), Seed: res.Seed, Horizon: replay.Duration(res.Horizon),
		Violation: res.Violation, Fingerprint: replay.FormatFingerprint(res.Fingerprint), Events: res.Events,
		Tape: res.Tape, KeepGoing: cfg.KeepGoing}
}

// brokenNotes prints, for a keep-going run that violated, one line per
// distinct invariant it broke, in order, each at its first event:
// "broken: INV at T+... (first)", then "broken: INV at T+..." with
// "(follows INV)" for one that follows from an earlier violation
// (scenarios.FollowsFrom).
func brokenNotes(status statusLines, res *scenarios.Result) {
	v := res.Violation
	if v == nil || res.Later == nil {
		return
	}
	status.note(fmt.Sprintf("broken: %s at %s (first)", v.Invariant, sim.FormatT(v.At)))
	for _, l := range res.Later {
		line := fmt.Sprintf("broken: %s at %s", l.Invariant, sim.FormatT(l.At))
		if l.Follows != "" {
			line += " (follows " + l.Follows + ")"
		}
		status.note(line)
	}
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

// parseBranch reads --branch ROOT:AT (nil when not given); it needs
// --strategy branch, whose campaigns make such runs.
func parseBranch(v string, st scenarios.Strategy) (*scenarios.BranchFrom, error) {
	if v == "" {
		return nil, nil
	}
	if st != scenarios.Branch {
		return nil, usageErr("--branch needs --strategy branch")
	}
	root, at, ok := strings.Cut(v, ":")
	r, err1 := strconv.ParseUint(root, 10, 64)
	a, err2 := strconv.ParseUint(at, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return nil, usageErr("--branch wants ROOT:AT (a root seed and an event number), got %q", v)
	}
	return &scenarios.BranchFrom{Root: r, At: a}, nil
}
