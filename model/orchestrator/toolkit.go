package orchestrator

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/orchsim/orchsim/model/store"
)

// The rest of the orchestrator toolkit the fidelity cases call: tool
// annotations, orchestrator_capabilities and target resolution (model
// option validation), t3_thread_read's timeline pages, t3_thread_wait,
// t3_thread_send's steer mode, scheduled-task tools and rollbackThread.
// Sources: OrchestratorMcpService.ts @ 04058804 (cited per function) and
// OrchestratorMcpToolkit.integration.test.ts (stored index:70188769112).
// The worlds' agents send none of these arguments (Extra stays empty), so
// their behaviour is unchanged.

// More tool names served here.
const (
	ToolCapabilities    = "orchestrator_capabilities"
	ToolThreadWait      = "t3_thread_wait"
	ToolListScheduled   = "list_scheduled_tasks"
	ToolUpdateScheduled = "update_scheduled_task"
	ToolDeleteScheduled = "delete_scheduled_task"
	// ToolThreadRollback is rollbackThread's tool (the [variant] test
	// calls the service method; the tool name is ours).
	ToolThreadRollback = "t3_thread_rollback"
	// ToolThreadTransfers is t3_thread_transfers (ConversationTransferMcpService.list).
	ToolThreadTransfers = "t3_thread_transfers"
)

// Defaults of OrchestratorMcpService @ 04058804.
const (
	// DefaultThreadReadLimit is DEFAULT_THREAD_READ_LIMIT.
	DefaultThreadReadLimit = 50
	// DefaultThreadItemMaxChars is DEFAULT_THREAD_ITEM_MAX_CHARS (UTF-16
	// code units, as JavaScript's string length).
	DefaultThreadItemMaxChars = 20_000
)

// More error codes (OrchestratorMcpFailure.code @ 04058804).
const (
	ErrProviderUnavailable  = "provider_unavailable"
	ErrModelUnavailable     = "model_unavailable"
	ErrParentNotActive      = "parent_not_active"
	ErrRuntimeModeEscalated = "runtime_mode_escalation_denied"
	ErrThreadNotSendable    = "thread_not_sendable"
	ErrCapabilityDenied     = "capability_denied"
	ErrRunNotFound          = "run_not_found"
)

// Annotations are a tool's MCP hints.
type Annotations struct {
	ReadOnly, Idempotent, Destructive, OpenWorld bool
}

// toolAnnotations are the hints the toolkit test asserts (index:70188769112;
// a hint it does not assert is false here).
var toolAnnotations = map[string]Annotations{
	ToolCapabilities:      {ReadOnly: true, Idempotent: true},
	"delegate_task":       {Destructive: true, OpenWorld: true},
	ToolTaskStatus:        {Idempotent: true},
	"create_threads":      {Destructive: true},
	ToolThreadList:        {ReadOnly: true, Idempotent: true},
	ToolThreadRead:        {},
	"t3_thread_update":    {Destructive: true},
	"t3_thread_send":      {Destructive: true},
	ToolThreadWait:        {ReadOnly: true},
	"t3_thread_interrupt": {Destructive: true},
	"schedule_task":       {Destructive: true},
	ToolListScheduled:     {ReadOnly: true, Idempotent: true},
	ToolUpdateScheduled:   {Destructive: true},
	ToolDeleteScheduled:   {Destructive: true},
	ToolThreadFork:        {Destructive: true},
	ToolThreadRollback:    {Destructive: true},
	"task_cancel":         {Destructive: true},
}

// ToolAnnotations returns tool's hints and whether it is a known tool.
func ToolAnnotations(tool string) (Annotations, bool) {
	a, ok := toolAnnotations[tool]
	return a, ok
}

// OptionDescriptor is one option a model advertises (select or boolean).
type OptionDescriptor struct {
	ID      string
	Type    string
	Choices []string
}

// ModelInfo is a provider's model; Described says it advertises option
// descriptors (capabilities non-null), so options are checked against them.
type ModelInfo struct {
	ID        string
	Described bool
	Options   []OptionDescriptor
}

