package browser

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/orchsim/orchsim/sim"
)

// Desktop profile catalogues: the profile side of DesktopBrowserChannel
// (apps/server/src/preview/DesktopBrowserChannel.ts, index:70893547391:
// getProfiles, resolveUrl) and the catalogue opens of ServerBrowser.ts
// (index:70905931248: runOperation's profiles, open and openWithProfile,
// browserNavigationUrl, uploadFiles), with what the newest stored test file
// (index:70867653086) adds beyond that source: the catalogue is asked of the
// caller's retained desktop host, an explicit tab's host answers for it, an
// older desktop without native roots fails new native opens, and a server
// a desktop app started never falls back to a headless page.

// Operations, outcomes and detail reasons of desktop catalogue opens.
const (
	// OpOpenWithProfile is preview_open_with_profile: open (or reuse) a
	// tab on a profile of a desktop's catalogue, by ProfileID (an id, else
	// a name in any case) or ProfileName (an exact name).
	OpOpenWithProfile = "openWithProfile"
	// OpProfiles is preview_profiles: the selected desktop's catalogue.
	OpProfiles = "profiles"
	// ProfileError is PreviewAutomationProfileError; Result.Detail carries
	// its reason.
	ProfileError = "ProfileError"
	// RemoteUnavailable is PreviewAutomationRemoteUnavailableError: the
	// desktop that must serve the request is unavailable, ambiguous,
	// cannot resolve the URL, or did not attach.
	RemoteUnavailable = "RemoteUnavailableError"
	// LocalDesktopHost is the desktop host id of the desktop app that
	// started this server ("local"); every other id is a remote desktop.
	LocalDesktopHost = "local"
	// RemoteUploadLimit is the 64 MiB a remote desktop upload's files may
	// total (uploadFiles).
	RemoteUploadLimit = 64 * 1024 * 1024
)

// Detail reasons (Result.Detail).
const (
	DetailTabMismatch     = "tab-mismatch"
	DetailUnknown         = "unknown"
	DetailAmbiguous       = "ambiguous"
	DetailRootUnsupported = "root-unsupported"
)

// Messages of the refusals (ServerBrowser.ts index:70905931248, except
// RootUnsupportedMessage and UnavailableOpenMessage, which no stored
// source has: the newest test requires the first to say "Update the
// desktop app"; the second is the model's).
const (
	CatalogueUnavailableMessage = "No unambiguous connected desktop profile catalogue is available. Connect the desktop that owns the desired profile, then call preview_profiles again."
	OwnerUnavailableMessage     = "The desktop owning the requested browser profile is unavailable or ambiguous. Call preview_profiles after connecting the intended desktop."
	UnavailableOpenMessage      = "The selected desktop browser is unavailable. Keep that desktop connected and retry; no other browser was opened."
	NotAttachedMessage          = "The selected desktop browser did not attach. Keep that desktop connected and retry; the requested profile was not opened in another browser."
	UnresolvedURLMessage        = "The connected desktop cannot resolve this environment URL. Check the environment connection before retrying; the desktop's localhost was not opened."
	RootUnsupportedMessage      = "This desktop app cannot open native browser pages for agents. Update the desktop app, then retry."
	TabMismatchMessage          = "The selected tab uses a different browser profile. Existing tabs cannot switch profiles; omit tabId to create a new tab."
	RemoteUploadMessage         = "Remote browser uploads must be regular files totaling at most 64 MiB."
)

// DesktopCatalogue is one connected desktop host's profile catalogue (its
// answer to getProfiles). NoNativeRoots marks an older desktop
// (supportsNativeRoots false): it lists profiles but cannot open pages for
// agents.
type DesktopCatalogue struct {
	HostID        string
	Profiles      []BrowserProfile
	DefaultID     string
	NoNativeRoots bool
}

