package scenarios

import (
	"fmt"
	"maps"
	"strconv"

	"github.com/orchsim/orchsim/sim"
)

// BranchFrom names the run a branch continues (Config.Branch): the run of
// seed Root (same scenario, profile, strategy, horizon and switches-off)
// replayed through its event At (a sim.Event.Seq), with fresh draws from
// the branch's own seed after it.
type BranchFrom struct {
	Root uint64 `json:"root"`
	At   uint64 `json:"at"`
	// Tape, when set, is the root run's recorded tape (the Brancher keeps
	// it from the root's run); without it Run runs the root again first.
	Tape []sim.Choice `json:"-"`
}

// branchSource records the root run's tape and returns the source of the
// branch: that tape until the event At, the branch's seed after it.
func branchSource(cfg Config) (*sim.PrefixSource, error) {
	if cfg.Branch.Tape != nil {
		return sim.NewPrefixSource(cfg.Branch.Tape, cfg.Seed, cfg.RecordTape), nil
	}
	root := cfg
	root.Seed, root.Branch, root.RecordTape, root.KeepTrace, root.OnEvent = cfg.Branch.Root, nil, true, false, nil
	res, err := Run(root)
	if err != nil {
		return nil, err
	}
	return sim.NewPrefixSource(res.Tape, cfg.Seed, cfg.RecordTape), nil
}

// Hit is a state a run reached and the sequence number of the event that
// first reached it (for a commit point reached, the event before it, so a
// branch from there draws the fault afresh).
type Hit struct {
	Name string
	Seq  uint64
}

// states tracks the states a run reaches, as AFL counts edges: a probe hit
// (invariants.Probes), a commit point reached where a fault could be
// placed ("commit-reached:NAME"), a fault placed at one
// ("commit-point:NAME"), each also by how often the run has reached it so
// far, in powers of two ("NAME#2", "NAME#4", ... up to "NAME#32"), so a
// run that reaches a common state unusually often has a rare state too.
type states struct {
	count map[string]int
	hits  []Hit
	str   sim.Strings // the NAME#n names
}

func newStates() *states { return &states{count: map[string]int{}} }

// note counts one more reach of name at event seq.
func (s *states) note(name string, seq uint64) {
	s.count[name]++
	switch n := s.count[name]; n {
	case 1:
		s.hits = append(s.hits, Hit{Name: name, Seq: seq})
	case 2, 4, 8, 16, 32:
		var b [64]byte // name#n without fmt's boxing
		s.hits = append(s.hits, Hit{Name: s.str.Bytes(strconv.AppendInt(append(append(b[:0], name...), '#'), int64(n), 10)), Seq: seq})
	}
}

// Name implements sim.Checker: it notes the faults placed at commit
// points (trace: fault commit-point NAME).
func (*states) Name() string { return "branch-states" }

// ObservedKinds implements sim.KindObserver: Observe reads commit points.
func (*states) ObservedKinds() []string { return statesKinds }

var statesKinds = []string{"commit-point"}

// Observe implements sim.Checker.
func (s *states) Observe(ev *sim.Event) *sim.Violation {
	if ev.Actor == "fault" && ev.Kind == "commit-point" {
		s.note("commit-point:"+ev.Outcome, ev.Seq)
	}
	return nil
}

// Branching campaign shape.
const (
	// BranchWidth is how many continuations a rare state gets.
	BranchWidth = 4
	// BranchRarity: a state is rare while at most 1 in BranchRarity of the
	// campaign's runs so far reached it (one never reached before always
	// is); the campaign branches only once it has run BranchRarity runs,
	// so that rarity has something to be counted over.
	BranchRarity = 50
	// BranchBatch is how many runs the campaign hands out at a time
	// (Brancher.Next): what it learns from them (their rare states) shapes
	// only later batches, so the campaign is the same for any number of
	// workers running a batch.
	BranchBatch = 8
)

// Brancher schedules the runs of a branching campaign of one scenario:
// root runs of seeds Start, Start+Step, Start+2*Step, ..., and the
// branches of the root runs that first reached a rare state. Each root run
// that reaches a state fewer than 1 in BranchRarity of the campaign's
// earlier runs reached (counted when their batch is done) branches
// BranchWidth continuations from the event that first reached its rarest
// such state (the fewest earlier runs; a tie goes to the earliest event):
// its tape replayed through that event, fresh draws after it, from seeds
// derived from the root's seed and the event. Branches run before the
// next root runs; they do not branch again. The schedule depends only on
// the configuration and the runs' results, which are deterministic, so
// the campaign is the same on every machine and for every worker count.
// Root runs record their tapes (Config.RecordTape), which the branches
// of a root replay.
type Brancher struct {
	// Base is the configuration of every run (Scenario, Profile, Horizon,
	// Off...); Seed and Branch are the Brancher's.
	Base Config
	// Start is the first root seed and Step the distance between roots (0
	// means 1).
	Start, Step uint64

	roots   uint64 // root runs handed out
	queue   []Config
	reached map[string]int // state -> runs that reached it
	runs    int            // runs done
}

// Next returns the next batch of at most BranchBatch runs, in campaign
// order: queued branches first, then root runs. The caller runs them (in
// any order, on any workers) and hands their results to Done in this
// order before asking for the next batch.
func (b *Brancher) Next() []Config {
	var out []Config
	for len(out) < BranchBatch && len(b.queue) > 0 {
		out = append(out, b.queue[0])
		b.queue = b.queue[1:]
	}
	step := b.Step
	if step == 0 {
		step = 1
	}
	for len(out) < BranchBatch {
		cfg := b.Base
		// A root keeps its tape, for the branches it may get.
		cfg.Seed, cfg.Branch, cfg.RecordTape = b.Start+b.roots*step, nil, true
		b.roots++
		out = append(out, cfg)
	}
	return out
}

// Done takes the results of a batch Next returned, in its order: it
// counts the states every run reached and queues the branches of every
// root run that reached a rare one.
func (b *Brancher) Done(batch []Config, results []Result) {
	if b.reached == nil {
		b.reached = map[string]int{}
	}
	// Rarity is judged against the runs before this batch, so every run
	// of a batch is judged alike whatever order the workers finished in.
	before := maps.Clone(b.reached)
	runsBefore := b.runs
	for i, res := range results {
		cfg := batch[i]
		if cfg.Branch == nil && runsBefore >= BranchRarity {
			if h, ok := rarest(res.FirstHits, before, runsBefore); ok {
				for k := 0; k < BranchWidth; k++ {
					c := b.Base
					c.Seed = sim.SubSeed(cfg.Seed, fmt.Sprintf("branch/%d/%d", h.Seq, k))
					c.Branch = &BranchFrom{Root: cfg.Seed, At: h.Seq, Tape: res.Tape}
					b.queue = append(b.queue, c)
				}
			}
		}
		for _, h := range res.FirstHits {
			b.reached[h.Name]++
		}
		b.runs++
	}
}

// rarest returns the rarest of hits that is rare among runs earlier runs
// (reached counts them per state).
func rarest(hits []Hit, reached map[string]int, runs int) (Hit, bool) {
	best, found := Hit{}, false
	for _, h := range hits {
		n := reached[h.Name]
		if n*BranchRarity > runs && n > 0 {
			continue
		}
		if !found || n < reached[best.Name] || n == reached[best.Name] && h.Seq < best.Seq {
			best, found = h, true
		}
	}
	return best, found
}
