package browser

import (
	"fmt"
	"strings"

	"github.com/orchsim/orchsim/sim"
)

// Browser profiles (packages/contracts/src/browserProfile.ts, stored as
// index:57416574675; ServerBrowser.ts, index:70905931248): named storage
// identities a client reports, that an agent's open picks from, and that a
// headless tab's browser context is keyed by.
const (
	// DefaultProfileID is DEFAULT_BROWSER_PROFILE_ID.
	DefaultProfileID = "default"
	// IncognitoProfileID is INCOGNITO_BROWSER_PROFILE_ID: the one profile
	// whose storage is thrown away (an isolated context per tab).
	IncognitoProfileID = "incognito"
)

// BrowserProfile is one browser profile: its id, its display name, and
// whether it is the incognito (non-persistent) kind.
type BrowserProfile struct {
	ID, Name  string
	Incognito bool
}

// BuiltInProfiles is BUILT_IN_BROWSER_PROFILES, listed ahead of every
// reported catalogue.
var BuiltInProfiles = []BrowserProfile{
	{ID: DefaultProfileID, Name: "Default"},
	{ID: IncognitoProfileID, Name: "Incognito", Incognito: true},
}

// ResolveProfiles is resolveBrowserProfiles: the built-ins first, then the
// user's profiles with ids colliding with a built-in or repeated dropped
// (first wins), and the incognito kind kept only by the built-in.
func ResolveProfiles(user []BrowserProfile) []BrowserProfile {
	out := append([]BrowserProfile(nil), BuiltInProfiles...)
	for _, p := range user {
		if findProfile(out, p.ID) != nil {
			continue
		}
		p.Incognito = false
		out = append(out, p)
	}
	return out
}

func findProfile(profiles []BrowserProfile, id string) *BrowserProfile {
	for i := range profiles {
		if profiles[i].ID == id {
			return &profiles[i]
		}
	}
	return nil
}

// ContextRequest is what a headless tab asked ServerBrowserContexts for:
// the profile its storage belongs to ("default" when the tab has none) and
// whether the context is isolated (thrown away with the tab).
type ContextRequest struct {
	ProfileID string
	Isolated  bool
}

// ReportProfiles is reportProfiles: the latest catalogue a client reported
// (its profiles resolved; a default id not among them falls back to
// "default"). Agents' opens choose from it from then on.
func (b *ServerBrowser) ReportProfiles(profiles []BrowserProfile, defaultID string) {
	resolved := ResolveProfiles(profiles)
	if findProfile(resolved, defaultID) == nil {
		defaultID = DefaultProfileID
	}
	b.reported = &reportedProfiles{profiles: resolved, defaultID: defaultID}
	b.env.Emit(actor, "browser.profiles", defaultID, sim.A("profiles", fmt.Sprint(len(resolved))))
}

type reportedProfiles struct {
	profiles  []BrowserProfile
	defaultID string
}

// profileStatus is profileStatus: the catalogue status and open report
// (the built-ins when no client reported one, with no default id then).
func (b *ServerBrowser) profileStatus(res *Result) {
	if b.reported == nil {
		res.Profiles, res.DefaultProfileID = BuiltInProfiles, ""
		return
	}
	res.Profiles, res.DefaultProfileID = b.reported.profiles, b.reported.defaultID
}

// resolveOpenProfile is resolveOpenProfile: an omitted profile is the
// reported default ("" when none was reported); otherwise an id, then a
// case-insensitive name. ok is false for a profile nobody reported, with
// the message upstream throws.
func (b *ServerBrowser) resolveOpenProfile(requested string) (id, msg string, ok bool) {
	if requested == "" {
		if b.reported == nil {
			return "", "", true
		}
		return b.reported.defaultID, "", true
	}
	profiles := BuiltInProfiles
	if b.reported != nil {
		profiles = b.reported.profiles
	}
	if p := findProfile(profiles, requested); p != nil {
		return p.ID, "", true
	}
	for _, p := range profiles {
		if strings.ToLower(p.Name) == strings.ToLower(requested) {
			return p.ID, "", true
		}
	}
	var names []string
	for _, p := range profiles {
		names = append(names, p.Name+" (id "+p.ID+")")
	}
	return "", `No browser profile is named "` + requested + `". Use one of: ` + strings.Join(names, ", ") + ".", false
}

// contextFor is the createTab context choice: an agent tab without a
// profile (no client reported one) and an incognito tab get an isolated
// context; everything else shares its profile's context.
func contextFor(t *Tab) ContextRequest {
	id := t.ProfileID
	if id == "" {
		id = DefaultProfileID
	}
	return ContextRequest{ProfileID: id, Isolated: t.Control.AgentID != "" && t.ProfileID == "" || t.ProfileID == IncognitoProfileID}
}
