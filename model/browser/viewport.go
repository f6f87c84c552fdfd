package browser

import "fmt"

// Viewport sizing of the newest stored ServerBrowser.ts (read_file id
// 70905931248: applySetting, the viewer's resize and viewport inputs, the
// published resized events, the resize operation) and of its test file
// (index:70867653086), which is newer than that source for desktop pages:
// there a desktop page's fill size and zoom reach the desktop through its
// surface (the stored source lets the desktop lay out on its own), and
// viewers, status and pointer input use the page's measured CSS viewport.
//
// A viewer's panel size is remembered per viewer (passive viewers never
// ask for one) with a server-wide order. A fixed setting wins; under fill
// the latest operating viewer's size applies, else UnattachedFillViewport.
// A viewer that leaves after sizing a fill viewport gives way to the
// remaining viewers' latest size.

// More viewer input kinds of the newest version.
const (
	// InputViewport is a viewer choosing a viewport setting (published as
	// the session's viewport, then applied).
	InputViewport = "viewport"
	// InputMouse is a viewer's mouse press at X, Y (CSS pixels of the
	// viewport it was shown).
	InputMouse = "mouse"
)

// Viewer panel size bounds (dispatchViewerInput's resize).
const (
	MaxViewerWidth  = 3840
	MaxViewerHeight = 2160
	MinViewerSide   = 100
)

// fillSize is the size a setting lays the page out at: the fixed size, or
// the latest operating viewer's panel, or UnattachedFillViewport.
func (b *ServerBrowser) fillSize(t *Tab, setting ViewportSetting) Viewport {
	if fixed, ok := setting.Fixed(); ok {
		return fixed
	}
	var latest *viewerStream
	for _, v := range b.surface(t).streams {
		if v.requested != nil && (latest == nil || v.order > latest.order) {
			latest = v
		}
	}
	if latest != nil {
		return *latest.requested
	}
	return UnattachedFillViewport
}

// applySetting is applySetting: the setting is the tab's; a headless page
// is resized to its size; a desktop page gets it through a short surface
// lease carrying the setting (and, for fill, the size); viewers are told
// the viewport. It reports the desktop's refusal reason ("" none).
func (b *ServerBrowser) applySetting(t *Tab, setting ViewportSetting) string {
	s := b.surface(t)
	s.Setting = setting
	size := b.fillSize(t, setting)
	if !b.surfaced(t) {
		if t.Viewport != size {
			t.Viewport = size
			s.PageResizes++
		}
		t.broadcastViewport()
		return ""
	}
	var fill *Viewport
	if _, fixed := setting.Fixed(); !fixed {
		fill = &size
	}
	l, reason := b.acquireSurface(t, &setting, fill, 0)
	b.releaseSurface(t, l)
	t.broadcastViewport()
	return reason
}

// applyZoom is applyRendering's zoom for a desktop page: the zoom goes to
// the desktop through a short lease, and viewers are told the measured
// viewport. A headless page's zoom emulation is not modelled.
func (b *ServerBrowser) applyZoom(t *Tab, zoom float64) {
	s := b.surface(t)
	if zoom <= 0 || zoom == s.Zoom {
		return
	}
	if !b.surfaced(t) {
		s.Zoom = zoom
		return
	}
	l, _ := b.acquireSurface(t, nil, nil, zoom)
	b.releaseSurface(t, l)
	t.broadcastViewport()
}

// ManagerResize is a client publishing t's viewport setting
// (manager.resize, mirrored as a resized event): applied as system work on
// the tab's queue, no control needed.
func (b *ServerBrowser) ManagerResize(t *Tab, setting ViewportSetting) {
	if b.Surfaces == nil {
		return
	}
	t.Control.Submit(Item{Kind: ItemSystem,
		Run: func(finish func(string)) {
			if b.surface(t).Setting != setting {
				b.applySetting(t, setting)
			}
			finish(OK)
		},
		Done: func(string) {}})
}

// ManagerZoom is a client publishing t's zoom factor (manager.adjust's
// zoomFactor, mirrored as a resized event): applied as system work on the
// tab's queue (the adjust's cookie clearing and hard reload are
// ManagerAdjust's, hosting_nav.go).
func (b *ServerBrowser) ManagerZoom(t *Tab, zoom float64) {
	if b.Surfaces == nil {
		return
	}
	t.Control.Submit(Item{Kind: ItemSystem,
		Run:  func(finish func(string)) { b.applyZoom(t, zoom); finish(OK) },
		Done: func(string) {}})
}

// surfaceInput handles the viewer inputs whose newest-version behaviour
// differs (resize, viewport, mouse), as human actions of a controlling
// viewer; it reports false for the others (and without surfaces).
func (b *ServerBrowser) surfaceInput(t *Tab, viewer string, in ViewerInput, done func(outcome, msg string)) bool {
	if b.Surfaces == nil {
		return false
	}
	var run func() string
	switch in.Kind {
	case InputResize:
		run = func() string {
			w, h := min(in.Viewport.Width, MaxViewerWidth), min(in.Viewport.Height, MaxViewerHeight)
			if w < MinViewerSide || h < MinViewerSide {
				return OK
			}
			v := t.stream(viewer)
			if v == nil {
				return OK
			}
			b.Surfaces.resizeOrder++
			v.requested, v.order = &Viewport{w, h}, b.Surfaces.resizeOrder
			if s := b.surface(t); s.Setting.Tag == "fill" && (b.surfaced(t) || t.Viewport != *v.requested) {
				b.applySetting(t, s.Setting)
			}
			return OK
		}
	case InputViewport:
		if in.Setting == nil {
			return false
		}
		run = func() string { b.applySetting(t, *in.Setting); return OK }
	case InputMouse:
		run = func() string {
			t.log(fmt.Sprintf("human mouse down %d,%d", in.X, in.Y))
			return OK
		}
	default:
		return false
	}
	t.Control.Submit(Item{Kind: ItemHuman, Actor: viewer,
		Run:  func(finish func(string)) { finish(run()) },
		Done: func(o string) { done(o, "") }})
	return true
}

// resize runs the resize operation's body on t: the setting is published
// and applied; a desktop page answers the size its surface applied.
func (b *ServerBrowser) resize(t *Tab, req Request, res *Result, done func(outcome string)) {
	setting := FillViewport
	if req.Setting != nil {
		setting = *req.Setting
	}
	if reason := b.applySetting(t, setting); reason != "" {
		res.Detail = reason
		done(ErrRemoteUnavailable)
		return
	}
	v := t.Viewport
	if b.surfaced(t) {
		v = b.surface(t).Window
	}
	res.Viewport = &v
	done(OK)
}
