package catalog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseReport(t *testing.T) {
	for _, tc := range []struct {
		id, repo, url string
		n             int
	}{
		{"t3code#23021", "pingdotgg/t3code", "https://github.com/pingdotgg/t3code/issues/23021", 23021},
		{"im-ian/acorn#37", "im-ian/acorn", "https://github.com/im-ian/acorn/issues/37", 37},
		{"Juliusolsson05/agent-code#596", "Juliusolsson05/agent-code", "https://github.com/Juliusolsson05/agent-code/issues/596", 596},
	} {
		r, err := ParseReport(tc.id)
		require.NoError(t, err, tc.id)
		assert.Equal(t, tc.repo, r.Repo())
		assert.Equal(t, tc.n, r.Number())
		assert.Equal(t, tc.url, r.URL())
	}
	for _, bad := range []string{"", "#1", "t3code#", "t3code#0", "T3 Code #23021", "pingdotgg#1", "a/b#1x", "000_993d1fdfc50e8ec7"} {
		_, err := ParseReport(bad)
		assert.Error(t, err, bad)
	}
}

func TestGroupOrder(t *testing.T) {
	assert.True(t, Less(ProviderSession, "z", MCPCredential, "a"), "group first")
	assert.True(t, Less(PreviewTab, "a", PreviewTab, "b"), "then name")
	assert.False(t, Less(Other, "a", Group("nope"), "a") == Less(Group("nope"), "a", Other, "a"))
	assert.Equal(t, len(Groups), Group("nope").Rank(), "unknown groups sort last")
	assert.False(t, Group("nope").Valid())
	assert.True(t, TerminalSession.Valid())
}

func TestParseExploration(t *testing.T) {
	in := "# title\n\n| target | found in | random | swarm | pct | chaos: random | swarm | pct |\n|---|---|---|---|---|---|---|---|\n" +
		"| `switch/a` | request-retry | 1 | 2 | 3 | 4 | 5 | 6 |\n| `mutant/b` | chaos | 300 | 17 | 9 |\n"
	m, err := ParseExploration(strings.NewReader(in))
	require.NoError(t, err)
	assert.Equal(t, map[string]Medians{
		"switch/a": {FoundIn: "request-retry", Random: "1", Swarm: "2", PCT: "3"},
		"mutant/b": {FoundIn: "chaos", Random: "300", Swarm: "17", PCT: "9"},
	}, m)
	assert.Equal(t, "1 / 2 / 3", m["switch/a"].String())
	for name, bad := range map[string]string{
		"short row": "| `switch/a` | s | 1 |\n",
		"twice":     "| `switch/a` | s | 1 | 2 | 3 |\n| `switch/a` | s | 1 | 2 | 3 |\n",
		"unclosed":  "| `switch/a | s | 1 | 2 | 3 |\n",
	} {
		_, err := ParseExploration(strings.NewReader(bad))
		assert.ErrorContains(t, err, "line", name)
	}
}

func TestRecord_IsWellFormed(t *testing.T) {
	seen := map[Report]bool{}
	places := map[string]bool{}
	count := map[Place]int{}
	for _, e := range Record {
		_, err := ParseReport(string(e.Report))
		require.NoError(t, err)
		assert.False(t, seen[e.Report], "%s listed twice", e.Report)
		seen[e.Report] = true
		key := fmt.Sprintf("%s %d", e.Place, e.N)
		assert.False(t, places[key], "%s listed twice", key)
		places[key] = true
		count[e.Place]++
		assert.NotEmpty(t, e.Summary, e.Report)
	}
	// ../shared/BUGS.md: 25 entries and 13 appendix lines; three seed reports.
	assert.Equal(t, map[Place]int{Seed: 3, Entry: 25, Appendix: 13}, count)
}

func TestRecordRows_DeriveCoverageFromSwitchReports(t *testing.T) {
	rows := RecordRows([]Switch{
		{Name: "a", Reports: []Report{"t3code#4198", "t3code#10600"}},
		{Name: "b", Reports: []Report{"t3code#11168"}},
		{Name: "c", Reports: []Report{"coder/xum#2098", "t3code#11168"}},
	})
	by := map[Report][]string{}
	for _, r := range rows {
		by[r.Report] = r.Switches
	}
	assert.Equal(t, []string{"a"}, by["t3code#4198"])
	assert.Equal(t, []string{"b", "c"}, by["t3code#11168"])
	assert.Equal(t, []string{"c"}, by["coder/xum#2098"])
	assert.Equal(t, []string{}, by["t3code#11805"], "no switch cites it")
	assert.Len(t, rows, len(Record))
}
