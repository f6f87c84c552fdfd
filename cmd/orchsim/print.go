package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/orchsim/orchsim/inevitable"
	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/report"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
)

// printReport writes the run in format: the text timeline, JSON lines, or
// a Mermaid diagram of its story (report.Story shrinks a long failing run
// first). cfg is the configuration res was run from.
//
// With nr.ask set (--no-return), the point of no return is marked: on the
// story's own run for mermaid, else nr.point, found by the caller on res.
func printReport(w io.Writer, cfg scenarios.Config, res *scenarios.Result, format, replayCmd string, nr noReturn) error {
	if format != "mermaid" {
		return printRun(w, res, format, nr.point)
	}
	var story *report.Run
	if nr.ask && res.Failed() {
		opt := inevitable.Options{}
		story = report.StoryMarked(cfg, res, replayCmd, report.StoryShrink, &opt)
	} else {
		story = report.Story(cfg, res, replayCmd, report.StoryShrink)
	}
	_, err := w.Write(report.Mermaid(story))
	return err
}

// noReturn is what --no-return asked for and found.
type noReturn struct {
	ask   bool
	point *report.NoReturn
	// note says why a failing run has no point ("" when it has one).
	note string
}

// findNoReturn finds the point of no return of res, run from cfg, when
// ask is set and the run failed.
func findNoReturn(ask bool, cfg scenarios.Config, res *scenarios.Result) noReturn {
	nr := noReturn{ask: ask}
	if !ask || !res.Failed() {
		return nr
	}
	r := report.FromResult(res, "")
	report.MarkNoReturn(r, cfg, inevitable.Options{})
	nr.point = r.NoReturn
	if nr.point == nil && len(r.Notes) > 0 {
		nr.note = r.Notes[len(r.Notes)-1]
	}
	return nr
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
//
// nr, when set, is marked in the text timeline by a line after its event.
func printRun(out io.Writer, res *scenarios.Result, format string, nr *report.NoReturn) error {
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
	if nr != nil && nr.Seq < 0 {
		fmt.Fprintf(w, "  ⚑ point of no return: the failure was certain from the start (%s)\n", nr.Text)
	}
	for i := range res.Trace {
		fmt.Fprintln(w, res.Trace[i].Describe())
		if nr != nil && int64(res.Trace[i].Seq) == nr.Seq && res.Trace[i].Actor != "invariant" {
			fmt.Fprintf(w, "  ⚑ %s (%s)\n", report.NoReturnLine, nr.Text)
		}
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
