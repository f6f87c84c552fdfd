package invariants

import (
	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Probes of the server tabs' preview hosting (model/browser/hosting.go; the
// preview-hosting dimension of scenarios/hosting.go).
var (
	probeCredentialExchanged = declareProbe(ProbeInfo{Name: "credential-exchanged-before-navigation", Group: catalog.PreviewTab,
		Doc: "an agent's navigation to a managed origin exchanged a one-use credential for a browser session cookie before the page moved"})
	probeTakeoverDuringHostedNavigation = declareProbe(ProbeInfo{Name: "takeover-during-hosted-navigation", Group: catalog.PreviewTab,
		Doc: "a human took control of a tab while an agent's navigation on it was being prepared by hosting (interrupting it) or exchanging its credential (which drained first)"})
)

// hostingLife tracks the tabs with an agent navigation in preparation.
type hostingLife struct {
	preparing []string
}

func (h *hostingLife) observe(ev *sim.Event, hit func(string)) {
	tab := ev.Get("tab")
	switch {
	case ev.Kind == "server.start":
		h.preparing = h.preparing[:0]
	case ev.Kind == "hosting.navigate":
		if !has(h.preparing, tab) {
			h.preparing = append(h.preparing, tab)
		}
	case ev.Kind == "hosting.navigated":
		// A takeover interrupts the preparation before its own
		// control.take is traced.
		if ev.Outcome == "interrupted" {
			hit(probeTakeoverDuringHostedNavigation)
		}
		h.preparing = drop(h.preparing, tab)
	case ev.Kind == "hosting.exchange" && ev.Outcome == outcomeOK:
		hit(probeCredentialExchanged)
	case ev.Kind == "control.take" && ev.Outcome == outcomeOK:
		if has(h.preparing, tab) {
			hit(probeTakeoverDuringHostedNavigation)
		}
	}
}
