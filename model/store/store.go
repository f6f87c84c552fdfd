// Package store models T3 Code's durable state: what survives a server
// restart (threads, runs, project settings). Everything else is in memory
// in the components that server builds and is lost on restart.
package store

import (
	"slices"
	"strconv"
	"time"
)

// Run statuses used by the models.
const (
	RunRunning     = "running"
	RunCompleted   = "completed"
	RunFailed      = "failed"
	RunCancelled   = "cancelled"
	RunInterrupted = "interrupted"
	// RunQueued is a run waiting behind the thread's active one
	// (queue_after_active); hand-built by the fidelity cases, never started
	// by the worlds' server.
	RunQueued = "queued"
)

// Thread is a thread projection row.
type Thread struct {
	ID        string
	ProjectID string
	// ParentThread and CreatedBy record lineage of threads agents create
	// (delegated children, create_threads); "" for user threads.
	ParentThread string
	CreatedBy    string
	Title        string
	// Instance is the ProviderInstanceId the thread's turns run on.
	Instance    string
	Archived    bool
	ActiveRunID string
	// Relationship ("subagent" for a delegated child), RootParent (the
	// root of its lineage) and CreationSource ("mcp" for agent-created
	// threads) are the rest of the lineage; Branch and WorktreePath are
	// inherited by threads an agent creates.
	Relationship   string
	RootParent     string
	CreationSource string
	Branch         string
	WorktreePath   string
	// Deleted marks a deleted thread (its rows stay).
	Deleted bool
	// SessionStatus is the thread's projection_thread_sessions row status
	// (starting, running, ready, stopped, ...; "" before any); RuntimeStatus
	// its provider_session_runtime binding status, which the provider
	// session's shutdown finalizer writes on its own (t3code#4561: the two
	// tables are written by different paths and can disagree).
	SessionStatus string
	RuntimeStatus string
	// ResumeCursor is the thread's persisted resume cursor
	// (provider_session_runtime.resume_cursor_json): the native
	// conversation id its next provider session resumes, on the instance
	// ResumeInstance; "" for none.
	ResumeCursor, ResumeInstance string
	// CursorAt is when ResumeCursor was persisted.
	CursorAt time.Duration
	// Model and ModelOptions are the thread's model selection beyond its
	// instance ("" and none: the instance's default); ModelOptions are
	// "id=value" option selections (OrchestratorMcpService resolveTarget).
	Model        string
	ModelOptions []string
	// RuntimeMode is the thread's runtime mode ("" is full-access, the
	// worlds' only mode): approval-required, auto-accept-edits, auto,
	// full-access (OrchestratorMcpService runtimeModeRank).
	RuntimeMode string
	// ForkedFrom is the source thread of a fork and ForkedItems how many of
	// its timeline items the fork inherited (sourcePoint latest_stable).
	ForkedFrom  string
	ForkedItems int
	// RollbackRequestID is the command id of the thread's accepted
	// checkpoint rollback; RollbackFailure its terminal failure message
	// ("" for none) and RollbackFailureRequest the request it failed.
	RollbackRequestID      string
	RollbackFailure        string
	RollbackFailureRequest string
}

// Run is one run of a thread.
type Run struct {
	ID       string
	ThreadID string
	Instance string
	Status   string
	// CancelledByRestart marks a run reconcile cancelled because the server
	// process died under it (a restart-continuation source).
	CancelledByRestart bool
	// ContinuationOf is the source run of a restart continuation.
	ContinuationOf string
	// MessageID is the user message the run answers ("" for a
	// continuation or a run the orchestrator started). Set it right after
	// StartRun or not at all; it may be cleared any time (AnsweredBy).
	MessageID string
	// ProviderThreadID is the provider thread the run drives ("" for the
	// thread's own, as in the worlds).
	ProviderThreadID string
	// LostWork is restartCancelledBackgroundWork: background work a restart
	// cancelled under this run (kinds and what it was).
	LostWork []LostWork
	// QueueHeld marks a queued run a restart holds behind the run it cut
	// (recovery keeps its position and execution state).
	QueueHeld bool
}

// LostWork is one piece of background work a restart cancelled.
type LostWork struct {
	ProviderThread string
	Kind           string
	Description    string
}

// BackgroundWork is background work a provider thread runs (a shell, a
// monitor, a native subagent) that a restart would cancel.
type BackgroundWork struct {
	ProviderThread string
	Kind           string
	Description    string
}

// Effect is an outbox effect row: pending, running, done, cancelled.
type Effect struct {
	ID        string
	Type      string
	SourceRun string
	Status    string
}

