// Package orchestrator models T3 Code's orchestrator MCP tools
// (OrchestratorMcpService, ThreadMetadataMcpService) over the durable
// store: the derived command, thread and message ids (MODEL.md §6), dispatch
// with command receipts (§7), delegated tasks with completion and the wait
// mode, and delegated-task recovery after a restart.
package orchestrator

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchsim/orchsim/catalog"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/mcp"
	"github.com/orchsim/orchsim/model/store"
	"github.com/orchsim/orchsim/sim"
)

// Constants from OrchestratorMcpService.
const (
	// DefaultWaitTimeout is DEFAULT_WAIT_TIMEOUT_MS: delegate_task wait's
	// default budget, 10 min.
	DefaultWaitTimeout = 10 * time.Minute
	// MaxWaitTimeout is MAX_WAIT_TIMEOUT_MS: the cap, 60 min.
	MaxWaitTimeout = 60 * time.Minute
	// TaskPollInterval is TASK_POLL_INTERVAL_MS: the wait loop's poll, 50 ms.
	TaskPollInterval = 50 * time.Millisecond
	// MaxBatchThreads is create_threads' maxBatchThreads.
	MaxBatchThreads = 20
	// BoundedDefaultWait and BoundedMaxWait are PR #11997's wait budgets
	// (30 s default, 45 s cap): well inside a Node MCP client's 300 s
	// header timeout, so the caller always gets its taskId back.
	BoundedDefaultWait = 30 * time.Second
	BoundedMaxWait     = 45 * time.Second
)

// ReceiptChecksAggregate is PR #5246 ("stop replaying a command receipt
// for a different aggregate"), the fix of t3code#5231: an accepted receipt
// is replayed only to a command addressed to the receipt's own aggregate
// (the thread a send, interrupt or update targets, the task a cancel
// names, else the caller); a reuse for another one fails with
// OrchestrationCommandIdConflictError. Off, receipts are matched by
// command id alone: a t3_thread_send that reuses a clientRequestId for
// another target is answered with the first send's success while nothing
// reaches the new target.
const ReceiptChecksAggregate model.Switch = "receipt-checks-aggregate"

// Wrong fixes of t3code#11168 and #5231, for the mutation gate.
const (
	// OnlyDefaultWaitBounded bounds the default wait (30 s) but keeps the
	// 60 min cap for an explicit timeoutMs, so a caller that asks for a
	// long wait still outlives its client.
	OnlyDefaultWaitBounded model.Mutant = "only-default-wait-bounded"
	// ReceiptChecksCallerOnly compares the receipt's caller instead of its
	// aggregate: the same caller reusing a key for another target is still
	// answered with the old success.
	ReceiptChecksCallerOnly model.Mutant = "receipt-checks-caller-only"
)

// BoundedDelegateWait is PR #11997 ("bound delegation waits and recover
// completion delivery"), the fix attempt for t3code#11168: a
// delegate_task wait returns its handles (taskId, childThreadId) within
// 45 s, the child running on. Off is the V2 branch: the wait holds the
// tools/call open for up to 10 min by default (60 min at most) and writes
// nothing meanwhile, so a Node client dies at its 300 s header timeout
// with no taskId and the agent re-dispatches a second child.
const BoundedDelegateWait model.Switch = "bounded-delegate-wait"

// Switches and mutants of report 002 (T3 Code #16184).
const (
	// StableRequestNamespace derives requestNamespace from durable caller
	// identity (thread:<environmentId>:<threadId>) instead of the
	// credential's random providerSessionId. Fix N1.
	StableRequestNamespace model.Switch = "stable-request-namespace"
	// GlobalRequestNamespace uses one namespace for every caller, so keys
	// collide across threads.
	GlobalRequestNamespace model.Mutant = "global-request-namespace"
	// ReceiptKeyedByClientRequestID keys command receipts by the
	// clientRequestId alone: no namespace and no operation, so a key reused
	// by another thread or another tool replays the wrong receipt.
	ReceiptKeyedByClientRequestID model.Mutant = "receipt-keyed-by-client-request-id"
	// ReceiptWriteBehind commits a command's effect at once and its receipt
	// ReceiptWriteBehindDelay later (a write-behind cache in front of the
	// receipt table): a crash in that window, with the reply lost, lets the
	// retry run the command again. Upstream writes both in one transaction
	// (OrchestrationEngine dispatchWithReceipt). It needs a coincidence: a
	// crash within 50 ms of an orchestrator call's answer.
	ReceiptWriteBehind model.Mutant = "receipt-write-behind"
	// TaskRowWriteBehind writes a delegated task's child thread, its
	// message and the receipt at once but holds the task row in a
	// write-behind cache for TaskRowWriteBehindDelay: a crash in that
	// window leaves a child nobody follows, and its task never settles
	// (the receipt still answers a retry with the lost task's id). It
	// needs a coincidence: a crash within 50 ms of a delegate_task.
	TaskRowWriteBehind model.Mutant = "task-row-write-behind"
)

// TaskRowWriteBehindDelay is how long the task-row-write-behind mutant's
// task row trails its dispatch.
const TaskRowWriteBehindDelay = 50 * time.Millisecond

