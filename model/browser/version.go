package browser

// Version names the ServerBrowser.ts version the host follows where the
// stored versions differ in who may act on a tab and what status shows.
// The zero value is 164d7dbe (the version docs/fidelity.md's Sources name
// and every case before the newest stored test file was built against).
type Version int

const (
	// Version164d7dbe is ServerBrowser.ts @ 164d7dbe: a request without a
	// tab id resolves to the caller's own tab only, every operation on
	// another session's tab is agentMismatch, and status lists the tabs
	// the caller may act on.
	Version164d7dbe Version = iota
	// VersionIndex70905931248 is the newer stored ServerBrowser.ts
	// (index:70905931248, repository not certain): any tab of the thread
	// can be read (status, snapshot) by any of its agent sessions, acting
	// is still checked by the tab's control; a request without a tab id
	// means the caller's newest tab, else the thread's watched or most
	// recently used one (latestThreadTab); only the opener may close a
	// tab; status lists every tab of the thread with its owner
	// (human, agent, unclaimed), ownedByCaller and visibility.
	VersionIndex70905931248
)
