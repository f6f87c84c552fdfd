package browser

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Cases of the newest stored ServerBrowser.test.ts (index:70867653086, a
// [variant]) about native rendering surfaces, captures, recordings,
// viewport sizing and visibility, on the sb harness with
// ServerBrowser.Surfaces set: the fixture's desktop (surface commands
// logged as surfaceCalls, a desktop page starting at 1024x768, a stage
// that can be held as the fixture's gates hold a promise).

// surf is the sb harness with surfaces: calls is surfaceCalls, holds the
// one-shot gates (stage -> how long it takes the next time it runs), and
// refuse the desktop's acquire failure.
type surf struct {
	*sb
	host   *NativeHost
	calls  []SurfaceCall
	holds  map[string]time.Duration
	refuse string
}

func newSurf(t *testing.T) *surf {
	x := &surf{sb: newSB(t, reported), holds: map[string]time.Duration{}}
	x.b.Surfaces = &Surfaces{
		Window:  Viewport{1024, 768},
		OnCall:  func(c SurfaceCall) { x.calls = append(x.calls, c) },
		Failure: func(*Tab) string { return x.refuse },
		Stage: func(_ *Tab, stage string) time.Duration {
			d := x.holds[stage]
			delete(x.holds, stage)
			return d
		},
	}
	return x
}

// native opens agent-a's tab on the desktop (desktopRendersNext: a native
// root of the local desktop, native_root.go).
func (x *surf) native() *Tab {
	if x.host == nil {
		x.host = x.b.AddNativeHost("local")
		x.b.NativeRootFor = func(string) (*NativeHost, string) { return x.host, "default" }
	}
	tab := x.openRoot()
	require.True(x.t, tab.Desktop)
	require.True(x.t, tab.HasPage())
	return tab
}

func (x *surf) actions() []string {
	var out []string
	for _, c := range x.calls {
		out = append(out, c.Action)
	}
	return out
}

func (x *surf) leaseActions(id string) []string {
	var out []string
	for _, c := range x.calls {
		if c.LeaseID == id {
			out = append(out, c.Action)
		}
	}
	return out
}

func (x *surf) status(tab *Tab) Viewport {
	r := x.as("agent-a", OpStatus, onTab(tab, nil))
	require.Equal(x.t, OK, r.Outcome)
	require.NotNil(x.t, r.Viewport)
	return *r.Viewport
}

func viewports(out []Output) []Viewport {
	var vs []Viewport
	for _, o := range out {
		if o.Tag == "viewport" {
			vs = append(vs, Viewport{o.Width, o.Height})
		}
	}
	return vs
}

// TestSBN38_NativeHungViewerNavigationKeepsViewerLease is SB-N38, upstream
// "a viewer $method that never commits does not hold back the viewer's
// next input (native: $native)", the native rows: as SB-N15 on a page the
// desktop renders (a native root), and the viewer's navigation keeps the
// lease the viewer took when it attached (the open's own lease came and
// went before); the desktop endpoint is never let go.
func TestSBN38_NativeHungViewerNavigationKeepsViewerLease(t *testing.T) {
	for _, method := range []string{"goto", "goBack", "goForward", "reload"} {
		t.Run(method, func(t *testing.T) {
			x := newSurf(t)
			tab := x.native()
			x.b.AttachViewer(tab, "viewer", true)
			x.input(tab, "viewer", ViewerInput{Kind: InputTakeControl})
			x.run(time.Second)
			hung := x.input(tab, "viewer", ViewerInput{Kind: InputNavigate, Method: method, Hold: 24 * time.Hour})
			fixed := x.input(tab, "viewer", ViewerInput{Kind: InputNavigate, Method: "goto", Hold: time.Millisecond})
			typed := x.input(tab, "viewer", ViewerInput{Kind: InputText, Text: "hello"})
			x.run(time.Second)
			require.True(t, hung.done && fixed.done && typed.done, "neither waits for the hung navigation")
			assert.Equal(t, OK, typed.outcome)
			assert.Equal(t, ViewerNavigation{Method: "goto", WaitUntil: "commit", Timeout: NavigationTimeout}, tab.LastViewerNavigation)
			assert.Contains(t, tab.Page, "human typed hello")
			assert.Equal(t, []string{SurfaceAcquire, SurfaceRelease, SurfaceAcquire}, x.actions(),
				"the open's lease, then the viewer's, kept through its navigations")
			assert.Zero(t, x.b.EndpointReleases)
		})
	}
}

// TestSBN39_NativeViewersFillAndFixedSizes is SB-N39, upstream "native root
// viewers apply fill and fixed sizes with measured CSS coordinates (%s)"
// (local, host-a: the model's one desktop stands for either host, and
// nothing here depends on its id).
func TestSBN39_NativeViewersFillAndFixedSizes(t *testing.T) {
	for _, host := range []string{"local", "host-a"} {
		t.Run(host, func(t *testing.T) {
			x := newSurf(t)
			tab := x.native()
			x.b.AttachViewer(tab, "passive", false)
			assert.Contains(t, viewports(tab.Output("passive")), Viewport{1024, 768}, "the desktop's own size")
			assert.Equal(t, Ignored, x.input(tab, "passive", ViewerInput{Kind: InputResize, Viewport: Viewport{333, 444}}).outcome)
			s := Freeform(333, 444)
			assert.Equal(t, Ignored, x.input(tab, "passive", ViewerInput{Kind: InputViewport, Setting: &s}).outcome)
			assert.Equal(t, Viewport{1024, 768}, x.status(tab))

			x.b.AttachViewer(tab, "active", true)
			x.input(tab, "active", ViewerInput{Kind: InputTakeControl})
			x.run(time.Second)
			x.input(tab, "active", ViewerInput{Kind: InputResize, Viewport: Viewport{1200, 720}})
			assert.Contains(t, viewports(tab.Output("active")), Viewport{1200, 720})
			var filled *SurfaceCall
			for i, c := range x.calls {
				if c.Setting != nil && c.Setting.Tag == "fill" && c.Size != nil {
					filled = &x.calls[i]
					break
				}
			}
			require.NotNil(t, filled, "the fill size went to the desktop's surface")
			assert.Equal(t, Viewport{1200, 720}, *filled.Size)
			x.input(tab, "active", ViewerInput{Kind: InputMouse, X: 600, Y: 360})
			assert.Contains(t, tab.Page, "human mouse down 600,360", "pointer input in the measured CSS coordinates")

			fixed := Freeform(390, 844)
			x.input(tab, "active", ViewerInput{Kind: InputViewport, Setting: &fixed})
			x.input(tab, "active", ViewerInput{Kind: InputResize, Viewport: Viewport{1400, 900}})
			assert.Equal(t, Viewport{390, 844}, x.status(tab), "a fixed size wins over the panel")
			x.input(tab, "active", ViewerInput{Kind: InputViewport, Setting: &FillViewport})
			assert.Equal(t, Viewport{1400, 900}, x.status(tab), "fill takes the latest active viewer's panel, not the passive one's")
			assert.Equal(t, FillViewport, tab.Surface().Setting, "the session's viewport is fill")
			assert.Zero(t, tab.Surface().PageResizes, "no headless setViewportSize")
			x.input(tab, "active", ViewerInput{Kind: InputReleaseControl})
		})
	}
}

// TestSBN40_ViewerDisconnectRestoresFillSizes is SB-N40, upstream "viewer
// disconnect restores connected fill sizes without changing fixed sizes
// ($host, $fixed)" (headless, local, host-a; false, true).
func TestSBN40_ViewerDisconnectRestoresFillSizes(t *testing.T) {
	for _, host := range []string{"headless", "local", "host-a"} {
		for _, fixed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%v", host, fixed), func(t *testing.T) {
				x := newSurf(t)
				var tab *Tab
				if host == "headless" {
					tab = x.ready()
				} else {
					tab = x.native()
				}
				x.b.AttachViewer(tab, "first", true)
				x.input(tab, "first", ViewerInput{Kind: InputTakeControl})
				x.run(time.Second)
				x.input(tab, "first", ViewerInput{Kind: InputResize, Viewport: Viewport{640, 480}})
				if fixed {
					s := Freeform(390, 844)
					x.input(tab, "first", ViewerInput{Kind: InputViewport, Setting: &s})
				}
				x.input(tab, "first", ViewerInput{Kind: InputReleaseControl})
				x.run(time.Second)
				x.b.AttachViewer(tab, "latest", true)
				x.input(tab, "latest", ViewerInput{Kind: InputTakeControl})
				x.run(time.Second)
				x.input(tab, "latest", ViewerInput{Kind: InputResize, Viewport: Viewport{1200, 720}})
				x.run(time.Second)
				if fixed {
					assert.Equal(t, Viewport{390, 844}, x.status(tab))
				} else {
					assert.Equal(t, Viewport{1200, 720}, x.status(tab))
				}
				tab.Output("first")
				x.b.Unwatch(tab, "latest")
				remaining := Viewport{640, 480}
				if fixed {
					remaining = Viewport{390, 844}
				}
				assert.Equal(t, remaining, x.status(tab))
				if !fixed {
					assert.Contains(t, viewports(tab.Output("first")), remaining, "the remaining viewer is told its size")
				}
				x.b.Unwatch(tab, "first")
				if fixed {
					assert.Equal(t, Viewport{390, 844}, x.status(tab))
				} else {
					assert.Equal(t, UnattachedFillViewport, x.status(tab))
				}
			})
		}
	}
}

