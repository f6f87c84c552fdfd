// Package report renders one run for people: a Mermaid sequence diagram of
// who did what to whom (Mermaid) and a self-contained HTML page with a
// swimlane timeline per actor (HTML). Both are outside the simulated path
// but deterministic themselves: the same Run gives the same bytes.
//
// Both renderers read the trace through one routing table (route.go) that
// says, for every (actor, kind), which component handled the event: a tool
// call goes from the agent to the browser host or the orchestrator and comes
// back with its outcome, a pane mount goes to the renderer, a spawn goes from
// the main process to the agent's backend; faults and timer fires are notes;
// the violation is highlighted.
package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
)

// Run is what a report draws: one run's trace and the facts that identify
// and reproduce it.
type Run struct {
	Scenario string
	Seed     uint64
	// Profile is the profile as printed in banners (preset[+fix...][!mutant...]).
	Profile  string
	Strategy string
	// Off lists the actors the shrinker switched off.
	Off         []string
	Horizon     time.Duration
	Fingerprint string
	// Events is the number of events of the run (the trace may be longer
	// than what is drawn only if it was cut; see Mermaid).
	Events    uint64
	Virtual   time.Duration
	Violation *sim.Violation
	Trace     []sim.Event
	// Replay is the command that reproduces the run ("orchsim replay FILE").
	Replay string
	// ShrunkFrom, when > 0, says the trace is the shrunk story of a run of
	// that many events.
	ShrunkFrom uint64
	// Notes are extra lines a renderer prints as comments (Mermaid) or
	// under the header (HTML), such as why shrinking stopped.
	Notes []string
	// Known are the switches off in the run whose declared invariants
	// include the violated one: the known bugs that can explain it (the
	// HTML report links their reports).
	Known []KnownBug
	// NoReturn, when set, is the run's point of no return (package
	// inevitable): the renderers mark that event "after this event the
	// failure was certain".
	NoReturn *NoReturn
	// Group, when set, is the violation's group by root cause: the
	// minimal set of fix switches that makes the run pass
	// (triage.MinimalFixes) and the reports they cite, which the HTML
	// report links ("reproduces t3code#16184"); no switches: a new bug.
	Group *Group
}

// Group is a violation's triage key and the reports its switches cite.
type Group struct {
	Invariant string
	Switches  []string
	Reports   []catalog.Report
}

// NoReturn marks a trace's point of no return.
type NoReturn struct {
	// Seq is the event's Seq in the trace (-1: doomed from the start).
	Seq int64
	// Text says how certain it is, e.g. "19/20 reseeded continuations
	// fail; 9/20 after event 40".
	Text string
}

// NoReturnLine is the sentence every renderer prints at the point of no
// return.
const NoReturnLine = "point of no return: after this event the failure was certain"

// KnownBug is a switch that may explain a violation, with its reports.
type KnownBug struct {
	Switch  string
	Reports []catalog.Report
}

// knownBugs returns the switches off in prof that declare invariant.
func knownBugs(prof model.Profile, invariant string) []KnownBug {
	var out []KnownBug
	for _, s := range model.Switches() {
		if !prof.Fixed(s.Name) && slices.Contains(s.Invariants, invariant) {
			out = append(out, KnownBug{Switch: string(s.Name), Reports: s.Reports})
		}
	}
	return out
}

// FromResult builds the Run of a scenarios result; replayCmd is the command
// that reproduces it.
func FromResult(res *scenarios.Result, replayCmd string) *Run {
	r := &Run{Scenario: res.Scenario, Seed: res.Seed, Profile: res.Profile.String(), Strategy: string(res.Strategy),
		Off: res.Off, Horizon: res.Horizon, Fingerprint: replay.FormatFingerprint(res.Fingerprint), Events: res.Events,
		Virtual: res.Virtual, Violation: res.Violation, Trace: res.Trace, Replay: replayCmd}
	if res.Violation != nil {
		r.Known = knownBugs(res.Profile, res.Violation.Invariant)
	}
	return r
}

// RunCommand is the `orchsim run` command line that reproduces a run made
// by seed (no tape): every flag that changes the run and differs from its
// default (profile as preset, --fix or --unfix, mutants, strategy,
// horizon, event budget).
func RunCommand(res *scenarios.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "orchsim run --scenario %s --seed %d", res.Scenario, res.Seed)
	spec := res.Profile.Spec()
	if spec.Preset == model.PresetFixed {
		b.WriteString(" --profile fixed")
		if len(spec.Unfix) > 0 {
			fmt.Fprintf(&b, " --unfix %s", strings.Join(spec.Unfix, ","))
		}
	} else if len(spec.Fix) > 0 {
		fmt.Fprintf(&b, " --fix %s", strings.Join(spec.Fix, ","))
	}
	if len(spec.Mutants) > 0 {
		fmt.Fprintf(&b, " --mutant %s", strings.Join(spec.Mutants, ","))
	}
	if res.Strategy != "" && res.Strategy != scenarios.DefaultStrategy {
		fmt.Fprintf(&b, " --strategy %s", res.Strategy)
	}
	if res.Branch != nil {
		fmt.Fprintf(&b, " --branch %d:%d", res.Branch.Root, res.Branch.At)
	}
	if sc, err := scenarios.Lookup(res.Scenario); err == nil && res.Horizon != sc.Horizon {
		fmt.Fprintf(&b, " --horizon %s", res.Horizon)
	}
	if res.EventBudget != 0 && res.EventBudget != scenarios.DefaultEventBudget {
		fmt.Fprintf(&b, " --event-budget %d", res.EventBudget)
	}
	return b.String()
}

// verdict is the one-line outcome of the run, in the words of the CLI.
func (r *Run) verdict() string {
	if v := r.Violation; v != nil {
		return fmt.Sprintf("violation: %s at %s", v.Invariant, sim.FormatT(v.At))
	}
	return fmt.Sprintf("ok: %d events, %s virtual", r.Events, r.Virtual)
}
