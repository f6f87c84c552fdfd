package model

import (
	"time"

	"github.com/orchsim/orchsim/model/store"
)

// Preview tool names (the preview MCP toolkit and previewControls).
const (
	ToolPreviewOpen     = "preview_open"
	ToolPreviewNavigate = "preview_navigate"
	ToolPreviewClick    = "preview_click"
	ToolPreviewSnapshot = "preview_snapshot"
	ToolPreviewClose    = "t3_preview_close"
	// ToolPreviewEvaluate and ToolPreviewWaitFor run on a client host
	// (a desktop or mobile app) through the PreviewAutomationBroker; the
	// call's Timeout is preview_wait_for's timeoutMs (0: the default).
	ToolPreviewEvaluate = "preview_evaluate"
	ToolPreviewWaitFor  = "preview_wait_for"
)

// Orchestrator tool names (OrchestratorMcpService, ThreadMetadataMcpService).
const (
	ToolDelegateTask    = "delegate_task"
	ToolCreateThreads   = "create_threads"
	ToolScheduleTask    = "schedule_task"
	ToolThreadSend      = "t3_thread_send"
	ToolThreadUpdate    = "t3_thread_update"
	ToolThreadInterrupt = "t3_thread_interrupt"
	ToolTaskCancel      = "task_cancel"
)

// OrchestratorTools lists the orchestrator tools that take a clientRequestId.
var OrchestratorTools = []string{ToolDelegateTask, ToolCreateThreads, ToolScheduleTask, ToolThreadSend,
	ToolThreadUpdate, ToolThreadInterrupt, ToolTaskCancel}

// IsOrchestratorTool reports whether tool is one of OrchestratorTools.
func IsOrchestratorTool(tool string) bool {
	for _, t := range OrchestratorTools {
		if t == tool {
			return true
		}
	}
	return false
}

// ToolCall is one MCP tools/call as an agent sends it.
type ToolCall struct {
	Tool  string
	TabID string // explicit tabId, or ""
	URL   string

	// ClientRequestID is the idempotency key ("" when the agent sent none).
	ClientRequestID string
	// Mode is delegate_task's mode: "async" (default) or "wait".
	Mode string
	// Timeout is delegate_task wait's timeoutMs (0: the 10 min default).
	Timeout time.Duration
	// Target is the thread t3_thread_send, t3_thread_update and
	// t3_thread_interrupt act on; TaskID the task task_cancel cancels.
	Target string
	TaskID string
	// Action is t3_thread_update's action (e.g. "rename").
	Action string
	// Count is the number of create_threads entries (1-20).
	Count int
	// RedispatchOf names the task a new delegate_task repeats: the agent
	// took that task's wait timeout for a dead child (for the trace; the
	// server treats it like any call).
	RedispatchOf string
	// CallID is the provider's id of this tool call (tool_use id), unique
	// per call: a retry is a new call with a new id, while a transport that
	// delivers one tools/call twice repeats it. Redelivered marks that
	// second delivery (for the trace).
	CallID      string
	Redelivered bool
	// NewTab asks preview_open for reuseExistingTab:false.
	NewTab bool
	// Retry marks a call the agent repeats because it never saw an answer
	// (for the trace; the server treats it like any call). (The three
	// flags sit together: a call is copied into several records, and
	// apart each took a padded word.)
	Retry bool
}

// Outcomes other than the browser's reasons.
const (
	OutcomeUnauthorized     = "401 unknown_or_expired_token"
	OutcomeParentNotActive  = "parent_not_active"
	OutcomePreviewDisabled  = "PreviewAutomationUnavailableError"
	OutcomeThreadCredential = "thread_credential_required"
	OutcomeServerDown       = "ECONNREFUSED"
)

// ToolResult is what the agent gets back: Outcome is "ok" or the refusal
// (reason or error code); TabID is the tab the call resolved to; the
// orchestrator's durable result ids are embedded.
type ToolResult struct {
	Outcome string
	TabID   string
	store.Result
	// WaitTimedOut is delegate_task wait's timeout upgrade flag.
	WaitTimedOut bool
}

// Replier gets a tool call's answer. A model's own in-flight call object
// implements it, so that answering a call needs no closure of its own
// (each was an allocation per call); ReplyFunc adapts a function.
type Replier interface {
	Reply(ToolResult)
}

// ReplyFunc is a function as a Replier.
type ReplyFunc func(ToolResult)

// Reply calls f.
func (f ReplyFunc) Reply(r ToolResult) { f(r) }