// TestSBN41_PublishedRootZoomKeepsViewportCoherent is SB-N41, upstream
// "published root zoom keeps measured viewport, pointer and snapshot scale
// coherent": a published size and zoom reach the desktop through its
// surface, viewers and status see the measured CSS viewport, no headless
// resize is made, and pointer input keeps those coordinates. The capture's
// pixel scale (clip and image size) is not modelled.
func TestSBN41_PublishedRootZoomKeepsViewportCoherent(t *testing.T) {
	x := newSurf(t)
	tab := x.native()
	x.b.AttachViewer(tab, "viewer", true)
	x.b.ManagerResize(tab, Freeform(1000, 750))
	x.b.ManagerZoom(tab, 1.25)
	reloaded := ""
	x.b.ManagerAdjust(tab, false, true, func(o string) { reloaded = o })
	x.run(time.Second)
	require.Equal(t, OK, reloaded, "the hard reload applied, so the earlier settings did")
	require.Contains(t, tab.Page, "hard reload")
	zoomed := false
	for _, c := range x.calls {
		zoomed = zoomed || c.Action == SurfaceAcquire && c.Zoom == 1.25
	}
	assert.True(t, zoomed, "the zoom went to the desktop's surface")
	assert.Contains(t, viewports(tab.Output("viewer")), Viewport{800, 600})
	assert.Equal(t, Viewport{800, 600}, x.status(tab))
	snap := x.as("agent-a", OpSnapshot, onTab(tab, nil))
	x.run(time.Second)
	require.Equal(t, OK, snap.Outcome)
	assert.True(t, snap.Screenshot)
	assert.Zero(t, tab.Surface().PageResizes, "no headless setViewportSize or device metrics")
	x.input(tab, "viewer", ViewerInput{Kind: InputTakeControl})
	x.run(time.Second)
	x.input(tab, "viewer", ViewerInput{Kind: InputMouse, X: 400, Y: 300})
	assert.Contains(t, tab.Page, "human mouse down 400,300")
}

