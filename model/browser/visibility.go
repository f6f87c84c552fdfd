package browser

// Visibility of the newest stored ServerBrowser.ts (read_file id
// 70905931248: statusWithTitle, the open's reveal, the desktop channel's
// presentations and isPresented): a tab is visible when the desktop
// presents its page on screen or a viewer streams it. An open that asks
// for the tab to be shown only records the request (revealRequested); the
// request is cleared once either kind of presentation shows the page. Each
// status samples the desktop's presentation again.

// DesktopPresentation is the desktop reporting whether t's page is on
// screen (a presentations event; isPresented answers it from then on).
func (b *ServerBrowser) DesktopPresentation(t *Tab, presented bool) {
	if b.Surfaces == nil {
		return
	}
	b.surface(t).Presented = presented
}

// fillVisibility adds status's visibility and viewport to res.
func (b *ServerBrowser) fillVisibility(t *Tab, res *Result) {
	if b.Surfaces == nil {
		return
	}
	s := b.surface(t)
	presented := b.native(t) && s.Presented
	if presented || len(t.Viewers) > 0 {
		s.RevealRequested = false
	}
	res.NativePresented = presented
	res.Visible = presented || len(t.Viewers) > 0
	res.StreamViewers = len(t.Viewers)
	res.RevealRequested = s.RevealRequested
	v := t.ShownViewport()
	res.Viewport = &v
}

// openReveal is the open's reveal: open (or show) true records the request,
// and the open answers with the tab's status.
func (b *ServerBrowser) openReveal(t *Tab, req Request, res *Result) {
	if b.Surfaces == nil {
		return
	}
	if req.Reveal {
		b.surface(t).RevealRequested = true
	}
	b.fillVisibility(t, res)
}
