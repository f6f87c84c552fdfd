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
}

// Project holds the per-project settings the models read.
type Project struct {
	ID string
	// BrowserAccess grants the preview capability to agents of the project.
	BrowserAccess bool
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
	Settings  Settings
	runs      int
	// Indexes for id lookups, extended lazily over rows appended since the
	// last lookup (never ranged over).
	threadIdx  index[*Thread]
	runIdx     index[*Run]
	receiptIdx index[*Receipt]
	taskIdx    index[*Task]
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
	Status   string
	// Result is the tool result the command produced, replayed verbatim.
	Result Result
	Error  string
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
}

// Schedule is a scheduled task row.
type Schedule struct {
	ID        string
	ThreadID  string
	CommandID string
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
	for _, m := range s.Messages {
		if m.ID == id {
			return m
		}
	}
	return nil
}