// Provider is a ServerProvider snapshot as the orchestrator sees it;
// Adapter says a V2 provider adapter is registered for the instance.
type Provider struct {
	InstanceID string
	Driver     string
	Models     []ModelInfo
	Adapter    bool
}

// ProviderView is one provider of orchestrator_capabilities.
type ProviderView struct {
	InstanceID                                    string
	Driver                                        string
	Models                                        []ModelInfo
	CanRunChildTask, CanRunCrossProviderChildTask bool
	Constraints                                   []string
}

// Features are orchestrator_capabilities' feature flags (@ 04058804).
type Features struct {
	AppOwnedSubagents, AsyncPolling, Cancellation, BatchThreadCreation bool
	ThreadManagement, IncrementalThreadRead, ScheduledTasks            bool
	MaxBatchThreads                                                    int
}

// Capabilities is orchestrator_capabilities' result.
type Capabilities struct {
	ParentThreadID, InheritedInstance, InheritedModel string
	Providers                                         []ProviderView
	Features                                          Features
}

// providerConstraints is providerConstraints @ 04058804 for what the model
// has: no registered adapter.
func providerConstraints(p Provider) []string {
	if !p.Adapter {
		return []string{"No V2 provider adapter is registered."}
	}
	return nil
}

func (o *Orchestrator) capabilities(caller string) Capabilities {
	res := Capabilities{ParentThreadID: caller, Features: Features{AppOwnedSubagents: true, AsyncPolling: true,
		Cancellation: true, BatchThreadCreation: true, ThreadManagement: true, IncrementalThreadRead: true,
		ScheduledTasks: true, MaxBatchThreads: MaxBatchThreads}}
	if t := o.st.Thread(caller); t != nil {
		res.InheritedInstance, res.InheritedModel = t.Instance, t.Model
	}
	for _, p := range o.Providers {
		cons := providerConstraints(p)
		res.Providers = append(res.Providers, ProviderView{InstanceID: p.InstanceID, Driver: p.Driver,
			Models: p.Models, CanRunChildTask: len(cons) == 0, CanRunCrossProviderChildTask: len(cons) == 0,
			Constraints: cons})
	}
	return res
}

// Option is one requested option selection (target.options, canonical
// array form).
type Option struct {
	ID, Value string
}

// invalidOptionSelections is invalidOptionSelections @ 04058804: duplicate
// ids always fail; with descriptors, unknown ids and values outside a
// select's choices fail too.
func invalidOptionSelections(opts []Option, m *ModelInfo) []string {
	var problems []string
	seen := map[string]bool{}
	for _, sel := range opts {
		if seen[sel.ID] {
			problems = append(problems, fmt.Sprintf("Option %s was specified more than once.", sel.ID))
			continue
		}
		seen[sel.ID] = true
		if m == nil || !m.Described {
			continue
		}
		i := slices.IndexFunc(m.Options, func(d OptionDescriptor) bool { return d.ID == sel.ID })
		if i < 0 {
			var known []string
			for _, d := range m.Options {
				known = append(known, d.ID)
			}
			k := strings.Join(known, ", ")
			if k == "" {
				k = "none"
			}
			problems = append(problems, fmt.Sprintf("Unknown option %s; supported options: %s.", sel.ID, k))
			continue
		}
		d := m.Options[i]
		if d.Type == "boolean" && sel.Value != "true" && sel.Value != "false" {
			problems = append(problems, fmt.Sprintf("Option %s expects a boolean value.", sel.ID))
			continue
		}
		if d.Type == "select" && !slices.Contains(d.Choices, sel.Value) {
			problems = append(problems, fmt.Sprintf("Option %s must be one of: %s.", sel.ID, strings.Join(d.Choices, ", ")))
		}
	}
	return problems
}

// target is a resolved model selection.
type target struct {
	instance, model string
	options         []string
}

