package invariants

import (
	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Probes of native desktop pages (model/browser/native*.go; the
// native-roots dimension of scenarios/nativeroots.go).
var (
	probeNativeCloseVetoed = declareProbe(ProbeInfo{Name: "native-close-vetoed", Group: catalog.PreviewTab,
		Doc: "the desktop vetoed a native page's close (close-canceled): the intent was cleared and the session kept"})
	probeNativeCloseLost = declareProbe(ProbeInfo{Name: "native-close-lost-with-host", Group: catalog.PreviewTab,
		Doc: "a native page's close reached its desktop, whose channel dropped before the answer: the intent was kept for the reconnect"})
	probeNativeRootRetiredOffline = declareProbe(ProbeInfo{Name: "native-root-retired-offline", Group: catalog.PreviewTab,
		Doc: "a close found a native root unreachable (its desktop away, or its window gone) and retired it at once"})
	probeNativeGoneAtReconnect = declareProbe(ProbeInfo{Name: "native-page-gone-at-reconnect", Group: catalog.PreviewTab,
		Doc: "a returning desktop's presence probe found a native page's window gone, and its session was retired"})
)

// nativeLife hits the native page probes from the trace.
type nativeLife struct{}

func (nativeLife) observe(ev *sim.Event, hit func(string)) {
	switch {
	case ev.Kind == "native.close-canceled":
		hit(probeNativeCloseVetoed)
	case ev.Kind == "native.close-lost":
		hit(probeNativeCloseLost)
	case ev.Kind == "native.discarded" && ev.Outcome == "offline-close":
		hit(probeNativeRootRetiredOffline)
	case ev.Kind == "native.probe" && ev.Outcome == "absent":
		hit(probeNativeGoneAtReconnect)
	}
}