func init() {
	model.RegisterSwitch(model.SwitchInfo{Name: StableRequestNamespace, Group: catalog.Orchestrator,
		Reports:    []catalog.Report{"t3code#16184"},
		Source:     "seed report 002_37023b8e7fbf41be, fix N1",
		Scenario:   "request-retry",
		Invariants: []string{"one-effect-per-request", "retry-returns-original"},
		Reported:   "requestNamespace = the credential's random providerSessionId",
		Fixed:      "thread callers: thread:<environmentId>:<threadId>; OAuth clients keep client:<sessionId>",
		Script:     "scenarios/testdata/request_retry/report_steps",
		Mechanism:  "model/orchestrator: requestNamespace of command receipts"})
	model.RegisterMutant(model.MutantInfo{Name: OnlyDefaultWaitBounded, Group: catalog.Orchestrator,
		Doc:        "delegate_task's default wait is bounded to 30 s, but an explicit timeoutMs may still hold the call up to 60 min",
		Scenario:   "request-retry",
		Invariants: []string{"delegate-handle-before-client-timeout"}})
	model.RegisterMutant(model.MutantInfo{Name: ReceiptChecksCallerOnly, Group: catalog.Orchestrator,
		Doc:        "a receipt is replayed to any command of the thread that created it, whatever that command addresses",
		Scenario:   "request-retry",
		Invariants: []string{"replay-lands-on-target"}})
	model.RegisterSwitch(model.SwitchInfo{Name: ReceiptChecksAggregate, Group: catalog.Orchestrator,
		Reports:    []catalog.Report{"t3code#5231"},
		Source:     "OrchestrationEngine dispatch receipts (aggregateKind/aggregateId); fix PR #5246",
		Scenario:   "request-retry",
		Invariants: []string{"replay-lands-on-target"},
		Reported:   "an accepted receipt is replayed to any command with its id, whatever thread or task it addresses",
		Fixed:      "a receipt is replayed only to a command addressed to its own aggregate; another one gets OrchestrationCommandIdConflictError",
		Upstream:   "t3code PR #5246",
		Script:     "scenarios/testdata/request_retry/key_reuse",
		Mechanism:  "model/orchestrator: command receipts (aggregate check)"})
	model.RegisterSwitch(model.SwitchInfo{Name: BoundedDelegateWait, Group: catalog.Orchestrator,
		Reports:    []catalog.Report{"t3code#11168"},
		Source:     "OrchestratorMcpService DEFAULT_WAIT_TIMEOUT_MS/MAX_WAIT_TIMEOUT_MS (V2 branch, PR #2829); fix attempt PR #11997; tool guidance PR #7427",
		Scenario:   "request-retry",
		Invariants: []string{"delegate-handle-before-client-timeout"},
		Reported:   "a delegate_task wait holds the call open up to 10 min by default, 60 min at most, writing nothing meanwhile",
		Fixed:      "a delegate_task wait returns its taskId and childThreadId within 30 s by default, 45 s at most; the child runs on",
		Script:     "scenarios/testdata/request_retry/client_timeout",
		Mechanism:  "model/orchestrator: delegate_task wait budget against the client timeout"})
	model.RegisterMutant(model.MutantInfo{Name: GlobalRequestNamespace, Group: catalog.Orchestrator,
		Doc:        "one requestNamespace for every caller, so clientRequestIds collide across threads",
		Scenario:   "request-retry",
		Invariants: []string{"request-keys-scoped-per-thread"}})
	model.RegisterMutant(model.MutantInfo{Name: ReceiptWriteBehind, Group: catalog.Orchestrator,
		Doc:        "a command's receipt sits in a write-behind cache for 50 ms after its effect; a crash in between (with the reply lost) loses it and the retry runs the command again",
		Scenario:   "request-retry",
		Invariants: []string{"one-effect-per-request"}, GateStrategy: "commit"})
	model.RegisterMutant(model.MutantInfo{Name: TaskRowWriteBehind, Group: catalog.Orchestrator,
		Doc:        "a delegated task's row sits in a write-behind cache for 50 ms after its child thread and receipt are written; a crash in between loses it and the task never settles",
		Scenario:   "request-retry",
		Invariants: []string{"delegated-task-settles"}, GateStrategy: "commit"})
	model.RegisterMutant(model.MutantInfo{Name: ReceiptKeyedByClientRequestID, Group: catalog.Orchestrator,
		Doc:        "command receipts keyed by the clientRequestId alone (no namespace, no operation)",
		Scenario:   "request-retry",
		Invariants: []string{"request-keys-scoped-per-thread"}})
}

// Liveness obligations of the orchestrator.
const (
	// TaskSettles: a delegated task reaches a terminal state.
	TaskSettles = "delegated-task-settles"
	// WaitReturns: a delegate_task wait returns (settled or timed out)
	// before its budget, unless its server process died.
	WaitReturns = "wait-returns-within-budget"
)

func init() {
	sim.DeclareObligation(sim.ObligationInfo{Name: TaskSettles, Group: string(catalog.Orchestrator),
		Property: "a delegated task reaches a terminal state",
		Source:   "MODEL.md §7 (delegated tasks, recovery)"})
	sim.DeclareObligation(sim.ObligationInfo{Name: WaitReturns, Group: string(catalog.Orchestrator),
		Property: "a delegate_task wait returns, settled or timed out, unless its server process died",
		Source:   "MODEL.md §7 (wait mode)"})
}

// RequestNamespace is the namespace the derived ids of a caller use.
func RequestNamespace(p model.Profile, scope mcp.Scope) string {
	switch {
	case p.Has(GlobalRequestNamespace):
		return "global"
	case p.Fixed(StableRequestNamespace) && scope.Thread != nil:
		return "thread:" + scope.EnvironmentID + ":" + scope.Thread.ThreadID
	}
	return scope.RequestNamespace
}

// encNamespace is Enc(RequestNamespace(o.env.Profile, scope)), a stable
// thread namespace built by the run's strings (Enc works byte by byte, so
// the encoding of the joined parts is the parts' encodings joined).
func (o *Orchestrator) encNamespace(scope mcp.Scope) string {
	p := o.env.Profile
	if p.Has(GlobalRequestNamespace) || !p.Fixed(StableRequestNamespace) || scope.Thread == nil {
		return Enc(RequestNamespace(p, scope))
	}
	var b [128]byte
	x := appendEnc(b[:0], "thread:")
	x = appendEnc(x, scope.EnvironmentID)
	x = appendEnc(x, ":")
	x = appendEnc(x, scope.Thread.ThreadID)
	return o.env.Str().Bytes(x)
}

// appendEnc appends Enc(s) to dst.
func appendEnc(dst []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			dst = append(dst, c)
			continue
		}
		dst = append(dst, '%', hex[c>>4], hex[c&15])
	}
	return dst
}

// Enc is JavaScript's encodeURIComponent, which the derived ids use.
func Enc(s string) string {
	const hex = "0123456789ABCDEF"
	escaped := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0) {
			escaped++
		}
	}
	if escaped == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*escaped)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// Outcome of a dispatch, as traced.
const (
	Accepted = "accepted" // a new command ran and stored its receipt
	Replayed = "replayed" // an accepted receipt was replayed
)

// Error codes (OrchestratorMcpFailure.code and orchestrator errors).
const (
	ErrPreviouslyRejected = "OrchestratorCommandPreviouslyRejectedError"
	// ErrCommandIDConflict is PR #5246's OrchestrationCommandIdConflictError:
	// an accepted command id reused for another aggregate.
	ErrCommandIDConflict  = "OrchestrationCommandIdConflictError"
	ErrDispatch           = "orchestration_error"
	ErrTaskNotFound       = "task_not_found"
	ErrTaskNotCancellable = "task_not_cancellable"
	ErrThreadNotFound     = "thread_not_found"
	ErrInvalidRequest     = "invalid_request"
	NoActiveRun           = "no_active_run"
)

// Call is one orchestrator tool call after the caller checks passed.
type Call struct {
	Scope mcp.Scope
	model.ToolCall
	Extra Extra
}

// Extra carries the arguments of a call that model.ToolCall does not (the
// fidelity cases send them; the worlds' agents leave them empty).
type Extra struct {
	// Instance is delegate_task's target provider instance ("" for the
	// caller's); Task its task text.
	Instance string
	Task     string
	// Threads are create_threads' entries; empty means Count untitled,
	// promptless entries on the caller's instance.
	Threads []ThreadSpec
	// IncludeSubagents is t3_thread_list's includeSubagents.
	IncludeSubagents bool
	// Model and Options are delegate_task's target.model and
	// target.options (nil: none given); Driver its target.driverKind.
	Model   string
	Driver  string
	Options []Option
	// SendMode is t3_thread_send's mode ("" auto, steer); RunID the run
	// t3_thread_wait and t3_thread_interrupt name; Read t3_thread_read's
	// paging.
	SendMode string
	RunID    string
	Read     ReadArgs
	// Prompt, Title, Schedule (JSON, ParseSchedule), ScheduleID and
	// Enabled (nil: unchanged) are the scheduled-task tools' arguments.
	Prompt     string
	Title      string
	Schedule   string
	ScheduleID string
	Enabled    *bool
	// SourcePoint is t3_thread_fork's sourcePoint: latest_stable,
	// run:<runId> or checkpoint:<checkpointId> ("" asks for none: the
	// fork copies the source as it is, as the earlier cases have it).
	SourcePoint string
	// RunOrdinal and KeepFiles (restoreFiles false) are rollbackThread's.
	RunOrdinal int
	KeepFiles  bool
}

