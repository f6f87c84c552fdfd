package browser

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --- Browser profiles (the newest stored ServerBrowser.test.ts, index:70867653086) ---

// TestSBN78_OpenPicksReportedProfile is SB-N78, upstream "preview_open picks
// a reported profile by id or name and defaults to the reported one": a
// client reports a Work profile as the default; opens without a profile,
// by the name in another case and by the incognito id land on those
// profiles, their headless storage is keyed by them (incognito isolated),
// the open reports the catalogue, and an unknown name is refused with the
// list of profiles and opens nothing.
func TestSBN78_OpenPicksReportedProfile(t *testing.T) {
	w := newSB(t, reported)
	w.b.ReportProfiles([]BrowserProfile{{ID: "profile-work", Name: "Work"}}, "profile-work")
	openWith := func(profile string) *reply {
		r := w.as("agent-a", OpOpen, func(r *Request) { r.ReuseExistingTab, r.ProfileID = false, profile })
		require.True(t, r.done)
		return r
	}
	byDefault, byName, byID := openWith(""), openWith("WORK"), openWith("incognito")
	for _, r := range []*reply{byDefault, byName, byID} {
		require.Equal(t, OK, r.Outcome)
	}
	profileOf := func(r *reply) string { return w.b.Tab(sbThread, r.TabID).ProfileID }
	assert.Equal(t, "profile-work", profileOf(byDefault))
	assert.Equal(t, "profile-work", profileOf(byName))
	assert.Equal(t, "incognito", profileOf(byID))
	var requests []ContextRequest
	for _, tab := range w.b.Tabs() {
		requests = append(requests, tab.Context)
	}
	assert.Equal(t, []ContextRequest{{"profile-work", false}, {"profile-work", false}, {"incognito", true}}, requests)
	assert.Equal(t, "profile-work", byDefault.DefaultProfileID)
	assert.Equal(t, []BrowserProfile{{ID: "default", Name: "Default"}, {ID: "incognito", Name: "Incognito", Incognito: true},
		{ID: "profile-work", Name: "Work"}}, byDefault.Profiles)
	unknown := openWith("Personal")
	assert.Equal(t, ExecutionError, unknown.Outcome)
	assert.Equal(t, `No browser profile is named "Personal". Use one of: Default (id default), Incognito (id incognito), Work (id profile-work).`,
		unknown.Message)
	assert.Len(t, w.b.Tabs(), 3, "the refused open opened no tab")
}

// TestSBN79_UnreportedProfilesKeepThrowawayStorage is SB-N79, upstream "an
// agent tab keeps throwaway storage when no client reported profiles": the
// one open asks for the default profile's context, isolated.
func TestSBN79_UnreportedProfilesKeepThrowawayStorage(t *testing.T) {
	w := newSB(t, reported)
	tab := w.ready()
	assert.Equal(t, ContextRequest{ProfileID: "default", Isolated: true}, tab.Context)
	require.Len(t, w.b.Tabs(), 1)
}