// RunPart is a row of a run's subtree below the run: its attempt, nodes,
// provider turns and turn items, with their status (running, waiting,
// completed, cancelled, failed, ...).
type RunPart struct {
	ID     string
	RunID  string
	Kind   string // attempt, node, provider-turn, turn-item
	Status string
	// ItemKind is a turn item's kind (tool-call, shell, monitor,
	// t3_thread_wait, approval, ...); Persistent marks a persistent monitor.
	ItemKind   string
	Persistent bool
	// Instance is the item's own provider instance ("" unknown);
	// ProviderThread the provider thread it ran on.
	Instance       string
	ProviderThread string
	// Node is the node a turn item belongs to; RequestID the runtime
	// request it waits on.
	Node      string
	RequestID string
	// AppOwned marks an app-owned delegation node or item (it stays open).
	AppOwned bool
	// Subagent is the subagent entity (a part of kind subagent) a subagent
	// turn item reports.
	Subagent    string
	CompletedAt time.Duration
}

// ProviderThread is a provider thread row: the native conversation an app
// thread drives on one provider instance.
type ProviderThread struct {
	ID        string
	ThreadID  string
	Instance  string
	NativeRef bool
	Status    string // active, idle, closed
	SessionID string
	// Roster is the provider thread's pending background tasks.
	Roster []string
}

// NativeConversation is one native conversation a provider keeps for a
// thread (an OpenCode ses_... session, a Claude session id).
type NativeConversation struct {
	ID       string
	ThreadID string
	Instance string
	// Turns counts the durable native turns written to it.
	Turns int
	// WrittenAtCreate: the provider writes the conversation when it is
	// created (OpenCode's session.create); otherwise it exists only once
	// its first turn is written (a Claude session file).
	WrittenAtCreate bool
	// Process is the server process that last bound it.
	Process int
	// CreatedAt is when it was created.
	CreatedAt time.Duration
}

// Exists reports whether the provider can resume the conversation.
func (n *NativeConversation) Exists() bool { return n.WrittenAtCreate || n.Turns > 0 }

// NativesOf returns the native conversations of thread threadID, in
// creation order: the rows of Natives whose ThreadID is threadID. Do not
// modify the result.
func (s *Store) NativesOf(threadID string) []*NativeConversation {
	return s.nativesByThread.rows(s.Natives, func(n *NativeConversation) string { return n.ThreadID }, threadID)
}

// Native returns the native conversation id, or nil.
func (s *Store) Native(id string) *NativeConversation {
	n, _ := s.nativeIdx.lookup(s.Natives, func(n *NativeConversation) string { return n.ID }, id)
	return n
}

// Project holds the per-project settings the models read.
type Project struct {
	ID string
	// BrowserAccess grants the preview capability to agents of the project.
	BrowserAccess bool
	// ContinueThreadsAfterServerUpdate, if set, overrides the environment's
	// setting of the same name for the project's threads
	// (projectSettingsOverrides); nil follows Settings.
	ContinueThreadsAfterServerUpdate *bool
}

// Settings are the environment's durable settings the models read.
type Settings struct {
	// ContinueThreadsAfterServerUpdate gates restart continuation; false by
	// default upstream (contracts settings.ts).
	ContinueThreadsAfterServerUpdate bool
}

