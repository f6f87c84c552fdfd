package invariants

import (
	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/sim"
)

// Probes of native popups (model/browser/native_popup.go; the
// native-popups dimension of scenarios/nativepopups.go).
var (
	probeNativePopupOpened = declareProbe(ProbeInfo{Name: "native-popup-opened", Group: catalog.PreviewTab,
		Doc: "a popup a native page opened became a session of its opener's agent"})
	probeNativePopupNeverRegistered = declareProbe(ProbeInfo{Name: "native-popup-never-registered", Group: catalog.PreviewTab,
		Doc: "a native popup was announced but never became a registered tab: no session was made of it (its opener gone or unreachable, at its agent's tab limit, or its window already closed), or its window closed before its page attached"})
	probeNativePopupIdleVetoed = declareProbe(ProbeInfo{Name: "native-popup-idle-close-vetoed", Group: catalog.PreviewTab,
		Doc: "the idle sweep's close of a native popup was vetoed by its page: the session stays and its idle deadline restarts"})
	probeNativePopupCloseRetried = declareProbe(ProbeInfo{Name: "native-popup-close-retried", Group: catalog.PreviewTab,
		Doc: "a native popup's close, requested earlier and still unanswered or failed, was sent again on its desktop's return (re-announcement or presence probe)"})
)

// popupLife hits the native popup probes from the trace.
type popupLife struct{}

func (popupLife) observe(ev *sim.Event, hit func(string)) {
	switch {
	case ev.Kind == "native.popup-published":
		hit(probeNativePopupOpened)
	case ev.Kind == "native.popup-refused" || ev.Kind == "native.popup-unregistered":
		hit(probeNativePopupNeverRegistered)
	case ev.Kind == "native.close-canceled" && ev.Outcome == "idle":
		hit(probeNativePopupIdleVetoed)
	case ev.Kind == "native.close" && ev.Get("kind") == "popup" && (ev.Outcome == "retry" || ev.Outcome == "reconnect"):
		hit(probeNativePopupCloseRetried)
	}
}
