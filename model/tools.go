package model

// Preview tool names (the preview MCP toolkit and previewControls).
const (
	ToolPreviewOpen     = "preview_open"
	ToolPreviewNavigate = "preview_navigate"
	ToolPreviewClick    = "preview_click"
	ToolPreviewSnapshot = "preview_snapshot"
	ToolPreviewClose    = "t3_preview_close"
)

// ToolCall is one MCP tools/call as an agent sends it.
type ToolCall struct {
	Tool  string
	TabID string // explicit tabId, or ""
	URL   string
	// NewTab asks preview_open for reuseExistingTab:false.
	NewTab bool
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
// (reason or error code); TabID is the tab the call resolved to.
type ToolResult struct {
	Outcome string
	TabID   string
}