// resolveTarget is resolveTarget @ 04058804 over o.Providers (no
// providers: the worlds, which pick no targets, resolve to the instance
// asked for or the parent's). It answers an error code and message on
// refusal.
func (o *Orchestrator) resolveTarget(parent *store.Thread, instance, driver, model string, opts []Option) (target, string, string) {
	inherited := target{}
	if parent != nil {
		inherited = target{instance: parent.Instance, model: parent.Model, options: parent.ModelOptions}
	}
	if o.Providers == nil {
		if instance == "" {
			return inherited, "", ""
		}
		return target{instance: instance, model: model}, "", ""
	}
	if instance == "" && driver != "" {
		for _, p := range o.Providers {
			if p.Driver == driver && p.Adapter && (instance == "" || p.InstanceID == inherited.instance) {
				instance = p.InstanceID
			}
		}
		if instance == "" {
			return target{}, ErrProviderUnavailable, "No V2 provider adapter is registered for driver " + driver + "."
		}
	}
	if instance == "" {
		instance = inherited.instance
	}
	i := slices.IndexFunc(o.Providers, func(p Provider) bool { return p.InstanceID == instance })
	if i < 0 {
		return target{}, ErrProviderUnavailable, "Provider instance " + instance + " is not registered."
	}
	p := o.Providers[i]
	if driver != "" && p.Driver != driver {
		return target{}, ErrInvalidRequest, fmt.Sprintf("Provider instance %s uses driver %s, not %s.", instance, p.Driver, driver)
	}
	if cons := providerConstraints(p); len(cons) > 0 {
		return target{}, ErrProviderUnavailable, fmt.Sprintf("Provider %s cannot run a child task: %s", instance, strings.Join(cons, " "))
	}
	if model == "" {
		if instance == inherited.instance {
			model = inherited.model
		} else if len(p.Models) > 0 {
			model = p.Models[0].ID
		}
	}
	if model == "" {
		return target{}, ErrModelUnavailable, "Provider " + instance + " has no model available for inheritance."
	}
	mi := slices.IndexFunc(p.Models, func(m ModelInfo) bool { return m.ID == model })
	if len(p.Models) > 0 && mi < 0 {
		return target{}, ErrModelUnavailable, fmt.Sprintf("Model %s is not advertised by provider %s.", model, instance)
	}
	if opts == nil {
		if instance == inherited.instance && model == inherited.model {
			return inherited, "", ""
		}
		return target{instance: instance, model: model}, "", ""
	}
	var m *ModelInfo
	if mi >= 0 {
		m = &p.Models[mi]
	}
	if bad := invalidOptionSelections(opts, m); len(bad) > 0 {
		return target{}, ErrInvalidRequest, fmt.Sprintf("Model %s on provider %s rejected options: %s", model, instance, strings.Join(bad, " "))
	}
	t := target{instance: instance, model: model}
	for _, sel := range opts {
		t.options = append(t.options, sel.ID+"="+sel.Value)
	}
	return t, "", ""
}

// TimelineItem is one item of t3_thread_read's page (timelineItem @
// 04058804). NextTextOffset is -1 for null.
type TimelineItem struct {
	Position       int
	SourceThreadID string
	ItemID         string
	RunID          string
	MessageID      string
	Type           string
	CreatedBy      string
	CreationSource string
	Text           string
	TextTruncated  bool
	NextTextOffset int
}

// ThreadRead is t3_thread_read's result: the thread detail (status,
// creator, rollback state) and a page of its timeline. NextPosition is -1
// for null.
type ThreadRead struct {
	ThreadID, ProjectID, Title, Status, CreatedBy, CreationSource string
	RollbackRequestID, RollbackFailure, RollbackFailureRequest    string
	Items                                                         []TimelineItem
	NextPosition                                                  int
	HasMore                                                       bool
}

// ReadArgs are t3_thread_read's paging arguments. AfterPosition -1 (or
// HasAfter false) reads from the start; ItemID reads one item's text from
// TextOffset.
type ReadArgs struct {
	HasAfter      bool
	AfterPosition int
	Limit         int
	MaxChars      int
	ItemID        string
	TextOffset    int
}

type row struct {
	source, itemID, kind, runID, messageID, text, createdBy, creationSource string
}