// Store is the durable database of one environment: it survives a server
// restart.
type Store struct {
	Threads   []*Thread
	Runs      []*Run
	Projects  []*Project
	Receipts  []*Receipt
	Tasks     []*Task
	Messages  []*Message
	Schedules []*Schedule
	// Items are thread items other than messages (thread_created records).
	Items    []*ThreadItem
	Settings Settings
	// ProviderSessions are the provider-session status rows (the durable
	// mirror of the provider session manager's entries).
	ProviderSessions []*ProviderSession
	// RuntimeRequests are pending and settled runtime requests (approvals,
	// questions) of provider sessions.
	RuntimeRequests []*RuntimeRequest
	// Background is the background work provider threads run; Effects
	// the effect outbox.
	Background []*BackgroundWork
	Effects    []*Effect
	// Parts are the rows of runs' subtrees; ProviderThreads the provider
	// thread rows.
	Parts           []*RunPart
	ProviderThreads []*ProviderThread
	// QueuedTurns are the durable turn-start requests of user messages sent
	// while a turn ran (steering messages waiting to be adopted).
	QueuedTurns []*QueuedTurn
	// RuntimeEvents is the durable inbox of provider runtime lifecycle
	// events (written only with journal-runtime-events; upstream's
	// ingestion queue lives in memory).
	RuntimeEvents []*RuntimeEvent
	// Checkpoints are the turn checkpoints CheckpointReactor captured.
	Checkpoints []*Checkpoint
	// Cohorts are parent runs' delegated completion state and Deliveries
	// the automatic delivery runs they dispatched (orchestrator/delivery.go).
	Cohorts    []*Cohort
	Deliveries []*DeliveryRun
	// Transfers are context transfers (a fork's conversation copy).
	Transfers []*Transfer
	// Natives are the providers' own conversation stores (OpenCode's
	// session database, Claude's session files): not T3's database, but
	// like it they outlive a server process, so the worlds keep them here.
	Natives []*NativeConversation
	// Rows allocates new rows (rows.go).
	Rows Rows
	runs int
	// Indexes for id lookups, extended lazily over rows appended since the
	// last lookup (never ranged over).
	threadIdx  index[*Thread]
	runIdx     index[*Run]
	receiptIdx index[*Receipt]
	taskIdx    index[*Task]
	nativeIdx  index[*NativeConversation]
	messageIdx index[*Message]
	projectIdx index[*Project]
	sessionIdx index[*ProviderSession]
	// scheduleIdx finds a schedule row by id, childTaskIdx a task by its
	// child thread (the first, as a scan would): the orchestrator asks both
	// per call, and a world of 1,000 threads has thousands of rows.
	scheduleIdx  index[*Schedule]
	childTaskIdx index[*Task]
	// scheduleSlots numbers schedule ids for ScheduleSlot (looked up only).
	scheduleSlots map[string]int32
	// threadPos is the position of each thread id's first row in Threads
	// (RestartSources orders by it), extended like index.
	threadPos     map[string]int
	threadPosDone int
	threadPosLast *Thread
	// restartCancelled are the runs MarkCancelledByRestart marked that
	// were still their thread's latest run when RestartSources last looked
	// (a run that stops being the latest never is again: runs are only
	// appended), in marking order.
	restartCancelled []*Run
	// Groups of rows by a key they never change, extended the same way:
	// the runs of each thread, the tasks of each parent thread and of
	// each parent task. They make per-thread questions cost the thread's
	// rows, not the world's (a world of 1,000 threads, bench.MeasureScale).
	runsByThread  group[*Run]
	runsByMessage messageRuns // the runs of each (thread, user message): AnsweredBy
	tasksByParent group[*Task]
	tasksByTask   group[*Task]
	// The queued turns and the native conversations of each thread.
	queuedByThread  group[*QueuedTurn]
	nativesByThread group[*NativeConversation]
	// settledRuns: Runs[:settledRuns] were all settled when last looked
	// at (OpenRunsFrom).
	settledRuns int
	// streaming are the messages of Messages[:streamingCovered] that were
	// streaming when StreamingMessages last looked, in table order;
	// streamingLast is Messages[streamingCovered-1] then.
	streaming        []*Message
	streamingCovered int
	streamingLast    *Message
}

// StreamingMessages returns the messages of Messages whose Streaming is
// set, in table order: what a scan of every message finds, at the cost of
// the messages appended since the last call and of those still streaming
// (a reconcile at every restart of a world of 1,000 threads asks once,
// and no world's message streams). It relies on Streaming being set only
// on a message as it is appended (Message.Streaming); a replaced,
// truncated or cut table is scanned again. The result is valid until the
// next call; do not modify it.
func (s *Store) StreamingMessages() []*Message {
	if s.streamingCovered > len(s.Messages) || s.streamingCovered > 0 && s.Messages[s.streamingCovered-1] != s.streamingLast {
		clear(s.streaming)
		s.streaming, s.streamingCovered = s.streaming[:0], 0
	}
	live := s.streaming[:0]
	for _, m := range s.streaming {
		if m.Streaming {
			live = append(live, m)
		}
	}
	clear(s.streaming[len(live):])
	s.streaming = live
	for ; s.streamingCovered < len(s.Messages); s.streamingCovered++ {
		m := s.Messages[s.streamingCovered]
		if m.Streaming {
			s.streaming = append(s.streaming, m)
		}
		s.streamingLast = m
	}
	return s.streaming
}

// Settled reports whether a run status is final: completed, failed,
// cancelled or interrupted. No model moves a run out of a final status
// (a running run ends once, reconcile cancels what is not final, and a
// cancelled orphan may be marked completed).
func Settled(status string) bool {
	switch status {
	case RunCompleted, RunFailed, RunCancelled, RunInterrupted:
		return true
	}
	return false
}

