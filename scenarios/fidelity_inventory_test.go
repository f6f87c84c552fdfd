package scenarios

import (
	"bufio"
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The upstream inventory: testdata/fidelity/UPSTREAM.tsv lists every test
// case of every upstream file FIDELITY.md's Sources table names (at the
// named commits and the newest stored ones), one line per case, .each row
// or bundled scenario, with the id of the registry entry that expresses it.
// A case FIDELITY.md re-expressed carries FIDELITY.md's id (several
// upstream cases may share one); the others carry ids of the form
// <PREFIX>-Nnn, registered in upstreamRegistry (fidelity_upstream_test.go).
// Only names and facts are recorded: no upstream code.

// inventoryRow is one line of UPSTREAM.tsv.
type inventoryRow struct {
	id, repo, file, commits, describe, it, row, status string
}

// fileLabel names the upstream file a row belongs to in the table: the
// repository (short) and the path without its common source prefix.
func (r inventoryRow) fileLabel() string {
	repo := r.repo
	if i := strings.LastIndex(repo, "/"); i >= 0 {
		repo = repo[i+1:]
	}
	path := r.file
	for _, prefix := range []string{"apps/server/src/", "src/renderer/src/workspace/hook/", "src/"} {
		path = strings.TrimPrefix(path, prefix)
	}
	return repo + " " + path
}

func readInventory(t *testing.T) []inventoryRow {
	data, err := os.ReadFile("testdata/fidelity/UPSTREAM.tsv")
	require.NoError(t, err)
	var rows []inventoryRow
	sc := bufio.NewScanner(bytes.NewReader(data))
	header := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "\t")
		require.Len(t, f, 8, "UPSTREAM.tsv line %d has 8 tab-separated columns", n)
		if !header {
			require.Equal(t, []string{"id", "repo", "file", "commits", "describe", "it", "row", "status"}, f, "UPSTREAM.tsv's header")
			header = true
			continue
		}
		require.NotEmpty(t, f[0], "line %d names its id", n)
		require.NotEmpty(t, f[2], "line %d names its file", n)
		require.NotEmpty(t, f[3], "line %d names its commits", n)
		require.NotEmpty(t, f[5], "line %d names its case", n)
		rows = append(rows, inventoryRow{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]})
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, rows)
	return rows
}

// newCaseID is the form of the ids of the cases FIDELITY.md did not list.
var newCaseID = regexp.MustCompile(`^[A-Z]+-N[0-9]{2}$`)

// checkUpstreamRegistry checks that the registries list exactly the
// inventory's ids, each with the status the inventory states, that every
// upstream case is listed once, and that the new ids have the new form.
func checkUpstreamRegistry(t *testing.T) {
	rows := readInventory(t)
	inInventory := map[string]bool{}
	seen := map[string]bool{}
	for _, r := range rows {
		key := r.repo + "\x00" + r.file + "\x00" + r.describe + "\x00" + r.it + "\x00" + r.row
		require.False(t, seen[key], "UPSTREAM.tsv lists %q (%s) once", r.it, r.row)
		seen[key] = true
		fc := lookup(r.id)
		require.NotNil(t, fc, "%s (UPSTREAM.tsv: %q) is in the registry", r.id, r.it)
		require.Equal(t, fc.status, r.status, "%s's status in UPSTREAM.tsv is the registry's", r.id)
		inInventory[r.id] = true
	}
	registered := map[string]bool{}
	for _, c := range allComponents() {
		for _, fc := range c.cases {
			require.False(t, registered[fc.id], "%s is registered once", fc.id)
			registered[fc.id] = true
			require.True(t, inInventory[fc.id], "%s is a case of UPSTREAM.tsv (none silently left out)", fc.id)
		}
	}
	for _, c := range upstreamRegistry {
		for _, fc := range c.cases {
			require.Regexp(t, newCaseID, fc.id, "%s: a case FIDELITY.md did not list has an id <PREFIX>-Nnn", fc.id)
		}
	}
}