// TestSBN58_NativeSurfaceFailureReportedWithoutMutation is SB-N58, upstream
// "reports native %s without dispatching the page mutation or evicting the
// host" (layout-timeout, surface-unsupported).
func TestSBN58_NativeSurfaceFailureReportedWithoutMutation(t *testing.T) {
	for _, reason := range []string{SurfaceLayoutTimeout, SurfaceUnsupported} {
		t.Run(reason, func(t *testing.T) {
			x := newSurf(t)
			tab := x.native()
			x.calls = nil
			x.refuse = reason
			click := x.as("agent-a", OpClick, onTab(tab, func(r *Request) { r.Box = &Box{20, 20, 80, 30} }))
			x.run(time.Second)
			require.True(t, click.done)
			assert.Equal(t, ErrRemoteUnavailable, click.Outcome)
			assert.Equal(t, reason, click.Detail)
			assert.Zero(t, tab.Clicks, "the page was not touched")
			assert.Equal(t, []string{SurfaceAcquire, SurfaceRelease}, x.actions())
			x.refuse = ""
			eval := x.as("agent-a", OpEvaluate, onTab(tab, func(r *Request) { r.Value = "evaluated" }))
			x.run(2 * time.Second)
			assert.Equal(t, "evaluated", eval.Value, "the host was not evicted")
		})
	}
}