// OpenRunsFrom returns an index into Runs before which every run is
// settled, first moving it past the settled runs that follow. A question
// about the runs that are not settled (reconcile's, a shutdown's) need
// only read Runs from there: in a world of 1,000 threads restarted every
// few minutes that is the last few minutes' runs, not the day's.
func (s *Store) OpenRunsFrom() int {
	if s.settledRuns > len(s.Runs) { // the table was replaced or truncated
		s.settledRuns = 0
	}
	for s.settledRuns < len(s.Runs) && Settled(s.Runs[s.settledRuns].Status) {
		s.settledRuns++
	}
	return s.settledRuns
}

// group maps a key to the rows that carry it, in table order, for a table
// whose rows never change that key. Rows are grouped as they are appended;
// a table that was replaced, truncated or had a row deleted (the
// orchestrator's Kill drops unflushed tasks and receipts) is noticed by
// its last grouped row no longer being last, and grouped again.
type group[T comparable] struct {
	byKey   map[string][]T
	covered int
	last    T
}

// rows returns the rows whose key is want, in table order, first grouping
// rows[covered:]. The caller must not modify the result.
func (g *group[T]) rows(rows []T, key func(T) string, want string) []T {
	if g.byKey == nil {
		g.byKey = map[string][]T{}
	}
	if g.covered > len(rows) || g.covered > 0 && rows[g.covered-1] != g.last { // replaced, truncated or cut
		clear(g.byKey)
		g.covered = 0
	}
	for ; g.covered < len(rows); g.covered++ {
		r := rows[g.covered]
		k := key(r)
		g.byKey[k] = append(g.byKey[k], r)
		g.last = r
	}
	return g.byKey[want]
}

// RunsOf returns the runs of thread threadID in the order they started:
// the rows of Runs whose ThreadID is threadID. Do not modify the result.
func (s *Store) RunsOf(threadID string) []*Run {
	return s.runsByThread.rows(s.Runs, func(r *Run) string { return r.ThreadID }, threadID)
}

// AnsweredBy returns the first run of thread threadID, in the order runs
// started, whose MessageID is messageID (not ""), or nil: what a scan of
// RunsOf(threadID) finds, at the cost of that message's runs rather than
// the thread's (a thread of a world of 1,000 threads is continued after
// every restart: a run each). A run is indexed under the MessageID it has
// when first looked at, and a candidate is checked against its MessageID
// now, so clearing a MessageID is seen; a MessageID set later than that
// must be set before the next AnsweredBy (Server.startRunFor sets it right
// after StartRun).
func (s *Store) AnsweredBy(threadID, messageID string) *Run {
	if messageID == "" {
		return nil
	}
	for _, r := range s.runsByMessage.rows(s.Runs, threadMessage{threadID, messageID}) {
		if r.MessageID == messageID && r.ThreadID == threadID {
			return r
		}
	}
	return nil
}

// threadMessage keys messageRuns.
type threadMessage struct{ thread, message string }

// messageRuns is group for the runs with a MessageID, keyed by thread and
// message: rows are grouped as they are appended, and all again after the
// table is replaced, truncated or cut.
type messageRuns struct {
	byKey   map[threadMessage][]*Run
	covered int
	last    *Run
}

func (g *messageRuns) rows(rows []*Run, want threadMessage) []*Run {
	if g.byKey == nil {
		g.byKey = map[threadMessage][]*Run{}
	}
	if g.covered > len(rows) || g.covered > 0 && rows[g.covered-1] != g.last { // replaced, truncated or cut
		clear(g.byKey)
		g.covered = 0
	}
	for ; g.covered < len(rows); g.covered++ {
		r := rows[g.covered]
		if r.MessageID != "" {
			k := threadMessage{r.ThreadID, r.MessageID}
			g.byKey[k] = append(g.byKey[k], r)
		}
		g.last = r
	}
	return g.byKey[want]
}

// TasksDelegatedBy returns the tasks thread threadID delegated (their
// ParentThread), in creation order. Do not modify the result.
func (s *Store) TasksDelegatedBy(threadID string) []*Task {
	return s.tasksByParent.rows(s.Tasks, func(t *Task) string { return t.ParentThread }, threadID)
}

// TasksUnder returns the tasks delegated under task taskID (their
// ParentTask), in creation order. Do not modify the result.
func (s *Store) TasksUnder(taskID string) []*Task {
	return s.tasksByTask.rows(s.Tasks, func(t *Task) string { return t.ParentTask }, taskID)
}

