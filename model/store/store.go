// Package store models T3 Code's durable state: what survives a server
// restart (threads, runs, project settings). Everything else is in memory
// in the components that server builds and is lost on restart.
package store

import (
	"fmt"
	"time"
)

// Run statuses used by the models.
const (
	RunRunning     = "running"
	RunCompleted   = "completed"
	RunFailed      = "failed"
	RunCancelled   = "cancelled"
	RunInterrupted = "interrupted"
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
	// continuation or a run the orchestrator started).
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
	// Natives are the providers' own conversation stores (OpenCode's
	// session database, Claude's session files): not T3's database, but
	// like it they outlive a server process, so the worlds keep them here.
	Natives []*NativeConversation
	runs    int
	// Indexes for id lookups, extended lazily over rows appended since the
	// last lookup (never ranged over).
	threadIdx  index[*Thread]
	runIdx     index[*Run]
	receiptIdx index[*Receipt]
	taskIdx    index[*Task]
	nativeIdx  index[*NativeConversation]
	messageIdx index[*Message]
	// Groups of rows by a key they never change, extended the same way:
	// the runs of each thread, the tasks of each parent thread and of
	// each parent task. They make per-thread questions cost the thread's
	// rows, not the world's (a world of 1,000 threads, bench.MeasureScale).
	runsByThread  group[*Run]
	tasksByParent group[*Task]
	tasksByTask   group[*Task]
}

// group maps a key to the rows that carry it, in table order, for a table
// that only grows by appending and whose rows never change that key.
type group[T any] struct {
	byKey   map[string][]T
	covered int
}

// rows returns the rows whose key is want, in table order, first grouping
// rows[covered:]. The caller must not modify the result.
func (g *group[T]) rows(rows []T, key func(T) string, want string) []T {
	if g.byKey == nil {
		g.byKey = map[string][]T{}
	}
	if g.covered > len(rows) { // the table was replaced or truncated
		clear(g.byKey)
		g.covered = 0
	}
	for ; g.covered < len(rows); g.covered++ {
		r := rows[g.covered]
		k := key(r)
		g.byKey[k] = append(g.byKey[k], r)
	}
	return g.byKey[want]
}

// RunsOf returns the runs of thread threadID in the order they started:
// the rows of Runs whose ThreadID is threadID. Do not modify the result.
func (s *Store) RunsOf(threadID string) []*Run {
	return s.runsByThread.rows(s.Runs, func(r *Run) string { return r.ThreadID }, threadID)
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

// index maps ids to rows of a table that only grows by appending.
type index[T any] struct {
	byID    map[string]T
	covered int
}

// lookup returns the row with id, first indexing rows[covered:].
func (ix *index[T]) lookup(rows []T, id func(T) string, want string) (T, bool) {
	if ix.byID == nil {
		ix.byID = map[string]T{}
	}
	if ix.covered > len(rows) { // the table was replaced or truncated
		clear(ix.byID)
		ix.covered = 0
	}
	for ; ix.covered < len(rows); ix.covered++ {
		r := rows[ix.covered]
		if _, dup := ix.byID[id(r)]; !dup { // the first row with an id wins, as a scan would
			ix.byID[id(r)] = r
		}
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
	for _, p := range s.Projects {
		if p.ID == id {
			return p
		}
	}
	return nil
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
	r := &Run{ID: fmt.Sprintf("run:%d", s.runs), ThreadID: threadID, Instance: t.Instance, Status: RunRunning}
	s.Runs = append(s.Runs, r)
	t.ActiveRunID = r.ID
	return r
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
	// Result is the tool result the command produced, replayed verbatim.
	Result Result
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
	InterruptedRunID    string
	Delivery            string
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
	// Delivery is the completion delivery state: pending, delivered, disposed.
	Delivery string
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
	// Streaming marks an assistant message still being streamed.
	Streaming bool
}

// ThreadItem is a thread item that is not a message, such as the
// thread_created record create_threads leaves on its parent.
type ThreadItem struct {
	ThreadID  string
	Kind      string
	Ref       string
	CommandID string
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
	for _, p := range s.ProviderSessions {
		if p.ID == id {
			return p
		}
	}
	return nil
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
	for _, q := range s.QueuedTurns {
		if q.ThreadID == threadID && q.Status == QueuedPending {
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
}