// TestSBN59_CanceledRecordingStageReleasesAndDisposes is SB-N59, upstream
// "a canceled recording %s releases its queue and disposes late resources"
// (encoder acquisition, encoder setup, CDP acquisition).
func TestSBN59_CanceledRecordingStageReleasesAndDisposes(t *testing.T) {
	for _, c := range []struct{ row, stage string }{
		{"encoder acquisition", StageRecordingEncoder},
		{"encoder setup", StageRecordingSetup},
		{"CDP acquisition", StageRecordingSession},
	} {
		t.Run(c.row, func(t *testing.T) {
			x := newSurf(t)
			tab := x.native()
			x.calls = nil
			x.holds[c.stage] = time.Second
			started := x.as("agent-a", OpRecordingStart, onTab(tab, func(r *Request) { r.Timeout = 200 * time.Millisecond }))
			x.run(180 * time.Millisecond)
			require.True(t, started.done)
			assert.Equal(t, ErrTimeout, started.Outcome)
			require.GreaterOrEqual(t, len(x.calls), 2)
			recording := x.calls[1].LeaseID
			snap := x.as("agent-a", OpSnapshot, onTab(tab, func(r *Request) { r.NoImage = true }))
			require.True(t, snap.done, "neither control nor capture waits for the resource that has not answered")
			assert.Equal(t, OK, snap.Outcome)
			assert.Equal(t, []string{SurfaceAcquire, SurfaceRelease}, x.leaseActions(recording))
			x.run(time.Second)
			s := tab.Surface()
			switch c.stage {
			case StageRecordingSession:
				assert.Equal(t, 1, s.SessionsOpened)
				assert.Equal(t, 1, s.SessionsDetached, "the late CDP session is detached")
				assert.Equal(t, 1, s.LateDisposed)
			case StageRecordingEncoder:
				assert.Equal(t, 1, s.LateDisposed, "the late encoder page is closed")
			}
			assert.Equal(t, s.EncodersOpened, s.EncodersClosed, "no encoder page is left open")
			assert.Equal(t, 1, s.EncodersOpened)
			assert.Zero(t, s.RecordingScreencasts, "no recording screencast started")
			stop := x.as("agent-a", OpRecordingStop, onTab(tab, nil))
			require.True(t, stop.done)
			assert.Equal(t, ExecutionError, stop.Outcome)
			assert.Equal(t, RecordingNotActive, stop.Cause)
		})
	}
}

// TestSBN60_CanceledRecordingStopClosesEncoder is SB-N60, upstream "a
// canceled recording stop closes its encoder without pinning subsequent
// captures".
func TestSBN60_CanceledRecordingStopClosesEncoder(t *testing.T) {
	x := newSurf(t)
	tab := x.native()
	start := x.as("agent-a", OpRecordingStart, onTab(tab, nil))
	require.Equal(t, OK, start.Outcome)
	x.holds[StageRecordingEncoderStop] = time.Second
	stopping := x.as("agent-a", OpRecordingStop, onTab(tab, func(r *Request) { r.Timeout = 200 * time.Millisecond }))
	x.run(180 * time.Millisecond)
	require.True(t, stopping.done)
	assert.Equal(t, ErrTimeout, stopping.Outcome)
	snap := x.as("agent-a", OpSnapshot, onTab(tab, nil))
	require.True(t, snap.done, "the capture is not pinned behind the stalled stop")
	assert.True(t, snap.Screenshot)
	assert.Equal(t, 1, tab.Surface().EncodersClosed, "the encoder was closed")
	assert.Nil(t, tab.Surface().Recording)
	stop := x.as("agent-a", OpRecordingStop, onTab(tab, nil))
	assert.Equal(t, ExecutionError, stop.Outcome)
	assert.Equal(t, RecordingNotActive, stop.Cause)
}

