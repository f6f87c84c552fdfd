package browser

import (
	"fmt"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// Native rendering surfaces of the newest stored ServerBrowser.ts (read_file
// id 70905931248: withNativeSurface, acquirePersistentNativeSurface,
// withNativeCleanup) and the behaviour its test file (index:70867653086)
// asserts: a page the desktop renders is painted only while someone holds a
// lease on its surface. An agent request on such a page holds a lease for
// the request (released when it answers, or earlier by a capture); a viewer
// holds one for as long as it is attached; a recording holds one until it
// stops or its tab closes; stream cleanup takes a short one of its own. A
// lease the desktop refuses (layout-timeout, surface-unsupported) fails the
// request as a remote-unavailable error before the page is touched.
//
// The whole mechanism is off (164d7dbe's behaviour) unless
// ServerBrowser.Surfaces is set.

// Surface command actions (DesktopBrowserChannel surface).
const (
	SurfaceAcquire = "acquire"
	SurfaceRelease = "release"
)

// Surface failure reasons the desktop answers an acquire with
// (DesktopBrowserTransportError reason).
const (
	SurfaceLayoutTimeout = "layout-timeout"
	SurfaceUnsupported   = "surface-unsupported"
)

// NativeCleanupBudget is withNativeCleanup's read budget (500 ms): stopping
// or resuming streams after a capture or a recording never holds a queue
// longer.
const NativeCleanupBudget = 500 * time.Millisecond

// ViewerResumeBudget is the budget a viewer's screencast resume gets after a
// capture (viewer.resume(400)).
const ViewerResumeBudget = 400 * time.Millisecond

// ViewportSetting is PreviewViewportSetting: Tag "fill" (the panel of the
// latest operating viewer decides) or a fixed size ("freeform" or a device
// preset) of Width x Height CSS pixels.
type ViewportSetting struct {
	Tag           string
	Width, Height int
}

// FillViewport is FILL_PREVIEW_VIEWPORT.
var FillViewport = ViewportSetting{Tag: "fill"}

// Freeform is a fixed freeform viewport of w x h CSS pixels.
func Freeform(w, h int) ViewportSetting { return ViewportSetting{Tag: "freeform", Width: w, Height: h} }

// Fixed returns the setting's fixed size, or false for fill
// (fixedViewportSize).
func (s ViewportSetting) Fixed() (Viewport, bool) {
	if s.Tag == "fill" || s.Tag == "" {
		return Viewport{}, false
	}
	return Viewport{s.Width, s.Height}, true
}

// SurfaceCall is one surface command the server sent the desktop: an
// acquire (with the viewport setting, the fill size and the zoom it asks
// the desktop to apply, if any) or a release of lease LeaseID.
type SurfaceCall struct {
	TabID   string
	LeaseID string
	Action  string
	Setting *ViewportSetting
	Size    *Viewport
	Zoom    float64
}

// Surfaces turns on the newest stored version's native surfaces, captures
// and recordings (nil: 164d7dbe). Its funcs are the desktop's and the
// page's side; nil funcs mean "answers at once, never refuses".
type Surfaces struct {
	// Failure is the reason the desktop refuses an acquire on t's surface
	// ("" to grant it): SurfaceLayoutTimeout, SurfaceUnsupported, ...
	Failure func(t *Tab) string
	// Stage is how long the named native read takes on t (recording
	// encoder, capture, viewer screencast pause, ...: see the Stage*
	// constants); 0 answers at once.
	Stage func(t *Tab, stage string) time.Duration
	// OnCall hears every surface command.
	OnCall func(c SurfaceCall)
	// Window is the layout size (CSS pixels at zoom 1) a desktop page
	// starts with; zero is UnattachedFillViewport.
	Window Viewport
	// DefaultTimeout is the timeoutMs of a request that carries none (the
	// broker's default, BrokerDefaultTimeout, in the worlds; 0: no
	// deadline, as the fidelity cases' requests without one).
	DefaultTimeout time.Duration

	nextLease   int
	resizeOrder int // viewerResizeOrder
}

// TabSurface is what the newest version keeps per tab for its surfaces,
// captures, recording and streams: the observable state and counters.
type TabSurface struct {
	// Held are the lease ids held on the tab's native surface, in order.
	Held []string
	// Setting is the tab's viewport setting; Zoom its published zoom
	// factor (1 when none); Window a desktop page's layout size at zoom 1.
	Setting ViewportSetting
	Zoom    float64
	Window  Viewport
	// PageResizes counts a headless page's setViewportSize calls.
	PageResizes int
	// RevealRequested: a reveal was asked and nothing shows the page yet.
	RevealRequested bool
	// Recording is the active recording, nil for none.
	Recording *Recording
	// EncodersOpened and EncodersClosed count recording encoder pages;
	// SessionsOpened and SessionsDetached recording CDP sessions;
	// LateDisposed the resources that arrived after their recording start
	// was cancelled and were disposed at once; RecordingScreencasts the
	// recording screencasts started.
	EncodersOpened, EncodersClosed     int
	SessionsOpened, SessionsDetached   int
	LateDisposed, RecordingScreencasts int
	// Captures counts finished image captures; Capturing is the captures in
	// progress (screencasts stay paused meanwhile).
	Captures, Capturing int

	streams  []*viewerStream
	lock     captureLock
	starting bool // a recording start holds or waits for the capture lock
	closing  bool
}

// Recording is an active recording (ServerTab.recording): the lease that
// keeps its surface painted.
type Recording struct {
	Lease     string
	StartedAt time.Duration
	lease     *lease
}

// Surface returns t's surface state (nil until the newest version's
// machinery touched the tab).
func (t *Tab) Surface() *TabSurface { return t.surf }

func (b *ServerBrowser) surface(t *Tab) *TabSurface {
	if t.surf == nil {
		t.surf = &TabSurface{Setting: FillViewport, Zoom: 1, Window: b.Surfaces.window()}
	}
	return t.surf
}

func (s *Surfaces) window() Viewport {
	if s.Window == (Viewport{}) {
		return UnattachedFillViewport
	}
	return s.Window
}

// surfaced reports whether t is a page the desktop renders while surfaces are
// modelled (upstream's tab.desktop).
func (b *ServerBrowser) surfaced(t *Tab) bool {
	return b.Surfaces != nil && t.Desktop && !t.pageless()
}

func (b *ServerBrowser) stage(t *Tab, name string) time.Duration {
	if b.Surfaces.Stage == nil {
		return 0
	}
	return b.Surfaces.Stage(t, name)
}

// lease is one surface lease; release is idempotent.
type lease struct {
	id       string
	released bool
}

// acquireSurface sends an acquire for a new lease on t (with the setting,
// fill size and zoom to apply, if any) and returns it with the desktop's
// refusal reason ("" granted). A refused lease is still released by its
// holder, as upstream's finally does. A granted acquire applies what it
// carries to the desktop page.
func (b *ServerBrowser) acquireSurface(t *Tab, setting *ViewportSetting, size *Viewport, zoom float64) (*lease, string) {
	s := b.surface(t)
	b.Surfaces.nextLease++
	l := &lease{id: fmt.Sprintf("lease-%d", b.Surfaces.nextLease)}
	if b.Surfaces.OnCall != nil {
		b.Surfaces.OnCall(SurfaceCall{TabID: t.TabID, LeaseID: l.id, Action: SurfaceAcquire, Setting: setting, Size: size, Zoom: zoom})
	}
	if b.Surfaces.Failure != nil {
		if reason := b.Surfaces.Failure(t); reason != "" {
			b.env.Emit(actor, "surface.refused", reason, sim.A("thread", t.ThreadID), sim.A("tab", t.TabID))
			return l, reason
		}
	}
	s.Held = append(s.Held, l.id)
	switch fixed, ok := viewportOf(setting); {
	case ok:
		s.Window = fixed
	case size != nil:
		s.Window = *size
	}
	if zoom > 0 {
		s.Zoom = zoom
	}
	return l, ""
}

func viewportOf(s *ViewportSetting) (Viewport, bool) {
	if s == nil {
		return Viewport{}, false
	}
	return s.Fixed()
}

// releaseSurface releases l on t once.
func (b *ServerBrowser) releaseSurface(t *Tab, l *lease) {
	if l == nil || l.released {
		return
	}
	l.released = true
	s := b.surface(t)
	for i, id := range s.Held {
		if id == l.id {
			s.Held = append(s.Held[:i], s.Held[i+1:]...)
			break
		}
	}
	if b.Surfaces.OnCall != nil {
		b.Surfaces.OnCall(SurfaceCall{TabID: t.TabID, LeaseID: l.id, Action: SurfaceRelease})
	}
}

// requestLease is withNativeSurface's lease for one request on a native
// tab: nil (and no refusal) for a headless tab.
func (b *ServerBrowser) requestLease(t *Tab, res *Result) (*lease, bool) {
	if !b.surfaced(t) {
		return nil, true
	}
	l, reason := b.acquireSurface(t, nil, nil, 0)
	if reason != "" {
		b.releaseSurface(t, l)
		res.Message = "The desktop could not paint this tab (" + reason + ")."
		res.Detail = reason
		return nil, false
	}
	return l, true
}

// leaseAct wraps an act body's completion in a request lease: it returns
// the completion that releases the lease first, or nil when the desktop
// refused the lease (the action then already failed, untouched).
func (b *ServerBrowser) leaseAct(t *Tab, res *Result, done func(string)) func(string) {
	if b.Surfaces == nil {
		return done
	}
	l, ok := b.requestLease(t, res)
	if !ok {
		done(ErrRemoteUnavailable)
		return nil
	}
	return func(outcome string) {
		b.releaseSurface(t, l)
		done(outcome)
	}
}

// leasedRun wraps a control.agent body (which answers when it starts and
// holds the queue for the duration it returns) in a request lease held for
// that duration.
func (b *ServerBrowser) leasedRun(t *Tab, res *Result, run func() (string, time.Duration)) func() (string, time.Duration) {
	if b.Surfaces == nil {
		return run
	}
	return func() (string, time.Duration) {
		l, ok := b.requestLease(t, res)
		if !ok {
			return ErrRemoteUnavailable, 0
		}
		outcome, took := run()
		b.env.After(took, func() { b.releaseSurface(t, l) })
		return outcome, took
	}
}

// persistentLease is acquirePersistentNativeSurface: a lease that outlives
// one request (a viewer's, a recording's, cleanup's); nil for a headless
// tab. A refused lease is released at once and reported.
func (b *ServerBrowser) persistentLease(t *Tab) (*lease, string) {
	if !b.surfaced(t) {
		return nil, ""
	}
	l, reason := b.acquireSurface(t, nil, nil, 0)
	if reason != "" {
		b.releaseSurface(t, l)
		return nil, reason
	}
	return l, ""
}

// surfaceRendered is the desktop attaching an agent's new tab: the open's
// own body (its reveal and initial navigation wait) runs on the attached
// page under a request lease, as upstream's open does once ensureTab has
// connected the page. The model's open answered already.
func (b *ServerBrowser) surfaceRendered(t *Tab) {
	if !b.surfaced(t) {
		return
	}
	var res Result
	if l, ok := b.requestLease(t, &res); ok {
		b.releaseSurface(t, l)
	}
}

// surfaceDrop is dropTab's part: a closed or withdrawn tab's recording
// encoder closes and its recording and viewer leases are released; work
// still running on it fails at its next step. A withdrawn tab (stays) gets
// fresh per-page state for its next connection, as a new ServerTab would,
// keeping its published setting and zoom and the desktop's window.
func (b *ServerBrowser) surfaceDrop(t *Tab, stays bool) {
	s := t.surf
	if s == nil || b.Surfaces == nil {
		return
	}
	if stays {
		defer func() {
			t.surf = &TabSurface{Setting: s.Setting, Zoom: s.Zoom, Window: s.Window}
		}()
	}
	s.closing = true
	if r := s.Recording; r != nil {
		s.Recording = nil
		s.EncodersClosed++
		b.releaseSurface(t, r.lease)
	}
	for _, v := range s.streams {
		b.releaseSurface(t, v.lease)
	}
	s.streams = nil
	s.lock.fail()
}

// ShownViewport is the viewport t's viewers and status see: a desktop
// page's measured CSS viewport (its layout size shrunk by the zoom) while
// surfaces are modelled, else the page viewport.
func (t *Tab) ShownViewport() Viewport {
	if t.surf == nil || !t.Desktop || t.pageless() {
		return t.Viewport
	}
	s := t.surf
	z := s.Zoom
	if z <= 0 {
		z = 1
	}
	return Viewport{max(1, int(float64(s.Window.Width)/z+0.5)), max(1, int(float64(s.Window.Height)/z+0.5))}
}
