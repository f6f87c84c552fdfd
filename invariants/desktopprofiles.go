package invariants

import (
	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Probes of the desktop profile catalogues (model/browser/desktopprofiles.go;
// the desktop-profiles dimension of scenarios/desktopprofiles.go).
var (
	probeOpenWhileRetainedDesktopAway = declareProbe(ProbeInfo{Name: "open-while-retained-desktop-away", Group: catalog.PreviewTab,
		Doc: "an agent's open needed the desktop its tabs are on (its retained desktop owner) while that desktop was disconnected, and was refused RemoteUnavailable without opening a tab anywhere else"})
	probeDesktopPageUnattached = declareProbe(ProbeInfo{Name: "desktop-page-unattached", Group: catalog.PreviewTab,
		Doc: "a call on a tab whose desktop had disconnected waited out the attach timeout for its page and failed; the session stayed"})
)

// desktopAway hits the probes from the browser's events: a refused native
// open pinned to a host (tab.native-unavailable naming it) and a page
// reconnection that found its desktop away (tab.connect unattached).
func desktopAway(ev *sim.Event, hit func(string)) {
	switch {
	case ev.Kind == "tab.native-unavailable" && ev.Outcome != "":
		hit(probeOpenWhileRetainedDesktopAway)
	case ev.Kind == "tab.connect" && ev.Outcome == "unattached":
		hit(probeDesktopPageUnattached)
	}
}
