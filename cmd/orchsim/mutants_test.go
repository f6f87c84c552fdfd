package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/scenarios"
)

// Every mutant is killed by some invariant within its own gate (the seeds
// and strategy it records; .ci/run's mutation gate), and the table names
// each mutant.
func TestMutants_AllKilled(t *testing.T) {
	code, out, errOut := cli(t, "mutants")
	assert.Equal(t, exitOK, code, "%s%s", out, errOut)
	for _, m := range model.Mutants() {
		assert.Contains(t, out, string(m.Name))
	}
	assert.NotContains(t, out, "SURVIVED")
}

func TestMutants_BadSeeds(t *testing.T) {
	code, _, errOut := cli(t, "mutants", "--seeds", "0")
	assert.Equal(t, exitUsage, code)
	assert.True(t, strings.HasPrefix(errOut, "orchsim: "))
	code, _, errOut = cli(t, "mutants", "--strategy", "bogus")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "orchsim: unknown strategy \"bogus\" (want random, swarm, pct, commit or branch)\n", errOut)
}

// mutants rejects a --workers out of 1..maxWorkers as fuzz does: exit 2,
// one line. 0 is not "the default" (leave the flag out for that).
func TestMutants_BadWorkers(t *testing.T) {
	limit := maxWorkers()
	tooMany := fmt.Sprintf("orchsim: --workers must be at most %d (64 per CPU), got ", limit)
	for workers, want := range map[string]string{
		"-3":                  "orchsim: --workers must be positive (default: the number of CPUs), got -3\n",
		"0":                   "orchsim: --workers must be positive (default: the number of CPUs), got 0\n",
		"-0":                  "orchsim: --workers must be positive (default: the number of CPUs), got 0\n",
		fmt.Sprint(limit + 1): tooMany + fmt.Sprint(limit+1) + "\n",
		"10000000":            tooMany + "10000000\n",
	} {
		code, out, errOut := cli(t, "mutants", "--workers", workers, "--seeds", "2")
		assert.Equal(t, exitUsage, code, out)
		assert.Empty(t, out, workers)
		assert.Equal(t, want, errOut)
	}
}

// FIRST SEED is the lowest seed that killed the mutant in any scenario,
// not the first scenario's; a tie goes to the first scenario in order.
func TestMutants_FirstSeedIsTheLowest(t *testing.T) {
	ms := model.Mutants()
	require.GreaterOrEqual(t, len(ms), 2)
	a, b := string(ms[0].Name), string(ms[1].Name)
	kills := []mutantKill{
		{mutant: a, scenario: "chaos", invariant: "inv-1", seed: 2},
		{mutant: a, scenario: "request-retry", invariant: "inv-2", seed: 1},
		{mutant: a, scenario: "tab-ownership", invariant: "inv-3", seed: 1},
		{mutant: b, scenario: "chaos", invariant: "inv-1", seed: 4},
		{mutant: b, scenario: "request-retry"},
		{mutant: b, scenario: "tab-ownership", invariant: "inv-3", seed: 4},
	}
	var out bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetOut(&out)
	printMutants(cmd, kills, map[string]gateBudget{a: {5, scenarios.Random}, b: {5, scenarios.Random}})
	rows := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = l
		}
	}
	assert.True(t, strings.HasSuffix(rows[a], "  1 (request-retry)"), rows[a])
	assert.True(t, strings.HasSuffix(rows[b], "  4 (chaos)"), rows[b])
}

// With --unfix, the bug left in fails runs whatever the mutant: such a
// failure is not the mutant's kill (a review found every mutant "killed"
// by the unfixed switch's invariant).
func TestMutants_UnfixedBugIsNoKill(t *testing.T) {
	_, out, _ := cli(t, "mutants", "--seeds", "3", "--unfix", "credential-lives-with-session")
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "detach-releases-oldest ") || strings.HasPrefix(l, "never-kill-on-timeout ") {
			assert.NotContains(t, l, "live-session-keeps-credential", "a terminal mutant killed by the unfixed credential bug: %s", l)
		}
	}
}
