package browser

// Thread-wide tab access of ServerBrowser.ts index:70905931248 (requireTab,
// latestThreadTab, tabOwner and statusWithTitle's tab list), used when the
// host's Version is VersionIndex70905931248.

// ControlStatus is status's control: who drives the tab (TabOwner) and
// whether the caller's session opened it.
type ControlStatus struct {
	Owner         string
	OwnedByCaller bool
}

// Tab owners as status reports them (tabOwner).
const (
	OwnerHuman     = "human"
	OwnerAgent     = "agent"
	OwnerUnclaimed = "unclaimed"
)

// TabOwner is tabOwner: human while a viewer controls the tab, else agent
// when an agent session opened it, else unclaimed.
func TabOwner(t *Tab) string {
	switch {
	case t.Control.Owner != "":
		return OwnerHuman
	case t.Control.AgentID != "":
		return OwnerAgent
	}
	return OwnerUnclaimed
}

// latestThreadTab is latestThreadTab: the caller's newest live tab of the
// thread, else the thread's tab somebody watches, else the one used last
// (ties: the earlier tab, as upstream's stable sort keeps it).
func (b *ServerBrowser) latestThreadTab(threadID, key string) *Tab {
	var own, other *Tab
	for _, t := range b.threadTabs(threadID) {
		if t.pageless() {
			continue
		}
		if t.Control.AgentID == key && (own == nil || t.CreatedAt > own.CreatedAt) {
			own = t
		}
		if other == nil || t.Watched() && !other.Watched() || t.Watched() == other.Watched() && t.UsedAt > other.UsedAt {
			other = t
		}
	}
	if own != nil {
		return own
	}
	return other
}

// requireThreadTab is requireTab of index:70905931248: several tabs of the
// caller's session and no tab id is tabRequired; the tab is the explicit
// one or latestThreadTab; reads pass on any tab of the thread, other
// operations need the tab's control to let the caller act (agentMismatch);
// close needs the caller to be the tab's opener.
func (b *ServerBrowser) requireThreadTab(req Request, ignoreOwner bool) (*Tab, string) {
	var tab *Tab
	if req.TabID != "" {
		if ignoreOwner {
			tab = b.tabByID(req.TabID)
		} else {
			tab = b.Tab(req.ThreadID, req.TabID)
		}
	} else {
		if len(b.owned(req.ThreadID, req.AgentSessionID)) > 1 {
			return nil, ReasonTabRequired
		}
		tab = b.latestThreadTab(req.ThreadID, req.AgentSessionID)
	}
	if tab == nil {
		return nil, TabNotFound
	}
	switch {
	case ignoreOwner:
	case req.Op == OpClose && tab.Control.AgentID != req.AgentSessionID:
		return tab, ReasonAgentMismatch
	case !IsRead(req.Op) && !tab.Control.MayAct(req.AgentSessionID):
		return tab, ReasonAgentMismatch
	}
	return tab, ""
}

// threadStatus is statusWithTitle's tab list: every live tab of the thread
// with its owner, whether the caller opened it and whether a viewer
// streams it.
func (b *ServerBrowser) threadStatus(threadID, key string) []TabStatus {
	var out []TabStatus
	for _, t := range b.threadTabs(threadID) {
		if !t.pageless() {
			out = append(out, TabStatus{TabID: t.TabID, OpenerTabID: t.OpenerTabID, URL: t.URL, ProfileID: t.ProfileID,
				Owner: TabOwner(t), OwnedByCaller: t.Control.AgentID == key, Visible: t.Watched()})
		}
	}
	return out
}