// index maps ids to rows of a table, indexed as they are appended and
// again after a replacement, truncation or deletion (as group).
type index[T comparable] struct {
	byID    map[string]T
	covered int
	last    T
}

// lookup returns the row with id, first indexing rows[covered:].
func (ix *index[T]) lookup(rows []T, id func(T) string, want string) (T, bool) {
	if ix.byID == nil {
		ix.byID = map[string]T{}
	}
	if ix.covered > len(rows) || ix.covered > 0 && rows[ix.covered-1] != ix.last { // replaced, truncated or cut
		clear(ix.byID)
		ix.covered = 0
	}
	for ; ix.covered < len(rows); ix.covered++ {
		r := rows[ix.covered]
		if _, dup := ix.byID[id(r)]; !dup { // the first row with an id wins, as a scan would
			ix.byID[id(r)] = r
		}
		ix.last = r
	}
	r, ok := ix.byID[want]
	return r, ok
}

// Thread returns the thread id, or nil.
func (s *Store) Thread(id string) *Thread {
	t, _ := s.threadIdx.lookup(s.Threads, func(t *Thread) string { return t.ID }, id)
	return t
}

// Project returns the project id, or nil.
func (s *Store) Project(id string) *Project {
	p, _ := s.projectIdx.lookup(s.Projects, func(p *Project) string { return p.ID }, id)
	return p
}

// Run returns the run id, or nil.
func (s *Store) Run(id string) *Run {
	r, _ := s.runIdx.lookup(s.Runs, func(r *Run) string { return r.ID }, id)
	return r
}

// ActiveRun returns the thread's active run, or nil.
func (s *Store) ActiveRun(threadID string) *Run {
	t := s.Thread(threadID)
	if t == nil || t.ActiveRunID == "" {
		return nil
	}
	return s.Run(t.ActiveRunID)
}

// StartRun records a new running run of the thread on its current instance.
func (s *Store) StartRun(threadID string) *Run {
	t := s.Thread(threadID)
	s.runs++
	var b [24]byte
	r := NewRow(&s.Rows.Runs, Run{ID: s.Rows.Str.Bytes(strconv.AppendInt(append(b[:0], "run:"...), int64(s.runs), 10)), ThreadID: threadID, Instance: t.Instance, Status: RunRunning})
	s.Runs = append(s.Runs, r)
	t.ActiveRunID = r.ID
	return r
}

// MarkCancelledByRestart sets r.CancelledByRestart: reconcile cancelled
// it because the server process died under it. Mark runs through it, not
// by setting the field, so RestartSources sees them.
func (s *Store) MarkCancelledByRestart(r *Run) {
	if !r.CancelledByRestart {
		s.restartCancelled = append(s.restartCancelled, r)
	}
	r.CancelledByRestart = true
}

// RestartSources returns the latest run of every thread whose latest run
// is marked CancelledByRestart, in the order of the threads' rows in
// Threads: what a scan of every thread's latest run would find, at the
// cost of the marked runs rather than the world's threads (a restart of a
// world of 1,000 threads asks once). The result is the caller's.
func (s *Store) RestartSources() []*Run {
	live := s.restartCancelled[:0]
	for _, r := range s.restartCancelled {
		if runs := s.RunsOf(r.ThreadID); len(runs) > 0 && runs[len(runs)-1] == r {
			live = append(live, r)
		}
	}
	clear(s.restartCancelled[len(live):])
	s.restartCancelled = live
	out := make([]*Run, 0, len(live))
	pos := make([]int, 0, len(live))
	for _, r := range live {
		if !r.CancelledByRestart {
			continue
		}
		p, ok := s.threadPosition(r.ThreadID)
		if !ok {
			continue // no thread row: the scan would not reach it
		}
		i, _ := slices.BinarySearch(pos, p)
		out, pos = slices.Insert(out, i, r), slices.Insert(pos, i, p)
	}
	return out
}

// threadPosition returns the position in Threads of thread id's first row.
func (s *Store) threadPosition(id string) (int, bool) {
	if s.threadPos == nil || s.threadPosDone > len(s.Threads) ||
		s.threadPosDone > 0 && s.Threads[s.threadPosDone-1] != s.threadPosLast { // replaced, truncated or cut
		s.threadPos, s.threadPosDone = map[string]int{}, 0
	}
	for ; s.threadPosDone < len(s.Threads); s.threadPosDone++ {
		t := s.Threads[s.threadPosDone]
		if _, dup := s.threadPos[t.ID]; !dup {
			s.threadPos[t.ID] = s.threadPosDone
		}
		s.threadPosLast = t
	}
	p, ok := s.threadPos[id]
	return p, ok
}

