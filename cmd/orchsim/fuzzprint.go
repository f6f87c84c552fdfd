package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/orchsim/orchsim/fuzz"
	"github.com/orchsim/orchsim/invariants"
)

// progress shows a bar on a terminal and a line every 5 s otherwise.
func progress(w io.Writer, total int64) func(uint64, int) {
	start := time.Now()
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar := progressbar.NewOptions64(total, progressbar.OptionSetWriter(w), progressbar.OptionShowCount(),
			progressbar.OptionShowIts(), progressbar.OptionSetItsString("seeds"), progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
		return func(done uint64, failures int) {
			bar.Describe(fmt.Sprintf("%d failures", failures))
			bar.Set64(int64(done))
		}
	}
	last := start
	return func(done uint64, failures int) {
		if now := time.Now(); now.Sub(last) >= 5*time.Second {
			last = now
			rate := float64(done) / now.Sub(start).Seconds()
			fmt.Fprintf(w, "fuzz: %d seeds, %.0f seeds/s, %d failures\n", done, rate, failures)
		}
	}
}

func printSummary(w io.Writer, names []string, sum *fuzz.Summary) {
	rate := float64(sum.SeedsRun) / max(sum.Elapsed.Seconds(), 1e-9)
	fmt.Fprintf(w, "fuzz: %d seeds in %s (%.0f seeds/s), %d failures, %d distinct stories",
		sum.SeedsRun, sum.Elapsed.Round(time.Millisecond), rate, len(sum.Failures), len(sum.Stories))
	if sum.BranchRuns > 0 {
		fmt.Fprintf(w, " (%d roots, %d branch continuations)", sum.SeedsRun-sum.BranchRuns, sum.BranchRuns)
	}
	if sum.Interrupted {
		fmt.Fprint(w, " (interrupted)")
	}
	if sum.Exhausted {
		fmt.Fprintf(w, " (ran every seed up to the largest, %d)", ^uint64(0))
	}
	fmt.Fprintln(w)
	js := fuzz.Results(names, sum)
	printResults(w, &js, true)
	if sum.Baseline != nil {
		printBaseline(w, sum.BaselineName, js.Groups, js.BaselineUnseen)
	}
	if d := sum.Determinism; d != nil {
		fmt.Fprintf(w, "determinism: %d seeds (%d%%) re-run on another worker with GOMAXPROCS=%d (campaign: %d): %d mismatches\n",
			d.Checked, d.Percent, d.CheckGOMAXPROCS, d.GOMAXPROCS, len(d.Mismatches))
		for _, m := range d.Mismatches {
			fmt.Fprintf(w, "determinism: MISMATCH %s\n", m)
		}
	}
}