// DesktopChannel is the profile side of the desktop browser channel.
//
// LocalConfigured: a desktop app started this server (desktopBrowserFd);
// Hosts are the connected desktops' catalogues ("local" among them when
// the local desktop answers); Unavailable: every catalogue request goes
// unanswered (its 5 s timeout). A request naming no host asks the local
// desktop when one is configured, else the only connected host (none, or
// several: no catalogue). Attaches says whether a new page on host
// attaches and after how long (nil: at once); a page that does not attach
// fails after DesktopAttachTimeout. ResolveURL is a remote desktop's
// environment URL resolution (nil: the URL unchanged); a host not
// connected resolves nothing. EnvironmentFiles are the environment's files
// (path to contents) a remote upload reads. Requests records the host of
// every catalogue request ("" for none named), for the fidelity cases.
type DesktopChannel struct {
	LocalConfigured bool
	Hosts           []DesktopCatalogue
	Unavailable     bool
	Attaches        func(hostID, threadID string) (bool, time.Duration)
	ResolveURL      func(hostID, url string) (string, bool)
	// ResolveHold is how long a remote desktop takes to answer a
	// resolution; only a hosted navigation waits for it (remoteurl.go).
	ResolveHold      time.Duration
	EnvironmentFiles map[string]string
	Requests         []string
}

func (d *DesktopChannel) host(id string) *DesktopCatalogue {
	for i := range d.Hosts {
		if d.Hosts[i].HostID == id {
			return &d.Hosts[i]
		}
	}
	return nil
}

// Catalogue is getProfiles: host's catalogue, or for "" the selected one
// (see DesktopChannel); nil when there is none.
func (d *DesktopChannel) Catalogue(host string) *DesktopCatalogue {
	d.Requests = append(d.Requests, host)
	switch {
	case d.Unavailable:
		return nil
	case host != "":
		return d.host(host)
	case d.LocalConfigured:
		return d.host(LocalDesktopHost)
	case len(d.Hosts) == 1:
		return &d.Hosts[0]
	}
	return nil
}

// resolve is browserNavigationUrl: the local desktop (or no desktop)
// opens url as it is; a remote one resolves it, or cannot.
func (d *DesktopChannel) resolve(host, url string) (string, bool) {
	if host == "" || host == LocalDesktopHost {
		return url, true
	}
	if d.host(host) == nil {
		return "", false
	}
	if d.ResolveURL == nil {
		return url, true
	}
	return d.ResolveURL(host, url)
}

// EnvironmentPortURL is resolveNavigationUrl for an environment-port
// target: the environment's loopback at port, path with a leading slash.
func EnvironmentPortURL(port int, p string) string {
	if p != "" && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return fmt.Sprintf("http://localhost:%d%s", port, p)
}

// retainedHost is the desktop host a catalogue request is pinned to: an
// explicit tab's host, else the host of the caller's newest tab on a
// desktop host, else "" (the channel selects).
func (b *ServerBrowser) retainedHost(req Request) string {
	if req.TabID != "" {
		if t := b.Tab(req.ThreadID, req.TabID); t != nil && t.DesktopHostID != "" {
			return t.DesktopHostID
		}
	}
	var newest *Tab
	for _, t := range b.threadTabs(req.ThreadID) {
		if t.Control.AgentID == req.AgentSessionID && t.DesktopHostID != "" &&
			(newest == nil || t.CreatedAt >= newest.CreatedAt) {
			newest = t
		}
	}
	if newest != nil {
		return newest.DesktopHostID
	}
	return ""
}

// matchDesktopProfile is openWithProfile's match: the profile whose id is
// profileID, else those named profileID in any case, or exactly
// profileName.
func matchDesktopProfile(profiles []BrowserProfile, profileID, profileName string) []BrowserProfile {
	if profileID != "" {
		if p := findProfile(profiles, profileID); p != nil {
			return []BrowserProfile{*p}
		}
	}
	var out []BrowserProfile
	for _, p := range profiles {
		if profileID != "" && strings.EqualFold(p.Name, profileID) || profileID == "" && p.Name == profileName {
			out = append(out, p)
		}
	}
	return out
}

func unavailable(msg, detail string) Result {
	return Result{Outcome: RemoteUnavailable, Message: msg, Detail: detail}
}

