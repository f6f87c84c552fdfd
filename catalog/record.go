package catalog

// Place says where a report sits in the public record the team keeps
// (../shared/BUGS.md and ../shared/seeds).
type Place string

// The places of the public record.
const (
	// Seed is one of the three reports orchsim was built around
	// (../shared/seeds).
	Seed Place = "seed"
	// Entry is a numbered, written-up entry of BUGS.md.
	Entry Place = "entry"
	// Appendix is a one-line report of BUGS.md's appendix.
	Appendix Place = "appendix"
)

// RecordEntry is one report of the public record: what orchsim's coverage
// of the record is measured against. The switches that cover it are not
// listed here; they are derived from the switches' Reports
// (scenarios.Catalog), so a new switch citing the id covers it.
type RecordEntry struct {
	Place Place
	// N is the entry's number in BUGS.md (1-25), the appendix line's
	// position (1-13), or the seed report's number (0, 2, 3).
	N int
	// Report is the id the record gives first; a switch covers the entry
	// when its Reports contain it.
	Report Report
	// Summary is the report in one line.
	Summary string
	// LeftOut says why no switch models the report, for one that is left
	// out on purpose ("" otherwise).
	LeftOut string
	// Cost is what modelling it took, from the commits that added it
	// ("files, +lines -lines (commits)"); "" while nobody measured. The
	// count is `git log --numstat` of those commits without the generated
	// docs/bugs.md and docs/exploration.md.
	Cost string
	// SwitchCost, for an entry whose switches came in different commits,
	// is the cost of each switch's own row by switch name (looked up,
	// never ranged over); a switch without one shows Cost.
	SwitchCost map[string]string
}