// ThreadSpec is one create_threads entry.
type ThreadSpec struct {
	Title    string
	Prompt   string
	Instance string
}

// More tools, served here and not sent by the worlds' agents: reads
// (task_status, t3_thread_read, t3_thread_list) need no live caller.
const (
	ToolTaskStatus = "task_status"
	ToolThreadFork = "t3_thread_fork"
	ToolThreadRead = "t3_thread_read"
	ToolThreadList = "t3_thread_list"
)

// Serves reports whether tool is an orchestrator tool served here beyond
// model.OrchestratorTools.
func Serves(tool string) bool {
	switch tool {
	case ToolTaskStatus, ToolThreadFork, ToolThreadRead, ToolThreadList, ToolCapabilities, ToolThreadWait,
		ToolListScheduled, ToolUpdateScheduled, ToolDeleteScheduled, ToolThreadRollback, ToolThreadTransfers:
		return true
	}
	return false
}

// IsRead reports whether an orchestrator tool only reads (no live caller
// needed).
func IsRead(tool string) bool {
	return tool == ToolTaskStatus || tool == ToolThreadRead || tool == ToolThreadList || tool == ToolCapabilities ||
		tool == ToolThreadWait || tool == ToolListScheduled || tool == ToolThreadTransfers
}

// Interrupted is the outcome of a call whose fiber was cancelled after a
// command committed (the caller sees no result).
const Interrupted = "interrupted"

// Answer is what a call produced: its outcome (Accepted, Replayed or an
// error code), the command id it dispatched and the result.
type Answer struct {
	Outcome   string
	CommandID string
	Result    store.Result
	// Message is a refusal's message (OrchestratorMcpFailure.message)
	// where the fidelity cases check it.
	Message string
	// Read, Wait, Caps and Schedules are the results of t3_thread_read,
	// t3_thread_wait, orchestrator_capabilities and the scheduled-task
	// tools (one task for schedule/update).
	Read      *ThreadRead
	Wait      *WaitResult
	Caps      *Capabilities
	Schedules []ScheduledTask
	// Transfers are t3_thread_transfers' context transfers.
	Transfers []store.Transfer
	// Effect names what an accepted command did: child (a delegated child
	// thread and task), threads, message, schedule, interrupt, update, or
	// dispose (a completion delivery disposed, which creates nothing).
	Effect string
}

// Effects an accepted command can have.
const (
	EffectChild     = "child"
	EffectThreads   = "threads"
	EffectMessage   = "message"
	EffectSchedule  = "schedule"
	EffectInterrupt = "interrupt"
	EffectUpdate    = "update"
	EffectDispose   = "dispose"
)

// Orchestrator is the orchestrator of one server process. Its tables are in
// the durable store; waits and child timers are in memory.
type Orchestrator struct {
	env   *model.Env
	rand  *sim.Rand
	st    *store.Store
	waits []*wait
	dead  bool
	// unflushed are the receipts the receipt-write-behind mutant has not
	// flushed yet: lost if the process dies.
	unflushed []*store.Receipt
	// unflushedRows are the schedule row updates the
	// schedule-row-write-behind mutant has not flushed.
	unflushedRows []*unflushedRow
	// unflushedTasks are the task rows the task-row-write-behind mutant
	// has not flushed.
	unflushedTasks []*store.Task
	uuids          int
	childEnds      sim.Slab[childEnd] // armChild's events

	// Interrupt interrupts the active run of a thread; it reports whether
	// there was one.
	Interrupt func(threadID string) bool
	// ChildDuration draws how long a delegated child works; ChildFails
	// whether it fails.
	ChildDuration func() time.Duration
	ChildFails    func() bool
	// StartRun starts a run of an idle thread for a dispatched message
	// (start_immediately) and returns its id ("" if none started).
	StartRun func(threadID string) string
	// FailCommand, if set, makes the dispatch of commandID fail before it
	// runs (a harness's broken orchestrator): no receipt, orchestration_error.
	FailCommand func(commandID string) bool
	// CancelAfter, if set, cancels the call after commandID committed (the
	// MCP call's fiber interrupted): it answers Interrupted.
	CancelAfter func(commandID string) bool
	// Nested is the chance that a delegated child delegates a task of its
	// own (then its child may too, MaxNestedDepth deep); 0 (the default)
	// never. The world sets it; the draws come from orchestrator/nested.
	Nested sim.Ratio
	nested *sim.Rand
	// Scheduling turns the scheduler on: schedule_task rows get a daily
	// slot that fires (scheduler.go); off (the default), rows only exist.
	// The world sets it; the draws come from orchestrator/scheduler.
	Scheduling bool
	sched      *sim.Rand
	armed      []int32 // by store.ScheduleSlot of a schedule's id: the generation of its slot timer
	// Deliveries turns delegated completion delivery on (delivery.go):
	// cohorts, reservations, wake offers and delivery runs. Off (the
	// default), a task's Delivery is one flag.
	Deliveries bool
	worker     bool
	dlv        *sim.Rand
	// Providers is the provider registry orchestrator_capabilities and
	// target resolution read (nil: the worlds, which pick no targets).
	Providers []Provider
	// Committed, if set, is called after a command of a create_threads
	// entry committed, before the entry's prompt (a harness observing the
	// thread lock the create holds).
	Committed func(commandID string)
	locks     map[string]bool
	archives  []string
	// ArchiveResults are the outcomes of Archive calls that ran, in order
	// (queued ones when their lock was released).
	ArchiveResults []string
	started        time.Duration
	// life is what the scheduler's slot timers hold instead of the
	// orchestrator: Kill cuts it, so a dead process's timers (a daily
	// slot is up to 24 h away, and every boot arms every row again) no
	// longer keep its whole server reachable until they fire and find it
	// dead.
	life *orchLife
	// armTickets are the tickets of the slot timers armed (some of them
	// fired), for Kill (ghostArmTimers); armTicketsPruned is how many were
	// left the last time fired ones were dropped.
	armTickets       []sim.Ticket
	armTicketsPruned int
}

// orchLife points at a live orchestrator; nil once it was killed.
type orchLife struct{ o *Orchestrator }

const actor = "orchestrator"

// New returns the orchestrator of a server process over st.
func New(env *model.Env, st *store.Store) *Orchestrator {
	o := &Orchestrator{env: env, rand: env.Rand(actor), nested: env.Rand(actor + "/nested"), st: st,
		sched: env.Rand(actor + "/scheduler"), started: env.Now()}
	o.life = &orchLife{o}
	o.ChildDuration = func() time.Duration { return o.rand.Duration("child-duration", 30*time.Second, 90*time.Minute) }
	o.ChildFails = func() bool { return o.rand.Chance("child-fails", sim.Per(1, 10)) }
	return o
}

