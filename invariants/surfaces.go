package invariants

import (
	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Probes of native surfaces and captures (model/browser/surface.go,
// capture.go; the native-surfaces dimension of scenarios/surfaces.go).
var (
	probeSurfaceRefused = declareProbe(ProbeInfo{Name: "native-surface-refused", Group: catalog.PreviewTab,
		Doc: "the desktop refused a request's surface lease (layout-timeout, surface-unsupported): the request failed untouched"})
	probeCaptureAbandonedWatched = declareProbe(ProbeInfo{Name: "capture-abandoned-while-watched", Group: catalog.PreviewTab,
		Doc: "a capture's deadline passed while it had paused a watched tab's viewers, which resumed in its cleanup"})
	probeTabUsableAfterDeadline = declareProbe(ProbeInfo{Name: "tab-usable-after-capture-deadline", Group: catalog.PreviewTab,
		Doc: "an agent's call succeeded on a tab whose earlier snapshot had passed its deadline (the queue was let go)"})
)

// surfaceLife tracks the tabs with a snapshot past its deadline.
type surfaceLife struct {
	timedOut []string
}

func (s *surfaceLife) observe(ev *sim.Event, hit func(string)) {
	switch {
	case ev.Kind == "server.start":
		s.timedOut = s.timedOut[:0]
	case ev.Kind == "surface.refused":
		hit(probeSurfaceRefused)
	case ev.Kind == "capture.abandoned" && ev.Get("viewers") != "0":
		hit(probeCaptureAbandonedWatched)
	case ev.Kind == "request.deadline" && ev.Outcome == "snapshot":
		if tab := ev.Get("tab"); !has(s.timedOut, tab) {
			s.timedOut = append(s.timedOut, tab)
		}
	case isToolEvent(ev) && ev.Outcome == outcomeOK && len(s.timedOut) > 0:
		if tab := ev.Get("tab"); has(s.timedOut, tab) {
			hit(probeTabUsableAfterDeadline)
			s.timedOut = drop(s.timedOut, tab)
		}
	}
}
