package catalog

import (
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
