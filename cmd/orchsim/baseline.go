package main

import (
	"fmt"
	"io"

	"github.com/orchsim/orchsim/fuzz"
	"github.com/orchsim/orchsim/replay"
)

// baselineUsage documents --baseline on fuzz and merge-summaries.
const baselineUsage = "judge the groups against a committed baseline FILE (fuzz --write-baseline): exit 0 when every group found is in it, 1 when one is new"

// readBaseline reads --baseline FILE ("" is none); a file that cannot be
// read or is not a baseline is bad usage.
func readBaseline(path string) (*fuzz.Baseline, error) {
	if path == "" {
		return nil, nil
	}
	if err := notDash("--baseline", path); err != nil {
		return nil, err
	}
	b, err := replay.ReadInput(path, replay.MaxInputBytes)
	if err != nil {
		return nil, usageErr("--baseline: cannot read %s: %v", path, err)
	}
	base, err := fuzz.ParseBaseline(b)
	if err != nil {
		return nil, usageErr("--baseline %s: %v", path, err)
	}
	return base, nil
}

// baselineOutput is --write-baseline FILE: the campaign's groups that a
// known fix explains (fuzz.NewBaseline).
func baselineOutput(path string, r func() (fuzz.Report, error)) output {
	return output{"--write-baseline", path, func() ([]byte, error) {
		rep, err := r()
		if err != nil {
			return nil, err
		}
		return fuzz.NewBaseline(rep.Profile, rep.Scenarios, rep.Groups).Marshal()
	}}
}

// printBaseline says how the groups stand against the baseline: how many
// it lists, how many are new, and the listed groups not found.
func printBaseline(w io.Writer, name string, groups []fuzz.TriageGroup, unseen []fuzz.BaselineGroup) {
	news := fuzz.NewGroups(groups)
	fmt.Fprintf(w, "baseline %s: %d groups known, %d new", name, len(groups)-news, news)
	if len(unseen) > 0 {
		fmt.Fprintf(w, ", %d listed but not found:", len(unseen))
		for _, g := range unseen {
			fmt.Fprintf(w, " %s", fuzz.KeyString(g.Invariant, g.Switches))
		}
	}
	fmt.Fprintln(w)
}

// baselineVerdict is the exit status a baseline gives a campaign or merge
// that found failures: 1 (violation) when a group is new, nil when every
// group is known (the caller goes on to its other checks).
func baselineVerdict(groups []fuzz.TriageGroup) error {
	if n := fuzz.NewGroups(groups); n > 0 {
		return &exitError{code: exitViolation, msg: fmt.Sprintf("%d new groups (not in the baseline)", n)}
	}
	return nil
}
