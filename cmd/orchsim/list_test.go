package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/scenarios"
)

// list --format json is the registry, field for field, and every switch
// says which reports it reproduces, where it is found alone and by what.
func TestList_JSONIsTheRegistry(t *testing.T) {
	code, out, errOut := cli(t, "list", "--format", "json")
	require.Equal(t, exitOK, code, errOut)
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var got catalog.Catalog
	require.NoError(t, dec.Decode(&got))
	assert.False(t, dec.More(), "one object")
	assert.Equal(t, scenarios.Catalog(), got)

	var raw map[string][]map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	for _, key := range []string{"switches", "invariants", "obligations", "mutants", "probes", "scenarios"} {
		assert.NotEmpty(t, raw[key], key)
	}
	for _, s := range raw["switches"] {
		for _, field := range []string{"name", "reports", "scenario", "invariants", "reported", "fixed"} {
			assert.NotEmpty(t, s[field], "switch %v: %s", s["name"], field)
		}
	}
	for _, s := range got.Switches {
		for _, r := range s.Reports {
			_, err := catalog.ParseReport(string(r))
			assert.NoError(t, err, s.Name)
		}
	}
}

// The text tables follow the same order (group, then name) and name every
// declaration.
func TestList_TextFollowsListOrder(t *testing.T) {
	code, out, _ := cli(t, "list")
	require.Equal(t, exitOK, code)
	c := scenarios.Catalog()
	var names []string
	for _, s := range c.Switches {
		names = append(names, string(s.Group)+": "+s.Name)
	}
	for _, i := range c.Invariants {
		names = append(names, string(i.Group)+": "+i.Name)
	}
	last := -1
	for _, n := range names[:len(c.Switches)] {
		i := strings.Index(out, n)
		require.GreaterOrEqual(t, i, 0, n)
		assert.Greater(t, i, last, "%s out of order", n)
		last = i
	}
	for _, n := range names[len(c.Switches):] {
		assert.Contains(t, out, n)
	}
}

// The text shows each mutant's gate: its seeds and strategy, as the
// mutation gate runs it (a mutant with its own gate, and one with the
// default).
func TestList_TextShowsEachMutantsGate(t *testing.T) {
	code, out, _ := cli(t, "list")
	require.Equal(t, exitOK, code)
	for _, m := range scenarios.Catalog().Mutants {
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, ": "+m.Name+" ") {
				line = l
			}
		}
		require.NotEmpty(t, line, m.Name)
		assert.Contains(t, line, fmt.Sprintf("; gate: %d seeds, %s)", m.GateSeeds, m.GateStrategy), m.Name)
	}
}

func TestList_BadFormat(t *testing.T) {
	code, out, errOut := cli(t, "list", "--format", "yaml")
	assertUsage(t, code, out, errOut, `orchsim: unknown --format "yaml" (want text, json or markdown)`)
}

// A full stdout is a harness failure (exit 3), not bad usage.
func TestList_FailedWriteIsExit3(t *testing.T) {
	var errb bytes.Buffer
	code := run([]string{"list", "--format", "json"}, listFullWriter{}, &errb)
	assert.Equal(t, exitHarness, code)
	assert.Equal(t, 1, strings.Count(errb.String(), "\n"), errb.String())
}

type listFullWriter struct{}

func (listFullWriter) Write([]byte) (int, error) { return 0, errListFull }

var errListFull = errors.New("no space left on device")

var update = flag.Bool("update", false, "rewrite docs/bugs.md from the declarations")

// docs/bugs.md is the markdown catalog of this build; regenerate it with
// `go test ./cmd/orchsim -run TestDocs -update` and review the diff.
func TestDocs_BugsTableIsCurrent(t *testing.T) {
	code, out, errOut := cli(t, "list", "--format", "markdown", "--exploration", "../../docs/exploration.md")
	require.Equal(t, exitOK, code, errOut)
	const path = "../../docs/bugs.md"
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, out, string(b), "docs/bugs.md is stale: go test ./cmd/orchsim -run TestDocs -update")
	for _, s := range scenarios.Catalog().Switches {
		assert.Contains(t, out, "| `"+s.Name+"` |")
	}
}

// docs/exploration.md measures every exploration target: a new switch or
// mutant without a row there fails until the benchmark is re-run.
func TestDocs_ExplorationTableListsEveryTarget(t *testing.T) {
	b, err := os.ReadFile("../../docs/exploration.md")
	require.NoError(t, err)
	for _, tg := range scenarios.Targets() {
		assert.Contains(t, string(b), "| `"+tg.Name+"` | "+tg.Scenario+" |", "re-run the benchmark the page names")
	}
}

// --exploration fills docs/bugs.md's median-seeds column; it means nothing
// without --format markdown, and an unreadable or malformed table is bad
// usage, not a silently empty column.
func TestList_ExplorationIsChecked(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.md")
	require.NoError(t, os.WriteFile(bad, []byte("| `switch/a` | s | 1 |\n"), 0o644))
	for name, args := range map[string][]string{
		"not markdown": {"list", "--exploration", "../../docs/exploration.md"},
		"missing":      {"list", "--format", "markdown", "--exploration", filepath.Join(dir, "nope.md")},
		"malformed":    {"list", "--format", "markdown", "--exploration", bad},
		"not a table":  {"list", "--format", "markdown", "--exploration", "../../README.md"},
		"no end":       {"list", "--format", "markdown", "--exploration", "/dev/zero"},
	} {
		code, out, errOut := cli(t, args...)
		assert.Equal(t, exitUsage, code, name)
		assert.Empty(t, out, name)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%s: %q", name, errOut)
	}
	code, out, _ := cli(t, "list", "--format", "markdown", "--exploration", "../../docs/exploration.md")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "| `stable-tab-owner` | model/browser: tab owner key | tab-ownership | `thread-keeps-its-tabs`, `thread-regains-its-tabs` | 1 / 1 / 1 / 1 |")
}
