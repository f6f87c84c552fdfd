package scenarios

import (
	"time"

	"github.com/orchsim/orchsim/model/browser"
	"github.com/orchsim/orchsim/sim"
)

// Native surfaces and captures of a T3 world's server tabs (a dimension
// drawn from its own stream, native-surfaces, so the other draws keep
// their places; on in half the worlds that set T3World.PageLifecycle, as
// chaos does, and whose agents use the preview tools;
// model/browser/surface.go): the server runs the newest version's
// surfaces, captures and request deadlines (ServerBrowser.Surfaces), every
// request carrying the broker's default 15 s timeoutMs, and outside the
// heal phase:
//   - the desktop refuses one surface acquire in 25 (layout-timeout or
//     surface-unsupported), failing that request untouched;
//   - a sixth of the image captures take 1 to 40 s (a slow or hung
//     captureScreenshot), so some outlive their deadline;
//   - a tenth of the viewers' screencast pauses take 1 to 30 s (a stop
//     that does not answer), holding a capture until its deadline.

// surfaceActor is the stream and the shrinker's name of the dimension.
const surfaceActor = "native-surfaces"

func (w *T3World) startSurfaces() {
	if !w.PageLifecycle || w.Repertoire.Orchestrator && !w.Repertoire.Preview {
		return
	}
	r := w.env.Rand(surfaceActor)
	if !r.Chance("enable", sim.Per(1, 2)) || !w.env.Enabled(surfaceActor) {
		return
	}
	w.srand = r
	w.env.Emit("world", surfaceActor, "", sim.A("refusals", "1/25"), sim.A("slow-captures", "1/6"), sim.A("stalled-pauses", "1/10"))
}

// surfaceRefusals are the reasons a refused acquire draws from.
var surfaceRefusals = []string{browser.SurfaceLayoutTimeout, browser.SurfaceUnsupported}

// wireSurfaces turns the newest version's surfaces on for a new server
// process's browser, with the dimension's desktop and page.
func (w *T3World) wireSurfaces(b *browser.ServerBrowser) {
	r := w.srand
	if r == nil {
		return
	}
	b.Surfaces = &browser.Surfaces{
		DefaultTimeout: browser.BrokerDefaultTimeout,
		Failure: func(*browser.Tab) string {
			if w.env.Healing || !r.Chance("refuse", sim.Per(1, 25)) {
				return ""
			}
			return surfaceRefusals[r.IntN("refusal", len(surfaceRefusals))]
		},
		Stage: func(_ *browser.Tab, stage string) time.Duration {
			if w.env.Healing {
				return 0
			}
			switch {
			case stage == browser.StageCapture && r.Chance("slow-capture", sim.Per(1, 6)):
				return r.Duration("capture", time.Second, 40*time.Second)
			case stage == browser.StageViewerPause && r.Chance("stalled-pause", sim.Per(1, 10)):
				return r.Duration("pause", time.Second, 30*time.Second)
			}
			return 0
		},
	}
}