// desktopOpen serves profiles, open and openWithProfile when a desktop
// channel is modelled. An explicit tab that is gone fails openWithProfile
// before any catalogue request. The catalogue asked is the retained host's
// (retainedHost), else the channel's selection. Without one: a named
// profile no reported web profile serves is RemoteUnavailable; a request
// pinned to no host on a server no desktop started is the headless open
// (reported profiles, throwaway storage); otherwise only an existing tab
// can serve it and a new tab is refused RemoteUnavailable (no fallback
// page). With one: a named profile must match exactly one (unknown,
// ambiguous); a reused tab on another profile or host is tab-mismatch when
// explicit, else a new tab opens; the URL is resolved for the tab's
// desktop first (unresolvable: RemoteUnavailable, nothing opens); a new
// tab is a native page of the catalogue's host on the chosen profile (the
// default when none was named), refused by an older desktop
// (root-unsupported) and failing, with no tab, when the desktop does not
// attach within DesktopAttachTimeout.
func (b *ServerBrowser) desktopOpen(req Request, finish func(Result)) {
	d := b.Desktops
	key := req.AgentSessionID
	if req.Op == OpOpenWithProfile && req.TabID != "" && b.Tab(req.ThreadID, req.TabID) == nil {
		finish(Result{Outcome: TabNotFound, Message: "The requested preview tab no longer exists."})
		return
	}
	pinned := b.retainedHost(req)
	cat := d.Catalogue(pinned)
	if req.Op == OpProfiles {
		if cat == nil {
			finish(unavailable(CatalogueUnavailableMessage, ""))
			return
		}
		finish(Result{Outcome: OK, Profiles: cat.Profiles, DefaultProfileID: cat.DefaultID})
		return
	}
	named := req.ProfileID != "" || req.ProfileName != ""
	switch {
	case cat != nil:
	case named && !(req.Op == OpOpen && b.reported != nil):
		finish(unavailable(OwnerUnavailableMessage, ""))
		return
	case pinned == "" && !d.LocalConfigured:
		headless := req
		headless.Op = OpOpen
		if headless.ProfileID == "" {
			headless.ProfileID = req.ProfileName
		}
		b.open(headless, finish)
		return
	}
	// From here without a catalogue only an existing tab can serve the
	// open (the new tab would need the unavailable desktop).
	selected, profile := "", ""
	if cat != nil && named {
		matches := matchDesktopProfile(cat.Profiles, req.ProfileID, req.ProfileName)
		if len(matches) != 1 {
			res := Result{Outcome: ProfileError, Detail: DetailUnknown,
				Message: fmt.Sprintf("Browser profile %q does not exist. Call preview_profiles to list available profiles.", req.ProfileID+req.ProfileName)}
			if len(matches) > 1 {
				var ids []string
				for _, p := range matches {
					ids = append(ids, fmt.Sprintf("%q", p.ID))
				}
				res.Detail = DetailAmbiguous
				res.Message = fmt.Sprintf("Browser profile name %q matches multiple profiles. Use profileId: %s.", req.ProfileName, strings.Join(ids, ", "))
			}
			finish(res)
			return
		}
		selected = matches[0].ID
	}
	if profile = selected; profile == "" && cat != nil {
		profile = cat.DefaultID
	}
	owned := b.owned(req.ThreadID, key)
	var existing *Tab
	if req.ReuseExistingTab {
		if req.TabID == "" && len(owned) > 1 {
			finish(Result{Outcome: ReasonTabRequired})
			return
		}
		if req.TabID != "" {
			existing = b.Tab(req.ThreadID, req.TabID)
		} else if len(owned) == 1 {
			existing = owned[0]
		}
		if existing != nil && existing.pageless() {
			existing = nil
		}
	}
	if selected != "" && existing != nil && (existing.ProfileID != selected || existing.DesktopHostID != cat.HostID) {
		if req.TabID != "" {
			finish(Result{Outcome: ProfileError, Detail: DetailTabMismatch, Message: TabMismatchMessage})
			return
		}
		existing = nil
	}
	if existing == nil && cat == nil {
		b.env.Emit(actor, "tab.native-unavailable", pinned, sim.A("thread", req.ThreadID), sim.A("why", "catalogue"))
		finish(unavailable(UnavailableOpenMessage, ""))
		return
	}
	if b.Hosting != nil && req.URL != "" {
		// Preview hosting resolves and prepares the URL itself
		// (hosting_nav.go): on the reused tab, or before the new one.
		if existing != nil {
			res := Result{TabID: existing.TabID, TabThread: existing.ThreadID, Owner: existing.Control.AgentID}
			b.hostedNavigate(existing, req, false, res, finish)
			return
		}
		b.prepareOpen(req, cat.HostID, b.desktopOpen, finish)
		return
	}
	url := req.URL
	if url != "" {
		host := pinned
		switch {
		case existing != nil:
			host = existing.DesktopHostID
		case cat != nil:
			host = cat.HostID
		}
		resolved, ok := d.resolve(host, url)
		if !ok {
			b.env.Emit(actor, "tab.native-unavailable", host, sim.A("thread", req.ThreadID), sim.A("why", "url"))
			finish(unavailable(UnresolvedURLMessage, ""))
			return
		}
		url = resolved
	}
	if existing != nil {
		b.reuseNative(existing, req, url, cat, finish)
		return
	}
	b.sweepIdle()
	if len(owned) >= AgentTabLimit || b.live() >= ServerTabLimit {
		finish(Result{Outcome: ReasonTabLimit})
		return
	}
	if cat.NoNativeRoots {
		finish(unavailable(RootUnsupportedMessage, DetailRootUnsupported))
		return
	}
	if h := b.nativeHost(cat.HostID); h != nil {
		// The host is on the native channel: the new tab is a root it
		// creates, accepts and publishes (native_root.go).
		root := req
		root.URL = url
		host := cat.HostID
		b.openNativeRoot(root, h, profile, func(res Result) {
			if t := b.Tab(res.TabThread, res.TabID); t != nil && res.Outcome == OK {
				t.DesktopHostID = host
				b.catalogueStatus(t, key, b.Desktops.host(host), &res)
			}
			finish(res)
		})
		return
	}
	ok, after := true, time.Duration(0)
	if d.Attaches != nil {
		ok, after = d.Attaches(cat.HostID, req.ThreadID)
	}
	if !ok {
		b.env.After(DesktopAttachTimeout, func() {
			b.env.Emit(actor, "tab.native-unattached", cat.HostID, sim.A("thread", req.ThreadID))
			finish(unavailable(NotAttachedMessage, ""))
		})
		return
	}
	host := cat.HostID
	create := func() {
		if b.dead {
			finish(Result{Outcome: ReasonInterrupted})
			return
		}
		t := b.openNative(req.ThreadID, "", host, profile, key)
		if url != "" {
			// The server navigates the accepted page (waitUntil commit)
			// to the resolved URL.
			t.Gotos++
			t.GotoURLs = append(t.GotoURLs, url)
			t.URL = url
		}
		res := Result{Outcome: OK, TabID: t.TabID, TabThread: t.ThreadID, Owner: t.Control.AgentID}
		b.catalogueStatus(t, key, b.Desktops.host(host), &res)
		finish(res)
	}
	if after <= 0 {
		create()
		return
	}
	b.env.After(after, create)
}

