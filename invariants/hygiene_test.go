package invariants

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/sim"
)

func TestSweepSparesWatchedTabs(t *testing.T) {
	ok := []sim.Event{
		ev(1, "viewer/thread-a", "viewer.attach", "", "thread=thread-a", "tab=tab_1"),
		ev(40, "viewer/thread-a", "viewer.detach", "", "thread=thread-a", "tab=tab_1"),
		ev(71, "server-browser", "tab.swept", "", "thread=thread-a", "tab=tab_1"),
	}
	assert.Nil(t, check(t, SweepSparesWatchedTabs, ok), "an unwatched idle tab may be swept")
	watched := []sim.Event{
		ev(1, "viewer/thread-a", "viewer.attach", "", "thread=thread-a", "tab=tab_1"),
		ev(31, "server-browser", "tab.swept", "", "thread=thread-a", "tab=tab_1"),
	}
	v := check(t, SweepSparesWatchedTabs, watched)
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "although it was watched")
	desktop := []sim.Event{
		ev(1, "desktop", "tab.render", "", "thread=thread-a", "tab=tab_1"),
		ev(31, "server-browser", "tab.swept", "", "thread=thread-a", "tab=tab_1"),
	}
	v = check(t, SweepSparesWatchedTabs, desktop)
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "rendered by the desktop app")
}

func TestCredentialCapabilitiesCurrent(t *testing.T) {
	base := []sim.Event{
		ev(0, "world", "thread", "", "thread=thread-a", "project=project-1", "browser-access=true"),
		ev(1, "mcp-registry", "credential.issue", "", "thread=thread-a", "cred=c1", "caps=orchestration,preview"),
		ev(2, "user", "settings.browser-access", "false", "project=project-1"),
		ev(3, "mcp-registry", "credential.issue", "", "thread=thread-a", "cred=c2", "caps=orchestration"),
	}
	assert.Nil(t, check(t, CredentialCapabilitiesCurrent, base))
	stale := append(base[:3:3], ev(3, "psm", "credential.reuse", "", "thread=thread-a", "cred=c1", "caps=orchestration,preview"))
	v := check(t, CredentialCapabilitiesCurrent, stale)
	require.NotNil(t, v)
	assert.Contains(t, v.Message, "credential.reuse of credential c1 for thread thread-a")
	unknown := []sim.Event{ev(1, "mcp-registry", "credential.issue", "", "thread=thread-z", "cred=c1", "caps=preview")}
	assert.Nil(t, check(t, CredentialCapabilitiesCurrent, unknown), "threads of unknown projects are not judged")
}