// Kill marks the orchestrator's process dead: waits and timers vanish
// (and with them their obligations: the calls died with the process).
func (o *Orchestrator) Kill() {
	o.dead = true
	o.life.o = nil
	o.ghostArmTimers()
	for _, rec := range o.unflushed {
		if i := slices.Index(o.st.Receipts, rec); i >= 0 {
			o.st.Receipts = slices.Delete(o.st.Receipts, i, i+1)
		}
	}
	o.unflushed = nil
	for _, t := range o.unflushedTasks {
		if i := slices.Index(o.st.Tasks, t); i >= 0 {
			o.st.Tasks = slices.Delete(o.st.Tasks, i, i+1)
		}
	}
	o.unflushedTasks = nil
	o.loseUnflushedRows()
	for _, w := range o.waits {
		o.env.Obligations.Discharge(WaitReturns, w.entity)
	}
}

// Recover is delegated-task recovery at startup: tasks whose children are
// still running keep running; their completion is re-armed.
func (o *Orchestrator) Recover() {
	for _, t := range o.st.Tasks {
		if t.Status == store.TaskRunning {
			o.armChild(t)
		}
	}
}

func (o *Orchestrator) fresh() string {
	o.uuids++
	var b [48]byte
	return o.env.Str().Bytes(strconv.AppendInt(append(append(b[:0], o.rand.Hex("request-uuid", 8)...), '-'), int64(o.uuids), 10))
}

// idOf is fmt.Sprintf(prefix+"%s:%s:%d", ns, k, i), built by str.
func idOf(str *sim.Strings, prefix, ns, k string, i int) string {
	var buf [128]byte
	b := append(append(append(append(append(buf[:0], prefix...), ns...), ':'), k...), ':')
	return str.Bytes(strconv.AppendInt(b, int64(i), 10))
}

// cat is the concatenation of parts, built by the run's strings.
func (o *Orchestrator) cat(parts ...string) string {
	var buf [128]byte
	b := buf[:0]
	for _, p := range parts {
		b = append(b, p...)
	}
	return o.env.Str().Bytes(b)
}

// waitEntity is fmt.Sprintf("wait #%d of %s on %s", n, thread, task) in
// one allocation.
func waitEntity(n int, thread, task string) string {
	b := make([]byte, 0, len(thread)+len(task)+30)
	b = strconv.AppendInt(append(b, "wait #"...), int64(n), 10)
	return string(append(append(append(append(b, " of "...), thread...), " on "...), task...))
}

// Dispatch serves one call. dispatched is called once the call's command
// has been dispatched (or refused); done is called with the tool result:
// at once, or, for delegate_task in wait mode, when the wait ends.
func (o *Orchestrator) Dispatch(c Call, dispatched func(Answer), done func(Answer, model.ToolResult)) {
	o.DispatchTo(c, &funcReplier{dispatched, done})
}

// DispatchReplier gets a dispatched call's answers: Dispatched once its command
// has been dispatched (or refused), Done with its tool result. The
// server's call object implements it, so a dispatch needs no closures.
// (model.Replier is the agent-facing half: one tool result per call.)
type DispatchReplier interface {
	Dispatched(Answer)
	Done(Answer, model.ToolResult)
}

// funcReplier is Dispatch's two functions as a DispatchReplier.
type funcReplier struct {
	dispatched func(Answer)
	done       func(Answer, model.ToolResult)
}

func (f *funcReplier) Dispatched(a Answer)                 { f.dispatched(a) }
func (f *funcReplier) Done(a Answer, res model.ToolResult) { f.done(a, res) }