// EndRun gives the run a terminal status and clears the thread's active run.
func (s *Store) EndRun(runID, status string) {
	r := s.Run(runID)
	if r == nil || r.Status != RunRunning {
		return
	}
	r.Status = status
	if t := s.Thread(r.ThreadID); t != nil && t.ActiveRunID == runID {
		t.ActiveRunID = ""
	}
}

// Receipt statuses (orchestration_command_receipts).
const (
	ReceiptAccepted = "accepted"
	ReceiptRejected = "rejected"
)

// Receipt is one orchestration_command_receipts row: the durable record
// that a command ran, which makes a retry with the same commandId a replay.
type Receipt struct {
	CommandID string
	// ThreadID is the caller's thread; Tool and Key are what the caller
	// sent (clientRequestId, or "" when it sent none).
	ThreadID string
	Tool     string
	Key      string
	// Aggregate is what the command addresses ("thread:<id>" or
	// "task:<id>"): the engine's receipt aggregateKind/aggregateId.
	Aggregate string
	Status    string
	// Result is the tool result the command produced, replayed verbatim
	// (Result.Result()); the zero value for a command that produced none
	// (a restart continuation's). Packed: receipts are never deleted.
	Result PackedResult
	// Payload is the normalized payload of the request the command belongs
	// to (create_threads: the whole batch), EntryPayload the command's own
	// part of it (one entry); "" where the model does not fingerprint.
	Payload, EntryPayload string
	Error                 string
}

// Result is the durable part of a tool result.
type Result struct {
	TaskID        string
	ChildThreadID string
	ThreadIDs     []string
	MessageID     string
	ScheduleID    string
	RunID         string
	Status        string
	// Summary is a settled task's result text; InstanceID the provider
	// instance a delegated child runs on; Delivery its completion
	// delivery; LatestTerminalRunID and HasPendingChildRuns task_status's
	// view of the child's runs.
	Summary    string
	InstanceID string
	// InterruptedRunID is the run t3_thread_interrupt interrupted (not a
	// result id: traces do not show it).
	InterruptedRunID string
	Delivery         string
	// CheckpointID, RunOrdinal and RestoreFiles are a rollback's result
	// (rollback_requested).
	CheckpointID string
	RunOrdinal   int
	RestoreFiles bool
	// TransferID and SourceRunID are a fork's context transfer and its
	// canonical source point's run.
	TransferID          string
	SourceRunID         string
	LatestTerminalRunID string
	// LatestTerminalStatus is the status of LatestTerminalRunID (the
	// task's own status while its own work is the newest terminal run).
	LatestTerminalStatus string
	HasPendingChildRuns  bool
}

// Task statuses.
const (
	TaskRunning   = "running"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "interrupted"
)

// Task is an app-owned delegated task (subagent) and its child thread.
type Task struct {
	ID            string
	ParentThread  string
	ChildThreadID string
	CommandID     string
	Status        string
	// ParentTask is the task whose child thread delegated this one ("" for
	// a task an agent's own thread delegated): the delegation tree
	// task_cancel walks.
	ParentTask string
	// Text is the task the child received; Summary its answer once
	// completed.
	Text    string
	Summary string
	// CompletesAt is when the child's work settles (virtual time since the
	// run's start); durable so delegated-task recovery can re-arm it.
	CompletesAt time.Duration
	// Delivery is the completion delivery state (completionDelivery.state):
	// pending (terminal or not, no delivery holds it), claimed (a parent
	// delivery reservation holds it), delivered, acknowledged (the parent
	// observed the result), disposed (task_cancel, parent Stop, Queue
	// Remove).
	Delivery string
	// CompletionWake is the task's wake policy: always (async delegations),
	// settled_only (wait mode: the blocking call delivers) or "" (a legacy
	// request without the field, which behaves as settled_only).
	CompletionWake string
	// ParentRunID is the parent run whose delivery cohort the task belongs
	// to ("" when the parent had none); Offered whether its terminal made a
	// parent wake offer; ObservedByRunID the parent run that acknowledged it.
	ParentRunID     string
	Offered         bool
	ObservedByRunID string
	// Held marks a nonterminal task whose child has neither a running turn
	// nor delegates (one awaiting a restart's continuation): it has no
	// interruptible child run.
	Held bool
}

