package browser

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSBN55_FileTabReportsDownload is SB-N55, upstream "a tab opened to a
// file the browser cannot show reports the file to download" (the newest
// stored ServerBrowser.test.ts, index:70867653086): a person's blank tab,
// watched and controlled, navigates to a PDF; Chromium aborts the
// navigation (ERR_ABORTED, with no request event first) and downloads the
// file; once saved, the manager publishes the tab's navigation as failed
// with the file to download, and the viewer is not offered the file
// separately.
func TestSBN55_FileTabReportsDownload(t *testing.T) {
	w := newSB(t, reported)
	w.b.Events = &SessionEvents{}
	tab := w.b.OpenUnowned(sbThread, "", false)
	w.b.AttachViewer(tab, "viewer", true)
	pdf := "https://example.com/paper.pdf"
	w.b.PageRequestFailed(tab, pdf, "net::ERR_ABORTED")
	w.b.PageDownload(tab, DownloadEvent{FileName: "paper.pdf", URL: pdf, Size: 4, SaveTime: 100 * time.Millisecond})
	w.run(200 * time.Millisecond)
	var failed []SessionEvent
	for _, e := range w.b.Events.List {
		if e.Type == EventFailed {
			failed = append(failed, e)
		}
	}
	require.Len(t, failed, 1)
	assert.Equal(t, pdf, failed[0].URL)
	require.NotNil(t, failed[0].Download)
	assert.Equal(t, "paper.pdf", failed[0].Download.FileName)
	assert.Empty(t, tags(tab.Output("viewer"), "download"), "the tab shows the file, so no separate download is offered")
	assert.Len(t, tab.Downloads, 1, "the agent still reads it from status")
}