// reuseNative is an open that reuses t: under the tab's control (a human
// controller refuses it) the page navigates to url, if any, and the open
// answers the tab's status.
func (b *ServerBrowser) reuseNative(t *Tab, req Request, url string, cat *DesktopCatalogue, finish func(Result)) {
	if t.dialog != nil {
		finish(Result{Outcome: ReasonDialogPending, TabID: t.TabID, TabThread: t.ThreadID, Owner: t.Control.AgentID,
			Message: "A browser dialog is pending. Read preview_status and use preview_dialog first."})
		return
	}
	ignore := b.env.Profile.Has(HumanControlIgnored)
	t.Control.IgnoreHuman = ignore
	t.Control.Agent(req.AgentSessionID, false, func() (string, time.Duration) {
		if url != "" {
			t.Gotos++
			t.GotoURLs = append(t.GotoURLs, url)
			t.URL = url
		}
		return OK, b.rand.Duration("action-time", 5*time.Millisecond, 1500*time.Millisecond)
	}, func(outcome string) {
		res := Result{Outcome: outcome, TabID: t.TabID, TabThread: t.ThreadID, Owner: t.Control.AgentID}
		if cat != nil && cat.HostID != t.DesktopHostID {
			cat = nil
		}
		b.catalogueStatus(t, req.AgentSessionID, cat, &res)
		finish(res)
	})
}