// DispatchTo is Dispatch answering to r.
func (o *Orchestrator) DispatchTo(c Call, r DispatchReplier) {
	if c.Tool == ToolThreadRollback {
		a := o.rollback(c)
		r.Dispatched(a)
		r.Done(a, model.ToolResult{Outcome: a.Outcome, Result: a.Result})
		return
	}
	ns := o.encNamespace(c.Scope)
	caller := c.Scope.Thread.ThreadID
	key := c.ClientRequestID
	if key == "" {
		key = o.fresh() // without clientRequestId a call is never idempotent
		key = o.keylessKey(c, key)
	}
	k := Enc(key)
	// cmd is "command:mcp:NS:OP:REST..." (or "command:REST..." keyed by
	// clientRequestId), built by the run's strings (no allocation of its
	// own).
	cmd := func(op string, rest ...string) string {
		var buf [192]byte
		b := buf[:0]
		keyed := o.env.Profile.Has(ReceiptKeyedByClientRequestID) && c.ClientRequestID != ""
		if keyed {
			b = append(b, "command:"...)
		} else {
			b = append(b, "command:mcp:"...)
			b = append(b, ns...)
			b = append(b, ':')
			b = append(b, op...)
		}
		for i, r := range rest {
			if i > 0 || !keyed {
				b = append(b, ':')
			}
			b = append(b, r...)
		}
		return o.env.Str().Bytes(b)
	}
	reply := func(a Answer) {
		r.Dispatched(a)
		r.Done(a, model.ToolResult{Outcome: a.Outcome, Result: a.Result})
	}
	switch c.Tool {
	case model.ToolDelegateTask:
		parent := o.st.Thread(caller)
		if parent == nil {
			parent = &store.Thread{ID: caller, Instance: c.Scope.Thread.ProviderInstanceID}
		}
		tgt, code, msg := o.resolveTarget(parent, c.Extra.Instance, c.Extra.Driver, c.Extra.Model, c.Extra.Options)
		if code != "" {
			// Refused before any child thread is created.
			reply(Answer{Outcome: code, Message: msg})
			return
		}
		id := cmd("delegate-task", k)
		a := o.dispatch(id, caller, EffectChild, c, func() (store.Result, bool) {
			child := o.cat("thread:delegated-task:", id)
			instance := c.Scope.Thread.ProviderInstanceID
			if tgt.instance != "" {
				instance = tgt.instance
			}
			t := store.NewRow(&o.st.Rows.Tasks, store.Task{ID: o.cat("node:delegated-task:", id), ParentThread: caller, ChildThreadID: child,
				CommandID: id, Status: store.TaskRunning, Delivery: "pending", Text: c.Extra.Task,
				CompletionWake: WakeAlways})
			if c.Mode == "wait" {
				t.CompletionWake = WakeSettledOnly
			}
			if r := o.st.ActiveRun(caller); r != nil {
				t.ParentRunID = r.ID
			}
			root := caller
			if p := o.st.Thread(caller); p != nil && p.RootParent != "" {
				root = p.RootParent
			}
			o.st.Threads = append(o.st.Threads, store.NewRow(&o.st.Rows.Threads, store.Thread{ID: child, ProjectID: o.projectOf(caller),
				Instance: instance, ParentThread: caller, CreatedBy: "agent", Relationship: "subagent", RootParent: root,
				CreationSource: "mcp", Model: tgt.model, ModelOptions: tgt.options}))
			// The child receives exactly the task text, never the parent's prompt.
			o.st.Messages = append(o.st.Messages, store.NewRow(&o.st.Rows.Messages, store.Message{ID: o.cat("message:delegated-task:", id), ThreadID: child,
				CommandID: id, Text: c.Extra.Task, Sender: caller}))
			o.st.Tasks = append(o.st.Tasks, t)
			o.env.Obligations.Open(TaskSettles, t.ID, "delegate_task accepted")
			if o.env.Profile.Has(TaskRowWriteBehind) {
				// The wrong fix: the task row is readable in the process at
				// once and durable a moment later; Kill takes it out.
				o.unflushedTasks = append(o.unflushedTasks, t)
				o.env.After(TaskRowWriteBehindDelay, func() {
					if i := slices.Index(o.unflushedTasks, t); i >= 0 {
						o.unflushedTasks = slices.Delete(o.unflushedTasks, i, i+1)
					}
				})
			}
			o.armChild(t)
			o.spawnNested(t, 1)
			return store.Result{TaskID: t.ID, ChildThreadID: child, Status: t.Status, InstanceID: instance}, true
		})
		if t := o.st.Task(a.Result.TaskID); t != nil && (a.Outcome == Accepted || a.Outcome == Replayed) {
			// The tool answers readTask: the task as it is now (a replay's
			// receipt has the ids, not the current status).
			a.Result.Status, a.Result.Summary = t.Status, t.Summary
		}
		if a.Outcome != Accepted && a.Outcome != Replayed || c.Mode != "wait" {
			reply(a)
			return
		}
		r.Dispatched(a)
		o.wait(c, a, k, ns, r)
	case model.ToolCreateThreads:
		specs := c.Extra.Threads
		n := len(specs)
		if n == 0 {
			n = c.Count
		}
		if n < 1 || n > MaxBatchThreads {
			reply(Answer{Outcome: ErrInvalidRequest})
			return
		}
		payload := batchPayload(n, specs)
		if first0 := cmd("create-thread", k, "0"); o.batchConflict(first0, payload) {
			reply(Answer{Outcome: ErrCommandIDConflict, CommandID: first0})
			return
		}
		var res store.Result
		outcome := Replayed
		effect := ""
		first := ""
		for i := 0; i < n; i++ {
			spec := ThreadSpec{Title: "created"}
			if i < len(specs) {
				spec = specs[i]
			}
			id := cmd("create-thread", k, fmt.Sprint(i))
			if first == "" {
				first = id
			}
			a := o.dispatch(id, caller, EffectThreads, c, func() (store.Result, bool) {
				tid := idOf(o.env.Str(), "thread:mcp:", ns, k, i)
				t := store.NewRow(&o.st.Rows.Threads, store.Thread{ID: tid, ProjectID: o.projectOf(caller), Instance: c.Scope.Thread.ProviderInstanceID,
					CreatedBy: "agent", CreationSource: "mcp", Title: spec.Title})
				if spec.Instance != "" {
					t.Instance = spec.Instance
				}
				if p := o.st.Thread(caller); p != nil {
					t.Branch, t.WorktreePath = p.Branch, p.WorktreePath
				}
				o.st.Threads = append(o.st.Threads, t)
				return store.Result{ThreadIDs: []string{tid}}, true
			})
			if a.Outcome != Accepted && a.Outcome != Replayed {
				reply(a)
				return
			}
			if a.Outcome == Replayed && o.entryConflict(id, entryPayload(spec)) {
				reply(Answer{Outcome: ErrCommandIDConflict, CommandID: id, Result: res})
				return
			}
			if a.Outcome == Accepted {
				outcome, effect = Accepted, EffectThreads
				o.stamp(id, payload, entryPayload(spec))
			}
			res.ThreadIDs = append(res.ThreadIDs, a.Result.ThreadIDs...)
			if o.CancelAfter != nil && o.CancelAfter(id) {
				reply(Answer{Outcome: Interrupted, CommandID: first, Result: res})
				return
			}
			tid := a.Result.ThreadIDs[0]
			// The create and its prompt run under the new thread's lock: a
			// concurrent archive queues behind it (OM-02).
			o.lock(tid)
			if o.Committed != nil {
				o.Committed(id)
			}
			targetRun := ""
			if spec.Prompt != "" {
				// message.dispatch(start_immediately): the create command id
				// with create-thread replaced by dispatch-thread.
				mid := cmd("dispatch-thread", k, fmt.Sprint(i))
				m := o.dispatch(mid, caller, EffectMessage, c, func() (store.Result, bool) {
					t := o.st.Thread(tid)
					if t == nil || t.Archived {
						return store.Result{}, false
					}
					msg := store.NewRow(&o.st.Rows.Messages, store.Message{ID: idOf(o.env.Str(), "message:mcp:", ns, k, i), ThreadID: tid, CommandID: mid,
						Text: spec.Prompt, Sender: caller})
					if o.StartRun != nil && t.ActiveRunID == "" {
						msg.RunID = o.StartRun(tid)
					}
					o.st.Messages = append(o.st.Messages, msg)
					return store.Result{MessageID: msg.ID, RunID: msg.RunID}, true
				})
				if m.Outcome != Accepted && m.Outcome != Replayed {
					o.unlock(tid)
					reply(Answer{Outcome: m.Outcome, CommandID: mid, Result: res})
					return
				}
				targetRun = m.Result.RunID
				if m.Outcome == Accepted {
					outcome = Accepted
					if effect == "" {
						effect = EffectMessage
					}
				}
			}
			rid := cmd("record-created-thread", k, fmt.Sprint(i))
			o.dispatch(rid, caller, "", c, func() (store.Result, bool) {
				o.st.Items = append(o.st.Items, store.NewRow(&o.st.Rows.Items, store.ThreadItem{ThreadID: caller, Kind: "thread_created", Ref: tid, CommandID: rid,
					TargetRun: targetRun}))
				return store.Result{ThreadIDs: []string{tid}}, true
			})
			o.unlock(tid)
		}
		reply(Answer{Outcome: outcome, CommandID: first, Result: res, Effect: effect})
	case model.ToolScheduleTask:
		kind, every := "", int64(0)
		if c.Extra.Schedule != "" {
			var err error
			if kind, every, err = ParseSchedule(c.Extra.Schedule); err != nil {
				reply(Answer{Outcome: ErrInvalidRequest, Message: err.Error()})
				return
			}
		}
		id := cmd("schedule-task", k)
		a := o.dispatch(id, caller, EffectSchedule, c, func() (store.Result, bool) {
			s := store.NewRow(&o.st.Rows.Schedules, store.Schedule{ID: o.cat("scheduled-task:", id), ThreadID: caller, CommandID: id})
			if c.Extra.Prompt != "" {
				// scheduleTask @ 04058804: bound to the calling thread (a
				// thread caller in its own project), the caller's model, the
				// derived title, enabled unless told otherwise.
				s.Title, s.Prompt, s.ProjectID = ScheduleTitle(c.Extra.Title, c.Extra.Prompt), c.Extra.Prompt, o.projectOf(caller)
				s.Kind, s.EveryMs, s.CreatedBy, s.CreationSource = kind, every, "agent", "mcp"
				s.Enabled = c.Extra.Enabled == nil || *c.Extra.Enabled
				if p := o.st.Thread(caller); p != nil {
					s.Model = p.Model
				}
			}
			o.st.Schedules = append(o.st.Schedules, s)
			o.newSchedule(s)
			return store.Result{ScheduleID: s.ID}, true
		})
		if s := o.schedule(a.Result.ScheduleID); s != nil {
			a.Schedules = []ScheduledTask{scheduleView(s)}
		}
		reply(a)
	case ToolListScheduled, ToolUpdateScheduled, ToolDeleteScheduled:
		reply(o.scheduledTool(c, caller))
	case ToolCapabilities:
		caps := o.capabilities(caller)
		reply(Answer{Outcome: "ok", Caps: &caps})
	case ToolThreadWait:
		o.waitThread(c, r)
	case model.ToolThreadSend:
		if o.st.Thread(c.Target) == nil {
			reply(Answer{Outcome: ErrThreadNotFound})
			return
		}
		id := cmd("thread-send", k)
		if c.Extra.SendMode == "steer" {
			// sendToThread mode steer: the message joins the active run
			// (ThreadManagementNoSteerableRunError -> thread_not_sendable).
			run := o.st.ActiveRun(c.Target)
			if run == nil {
				reply(Answer{Outcome: ErrThreadNotSendable, Message: "The thread has no steerable run."})
				return
			}
			reply(o.dispatch(id, caller, EffectMessage, c, func() (store.Result, bool) {
				m := store.NewRow(&o.st.Rows.Messages, store.Message{ID: o.cat("message:mcp:", ns, ":thread-send:", k), ThreadID: c.Target, CommandID: id,
					Text: c.Extra.Prompt, Sender: caller, RunID: run.ID})
				o.st.Messages = append(o.st.Messages, m)
				return store.Result{MessageID: m.ID, RunID: run.ID, Status: run.Status, Delivery: "steered"}, true
			}))
			return
		}
		reply(o.dispatch(id, caller, EffectMessage, c, func() (store.Result, bool) {
			m := store.NewRow(&o.st.Rows.Messages, store.Message{ID: o.cat("message:mcp:", ns, ":thread-send:", k), ThreadID: c.Target, CommandID: id,
				Text: o.cat("message from ", caller), Sender: caller})
			o.st.Messages = append(o.st.Messages, m)
			return store.Result{MessageID: m.ID, Status: "queued"}, true
		}))
	case model.ToolThreadUpdate:
		t := o.st.Thread(c.Target)
		if t == nil {
			reply(Answer{Outcome: ErrThreadNotFound})
			return
		}
		id := cmd("thread-update", Enc(c.Target), Enc(c.Action), k)
		reply(o.dispatch(id, caller, EffectUpdate, c, func() (store.Result, bool) {
			t.Title = "renamed by " + caller
			return store.Result{Status: "updated"}, true
		}))
	case model.ToolThreadInterrupt:
		if status, ok := o.runStatus(c.Target, c.Extra.RunID); ok && terminalRun(status) {
			// interruptThread of a named run already terminal
			// (already_terminal): its status.
			reply(Answer{Outcome: "ok", Result: store.Result{RunID: c.Extra.RunID, Status: status}})
			return
		}
		if o.st.ActiveRun(c.Target) == nil {
			reply(Answer{Outcome: NoActiveRun, Result: store.Result{Status: NoActiveRun}})
			return
		}
		id := cmd("thread-interrupt", k)
		run := o.st.ActiveRun(c.Target)
		reply(o.dispatch(id, caller, EffectInterrupt, c, func() (store.Result, bool) {
			if o.Interrupt == nil || !o.Interrupt(c.Target) {
				return store.Result{}, false
			}
			return store.Result{InterruptedRunID: run.ID, Status: "interrupt_requested"}, true
		}))
	case model.ToolTaskCancel:
		t := o.st.Task(c.TaskID)
		if t == nil || t.ParentThread != caller {
			reply(Answer{Outcome: ErrTaskNotFound})
			return
		}
		if t.Status != store.TaskRunning {
			if o.cascades(false) {
				// The child's published result stays terminal; the work
				// it delegated is stopped all the same.
				o.stopDescendants(t)
			}
			id := cmd("cancel-task-completion-delivery", k)
			reply(o.dispatch(id, caller, EffectDispose, c, func() (store.Result, bool) {
				o.dispose(t)
				return store.Result{TaskID: t.ID, Status: t.Status}, true
			}))
			return
		}
		if t.Held {
			// cancelTask @ 04058804: a task with neither a running turn nor
			// delegates (one awaiting a restart) has no interruptible child
			// run; it is refused before anything is stopped, and keeps its
			// delivery.
			reply(Answer{Outcome: ErrTaskNotCancellable,
				Message: fmt.Sprintf("Delegated task %s has no interruptible child run.", t.ID)})
			return
		}
		// Interrupt the child's run, then dispose its completion delivery
		// (best effort) under the same command id a retry on the now
		// terminal task dispatches, so a retry replays it.
		id := cmd("cancel-task", k)
		a := o.dispatch(id, caller, EffectInterrupt, c, func() (store.Result, bool) {
			o.settle(t, store.TaskCancelled)
			if o.cascades(true) {
				o.stopDescendants(t)
			}
			return store.Result{TaskID: t.ID, Status: "cancel_requested"}, true
		})
		if a.Outcome != Accepted && a.Outcome != Replayed {
			// The child interrupt failed: the task is not cancellable now
			// and its completion delivery is left for its terminal result.
			reply(Answer{Outcome: ErrTaskNotCancellable, CommandID: id})
			return
		}
		o.dispatch(cmd("cancel-task-completion-delivery", k), caller, EffectDispose, c, func() (store.Result, bool) {
			o.dispose(t)
			return store.Result{TaskID: t.ID, Status: t.Status}, true
		})
		reply(a)
	case ToolTaskStatus:
		t := o.st.Task(c.TaskID)
		if t == nil || t.ParentThread != caller {
			reply(Answer{Outcome: ErrTaskNotFound})
			return
		}
		res := o.taskView(t)
		if t.Status != store.TaskRunning && (t.Delivery == DeliveryPending || t.Delivery == DeliveryClaimed) {
			// Reading a terminal result acknowledges its completion
			// delivery, under a fresh command id each time (never keyed by
			// the clientRequestId).
			ack := strings.Join([]string{"command:mcp", ns, "task-status-acknowledge", o.fresh()}, ":")
			a := o.dispatch(ack, caller, "", c, func() (store.Result, bool) {
				observer := ""
				if r := o.st.ActiveRun(caller); r != nil {
					observer = r.ID
				}
				o.Acknowledge(t, observer)
				return store.Result{TaskID: t.ID}, true
			})
			if a.Outcome != Accepted {
				reply(Answer{Outcome: a.Outcome, CommandID: ack})
				return
			}
			res.Delivery = t.Delivery
			reply(Answer{Outcome: "ok", CommandID: ack, Result: res})
			return
		}
		reply(Answer{Outcome: "ok", Result: res})
	case ToolThreadFork:
		src := c.Target
		if src == "" {
			src = caller
		}
		from := o.st.Thread(src)
		if from == nil || from.ProjectID != o.projectOf(caller) {
			reply(Answer{Outcome: ErrThreadNotFound})
			return
		}
		sourceRun := ""
		if c.Extra.SourcePoint != "" {
			run, code, msg := o.forkSourceRun(src, c.Extra.SourcePoint)
			if code != "" {
				reply(Answer{Outcome: code, Message: msg})
				return
			}
			sourceRun = run
		}
		id := cmd("thread-fork", k)
		reply(o.dispatch(id, caller, EffectThreads, c, func() (store.Result, bool) {
			tid := fmt.Sprintf("thread:mcp-fork:%s:%s", ns, k)
			if o.st.Thread(tid) != nil {
				// The derived target id is taken (even by a deleted
				// thread): the fork command is refused and the existing
				// thread is left as it is.
				return store.Result{}, false
			}
			o.st.Threads = append(o.st.Threads, &store.Thread{ID: tid, ProjectID: from.ProjectID, Instance: from.Instance,
				CreatedBy: "agent", CreationSource: "mcp", Title: "fork of " + src, Branch: from.Branch, WorktreePath: from.WorktreePath,
				ForkedFrom: src, ForkedItems: len(o.timeline(src)), Model: from.Model})
			tr := &store.Transfer{ID: "context-transfer:" + id, Kind: "fork", SourceThreadID: src, TargetThreadID: tid,
				SourceRunID: sourceRun, Status: "pending"}
			o.st.Transfers = append(o.st.Transfers, tr)
			return store.Result{ThreadIDs: []string{tid}, TransferID: tr.ID, SourceRunID: sourceRun}, true
		}))
	case ToolThreadTransfers:
		thread := c.Target
		if thread == "" {
			thread = caller
		}
		if t := o.st.Thread(thread); t == nil || t.ProjectID != o.projectOf(caller) {
			reply(Answer{Outcome: ErrThreadNotFound})
			return
		}
		var out []store.Transfer
		for _, tr := range o.st.Transfers {
			if tr.SourceThreadID == thread || tr.TargetThreadID == thread {
				out = append(out, *tr)
			}
		}
		reply(Answer{Outcome: "ok", Transfers: out})
	case ToolThreadRead:
		t := o.st.Thread(c.Target)
		if t == nil || t.ProjectID != o.projectOf(caller) {
			reply(Answer{Outcome: ErrThreadNotFound})
			return
		}
		read := o.ReadThread(t.ID, c.Extra.Read)
		if task := o.taskOfChild(t.ID); task != nil && task.ParentThread == caller && c.Extra.Read.TextOffset == 0 &&
			(task.Delivery == DeliveryPending || task.Delivery == DeliveryClaimed) &&
			pageIncludesTerminalResult(task, read, c.Extra.Read.MaxChars) {
			// A direct read of the child's whole terminal result
			// acknowledges its delivery (thread-read-acknowledge, a fresh
			// request key), as task_status does.
			ack := strings.Join([]string{"command:mcp", ns, "thread-read-acknowledge", o.fresh()}, ":")
			o.dispatch(ack, caller, "", c, func() (store.Result, bool) {
				observer := ""
				if r := o.st.ActiveRun(caller); r != nil {
					observer = r.ID
				}
				o.Acknowledge(task, observer)
				return store.Result{TaskID: task.ID}, true
			})
		}
		reply(Answer{Outcome: "ok", Result: store.Result{ThreadIDs: []string{t.ID}, RunID: t.ActiveRunID}, Read: &read})
	case ToolThreadList:
		var ids []string
		project := o.projectOf(caller)
		for _, t := range o.st.Threads {
			if t.ProjectID != project || t.Archived || (!c.Extra.IncludeSubagents && t.Relationship == "subagent") {
				continue
			}
			ids = append(ids, t.ID)
		}
		reply(Answer{Outcome: "ok", Result: store.Result{ThreadIDs: ids}})
	default:
		reply(Answer{Outcome: ErrInvalidRequest})
	}
}

