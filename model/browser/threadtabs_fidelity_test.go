package browser

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --- Thread-wide tab access (the newest stored ServerBrowser.test.ts,
// index:70867653086, against VersionIndex70905931248; threadtabs.go) ---

func newerSB(t *testing.T) *sb {
	w := newSB(t, reported)
	w.b.Version = VersionIndex70905931248
	return w
}

// TestSBN23_OwnershipAndExplicitTargetsNewer is SB-N23, upstream "enforces
// provider ownership and explicit targets when a session has multiple
// tabs" in the newest stored version: agent-b's navigate on agent-a's tab
// is agentMismatch and never reaches the page; agent-b may snapshot it but
// not evaluate in it; with two tabs, agent-a's evaluate and recordingStop
// without a tab are tabRequired, a recordingStop on a tab with no
// recording is an execution error caused by RecordingNotActive (with the
// newest version's surfaces, surface.go), and the owned evaluate runs.
func TestSBN23_OwnershipAndExplicitTargetsNewer(t *testing.T) {
	w := newerSB(t)
	w.b.Surfaces = &Surfaces{}
	tab := w.ready()
	foreign := w.as("agent-b", OpNavigate, onTab(tab, func(r *Request) { r.URL = "http://localhost:5173/foreign" }))
	assert.Equal(t, ReasonAgentMismatch, foreign.Outcome)
	assert.NotContains(t, tab.GotoURLs, "http://localhost:5173/foreign")
	assert.Equal(t, OK, w.as("agent-b", OpSnapshot, onTab(tab, nil)).Outcome, "another session may read the tab")
	assert.Equal(t, ReasonAgentMismatch, w.as("agent-b", OpEvaluate, onTab(tab, nil)).Outcome, "but not run page script")
	require.Equal(t, OK, w.as("agent-a", OpOpen, newTab).Outcome)
	assert.Equal(t, ReasonTabRequired, w.as("agent-a", OpEvaluate, nil).Outcome)
	assert.Equal(t, ReasonTabRequired, w.as("agent-a", OpRecordingStop, nil).Outcome)
	stop := w.as("agent-a", OpRecordingStop, onTab(tab, nil))
	assert.Equal(t, ExecutionError, stop.Outcome)
	assert.Equal(t, RecordingNotActive, stop.Cause)
	owned := w.as("agent-a", OpEvaluate, onTab(tab, func(r *Request) { r.Value = "evaluated" }))
	w.run(2e9)
	require.True(t, owned.done)
	assert.Equal(t, "evaluated", owned.Value)
	assert.Len(t, w.b.Tabs(), 2)

	// Under 164d7dbe the same read is agentMismatch (SB-03's version).
	old := newSB(t, reported)
	oldTab := old.ready()
	assert.Equal(t, ReasonAgentMismatch, old.as("agent-b", OpSnapshot, onTab(oldTab, nil)).Outcome)
}

// TestSBN76_HumanTabReadWithoutArguments is SB-N76, upstream "agents read a
// human's tab with no arguments and act on it only while nobody drives":
// a person opened a tab and drives it; status without a tab id reaches
// it (owner human, not the caller's, listed as visible); evaluate and
// navigate are humanControl, snapshot works; once released the tab is
// unclaimed and the agent navigates it; taking control back refuses the
// agent's press.
func TestSBN76_HumanTabReadWithoutArguments(t *testing.T) {
	w := newerSB(t)
	tab := w.b.OpenUnowned(sbThread, "http://localhost:5173/mine", false)
	w.b.AttachViewer(tab, "person", true)
	status := w.as("agent-a", OpStatus, nil)
	require.Equal(t, OK, status.Outcome)
	assert.Equal(t, tab.TabID, status.TabID)
	assert.Equal(t, &ControlStatus{Owner: OwnerHuman, OwnedByCaller: false}, status.Control)
	assert.Equal(t, []TabStatus{{TabID: tab.TabID, URL: "http://localhost:5173/mine", Owner: OwnerHuman, Visible: true}}, status.Tabs)
	assert.Equal(t, ReasonHumanControl, w.as("agent-a", OpEvaluate, nil).Outcome)
	assert.Equal(t, OK, w.as("agent-a", OpSnapshot, onTab(tab, nil)).Outcome)
	agentURL := func(r *Request) { r.URL = "http://localhost:5173/agent" }
	assert.Equal(t, ReasonHumanControl, w.as("agent-a", OpNavigate, onTab(tab, agentURL)).Outcome)
	require.Equal(t, OK, w.input(tab, "person", ViewerInput{Kind: InputReleaseControl}).outcome)
	released := w.as("agent-a", OpStatus, onTab(tab, nil))
	assert.Equal(t, &ControlStatus{Owner: OwnerUnclaimed, OwnedByCaller: false}, released.Control)
	nav := w.as("agent-a", OpNavigate, onTab(tab, agentURL))
	w.run(2e9)
	require.True(t, nav.done)
	assert.Equal(t, OK, nav.Outcome)
	assert.Equal(t, []string{"http://localhost:5173/agent"}, tab.GotoURLs)
	w.input(tab, "person", ViewerInput{Kind: InputTakeControl})
	w.run(2e9)
	assert.Equal(t, ReasonHumanControl, w.as("agent-a", OpPress, onTab(tab, nil)).Outcome)

	// Under 164d7dbe a request without a tab reaches only the caller's own.
	old := newSB(t, reported)
	old.b.OpenUnowned(sbThread, "http://localhost:5173/mine", false)
	assert.Equal(t, TabNotFound, old.as("agent-a", OpStatus, nil).Outcome)
}

// TestSBN77_OwnTabStaysDefault is SB-N77, upstream "a session's own tab
// stays its default while other sessions' tabs are listed": agent-b opens a
// tab after agent-a's; agent-a's status without a tab id is its own tab
// and lists both, agent-b's as not the caller's.
func TestSBN77_OwnTabStaysDefault(t *testing.T) {
	w := newerSB(t)
	mine := w.ready()
	other := w.as("agent-b", OpOpen, newTab)
	require.Equal(t, OK, other.Outcome)
	status := w.as("agent-a", OpStatus, nil)
	require.Equal(t, OK, status.Outcome)
	assert.Equal(t, mine.TabID, status.TabID)
	assert.ElementsMatch(t, []TabStatus{
		{TabID: mine.TabID, URL: mine.URL, Owner: OwnerAgent, OwnedByCaller: true},
		{TabID: other.TabID, URL: "http://localhost:5173/", Owner: OwnerAgent, OwnedByCaller: false},
	}, status.Tabs)
}

// latestThreadTab breaks ties as upstream's stable sort does: of two own
// tabs opened at the same instant the earlier is the default, and of two
// unwatched tabs of others used at the same instant, the earlier too.
func TestLatestThreadTabTies(t *testing.T) {
	w := newerSB(t)
	first := w.ready()
	w.ready()
	assert.Equal(t, first, w.b.latestThreadTab(sbThread, first.Control.AgentID))
	assert.Equal(t, first, w.b.latestThreadTab(sbThread, "someone-else"))
}
