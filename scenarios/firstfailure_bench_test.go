package scenarios

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/orchsim/orchsim/model"
)

var ownOnly = flag.Bool("exploration-own-only", false, "with -bench SeedsToFirstFailure: measure each target in its own scenario only, not also in chaos (chaos columns keep their old cells)")

var writeExploration = flag.String("exploration", "", "with -bench SeedsToFirstFailure: rewrite the measured rows of this exploration table (docs/exploration.md)")

// Exploration campaign shape: campaigns starting explorationSpacing seeds
// apart, each capped at explorationCap seeds.
const (
	explorationCampaigns = 25
	explorationSpacing   = 10_000
	explorationCap       = 300
)

// BenchmarkSeedsToFirstFailure measures, per exploration target (every
// switch off alone, every mutant; see Targets) and strategy, the median
// number of seeds a campaign runs before the first seed that violates one
// of the target's invariants, and the median CPU time that took: 25
// campaigns starting 10,000 seeds apart, each capped at 300 seeds. Read the
// "median-seeds" and "median-ms" metrics (lower is better). Each target
// runs in its own scenario and in chaos, where every other component runs
// too. With -exploration FILE the measured cells of FILE's table are
// rewritten (rows of targets not measured keep theirs):
//
//	go test ./scenarios -run XXX -bench SeedsToFirstFailure -benchtime 1x -args -exploration ../docs/exploration.md
func BenchmarkSeedsToFirstFailure(b *testing.B) {
	measured := map[string]string{} // "target|where|strategy" -> cell
	for _, tg := range Targets() {
		prof := model.MustSpec(tg.Spec)
		for _, where := range wheresOf(tg) {
			for _, st := range Strategies {
				b.Run(tg.Name+"/"+where+"/"+string(st), func(b *testing.B) {
					var seeds, ms float64
					for i := 0; i < b.N; i++ {
						seeds, ms = firstFailureMedians(b, tg, where, prof, st)
					}
					b.ReportMetric(seeds, "median-seeds")
					b.ReportMetric(ms, "median-ms")
					measured[tg.Name+"|"+where+"|"+string(st)] = explorationCell(seeds, ms)
				})
			}
		}
	}
	if *writeExploration != "" && len(measured) > 0 {
		if err := rewriteExploration(*writeExploration, measured); err != nil {
			b.Fatal(err)
		}
	}
}

func wheresOf(tg Target) []string {
	if tg.Scenario == Chaos || *ownOnly {
		return []string{tg.Scenario}
	}
	return []string{tg.Scenario, Chaos}
}

// firstFailureMedians runs the campaigns of one (target, scenario,
// strategy) and returns the median seeds and milliseconds to the first
// failure (a capped campaign counts as explorationCap+1 seeds and its
// whole time).
func firstFailureMedians(b *testing.B, tg Target, where string, prof model.Profile, st Strategy) (float64, float64) {
	var counts []int
	var times []time.Duration
	for c := 0; c < explorationCampaigns; c++ {
		start := uint64(1 + c*explorationSpacing)
		n := explorationCap + 1
		t0 := time.Now()
		if st == Branch {
			n = branchFirstFailure(b, tg, where, prof, start)
			counts = append(counts, n)
			times = append(times, time.Since(t0))
			continue
		}
		for k := 0; k < explorationCap; k++ {
			res, err := Run(Config{Scenario: where, Seed: start + uint64(k), Profile: prof, Strategy: st})
			if err != nil {
				b.Fatal(err)
			}
			if res.Violation != nil && slices.Contains(tg.Invariants, res.Violation.Invariant) {
				n = k + 1
				break
			}
		}
		counts = append(counts, n)
		times = append(times, time.Since(t0))
	}
	sort.Ints(counts)
	slices.Sort(times)
	return float64(counts[len(counts)/2]), float64(times[len(times)/2].Microseconds()) / 1000
}