// taskView is task_status's view of a task: its status and summary, the
// newest terminal run of the child (the child's own work, once it
// settled) with that run's status, and whether a follow-up run of the
// child thread is pending.
func (o *Orchestrator) taskView(t *store.Task) store.Result {
	res := store.Result{TaskID: t.ID, ChildThreadID: t.ChildThreadID, Status: t.Status, Summary: t.Summary,
		Delivery: t.Delivery}
	if t.Status != store.TaskRunning {
		res.LatestTerminalRunID, res.LatestTerminalStatus = "run:"+t.ID, t.Status
	}
	for _, r := range o.st.RunsOf(t.ChildThreadID) {
		if r.Status == store.RunRunning || r.Status == store.RunQueued && !r.QueueHeld {
			// hasPendingChildRuns @ 04058804: a later run not terminal (a
			// queued run a queue Stop holds waits for the user: not pending).
			res.HasPendingChildRuns = true
			continue
		}
		if !terminalRun(r.Status) {
			continue
		}
		// The status stays the task's; the newest terminal child run is
		// reported beside it (latestTerminalRunId, latestTerminalStatus).
		res.LatestTerminalRunID, res.LatestTerminalStatus = r.ID, r.Status
	}
	return res
}

// ReceiptWriteBehindDelay is how long the receipt-write-behind mutant's
// receipt trails its effect (a write-behind flush interval).
const ReceiptWriteBehindDelay = 50 * time.Millisecond

