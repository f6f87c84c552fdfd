package invariants

import (
	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Probes of the server tabs' browser profiles (model/browser/profile.go;
// the browser-profiles dimension of scenarios/profiles.go).
var (
	probeOpenBeforeProfilesReported = declareProbe(ProbeInfo{Name: "open-before-profiles-reported", Group: catalog.PreviewTab,
		Doc: "an agent tab opened on a restarted server before a client reported its profiles again: the catalogue died with the old process, so the tab got throwaway storage"})
	probeUnknownProfileRefused = declareProbe(ProbeInfo{Name: "unknown-profile-refused", Group: catalog.PreviewTab,
		Doc: "an agent's open named a browser profile nobody reported and was refused without opening a tab"})
)

// profileLife tracks whether a profile catalogue was reported to an earlier
// server process and not yet to this one.
type profileLife struct {
	everReported, lost bool
}

func (p *profileLife) observe(ev *sim.Event, hit func(string)) {
	switch ev.Kind {
	case "server.start":
		p.lost = p.everReported
	case "browser.profiles":
		p.everReported, p.lost = true, false
	case "tab.context":
		if p.lost && ev.Get("reported") == "false" {
			hit(probeOpenBeforeProfilesReported)
		}
	case "tab.profile-unknown":
		hit(probeUnknownProfileRefused)
	}
}