// openNative creates a session whose page is host's native page on
// profile, with owner as its automation owner ("" for a person's tab,
// which is revealed), and connects to that page.
func (b *ServerBrowser) openNative(threadID, url, host, profile, owner string) *Tab {
	b.nextTab++
	now := b.env.Now()
	t := &Tab{ThreadID: threadID, TabID: fmt.Sprintf("tab_%d_%s", b.nextTab, b.epoch), CreatedAt: now, UsedAt: now,
		URL: url, Reveal: owner == "", Desktop: true, DesktopEndpoint: true, Viewport: UnattachedFillViewport,
		ProfileID: profile, DesktopHostID: host}
	t.Control = NewControl(owner, b.env.After)
	b.tabs = append(b.tabs, t)
	b.DesktopConnections++
	b.env.Emit(actor, "tab.native-open", host, sim.A("thread", threadID), sim.A("tab", t.TabID), sim.A("profile", profile))
	return t
}

// OpenNative is the preview manager opening a person's tab (no automation
// owner) on desktop host's profile: the desktop renders it and the server
// connects to its page.
func (b *ServerBrowser) OpenNative(threadID, url, host, profile string) *Tab {
	return b.openNative(threadID, url, host, profile, "")
}

// catalogueStatus fills what statusWithTitle reports of t's profile and
// control: its profile id, the profile's name in cat when cat is t's
// host's catalogue, and who drives it.
func (b *ServerBrowser) catalogueStatus(t *Tab, key string, cat *DesktopCatalogue, res *Result) {
	res.ProfileID = t.ProfileID
	if cat != nil && cat.HostID == t.DesktopHostID {
		if p := findProfile(cat.Profiles, t.ProfileID); p != nil {
			res.ProfileName = p.Name
		}
	}
	res.Control = &ControlStatus{Owner: TabOwner(t), OwnedByCaller: t.Control.AgentID == key}
}

// desktopStatus adds to a status what the newer versions report: the
// tab's control (VersionIndex70905931248 or a desktop channel), and for a
// tab of a desktop host its profile's name, from that host's catalogue
// (asked anew).
func (b *ServerBrowser) desktopStatus(t *Tab, key string, res *Result) {
	if b.Version < VersionIndex70905931248 && b.Desktops == nil {
		return
	}
	var cat *DesktopCatalogue
	if b.Desktops != nil && t.DesktopHostID != "" {
		cat = b.Desktops.Catalogue(t.DesktopHostID)
	}
	b.catalogueStatus(t, key, cat, res)
}

// remoteNavigation resolves an agent navigation on a remote desktop's tab
// (browserNavigationUrl) when the tab's control lets the caller act now:
// the request then navigates to the resolved URL; when the desktop cannot
// resolve it the navigation fails RemoteUnavailable without touching the
// page (and true is returned).
func (b *ServerBrowser) remoteNavigation(t *Tab, req *Request, res Result, finish func(Result)) bool {
	if b.Desktops == nil || t.DesktopHostID == "" || t.DesktopHostID == LocalDesktopHost {
		return false
	}
	if _, refused := t.Control.agentRefusal(req.AgentSessionID, b.env.Profile.Has(HumanControlIgnored)); refused {
		return false
	}
	url, ok := b.Desktops.resolve(t.DesktopHostID, req.URL)
	if !ok {
		res.Outcome, res.Message = RemoteUnavailable, UnresolvedURLMessage
		finish(res)
		return true
	}
	req.URL = url
	return false
}

// FilePayload is one file handed to a page by its bytes: the path's base
// name, its MIME type and its contents.
type FilePayload struct {
	Name, MimeType, Contents string
}

// mimeTypes is the part of Mime.getType the model needs (by extension).
var mimeTypes = map[string]string{".txt": "text/plain", ".html": "text/html", ".json": "application/json",
	".png": "image/png", ".jpg": "image/jpeg", ".pdf": "application/pdf", ".csv": "text/csv"}