// Record is the public record, in its order: seeds, entries, appendix.
var Record = []RecordEntry{
	{Place: Seed, N: 0, Report: "t3code#23021", Summary: "an idle stop re-issues the thread's credential and the thread is refused on its own preview tab (agentMismatch)", Cost: "the harness was built around it (sessions 1-12)"},
	{Place: Seed, N: 2, Report: "t3code#16184", Summary: "a retry after a restart under a new credential creates a duplicate child: requestNamespace follows the random providerSessionId", Cost: "the harness was built around it (sessions 1-12)"},
	{Place: Seed, N: 3, Report: "Juliusolsson05/agent-code#596", Summary: "a pane remount wakes, waits on and kills a healthy adopted agent", Cost: "the harness was built around it (sessions 1-12)"},

	{Place: Entry, N: 1, Report: "t3code#4198", Summary: "the inactivity sweep reaps a session whose background task still runs (stale last-seen stamp)", Cost: "8 files, +251 -5 (5c167c8)"},
	{Place: Entry, N: 2, Report: "t3code#11805", Summary: "after a host suspend longer than the idle threshold, the first sweep reaps every session (wall-clock idle)", Cost: "about 11 files, +390 -10 (the awake clock, host suspend and reaper sweep were new; the same commit records entries 3-5)"},
	{Place: Entry, N: 3, Report: "t3code#3604", Summary: "after a reap or a restart the next follow-up creates a new, empty native session instead of resuming the stored one", Cost: "33 files, +712 -43 with entry 4 (fa0b152 e228aa1 3c3f15c; the native-conversation mechanism was new; 19 of the files are script goldens gaining native/cursor lines)"},
	{Place: Entry, N: 4, Report: "t3code#2336", Summary: "a resume cursor persisted before the first native turn dangles after a crash; the thread can never send again", Cost: "with entry 3: 33 files, +712 -43 (fa0b152 e228aa1 3c3f15c; a new swarm dimension, first-turn crashes in chaos)"},
	{Place: Entry, N: 5, Report: "t3code#15173", Summary: "a parent waiting on a delegated child is idle-released; a later stop fails", Cost: "7 files, +225 -0 (bb59dcb)"},
	{Place: Entry, N: 6, Report: "t3code#4463", Summary: "a live thread's MCP credential expires after 30 min without preview calls; every later call is 401", Cost: "12 files, +509 -128 (dc78bd3 cac9dae 0d433e7 641823b; the era mechanism was new)"},
	{Place: Entry, N: 7, Report: "t3code#7870", Summary: "the credential registry lives in memory: after a restart a resumed session's token is unknown and every MCP call is rejected",
		LeftOut: "the source disagrees with the report: no provider process survives a server restart (SessionStartupReconciler: \"after a restart no provider process exists yet\"; PR #5752: \"provider subprocesses do not survive a server handoff\"; MODEL.md §8), and a resumed session is a new process restarted from its resume cursor, whose prepare reads the new process's empty slot map and issues a fresh credential; a surviving process holding an old token would have to be invented"},
	{Place: Entry, N: 8, Report: "swarajbachu/zuse#463", Summary: "an in-place provider restart: the old handle's clean-up revokes by session id and deletes the replacement's token", Cost: "12 files, +423 -7 (4b93099 and its halves of 70d05b1 2536fd7; the in-place restart mechanism was new)"},
	{Place: Entry, N: 9, Report: "openai/codex#17265", Summary: "sessions sharing a rotating OAuth refresh token: an idle one refreshes with a stale token and stays stuck on invalid_grant",
		LeftOut: "it does not map onto T3 Code's own MCP clients: T3's agents authenticate with per-thread bearer credentials the server mints (no refresh tokens), and its OAuth clients (requestNamespace client:<sessionId>) are clients of T3's own server, not desktop sessions sharing a third-party server's rotating refresh chain; orchsim models no OAuth client"},
	{Place: Entry, N: 10, Report: "t3code#13051", Summary: "a session stays pinned to the first preview host while the user's tabs live in another; calls succeed against the wrong browser", Cost: "20 files, +1569 -22 for entries 10-12 together (d83fcf4 7f43244 9dc4a39 08f1650; the client-host mechanism was new, shared by the three)"},
	{Place: Entry, N: 11, Report: "t3code#12407", Summary: "preview_wait_for's timeout is also the broker deadline: an honest late reply evicts the host, and re-registration drops the tab's owner", Cost: "20 files, +1569 -22 for entries 10-12 together (d83fcf4 7f43244 9dc4a39 08f1650; the client-host mechanism was new, shared by the three)"},
	{Place: Entry, N: 12, Report: "t3code#11167", Summary: "a backgrounded host's half-open socket is still chosen; calls from every thread time out with no failover", Cost: "20 files, +1569 -22 for entries 10-12 together (d83fcf4 7f43244 9dc4a39 08f1650; the client-host mechanism was new, shared by the three)"},
	{Place: Entry, N: 13, Report: "t3code#11168", Summary: "a blocking delegate_task wait dies at the client's 5 min ceiling and the parent dispatches a duplicate child", Cost: "6 files, +237 -36 (fe43bca)"},
	{Place: Entry, N: 14, Report: "t3code#5231", Summary: "command dedup keyed by command id alone: a reused id for another thread replays success and writes nothing", Cost: "11 files, +224 -9 (daf28b9; a new swarm dimension)",
		SwitchCost: map[string]string{"receipt-checks-payload": "12 files, +237 -7 (cbc66f4), its script 1f5b7f7 (2 files, +64) and its corpus file in 394c45c; command receipts existed, but the batch payload normalization, an agent habit (replanned retries) and a swarm dimension went in with it, so it is over the 5-file bound"}},
	{Place: Entry, N: 15, Report: "coder/xum#2098", Summary: "a foreground sub-agent wait times out with an error while the child runs on; the model calls again and duplicates it", Cost: "5 files, +117 -6 (5c8b716)"},
	{Place: Entry, N: 16, Report: "anthropics/claude-code#74055", Summary: "after a restart the scheduler's catch-up fires daily tasks again, fires a disabled one, and never records lastRunAt", Cost: "11 files, +491 -1 (992d67f; the schedule_task scheduler, its slot timers, catch-up and disabled flag were new), and its corpus file in 394c45c"},
	{Place: Entry, N: 17, Report: "anthropics/claude-code#95138", Summary: "task_cancel stops the parent but not its child, which works on; 'no live children' is reported", Cost: "9 files, +431 -1 (2995f10; cancel cascading and nested delegation were new), and its corpus file in 394c45c"},
	{Place: Entry, N: 18, Report: "t3code#4584", Summary: "after a force-quit the session still says running with no process; the zombie turn is later recorded completed", Cost: "8 files, +253 -11 (5800854)"},
	{Place: Entry, N: 19, Report: "t3code#6560", Summary: "a restart loses a completed turn's events still waiting in the in-memory ingestion queue; the thread stays running", Cost: "11 files, +890 -12 with entry 20 (acfbf79; the ingestion queue, storms, the steering queue and the shutdown finalizer were new)"},
	{Place: Entry, N: 20, Report: "t3code#4561", Summary: "a quit overtakes the shutdown finalizer: runtime says stopped, the projection says starting, a queued steering turn stays pending", Cost: "with entry 19: 11 files, +890 -12 (acfbf79; the steering queue and the shutdown finalizer were new)"},
	{Place: Entry, N: 21, Report: "stablyai/orca#11006", Summary: "a transport drop loses the restored-session candidate; the pane cold-spawns a second agent beside the live one", Cost: "13 files, +469 -21 (a196c2d; the renderer reload and its cold-restore path were new)"},
	{Place: Entry, N: 22, Report: "im-ian/acorn#37", Summary: "StrictMode mount/cleanup/mount forks two PTYs for one session; the orphan's clean-up deletes the live entry by key", Cost: "21 files, +439 -100 (41be59c c461b73; recover's unreserved construction window and the MCP-session dimension were new)"},
	{Place: Entry, N: 23, Report: "QwenLM/qwen-code#7385", Summary: "detach always decrements the attach count; it reaches 0 with clients attached and close-on-last-detach kills the session", Cost: "12 files, +475 -24 (06bf6d9; main's attach ledger and the debug inline terminal's detach were new)"},
	{Place: Entry, N: 24, Report: "AgentSystemLabs/nebula#78", Summary: "the detached-idle timeout kills an agent session whose background job still runs", Cost: "12 files, +543 -9 (21bcb69; the detached-idle reaper and background jobs were new)"},
	{Place: Entry, N: 25, Report: "Untrivial-ai/agent-orchestrator#3023", Summary: "keystrokes typed before the agent's composer is ready land in the output area and are lost", Cost: "15 files, +431 -20 (b8ec773; main's hold of input before the composer paints was new)"},

	{Place: Appendix, N: 1, Report: "t3code#6355", Summary: "leaving a thread detaches its preview control session; back on the old tab, automation stalls", Cost: "14 files, +350 -20 (ace3c3d; on the client-host mechanism of entries 10-12)"},
	{Place: Appendix, N: 2, Report: "t3code#12926", Summary: "extra app instances mark running sessions as not having survived a restart while their agents work on", Cost: "8 files, +245 -4 (62caecc); the startup reconcile existed, but the extra app instance and its world dimension were new, so it is over the 5-file bound"},
	{Place: Appendix, N: 3, Report: "t3code#7314", Summary: "after a SIGKILL mid-subagent, the child never gets a terminal event and stays running", Cost: "2 files, +32 -3 (1a62c57)"},
	{Place: Appendix, N: 4, Report: "t3code#7083", Summary: "withdrawing browser access skips revocation on the deny path; a replaced process's token stays valid", Cost: "8 files, +318 -7 (729ffbd 040af80 and its halves of 70d05b1 2536fd7)"},
	{Place: Appendix, N: 5, Report: "t3code#3754", Summary: "stale credential-map entries make both old and new session skip revocation after a workspace handoff",
		LeftOut: "needs a workspace handoff the models lack: two live entries of one provider instance recording the same (thread, credential) with the thread attached to neither; in the model one instance has one session per thread (codex: one per instance), and a released entry leaves the map at once, so heldElsewhere never sees a stale record"},
	{Place: Appendix, N: 6, Report: "NousResearch/hermes-agent#110849", Summary: "a PTY attach is recorded before its replay is written; a client dropping mid-attach leaves a PTY never reaped", Cost: "4 files, +175 -8 (0a4031f; and the regenerated rows of docs/bugs.md and docs/exploration.md): renderer reload, the attach ledger, pty-attach-balanced and its swarm dimension existed"},
	{Place: Appendix, N: 7, Report: "anthropics/claude-code#84315", Summary: "in a restored session each terminal click spawns a shell that never binds to the UI", LeftOut: "not modelled yet: a per-click shell spawn that never binds to the UI is not the reload/rehydrate path adopt-before-spawn models"},
	{Place: Appendix, N: 8, Report: "crynta/terax-ai#132", Summary: "a respawn keeps the old shell's pending exit, so onExit fires on the new shell; a concurrent attach opens a second PTY", Cost: "9 files, +224 -2 for appendix 8 and 9 together (78bd62c; late exits of a given-up start were new)"},
	{Place: Appendix, N: 9, Report: "RunMaestro/Maestro#1302", Summary: "a killed process's exit is attributed to its same-id replacement; a dead entry blocks later spawns", Cost: "with appendix 8: 9 files, +224 -2 (78bd62c)"},
	{Place: Appendix, N: 10, Report: "openai/codex#39823", Summary: "resume refused with 'thread already has an active writer' after switching sessions (stale writer ownership)", LeftOut: "not modelled yet: the thread is not in the stored corpus, so there is no source for the writer-lease mechanism"},
	{Place: Appendix, N: 11, Report: "anomalyco/opencode#27928", Summary: "one prompt submission is processed twice, giving duplicate replies stored in history", Cost: "40 files, +280 -120 (ce91fda; 34 of the files are script goldens re-rendered for a new trace attribute)"},
	{Place: Appendix, N: 12, Report: "NousResearch/hermes-agent#57767", Summary: "delegate_task has no idempotency key: a duplicate dispatch spawns a duplicate child tree", Cost: "11 files, +207 -0 (6616b65), and its corpus file in 394c45c; command receipts existed, but the keyless call-id dedupe and the call-redelivery dimension were new, so it is over the 5-file bound"},
	{Place: Appendix, N: 13, Report: "t3code#8158", Summary: "a liveness watchdog deletes a map entry after an await, wiping a newer turn's state; stalls measured on the wall clock", LeftOut: "not modelled yet: the watchdog is PR #8158/#8159's TurnLivenessWatchdog.ts@92ddc87c (10 min model silence, 30 s sweep, elapsed time from Clock.currentTimeMillis, entries.delete after the interrupt dispatches), closed unmerged, so main has no watchdog at all; modelling it needs provider turns that go silent without a terminal event and a wall clock that steps backwards, which the worlds lack (the awake clock of entry 2 only jumps forward)"},
}

