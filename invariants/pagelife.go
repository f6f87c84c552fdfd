package invariants

import (
	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Probes of the server tabs' page lifecycle (model/browser/page.go; the
// page-lifecycle dimension of scenarios/pagelife.go).
var (
	probeTakeoverWhileDialogPending = declareProbe(ProbeInfo{Name: "takeover-while-dialog-pending", Group: catalog.PreviewTab,
		Doc: "a human took control of a tab while a page dialog held an agent's action on it"})
	probeDesktopWithdrewPage = declareProbe(ProbeInfo{Name: "desktop-withdrew-page", Group: catalog.PreviewTab,
		Doc: "the desktop app took back a page it rendered for an agent tab (its debugger withdrawn); the session stayed"})
	probeCallOnWithdrawnPage = declareProbe(ProbeInfo{Name: "call-on-withdrawn-page", Group: catalog.PreviewTab,
		Doc: "an agent's call on a tab whose desktop page had been withdrawn connected the page again"})
	probeLoadFailedOnWatchedTab = declareProbe(ProbeInfo{Name: "load-failed-on-watched-tab", Group: catalog.PreviewTab,
		Doc: "an agent's navigation failed to load (a Chromium net error) on a tab a viewer watched"})
)

// pageLife tracks the tabs with a pending dialog and the withdrawn pages.
type pageLife struct {
	dialog    []string // tabs with a pending dialog
	withdrawn []string // tabs whose desktop page is withdrawn
}

func drop(list []string, tab string) []string {
	for i, t := range list {
		if t == tab {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

func has(list []string, tab string) bool {
	for _, t := range list {
		if t == tab {
			return true
		}
	}
	return false
}

func (p *pageLife) observe(ev *sim.Event, hit func(string)) {
	tab := ev.Get("tab")
	switch {
	case ev.Kind == "server.start":
		p.dialog, p.withdrawn = p.dialog[:0], p.withdrawn[:0]
	case ev.Kind == "page.dialog":
		if !has(p.dialog, tab) {
			p.dialog = append(p.dialog, tab)
		}
	case ev.Kind == "page.dialog-resolved", ev.Kind == "tab.swept":
		p.dialog = drop(p.dialog, tab)
		p.withdrawn = drop(p.withdrawn, tab)
	case ev.Kind == "control.take" && ev.Outcome == outcomeOK:
		if has(p.dialog, tab) {
			hit(probeTakeoverWhileDialogPending)
		}
	case ev.Kind == "tab.withdraw":
		hit(probeDesktopWithdrewPage)
		p.dialog = drop(p.dialog, tab)
		if !has(p.withdrawn, tab) {
			p.withdrawn = append(p.withdrawn, tab)
		}
	case ev.Kind == "tab.connect":
		if ev.Get("by") == "agent" && has(p.withdrawn, tab) {
			hit(probeCallOnWithdrawnPage)
		}
		p.withdrawn = drop(p.withdrawn, tab)
	case ev.Kind == "page.load-failed" && ev.Get("viewers") != "0":
		hit(probeLoadFailedOnWatchedTab)
	case isToolEvent(ev) && ev.Kind == "t3_preview_close" && ev.Outcome == outcomeOK:
		p.dialog = drop(p.dialog, tab)
		p.withdrawn = drop(p.withdrawn, tab)
	}
}