// uploadFiles is uploadFiles: a remote desktop's page cannot open the
// environment's paths, so each (absolute) path's file is read and handed
// over by its bytes (regular files totaling at most RemoteUploadLimit);
// every other page takes the paths (Tab.upload).
func (b *ServerBrowser) uploadFiles(t *Tab, paths []string, locator string) (string, string) {
	if b.Desktops == nil || t.DesktopHostID == "" || t.DesktopHostID == LocalDesktopHost {
		return t.upload(paths, locator)
	}
	var payloads []FilePayload
	total := 0
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") {
			return ExecutionError, "Upload paths must be absolute: " + p
		}
		contents, ok := b.Desktops.EnvironmentFiles[p]
		total += len(contents)
		if !ok || total > RemoteUploadLimit {
			return ExecutionError, RemoteUploadMessage
		}
		mime, known := mimeTypes[strings.ToLower(path.Ext(p))]
		if !known {
			mime = "application/octet-stream"
		}
		payloads = append(payloads, FilePayload{Name: path.Base(p), MimeType: mime, Contents: contents})
	}
	if locator != "" {
		t.Uploads = append(t.Uploads, Upload{Locator: locator, Payloads: payloads})
		return OK, ""
	}
	open := t.fileChooser
	switch {
	case open == nil:
		return ExecutionError, "No file picker is open. Click the page's upload control first, or pass the file input's locator."
	case len(paths) > 1 && !open.Multiple:
		return ExecutionError, "This file picker accepts one file."
	}
	if len(paths) > 0 {
		t.Uploads = append(t.Uploads, Upload{Payloads: payloads})
	}
	t.closeFileChooser()
	return OK, ""
}

// DesktopHostGone is host disconnecting from the channel (releaseHost):
// its catalogue goes and its pages detach (DesktopWithdraw: the sessions
// stay, viewers reconnect). Until it returns, a page of it cannot be
// reached again (ensurePage waits DesktopAttachTimeout, then fails) and
// opens that need it are refused.
func (b *ServerBrowser) DesktopHostGone(host string) {
	d := b.Desktops
	if d == nil || d.host(host) == nil {
		return
	}
	for i := range d.Hosts {
		if d.Hosts[i].HostID == host {
			d.Hosts = append(d.Hosts[:i], d.Hosts[i+1:]...)
			break
		}
	}
	b.env.Emit("desktop", "desktop.host-gone", host)
	for _, t := range b.tabs {
		if t.DesktopHostID == host {
			b.DesktopWithdraw(t)
		}
	}
}

// DesktopHostBack is a desktop connecting (again) with its catalogue.
func (b *ServerBrowser) DesktopHostBack(cat DesktopCatalogue) {
	d := b.Desktops
	if d == nil || d.host(cat.HostID) != nil {
		return
	}
	d.Hosts = append(d.Hosts, cat)
	b.env.Emit("desktop", "desktop.host-back", cat.HostID)
}

// hostAway reports whether t is a page of a desktop host that is not
// connected.
func (b *ServerBrowser) hostAway(t *Tab) bool {
	return b.Desktops != nil && t.DesktopHostID != "" && b.Desktops.host(t.DesktopHostID) == nil
}

// awaitHost is createTab's awaitAttached for a page of a host that is
// away: after DesktopAttachTimeout the page connects if its host came back,
// else the reconnection fails RemoteUnavailable and the session stays
// without its page.
func (b *ServerBrowser) awaitHost(t *Tab, by string, settle func(string)) {
	b.env.After(DesktopAttachTimeout, func() {
		if b.dead || b.hostAway(t) || b.Tab(t.ThreadID, t.TabID) != t {
			t.page = pageNone
			b.env.Emit(actor, "tab.connect", "unattached", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID), sim.A("by", by))
			settle(RemoteUnavailable)
			return
		}
		b.DesktopConnections++
		t.page = pageLive
		b.freshControl(t)
		b.env.Emit(actor, "tab.connect", "desktop", sim.A("thread", t.ThreadID), sim.A("tab", t.TabID), sim.A("by", by))
		settle(OK)
	})
}

// nativeHost is the native channel's host id, or nil.
func (b *ServerBrowser) nativeHost(id string) *NativeHost {
	for _, h := range b.native.hosts {
		if h.ID == id {
			return h
		}
	}
	return nil
}