// dispatch is dispatchWithReceipt: replay an accepted receipt, refuse a
// rejected one, else execute and store the receipt (no effect = dispatch
// error).
func (o *Orchestrator) dispatch(commandID, caller, effect string, c Call, exec func() (store.Result, bool)) Answer {
	aggregate := aggregateOf(o.env.Str(), c, caller)
	if r := o.st.Receipt(commandID); r != nil {
		if r.Status == store.ReceiptRejected {
			return Answer{Outcome: ErrPreviouslyRejected, CommandID: commandID}
		}
		if o.env.Profile.Fixed(ReceiptChecksAggregate) && r.Aggregate != aggregate &&
			!(o.env.Profile.Has(ReceiptChecksCallerOnly) && r.ThreadID == caller) {
			return Answer{Outcome: ErrCommandIDConflict, CommandID: commandID}
		}
		return Answer{Outcome: Replayed, CommandID: commandID, Result: r.Result.Result()}
	}
	if o.FailCommand != nil && o.FailCommand(commandID) {
		return Answer{Outcome: ErrDispatch, CommandID: commandID}
	}
	res, ok := exec()
	if !ok {
		return Answer{Outcome: ErrDispatch, CommandID: commandID}
	}
	rec := store.NewRow(&o.st.Rows.Receipts, store.Receipt{CommandID: commandID, ThreadID: caller, Tool: c.Tool,
		Key: c.ClientRequestID, Aggregate: aggregate, Status: store.ReceiptAccepted, Result: o.st.Rows.PackResult(res)})
	o.st.Receipts = append(o.st.Receipts, rec)
	if o.env.Profile.Has(ReceiptWriteBehind) {
		// The wrong fix: the effect is committed now, its receipt sits in
		// the process's write-behind cache (readable at once) and is
		// flushed a moment later; a process that dies in between loses it
		// (Kill takes the unflushed receipts out of the store).
		o.unflushed = append(o.unflushed, rec)
		o.env.After(ReceiptWriteBehindDelay, func() {
			if i := slices.Index(o.unflushed, rec); i >= 0 {
				o.unflushed = slices.Delete(o.unflushed, i, i+1)
			}
		})
	}
	return Answer{Outcome: Accepted, CommandID: commandID, Result: res, Effect: effect}
}