// printResults prints the tables of what a campaign found, as fuzz and
// merge-summaries both show them: the coverage probes' hits (and, loudly,
// the probes never hit), a row per scenario and invariant, and the
// stories. corpusHint suggests --corpus when no story has a replay file.
func printResults(w io.Writer, js *fuzz.Report, corpusHint bool) {
	printProbes(w, js.Probes)
	if len(js.Invariants) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tINVARIANT\tKIND\tFAILURES\tFIRST SEED\tSTORIES")
	for _, r := range js.Invariants {
		kind := r.Kind
		if kind == "" {
			kind = invariants.KindOf(r.Invariant)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\n", r.Scenario, r.Invariant, kind, r.Failures, r.FirstSeed, r.Stories)
	}
	tw.Flush()
	printGroups(w, js.Groups)
	if len(js.Stories) > 0 {
		fmt.Fprintln(w)
	}
	corpus := false
	for _, st := range js.Stories {
		fmt.Fprintf(w, "story %s / %s: seed %d, %d failing seeds, %d actions", st.Scenario, st.Invariant, st.Seed, st.Count, st.Actions)
		if st.ReplayFile != "" {
			corpus = true
			fmt.Fprintf(w, ", replay: orchsim replay %s", st.ReplayFile)
		}
		fmt.Fprintln(w)
	}
	// Later violations (broken only after another invariant's violation in
	// the same seed, keep-going) get a line per root-cause group that has
	// no story: a bug only ever seen behind another, with the file shrunk
	// toward it when there is one. The others are counted on one line; the
	// JSON lists every signature.
	told := js.StoryKeys()
	type hidden struct {
		first, shown fuzz.ReportLater
		sigs, seeds  int
	}
	var order []string
	byKey := map[string]*hidden{}
	behind := 0
	for _, l := range js.Later {
		k := fuzz.KeyString(l.Invariant, l.Switches)
		if told[k] {
			behind++
			continue
		}
		h := byKey[k]
		if h == nil {
			h = &hidden{first: l, shown: l}
			byKey[k] = h
			order = append(order, k)
		} else if l.Shrunk && !h.shown.Shrunk {
			h.shown = l
		}
		h.sigs++
		h.seeds += l.Count
	}
	for _, k := range order {
		h := byKey[k]
		l := h.shown
		fixes := strings.Join(l.Switches, "+")
		if fixes == "" {
			fixes = "no known fix"
		}
		fmt.Fprintf(w, "later %s (%s): behind another violation in %s (%s), first %s/%d",
			l.Invariant, fixes, seedsN(h.seeds), plural(h.sigs, "signature"), h.first.Scenario, h.first.Seed)
		switch {
		case l.Alone:
			fmt.Fprintf(w, "; %s/%d shrunk alone to %s", l.Scenario, l.Seed, plural(l.Actions, "action"))
		case l.Shrunk:
			fmt.Fprintf(w, "; %s/%d shrunk to %s, still behind another", l.Scenario, l.Seed, plural(l.Actions, "action"))
		}
		if l.ReplayFile != "" {
			corpus = true
			fmt.Fprintf(w, ", replay: orchsim replay %s", l.ReplayFile)
		}
		fmt.Fprintln(w)
	}
	if behind > 0 {
		fmt.Fprintf(w, "later: %s broken after another invariant's violation in groups that have a story (listed in --json later_violations)\n",
			plural(behind, "more signature"))
	}
	if (len(js.Stories) > 0 || len(js.Later) > 0) && !corpus && corpusHint {
		fmt.Fprintln(w, "(pass --corpus DIR to keep one replay file per story)")
	}
}

// printGroups prints the failures grouped by root cause (fuzz.TriageGroup),
// new groups first: the status (new, or known: explained by a known fix
// or, with --baseline, listed in it), the invariant, the fixes that make
// the group pass, the reports they cite, the failures and the first seed.
func printGroups(w io.Writer, groups []fuzz.TriageGroup) {
	if len(groups) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tINVARIANT\tFIXED BY\tREPRODUCES\tFAILURES\tFIRST SEED")
	news := 0
	for _, g := range groups {
		status, fixes, reports := "known", strings.Join(g.Switches, "+"), strings.Join(g.Reports, " ")
		if g.New {
			status = "new"
			news++
		}
		if len(g.Switches) == 0 {
			fixes, reports = "(no known fix)", "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s/%d\n", status, g.Invariant, fixes, reports, g.Failures, g.FirstScenario, g.FirstSeed)
	}
	tw.Flush()
	fmt.Fprintf(w, "groups: %d by root cause, %d new\n", len(groups), news)
}

// printProbes lists the coverage probes' hit counts and, loudly, the
// probes the campaign never hit.
func printProbes(w io.Writer, probes []fuzz.ReportProbe) {
	if len(probes) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROBE\tHITS")
	var never []string
	for _, p := range probes {
		fmt.Fprintf(tw, "%s\t%d\n", p.Name, p.Hits)
		if p.Hits == 0 {
			never = append(never, p.Name)
		}
	}
	tw.Flush()
	if len(never) > 0 {
		fmt.Fprintf(w, "probes never hit: %s\n", strings.Join(never, ", "))
	}
}

// annotate emits GitHub Actions annotations for each story.
func annotate(w io.Writer, sum *fuzz.Summary) {
	if os.Getenv("GITHUB_ACTIONS") != "true" {
		return
	}
	for _, st := range sum.Stories {
		msg := fmt.Sprintf("%s violated in %s (seed %d, %d failing seeds)", st.Invariant, st.Scenario, st.Seed, st.Count)
		if st.ReplayFile != "" {
			msg += "; replay: orchsim replay " + st.ReplayFile
		}
		fmt.Fprintf(w, "::error title=orchsim %s::%s\n", st.Invariant, msg)
	}
}

// seedsN is "1 seed" or "N seeds".
func seedsN(n int) string {
	if n == 1 {
		return "1 seed"
	}
	return fmt.Sprintf("%d seeds", n)
}

// plural is "1 NOUN" or "N NOUNs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