// Message is a message written into a thread by a tool or the server.
type Message struct {
	ID        string
	ThreadID  string
	CommandID string
	Text      string
	// Sender is the thread that sent it ("" for the user or the server).
	Sender string
	// RunID is the run the message started, if any; ContinuationOf the
	// source run of a restart continuation.
	RunID          string
	ContinuationOf string
	// Streaming marks an assistant message still being streamed. Set it
	// only on a message being appended, before the next StreamingMessages
	// (a message covered by it while not streaming is not looked at again);
	// clearing it is seen any time.
	Streaming bool
	// Role is "assistant" for a provider's answer, "" for a user message.
	Role string
}

// ThreadItem is a thread item that is not a message, such as the
// thread_created record create_threads leaves on its parent.
type ThreadItem struct {
	ThreadID  string
	Kind      string
	Ref       string
	CommandID string
	// TargetRun is a thread_created item's targetRunId ("" for an idle
	// thread).
	TargetRun string
}

// Schedule is a scheduled task row.
type Schedule struct {
	ID        string
	ThreadID  string
	CommandID string
	// Timed says the row has a daily fixed_time slot the scheduler fires
	// (rows of a world without the scheduler have none). TimeOfDay is the
	// slot's offset in a virtual 24 h day; Enabled the task's flag;
	// NextRunAt the next due slot (-1: none, as for a disabled task);
	// LastRunAt the last fire (-1: never), LastRunStatus and RunCount its
	// run state: ScheduledTaskService's scheduled_tasks row.
	Timed         bool
	TimeOfDay     time.Duration
	Enabled       bool
	NextRunAt     time.Duration
	LastRunAt     time.Duration
	LastRunStatus string
	RunCount      int
	// The rest is what schedule_task records from its arguments (rows the
	// worlds write leave it empty): title, prompt, project, the bound
	// thread's model, the schedule (Kind interval|fixed_time|webhook,
	// EveryMs for an interval) and the creator.
	Title          string
	Prompt         string
	ProjectID      string
	Model          string
	Kind           string
	EveryMs        int64
	CreatedBy      string
	CreationSource string
	// slot is ScheduleSlot's number for ID, plus one (0: not asked yet).
	slot int32
}

// ScheduleSlot returns a small number for s.ID: 0, 1, 2, ... in the order
// ids are first asked for, the same for every row of that id and for
// every call on this store. A process keeps per-schedule state in a slice
// indexed by it, where a map keyed by id would be built again, and grown
// entry by entry, at every boot (the orchestrator's armed generations: a
// world of 1,000 threads boots over a hundred times a day).
func (s *Store) ScheduleSlot(r *Schedule) int {
	if r.slot > 0 {
		return int(r.slot - 1)
	}
	n, ok := s.scheduleSlots[r.ID]
	if !ok {
		if s.scheduleSlots == nil {
			s.scheduleSlots = map[string]int32{}
		}
		n = int32(len(s.scheduleSlots))
		s.scheduleSlots[r.ID] = n
	}
	r.slot = n + 1
	return int(n)
}

// Schedule returns the schedule row id, or nil.
func (s *Store) Schedule(id string) *Schedule {
	r, _ := s.scheduleIdx.lookup(s.Schedules, func(r *Schedule) string { return r.ID }, id)
	return r
}

// TaskOfChild returns the first task whose child thread is threadID, or
// nil.
func (s *Store) TaskOfChild(threadID string) *Task {
	t, _ := s.childTaskIdx.lookup(s.Tasks, func(t *Task) string { return t.ChildThreadID }, threadID)
	return t
}

// Receipt returns the receipt of commandID, or nil.
func (s *Store) Receipt(commandID string) *Receipt {
	r, _ := s.receiptIdx.lookup(s.Receipts, func(r *Receipt) string { return r.CommandID }, commandID)
	return r
}

// Task returns the task id, or nil.
func (s *Store) Task(id string) *Task {
	t, _ := s.taskIdx.lookup(s.Tasks, func(t *Task) string { return t.ID }, id)
	return t
}

// Message returns the message id, or nil.
func (s *Store) Message(id string) *Message {
	m, _ := s.messageIdx.lookup(s.Messages, func(m *Message) string { return m.ID }, id)
	return m
}

// ProviderSession is a provider-session projection row: the last status
// written (ready, running, stopped, error) and the last error, which a
// later status keeps.
type ProviderSession struct {
	ID          string
	Status      string
	LastError   string
	LastErrorAt time.Duration
	UpdatedAt   time.Duration
	// Writes counts the status writes (provider-session.attached/updated).
	Writes int
}

// ProviderSession returns the row of id, or nil.
func (s *Store) ProviderSession(id string) *ProviderSession {
	p, _ := s.sessionIdx.lookup(s.ProviderSessions, func(p *ProviderSession) string { return p.ID }, id)
	return p
}