// aggregateOf is what c's command addresses: the target thread of a send,
// interrupt or update, the task of a cancel, else the caller's thread.
// The string is built by str (the run's strings).
func aggregateOf(str *sim.Strings, c Call, caller string) string {
	switch c.Tool {
	case model.ToolThreadSend, model.ToolThreadInterrupt, model.ToolThreadUpdate, ToolThreadRollback:
		return str.Concat("thread:", c.Target)
	case model.ToolTaskCancel:
		return str.Concat("task:", c.TaskID)
	}
	return str.Concat("thread:", caller)
}

func (o *Orchestrator) projectOf(threadID string) string {
	if t := o.st.Thread(threadID); t != nil {
		return t.ProjectID
	}
	return ""
}

func (o *Orchestrator) armChild(t *store.Task) {
	if t.CompletesAt == 0 {
		t.CompletesAt = o.env.Now() + o.ChildDuration()
	}
	c := o.childEnds.New()
	*c = childEnd{o: o, t: t}
	o.env.RunAfter(t.CompletesAt-o.env.Now(), c)
}

// childEnd is the end of a delegated child's work (armChild), its own event.
type childEnd struct {
	o *Orchestrator
	t *store.Task
}

func (c *childEnd) Run() {
	o, t := c.o, c.t
	if o.dead || t.Status != store.TaskRunning {
		return
	}
	status := store.TaskCompleted
	if o.ChildFails() {
		status = store.TaskFailed
	}
	if status == store.TaskCompleted {
		t.Summary = "answer to: " + t.Text
	}
	o.settle(t, status)
}

func (o *Orchestrator) settle(t *store.Task, status string) {
	t.Status = status
	o.taskTerminal(t)
	o.env.Obligations.Discharge(TaskSettles, t.ID)
	o.env.Emit(actor, "task.settled", status, sim.A("task", t.ID), sim.A("parent", t.ParentThread))
	for _, w := range o.waits {
		if w.task == t.ID && !w.done {
			// The wait loop polls every 50 ms: it sees the result on the
			// first poll after the settle. One wake at that tick stands in
			// for the polls before it.
			elapsed := o.env.Now() - w.start
			ticks := (elapsed + TaskPollInterval - 1) / TaskPollInterval
			w := w
			o.env.After(w.start+ticks*TaskPollInterval-o.env.Now(), func() { o.finishWait(w, false) })
		}
	}
}

type wait struct {
	entity   string
	task     string
	start    time.Duration
	answer   Answer
	key, ns  string
	call     Call
	done     bool
	deadline sim.Timer
	reply    DispatchReplier
}

// WaitBudget returns how long a delegate_task wait with timeoutMs timeout
// (0: none given) blocks: min(cap, max(1 ms, timeout or the default)), with
// the V2 branch's 10 min / 60 min or, with BoundedDelegateWait, PR #11997's
// 30 s / 45 s.
func WaitBudget(p model.Profile, timeout time.Duration) time.Duration {
	def, limit := DefaultWaitTimeout, MaxWaitTimeout
	if p.Fixed(BoundedDelegateWait) {
		def, limit = BoundedDefaultWait, BoundedMaxWait
		if p.Has(OnlyDefaultWaitBounded) {
			limit = MaxWaitTimeout
		}
	}
	if timeout <= 0 {
		timeout = def
	}
	return min(limit, max(time.Millisecond, timeout))
}

// wait blocks a delegate_task mode:"wait" call until its task settles or
// its WaitBudget runs out.
func (o *Orchestrator) wait(c Call, a Answer, k, ns string, done DispatchReplier) {
	budget := WaitBudget(o.env.Profile, c.Timeout)
	o.uuids++
	w := &wait{task: a.Result.TaskID, start: o.env.Now(), answer: a, key: k, ns: ns, call: c, reply: done,
		entity: waitEntity(o.uuids, c.Scope.Thread.ThreadID, a.Result.TaskID)}
	o.env.Obligations.Open(WaitReturns, w.entity, "delegate_task mode wait")
	if t := o.st.Task(w.task); t != nil && t.Status != store.TaskRunning {
		o.waits = append(o.waits, w)
		o.finishWait(w, false)
		return
	}
	o.waits = append(o.waits, w)
	w.deadline = o.env.Clock.AfterFunc(budget, func() { o.finishWait(w, true) })
}

func (o *Orchestrator) finishWait(w *wait, timedOut bool) {
	if o.dead || w.done {
		return
	}
	w.done = true
	o.env.Obligations.Discharge(WaitReturns, w.entity)
	if w.deadline != nil {
		w.deadline.Stop()
	}
	for i, x := range o.waits {
		if x == w {
			o.waits = append(o.waits[:i], o.waits[i+1:]...)
			break
		}
	}
	res := model.ToolResult{Outcome: w.answer.Outcome, Result: w.answer.Result}
	t := o.st.Task(w.task)
	if t != nil {
		res.Status, res.Summary = t.Status, t.Summary
	}
	outcome := "settled"
	if timedOut {
		// The timeout upgrade: the child keeps running and will wake the
		// parent when it settles. Failures here are only logged upstream.
		id := strings.Join([]string{"command:mcp", w.ns, "delegate-task-wake-policy", w.key}, ":")
		o.dispatch(id, w.call.Scope.Thread.ThreadID, EffectUpdate, w.call, func() (store.Result, bool) {
			if t != nil {
				o.SetWakePolicy(t, WakeAlways)
			}
			return w.answer.Result, true
		})
		res.WaitTimedOut = true
		outcome = "waitTimedOut"
	} else if t != nil && o.Deliveries {
		// waitForTask reads the terminal task with acknowledgeTerminal
		// (OrchestratorMcpService @ 04058804).
		observer := ""
		if r := o.st.ActiveRun(w.call.Scope.Thread.ThreadID); r != nil {
			observer = r.ID
		}
		o.Acknowledge(t, observer)
	} else if t != nil && t.Delivery == "pending" {
		t.Delivery = "delivered"
	}
	o.env.Emit(actor, "delegate_task.wait", outcome, sim.A("thread", w.call.Scope.Thread.ThreadID), sim.A("task", w.task))
	w.reply.Done(w.answer, res)
}