// branchFirstFailure runs one branching campaign (Brancher) from start
// and returns how many runs, roots and branches alike, it made up to the
// first that violates one of the target's invariants (explorationCap+1
// when none within the cap).
func branchFirstFailure(b *testing.B, tg Target, where string, prof model.Profile, start uint64) int {
	br := &Brancher{Base: Config{Scenario: where, Profile: prof, Strategy: Branch}, Start: start}
	runs := 0
	for runs < explorationCap {
		batch := br.Next()
		results := make([]Result, len(batch))
		for i, cfg := range batch {
			res, err := Run(cfg)
			if err != nil {
				b.Fatal(err)
			}
			runs++
			if res.Violation != nil && slices.Contains(tg.Invariants, res.Violation.Invariant) {
				return runs
			}
			if runs == explorationCap {
				return explorationCap + 1
			}
			results[i] = res
		}
		br.Done(batch, results)
	}
	return explorationCap + 1
}

// explorationCell renders a median: seeds, then CPU time ("12 (40 ms)";
// ">300" when the median campaign hit the cap).
func explorationCell(seeds, ms float64) string {
	s := fmt.Sprintf("%.0f", seeds)
	if seeds > explorationCap {
		s = fmt.Sprintf(">%d", explorationCap)
	}
	t := fmt.Sprintf("%.0f", ms)
	if ms < 10 {
		t = fmt.Sprintf("%.1f", ms)
	}
	return fmt.Sprintf("%s (%s ms)", s, t)
}

// explorationHeader is the table's header: each strategy in the target's
// own scenario, then in chaos.
func explorationHeader() string {
	var own, chaos []string
	for _, st := range Strategies {
		own = append(own, string(st))
		chaos = append(chaos, "chaos: "+string(st))
	}
	cols := append(append([]string{"target", "found in"}, own...), chaos...)
	return "| " + strings.Join(cols, " | ") + " |\n|" + strings.Repeat("---|", len(cols)) + "\n"
}

// rewriteExploration replaces the table of path (from its header line to
// the first line after it that is not a row) with one row per target, in
// Targets order: measured cells from measured, the others kept from the
// old table where it had the same columns, else "-".
func rewriteExploration(path string, measured map[string]string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(raw), "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "| target | found in |") })
	if start < 0 {
		return fmt.Errorf("%s: no exploration table (a line starting \"| target | found in |\")", path)
	}
	end := start + 1
	for end < len(lines) && strings.HasPrefix(lines[end], "|") {
		end++
	}
	header := strings.Split(strings.Trim(strings.TrimSpace(lines[start]), "|"), "|")
	old := map[string]string{}
	for _, l := range lines[start+2 : end] {
		cells := strings.Split(strings.Trim(strings.TrimSpace(l), "|"), "|")
		if len(cells) != len(header) {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		inChaos := false
		for i := 2; i < len(cells); i++ {
			col := strings.TrimSpace(header[i])
			if strings.HasPrefix(col, "chaos: ") {
				inChaos = true
			}
			where := "own"
			if inChaos {
				where = Chaos
			}
			st := strings.TrimPrefix(strings.TrimPrefix(col, "chaos: "), "chaos:")
			old[name+"|"+where+"|"+strings.TrimSpace(st)] = strings.TrimSpace(cells[i])
		}
	}
	var b strings.Builder
	b.WriteString(explorationHeader())
	for _, tg := range Targets() {
		row := []string{"`" + tg.Name + "`", tg.Scenario}
		for pass, where := range []string{tg.Scenario, Chaos} {
			for _, st := range Strategies {
				if pass == 1 && tg.Scenario == Chaos {
					row = append(row, "(same)")
					continue
				}
				cell, ok := measured[tg.Name+"|"+where+"|"+string(st)]
				if !ok {
					key := "own"
					if where == Chaos && tg.Scenario != Chaos {
						key = Chaos
					}
					cell, ok = old[tg.Name+"|"+key+"|"+string(st)]
				}
				if !ok || cell == "" {
					cell = "-"
				}
				row = append(row, cell)
			}
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	out := strings.Join(lines[:start], "") + b.String() + strings.Join(lines[end:], "")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(out), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