// WriteProviderSession writes a status for session id at now; a non-empty
// lastError is recorded with its time, an empty one keeps the last.
func (s *Store) WriteProviderSession(id, status, lastError string, now time.Duration) {
	p := s.ProviderSession(id)
	if p == nil {
		p = &ProviderSession{ID: id}
		s.ProviderSessions = append(s.ProviderSessions, p)
	}
	p.Status, p.UpdatedAt = status, now
	p.Writes++
	if lastError != "" {
		p.LastError, p.LastErrorAt = lastError, now
	}
}

// Runtime request statuses and response capabilities.
const (
	RequestPending   = "pending"
	RequestResolved  = "resolved"
	RequestExpired   = "expired"
	RequestCancelled = "cancelled"
	// CapabilityLive: answered through the live provider runtime;
	// CapabilityMessage: answered by a message (an async question), which
	// survives the runtime; CapabilityNotResumable: can no longer be
	// answered.
	CapabilityLive         = "live"
	CapabilityMessage      = "message"
	CapabilityNotResumable = "not_resumable"
)

// RuntimeRequest is a runtime-request projection row with the status of
// its node and of the turn item that waits on it.
type RuntimeRequest struct {
	ID              string
	ThreadID        string
	RunID           string
	SessionID       string
	Status          string
	Capability      string
	Reason          string
	NodeStatus      string
	ItemStatus      string
	ItemCompletedAt time.Duration
}

// Queued turn statuses.
const (
	QueuedPending   = "pending"
	QueuedAdopted   = "adopted"
	QueuedCancelled = "cancelled"
)

// QueuedTurn is a pending turn-start row (thread.turn-start-requested for
// a message sent while the thread's turn was running): adopted when the
// turn completes, abandoned (cancelled) when its session stops.
type QueuedTurn struct {
	ThreadID  string
	MessageID string
	Status    string
	At        time.Duration
}

// PendingQueuedTurn returns the thread's pending queued turn, or nil.
func (s *Store) PendingQueuedTurn(threadID string) *QueuedTurn {
	for _, q := range s.queuedByThread.rows(s.QueuedTurns, func(q *QueuedTurn) string { return q.ThreadID }, threadID) {
		if q.Status == QueuedPending {
			return q
		}
	}
	return nil
}

// RuntimeEvent is one provider runtime event in the durable inbox: the
// provider's turn completion of a run, ingested once the projection took it.
type RuntimeEvent struct {
	Seq      int
	Kind     string
	ThreadID string
	RunID    string
	At       time.Duration
	Ingested bool
}

// Checkpoint is a checkpoint CheckpointReactor captured when a run's
// provider turn completed (a durable side effect of that event).
type Checkpoint struct {
	ThreadID string
	RunID    string
	At       time.Duration
	// Status is "" (ready) or "missing" (its snapshot cannot be restored).
	Status string
}

// Cohort is a parent run's delegatedCompletion: the terminal results of
// the tasks it delegated, delivered to it in bounded batches.
type Cohort struct {
	ParentThread string
	ParentRunID  string
	// Disposition is open, stopped (the parent was stopped: a barrier) or
	// disposed (Queue Remove of an automatic delivery).
	Disposition string
	// Generation counts the reservations made; Reservation is the current
	// one (nil: none, upstream delivery null).
	Generation  int
	Reservation *Reservation
	// Offers counts the parent wake offers the cohort made (one per
	// reservation).
	Offers int
}

// Reservation is a cohort's durable delivery reservation.
type Reservation struct {
	Generation int
	TaskIDs    []string
	MessageID  string
	// DeliveryRun is the delivery run dispatched for it ("" before the
	// continuation worker dispatched it).
	DeliveryRun string
}

// DeliveryRun is a parent run's automatic delivery (the message the
// continuation worker dispatches queue_after_active).
type DeliveryRun struct {
	ID           string
	ParentThread string
	ParentRunID  string
	Generation   int
	TaskIDs      []string
	MessageID    string
	// Status is queued, running, completed or cancelled.
	Status string
}

// Transfer is a context transfer (OrchestrationV2ContextTransfer): here a
// fork's, from its source thread through SourceRunID ("" when no source
// point was asked) to its target. Status is pending until the target's
// first turn consumes it (the model has no such turn: it stays pending).
type Transfer struct {
	ID             string
	Kind           string
	SourceThreadID string
	TargetThreadID string
	SourceRunID    string
	Status         string
}