func (o *Orchestrator) taskOfChild(thread string) *store.Task { return o.st.TaskOfChild(thread) }

// ResultItemID is the timeline item id of a delegated task's result.
func ResultItemID(t *store.Task) string { return "item:result:" + t.ID }

// timeline is a thread's visible items in order: a fork's inherited items
// (attributed to their source thread) first, then its messages; a
// delegated child's result follows the task's message.
func (o *Orchestrator) timeline(thread string) []row {
	var rows []row
	th := o.st.Thread(thread)
	if th == nil {
		return nil
	}
	if th.ForkedFrom != "" {
		src := o.timeline(th.ForkedFrom)
		rows = append(rows, src[:min(th.ForkedItems, len(src))]...)
	}
	task := o.taskOfChild(thread)
	for _, m := range o.st.Messages {
		if m.ThreadID != thread {
			continue
		}
		r := row{source: thread, itemID: "item:" + m.ID, kind: "user_message", runID: m.RunID, messageID: m.ID,
			text: m.Text, createdBy: "user", creationSource: "web"}
		if m.Sender != "" {
			r.createdBy, r.creationSource = "agent", "mcp"
		}
		if m.Role == "assistant" {
			r.kind, r.createdBy, r.creationSource = "assistant_message", "", ""
		}
		rows = append(rows, r)
		if task != nil && m.ID == "message:delegated-task:"+task.CommandID && task.Status == store.TaskCompleted {
			rows = append(rows, row{source: thread, itemID: ResultItemID(task), kind: "assistant_message",
				runID: "run:" + task.ID, text: task.Summary})
		}
	}
	return rows
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// slice16 is JavaScript's text.slice(from, to) over UTF-16 code units.
func slice16(s string, from, to int) string {
	u := utf16.Encode([]rune(s))
	from, to = min(from, len(u)), min(to, len(u))
	return string(utf16.Decode(u[from:to]))
}

// ReadThread is readThread @ 04058804 without the acknowledgement: the
// detail and one page.
func (o *Orchestrator) ReadThread(thread string, a ReadArgs) ThreadRead {
	th := o.st.Thread(thread)
	res := ThreadRead{ThreadID: th.ID, ProjectID: th.ProjectID, Title: th.Title, Status: o.threadStatus(thread),
		CreatedBy: th.CreatedBy, CreationSource: th.CreationSource, RollbackRequestID: th.RollbackRequestID,
		RollbackFailure: th.RollbackFailure, RollbackFailureRequest: th.RollbackFailureRequest, NextPosition: -1}
	rows := o.timeline(thread)
	limit, maxChars := a.Limit, a.MaxChars
	if limit <= 0 {
		limit = DefaultThreadReadLimit
	}
	if maxChars <= 0 {
		maxChars = DefaultThreadItemMaxChars
	}
	start, end := 0, 0
	if a.ItemID != "" {
		i := slices.IndexFunc(rows, func(r row) bool { return r.itemID == a.ItemID })
		if i >= 0 {
			start, end = i, i+1
		}
	} else {
		if a.HasAfter {
			start = min(a.AfterPosition+1, len(rows))
		}
		end = min(start+limit, len(rows))
		res.HasMore = end < len(rows)
	}
	for pos := start; pos < end; pos++ {
		r := rows[pos]
		offset := 0
		if a.ItemID != "" {
			offset = a.TextOffset
		}
		stop := offset + maxChars
		trunc := utf16Len(r.text) > stop
		it := TimelineItem{Position: pos, SourceThreadID: r.source, ItemID: r.itemID, RunID: r.runID, MessageID: r.messageID,
			Type: r.kind, CreatedBy: r.createdBy, CreationSource: r.creationSource, Text: slice16(r.text, offset, stop),
			TextTruncated: trunc, NextTextOffset: -1}
		if trunc {
			it.NextTextOffset = stop
		}
		res.Items = append(res.Items, it)
		res.NextPosition = pos
	}
	return res
}

// pageIncludesTerminalResult is pageIncludesTerminalTaskResult @ 04058804:
// the page holds the task's whole terminal result (its text no longer
// than maxChars), read from the start of the item.
func pageIncludesTerminalResult(t *store.Task, read ThreadRead, maxChars int) bool {
	if t.Status != store.TaskCompleted {
		return false
	}
	if maxChars <= 0 {
		maxChars = DefaultThreadItemMaxChars
	}
	for _, it := range read.Items {
		if it.ItemID == ResultItemID(t) && it.SourceThreadID == t.ChildThreadID && utf16Len(t.Summary) <= maxChars {
			return true
		}
	}
	return false
}

// runStatus is the status of a thread's run: a stored run, or a delegated
// child's first run (its task).
func (o *Orchestrator) runStatus(thread, runID string) (string, bool) {
	if r := o.st.Run(runID); r != nil && r.ThreadID == thread {
		return r.Status, true
	}
	if t := o.taskOfChild(thread); t != nil && runID == "run:"+t.ID {
		return t.Status, true
	}
	return "", false
}

// latestRun is the thread's newest run id ("" for none).
func (o *Orchestrator) latestRun(thread string) string {
	id := ""
	if t := o.taskOfChild(thread); t != nil {
		id = "run:" + t.ID
	}
	for _, r := range o.st.Runs {
		if r.ThreadID == thread {
			id = r.ID
		}
	}
	return id
}

// threadStatus is threadDetail's status: the active run's, else the
// latest run's, else idle.
func (o *Orchestrator) threadStatus(thread string) string {
	if r := o.st.ActiveRun(thread); r != nil {
		return r.Status
	}
	if id := o.latestRun(thread); id != "" {
		s, _ := o.runStatus(thread, id)
		return s
	}
	return "idle"
}

func terminalRun(status string) bool {
	switch status {
	case store.RunCompleted, store.RunFailed, store.RunCancelled, store.RunInterrupted:
		return true
	}
	return false
}

// WaitResult is t3_thread_wait's result.
type WaitResult struct {
	ThreadID, RunID, Status string
	TimedOut                bool
}

// ScheduledTask is a scheduled task as an agent sees it
// (scheduledTaskSummary @ 04058804).
type ScheduledTask struct {
	ID, Title, Prompt, ProjectID, BoundThreadID, Kind string
	EveryMs                                           int64
	Enabled                                           bool
}

func scheduleView(s *store.Schedule) ScheduledTask {
	return ScheduledTask{ID: s.ID, Title: s.Title, Prompt: s.Prompt, ProjectID: s.ProjectID, BoundThreadID: s.ThreadID,
		Kind: s.Kind, EveryMs: s.EveryMs, Enabled: s.Enabled}
}

// ParseSchedule decodes schedule_task's schedule: a JSON object, or (as
// OpenCode 1.15 sends it) that object serialized into a JSON string, which
// the MCP boundary decodes (toolkit test: "schedule_task decodes a schedule
// sent as a JSON string").
func ParseSchedule(raw string) (kind string, everyMs int64, err error) {
	var text string
	if json.Unmarshal([]byte(raw), &text) == nil {
		raw = text
	}
	var s struct {
		Type    string `json:"type"`
		EveryMs int64  `json:"everyMs"`
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil || s.Type == "" {
		return "", 0, fmt.Errorf("invalid schedule %q", raw)
	}
	return s.Type, s.EveryMs, nil
}

// ScheduleTitle is scheduleTask's title @ 04058804: the given one, else
// the prompt's first line trimmed to 80 characters, else "Scheduled task".
func ScheduleTitle(title, prompt string) string {
	if title != "" {
		return title
	}
	line := strings.TrimSpace(strings.SplitN(prompt, "\n", 2)[0])
	if line == "" {
		return "Scheduled task"
	}
	return slice16(line, 0, 80)
}

// runtimeModeRank is runtimeModeRank @ 04058804 ("" is full-access).
func runtimeModeRank(mode string) int {
	switch mode {
	case "approval-required":
		return 0
	case "auto-accept-edits":
		return 1
	case "auto":
		return 2
	}
	return 3
}
