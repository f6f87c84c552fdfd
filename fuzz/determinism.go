package fuzz

import (
	"context"
	"fmt"
	"hash/fnv"
	"runtime"
	"sort"
	"sync"

	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/sim"
)

// Rechecked reports whether the campaign starting at start re-runs seed of
// scenario in its determinism check of percent % of its seeds: a hash of
// (start, scenario, seed) below percent of 100, so the choice comes from
// the campaign seed, every shard picks from its own seeds, and a re-run of
// the campaign rechecks the same ones.
func Rechecked(start uint64, scenario string, seed uint64, percent int) bool {
	if percent <= 0 {
		return false
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "orchsim-recheck/1 %d %s %d", start, scenario, seed)
	return h.Sum64()%100 < uint64(percent)
}

// Determinism is what a campaign's determinism check found
// (Campaign.CheckPercent, FoundationDB's "unseed" check at campaign
// scale): each chosen seed re-run on another worker than the one that ran
// it, with the other GOMAXPROCS setting, and its fingerprint compared.
type Determinism struct {
	// Percent is Campaign.CheckPercent; Checked the seeds re-run.
	Percent int `json:"percent"`
	Checked int `json:"checked"`
	// GOMAXPROCS are the campaign's and the re-runs' settings (the same
	// when the machine has one CPU: there is no other setting).
	GOMAXPROCS      int `json:"gomaxprocs"`
	CheckGOMAXPROCS int `json:"check_gomaxprocs"`
	// Mismatches are the seeds whose re-run gave another fingerprint, by
	// scenario and seed.
	Mismatches []Mismatch `json:"mismatches"`
}

// Mismatch is one seed whose re-run gave another fingerprint, and where
// the two traces part.
type Mismatch struct {
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	// Fingerprint is the campaign run's, Again the re-run's.
	Fingerprint string `json:"fingerprint"`
	Again       string `json:"again"`
	// Event is the index of the first event where the traces part (of a
	// run with the campaign's setting and the re-run), -1 when the runs
	// with traces kept did not part again; Campaign and Rerun are that
	// event in each ("(none)" past a trace's end).
	Event    int    `json:"event"`
	Campaign string `json:"campaign_event,omitempty"`
	Rerun    string `json:"rerun_event,omitempty"`
}

// String describes the mismatch on one line.
func (m Mismatch) String() string {
	s := fmt.Sprintf("%s seed %d: fingerprint %s, re-run %s", m.Scenario, m.Seed, m.Fingerprint, m.Again)
	if m.Event < 0 {
		return s + " (traces kept on a second try did not part)"
	}
	return fmt.Sprintf("%s; the traces part at event %d: %q, then %q", s, m.Event, m.Campaign, m.Rerun)
}

// ran is a seed the campaign ran and will re-check: which worker ran it
// and its fingerprint.
type ran struct {
	job
	worker      int
	fingerprint uint64
}

// FirstDivergence returns the index of the first event where traces a and
// b differ (by Event.Describe, which shows time, actor, kind, attributes
// and outcome), or -1 when they are the same; a trace that ends first
// parts at its length.
func FirstDivergence(a, b []sim.Event) int {
	for i := range min(len(a), len(b)) {
		if a[i].Describe() != b[i].Describe() {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// otherGOMAXPROCS is the setting the re-runs use: 1 when the campaign ran
// with more, else the number of CPUs (the same 1 on a one-CPU machine).
func otherGOMAXPROCS(campaign int) int {
	if campaign > 1 {
		return 1
	}
	return runtime.NumCPU()
}

// recheck re-runs the seeds in todo on workers workers, each on another
// worker than the one that ran it (when there are two), with GOMAXPROCS
// switched to the other setting for the duration, and reports the seeds
// whose fingerprint differs. A mismatch is then run once more, traces
// kept, with the campaign's setting, to find the first event where it
// parts from the re-run.
func (c *Campaign) recheck(ctx context.Context, todo []ran, workers int) *Determinism {
	d := &Determinism{Percent: c.CheckPercent, GOMAXPROCS: runtime.GOMAXPROCS(0), Mismatches: []Mismatch{}}
	d.CheckGOMAXPROCS = otherGOMAXPROCS(d.GOMAXPROCS)
	runtime.GOMAXPROCS(d.CheckGOMAXPROCS)
	type found struct {
		r     ran
		again scenarios.Result
	}
	var mu sync.Mutex
	var bad []found
	queues := make([]chan ran, workers)
	var wg sync.WaitGroup
	for w := range queues {
		queues[w] = make(chan ran)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range queues[w] {
				res, err := scenarios.Run(c.config(r.job, true))
				mu.Lock()
				d.Checked++
				if err == nil && res.Fingerprint != r.fingerprint {
					bad = append(bad, found{r, res})
				}
				mu.Unlock()
			}
		}()
	}
	for _, r := range todo {
		if ctx.Err() != nil {
			break
		}
		queues[(r.worker+1)%workers] <- r
	}
	for _, q := range queues {
		close(q)
	}
	wg.Wait()
	runtime.GOMAXPROCS(d.GOMAXPROCS)
	sort.Slice(bad, func(i, j int) bool {
		a, b := bad[i].r, bad[j].r
		if a.scenario != b.scenario {
			return a.scenario < b.scenario
		}
		return a.seed < b.seed
	})
	for _, b := range bad {
		m := Mismatch{Scenario: b.r.scenario, Seed: b.r.seed, Fingerprint: replay.FormatFingerprint(b.r.fingerprint),
			Again: replay.FormatFingerprint(b.again.Fingerprint), Event: -1}
		if first, err := scenarios.Run(c.config(b.r.job, true)); err == nil {
			if i := FirstDivergence(first.Trace, b.again.Trace); i >= 0 {
				m.Event, m.Campaign, m.Rerun = i, describeAt(first.Trace, i), describeAt(b.again.Trace, i)
			}
		}
		d.Mismatches = append(d.Mismatches, m)
	}
	return d
}

// describeAt is event i of trace, described, or "(none)" past its end.
func describeAt(trace []sim.Event, i int) string {
	if i < len(trace) {
		return trace[i].Describe()
	}
	return "(none)"
}

// config is the run configuration of one job of the campaign.
func (c *Campaign) config(j job, keepTrace bool) scenarios.Config {
	return scenarios.Config{Scenario: j.scenario, Seed: j.seed, Branch: j.branch, Profile: c.Profile, Strategy: c.Strategy,
		KeepTrace: keepTrace, KeepGoing: c.KeepGoing, RecordTape: j.record}
}