// TestSBN61_CanceledSnapshotPauseDoesNotPin is SB-N61, upstream "a
// canceled snapshot pause cannot pin the viewer or tab queue": the
// viewer's pause never answers, the snapshot's deadline cancels it, and
// while that stop still has no reply the viewer's screencast resumes and a
// fresh snapshot pauses, captures and resumes.
func TestSBN61_CanceledSnapshotPauseDoesNotPin(t *testing.T) {
	x := newSurf(t)
	tab := x.native()
	x.b.AttachViewer(tab, "viewer", false)
	x.holds[StageViewerPause] = time.Hour
	snap := x.as("agent-a", OpSnapshot, onTab(tab, func(r *Request) { r.Timeout = 200 * time.Millisecond }))
	x.run(180 * time.Millisecond)
	require.True(t, snap.done)
	assert.Equal(t, ErrTimeout, snap.Outcome)
	before := tab.ScreencastStarts("viewer")
	fresh := x.as("agent-a", OpSnapshot, onTab(tab, nil))
	require.True(t, fresh.done, "neither the tab queue nor the viewer's parameters are pinned")
	assert.True(t, fresh.Screenshot)
	assert.Equal(t, before+1, tab.ScreencastStarts("viewer"), "the viewer's screencast started again")
}

// TestSBN63_RecordingSurfaceHeldUntilTabCloses is SB-N63, upstream "keeps a
// native recording surface acquired until its tab closes".
func TestSBN63_RecordingSurfaceHeldUntilTabCloses(t *testing.T) {
	x := newSurf(t)
	tab := x.native()
	x.calls = nil
	start := x.as("agent-a", OpRecordingStart, onTab(tab, nil))
	require.Equal(t, OK, start.Outcome)
	assert.Equal(t, []string{SurfaceAcquire, SurfaceAcquire, SurfaceRelease}, x.actions())
	recording := x.calls[1].LeaseID
	assert.NotEqual(t, x.calls[0].LeaseID, recording)
	assert.Len(t, x.leaseActions(recording), 1)
	closed := x.as("agent-a", OpClose, onTab(tab, nil))
	require.Equal(t, OK, closed.Outcome)
	assert.Equal(t, []string{SurfaceAcquire, SurfaceRelease}, x.leaseActions(recording))
}

// TestSBN64_ViewerPaintableForItsScope is SB-N64, upstream "keeps a native
// viewer paintable for its scoped lifetime".
func TestSBN64_ViewerPaintableForItsScope(t *testing.T) {
	x := newSurf(t)
	tab := x.native()
	x.calls = nil
	x.b.AttachViewer(tab, "viewer", false)
	assert.Equal(t, []string{SurfaceAcquire}, x.actions())
	x.b.Unwatch(tab, "viewer")
	assert.Equal(t, []string{SurfaceAcquire, SurfaceRelease}, x.actions())
	assert.Equal(t, x.calls[0].LeaseID, x.calls[1].LeaseID)
}

// TestSBN65_BackgroundTabPaintableThroughActions is SB-N65, upstream "keeps
// a background native tab paintable through snapshot and geometry
// actions": each request holds its own lease for its duration.
func TestSBN65_BackgroundTabPaintableThroughActions(t *testing.T) {
	x := newSurf(t)
	tab := x.native()
	x.calls = nil
	click := x.as("agent-a", OpClick, onTab(tab, func(r *Request) { r.Box = &Box{20, 20, 80, 30} }))
	x.run(time.Second)
	require.Equal(t, OK, click.Outcome)
	snap := x.as("agent-a", OpSnapshot, onTab(tab, nil))
	x.run(time.Second)
	require.Equal(t, OK, snap.Outcome)
	assert.Equal(t, []string{SurfaceAcquire, SurfaceRelease, SurfaceAcquire, SurfaceRelease}, x.actions())
	assert.Equal(t, x.calls[0].LeaseID, x.calls[1].LeaseID)
	assert.Equal(t, x.calls[2].LeaseID, x.calls[3].LeaseID)
	assert.NotEqual(t, x.calls[0].LeaseID, x.calls[2].LeaseID)
}