// RecordRow is one report of the record with the switches that cover it,
// as `orchsim list --format json` prints it under "record".
type RecordRow struct {
	Place   Place  `json:"place"`
	N       int    `json:"n"`
	Report  Report `json:"report"`
	Summary string `json:"summary"`
	// Switches are the registered switches whose Reports name Report, in
	// list order; empty when none does.
	Switches []string `json:"switches"`
	LeftOut  string   `json:"left_out"`
	Cost     string   `json:"cost"`
	// SwitchCost is RecordEntry.SwitchCost (omitted when empty).
	SwitchCost map[string]string `json:"switch_cost,omitempty"`
}

// RecordRows joins Record with the switches that cite each report.
func RecordRows(switches []Switch) []RecordRow {
	rows := make([]RecordRow, 0, len(Record))
	for _, e := range Record {
		r := RecordRow{Place: e.Place, N: e.N, Report: e.Report, Summary: e.Summary, LeftOut: e.LeftOut, Cost: e.Cost, SwitchCost: e.SwitchCost, Switches: []string{}}
		for _, s := range switches {
			for _, rep := range s.Reports {
				if rep == e.Report {
					r.Switches = append(r.Switches, s.Name)
					break
				}
			}
		}
		rows = append(rows, r)
	}
	return rows
}
