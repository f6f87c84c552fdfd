package browser

// Visibility of the newest stored ServerBrowser.ts (read_file id
// 70905931248: statusWithTitle, the open's reveal): a tab is visible when
// the desktop presents its page (a native page's host presentation,
// native.go's nativeStatus) or a viewer streams it. An open that asks for
// the tab to be shown only records the request (revealRequested); the
// request is cleared once either kind of presentation shows the page.

// fillVisibility adds status's visibility, pending reveal and viewport to
// res (with Surfaces).
func (b *ServerBrowser) fillVisibility(t *Tab, res *Result) {
	if b.Surfaces == nil {
		return
	}
	s := b.surface(t)
	if t.Native != nil {
		b.nativeStatus(t, res)
	} else {
		res.NativePresented, res.StreamViewers, res.Visible = false, len(t.Viewers), len(t.Viewers) > 0
	}
	if res.Visible {
		s.RevealRequested = false
	}
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
