package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/scenarios"
)

// mutantKill is what one (mutant, scenario) pair found.
type mutantKill struct {
	mutant, scenario, invariant string
	seed                        uint64
}

func newMutantsCmd() *cobra.Command {
	var seeds uint64
	var strategy string
	var workers int
	var unfix []string
	cmd := &cobra.Command{
		Use:   "mutants [--seeds N] [--strategy S]",
		Short: "Run every mutant against every scenario; which invariants kill it",
		Long: `Run every mutant (a deliberately wrong fix) on top of the fixed profile against
every scenario, seeds 1..N, stopping a scenario at its first violation. Without
--seeds, each mutant gets the seeds and strategy it records (its gate: 100 seeds and
random unless it needs more to be killed reliably; orchsim list shows them); --seeds
and --strategy set them for every mutant. Prints, per
mutant, the invariants that killed it and the first seed: the lowest seed that killed
it in any scenario (on a tie, the first scenario in list order). Exit 1 if a mutant
survives every scenario (the invariant suite missed a wrong fix), 0 if all are killed,
2 on bad usage. --unfix turns fixes off on top of the fixed profile each mutant runs
on; a violation of an invariant those switches declare is the known bug's, not a kill. --workers is 1 to 64 per CPU (default: the number of CPUs); no more
start than there are (mutant, scenario) pairs.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("seeds") && seeds == 0 {
				return usageErr("--seeds must be positive")
			}
			if strategy != "" {
				if _, err := scenarios.ParseStrategy(strategy); err != nil {
					return usageErr("%v", err)
				}
			}
			gate := map[string]gateBudget{}
			for _, m := range model.Mutants() {
				n, st := m.Gate()
				if seeds > 0 {
					n = seeds
				}
				if strategy != "" {
					st = strategy
				}
				gate[string(m.Name)] = gateBudget{seeds: n, strategy: scenarios.Strategy(st)}
			}
			type pair struct{ mutant, scenario string }
			var pairs []pair
			for _, m := range model.Mutants() {
				for _, s := range scenarios.All() {
					pairs = append(pairs, pair{string(m.Name), s.Name})
				}
			}
			base := model.Spec{Preset: model.PresetFixed, Unfix: unfix}
			if _, err := base.Profile(); err != nil {
				return usageErr("%v", err)
			}
			known := map[string]bool{}
			for _, sw := range model.Switches() {
				if slices.Contains(unfix, string(sw.Name)) {
					for _, inv := range sw.Invariants {
						known[inv] = true
					}
				}
			}
			workers, err := workersFlag(cmd, workers, int64(len(pairs)))
			if err != nil {
				return err
			}
			kills := make([]mutantKill, len(pairs))
			var wg sync.WaitGroup
			next := make(chan int)
			var failure error
			var mu sync.Mutex
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range next {
						p := pairs[i]
						kills[i] = mutantKill{mutant: p.mutant, scenario: p.scenario}
						spec := base
						spec.Mutants = []string{p.mutant}
						prof := model.MustSpec(spec)
						g := gate[p.mutant]
						for seed := uint64(1); seed <= g.seeds; seed++ {
							res, err := scenarios.Run(scenarios.Config{Scenario: p.scenario, Seed: seed, Profile: prof, Strategy: g.strategy})
							if err != nil {
								mu.Lock()
								failure = err
								mu.Unlock()
								break
							}
							if res.Violation != nil {
								// A violation of an invariant that a switch left
								// off (--unfix) declares is that known bug's, not
								// the mutant's kill: the run goes on to the next
								// seed.
								if known[res.Violation.Invariant] {
									continue
								}
								kills[i].invariant, kills[i].seed = res.Violation.Invariant, seed
								break
							}
						}
					}
				}()
			}
			for i := range pairs {
				next <- i
			}
			close(next)
			wg.Wait()
			if failure != nil {
				return &exitError{code: exitHarness, msg: failure.Error()}
			}
			survivors := printMutants(cmd, kills, gate)
			if len(survivors) > 0 {
				return &exitError{code: exitViolation, msg: fmt.Sprintf("mutants survived: %s", strings.Join(survivors, ", "))}
			}
			return nil
		},
	}
	cmd.Flags().Uint64Var(&seeds, "seeds", 0, "seeds per scenario for every mutant (default: each mutant's own gate)")
	cmd.Flags().StringVar(&strategy, "strategy", "", "strategy for every mutant: random, swarm, pct, commit or branch (default: each mutant's own gate)")
	cmd.Flags().IntVar(&workers, "workers", 0, workersUsage)
	cmd.Flags().StringSliceVar(&unfix, "unfix", nil, "fixes to turn off on top of the fixed profile")
	return cmd
}

// gateBudget is what one mutant runs for: seeds per scenario, and the
// strategy.
type gateBudget struct {
	seeds    uint64
	strategy scenarios.Strategy
}

func printMutants(cmd *cobra.Command, kills []mutantKill, gate map[string]gateBudget) []string {
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "MUTANT\tKILLED BY\tFIRST SEED")
	var survivors []string
	for _, m := range model.Mutants() {
		var by []string
		for _, k := range kills {
			if k.mutant == string(m.Name) && k.invariant != "" {
				by = append(by, k.invariant+" ("+k.scenario+")")
			}
		}
		sort.Strings(by)
		first, ok := firstKill(kills, string(m.Name))
		if !ok {
			survivors = append(survivors, string(m.Name))
			g := gate[string(m.Name)]
			fmt.Fprintf(w, "%s\tSURVIVED %d seeds (%s) of every scenario\t-\n", m.Name, g.seeds, g.strategy)
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%d (%s)\n", m.Name, strings.Join(by, ", "), first.seed, first.scenario)
	}
	w.Flush()
	return survivors
}

// firstKill returns the kill of mutant with the lowest seed; on a tie the
// earliest in kills (the scenarios' list order). ok is false when no
// scenario killed it.
func firstKill(kills []mutantKill, mutant string) (first mutantKill, ok bool) {
	for _, k := range kills {
		if k.mutant != mutant || k.invariant == "" {
			continue
		}
		if !ok || k.seed < first.seed {
			first, ok = k, true
		}
	}
	return first, ok
}