// TestSBN66_NativeResizeReportsAppliedViewport is SB-N66, upstream "reports
// the native renderer's applied resize instead of a fallback viewport".
func TestSBN66_NativeResizeReportsAppliedViewport(t *testing.T) {
	x := newSurf(t)
	tab := x.native()
	setting := Freeform(390, 844)
	r := x.as("agent-a", OpResize, onTab(tab, func(r *Request) { r.Setting = &setting }))
	x.run(time.Second)
	require.Equal(t, OK, r.Outcome)
	require.NotNil(t, r.Viewport)
	assert.Equal(t, Viewport{390, 844}, *r.Viewport)
	assert.Zero(t, tab.Surface().PageResizes, "no headless setViewportSize")
	var first *SurfaceCall
	for i, c := range x.calls {
		if c.Setting != nil {
			first = &x.calls[i]
			break
		}
	}
	require.NotNil(t, first)
	assert.Equal(t, SurfaceAcquire, first.Action)
	assert.Equal(t, setting, *first.Setting)
}

// TestSBN67_TimedOutNativeSnapshotKeepsConnection is SB-N67, upstream "a
// timed-out native snapshot preserves its connection and leaves both tabs
// usable".
func TestSBN67_TimedOutNativeSnapshotKeepsConnection(t *testing.T) {
	x := newSurf(t)
	tab := x.native()
	second := x.native()
	connections := x.b.DesktopConnections
	x.holds[StageCapture] = time.Hour
	snap := x.as("agent-a", OpSnapshot, onTab(tab, func(r *Request) { r.Timeout = 200 * time.Millisecond }))
	x.run(180 * time.Millisecond)
	require.True(t, snap.done)
	assert.Equal(t, ErrTimeout, snap.Outcome)
	assert.Zero(t, x.b.EndpointReleases, "the desktop endpoint is kept")
	other := x.as("agent-a", OpEvaluate, onTab(second, func(r *Request) { r.Value = "1" }))
	x.run(2 * time.Second)
	assert.Equal(t, "1", other.Value)
	again := x.as("agent-a", OpEvaluate, onTab(tab, func(r *Request) { r.Value = "2" }))
	x.run(2 * time.Second)
	assert.Equal(t, "2", again.Value, "the failed read released the queue")
	assert.Equal(t, 2, connections)
	assert.Equal(t, connections, x.b.DesktopConnections, "neither native page was replaced")
	assert.True(t, tab.HasPage() && second.HasPage())
}

// TestSBN89_VisibilityDistinguishesPresentationViewersReveal is SB-N89,
// upstream "visibility distinguishes native presentation, streamed
// viewers, and a pending reveal".
func TestSBN89_VisibilityDistinguishesPresentationViewersReveal(t *testing.T) {
	x := newSurf(t)
	tab := x.native()
	revealed := x.as("agent-a", OpOpen, onTab(tab, func(r *Request) { r.Reveal = true }))
	require.Equal(t, OK, revealed.Outcome)
	assert.Equal(t, visibility{false, false, 0, true}, visibilityOf(revealed.Result),
		"not visible, not presented, no viewers, a reveal requested")
	status := func() visibility {
		r := x.as("agent-a", OpStatus, onTab(tab, nil))
		require.Equal(t, OK, r.Outcome)
		return visibilityOf(r.Result)
	}
	x.host.Presented[tab.TabID] = true
	x.b.NativePresentation(x.host, tab.TabID)
	assert.Equal(t, visibility{true, true, 0, false}, status(), "presented: the reveal is done")
	x.host.Presented[tab.TabID] = false
	x.b.NativePresentation(x.host, tab.TabID)
	assert.Equal(t, visibility{}, status())
	x.b.AttachViewer(tab, "viewer", false)
	assert.Equal(t, visibility{true, false, 1, false}, status())
}

// visibility is status's visible, nativePresented, streamViewers and
// revealRequested.
type visibility struct {
	visible, presented bool
	viewers            int
	reveal             bool
}

func visibilityOf(r Result) visibility {
	return visibility{r.Visible, r.NativePresented, r.StreamViewers, r.RevealRequested}
}
