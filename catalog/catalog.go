// Package catalog is the vocabulary every declaration in orchsim shares:
// the component groups that switches, invariants, obligations, mutants and
// probes belong to, the public report ids they cite, and the shape of the
// whole catalog that `orchsim list --format json` prints. It imports
// nothing of orchsim: each declaration lives in the file that implements it
// (a switch beside its fork in the model, an invariant beside its checker)
// and names its group and reports with these types; scenarios.Catalog
// gathers them.
package catalog

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Group is the component a declaration belongs to, named as
// ../shared/BUGS.md names a report's component. `orchsim list` orders each
// table by group (in Groups order), then by name.
type Group string

// The groups, in list order.
const (
	// ProviderSession: provider session start, idle stop, release, resume
	// and crash (ProviderSessionManager).
	ProviderSession Group = "provider-session"
	// MCPCredential: MCP credential issue, reuse, revoke and expiry
	// (McpSessionRegistry, prepareMcpSession).
	MCPCredential Group = "mcp-credential"
	// PreviewTab: preview tabs, their owners, human control and the idle
	// sweep (PreviewAutomationBroker, SessionControl, ServerBrowser).
	PreviewTab Group = "preview-tab"
	// Orchestrator: the orchestrator MCP tools, their clientRequestId
	// receipts and delegated tasks (OrchestratorMcpService).
	Orchestrator Group = "orchestrator-idempotency"
	// RestartContinuation: what a server restart keeps, loses and resumes
	// (RestartContinuation, ProviderRuntimeRecoveryService).
	RestartContinuation Group = "restart-continuation"
	// TerminalSession: the agent-code desktop app's terminal panes and
	// session backends (sessionManager wake/recover, AgentTerminalLeaf).
	TerminalSession Group = "terminal-session"
	// Other: anything that fits no component above.
	Other Group = "other"
)

// Groups lists every group in list order.
var Groups = []Group{ProviderSession, MCPCredential, PreviewTab, Orchestrator, RestartContinuation, TerminalSession, Other}

// Rank is g's position in Groups (len(Groups) for an unknown group, so it
// sorts last).
func (g Group) Rank() int {
	if i := slices.Index(Groups, g); i >= 0 {
		return i
	}
	return len(Groups)
}

// Valid reports whether g is one of Groups.
func (g Group) Valid() bool { return slices.Contains(Groups, g) }

// Less orders declarations by group, then name: the order of every table of
// `orchsim list`.
func Less(ga Group, na string, gb Group, nb string) bool {
	if ga.Rank() != gb.Rank() {
		return ga.Rank() < gb.Rank()
	}
	return na < nb
}

// Report is a public report id as ../shared/BUGS.md writes it: `t3code#N`
// for pingdotgg/t3code, otherwise `owner/repo#N` (an issue, or a pull
// request: GitHub serves both under /issues/N).
type Report string

var reportPattern = regexp.MustCompile(`^(t3code|[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+)#([1-9][0-9]*)$`)

// ParseReport checks s's shape; the error says what a report id looks like.
func ParseReport(s string) (Report, error) {
	if !reportPattern.MatchString(s) {
		return "", fmt.Errorf("bad report id %q (want t3code#N or owner/repo#N)", s)
	}
	return Report(s), nil
}

// Repo returns the report's repository as owner/name (t3code is
// pingdotgg/t3code).
func (r Report) Repo() string {
	repo, _, _ := strings.Cut(string(r), "#")
	if repo == "t3code" {
		return "pingdotgg/t3code"
	}
	return repo
}

// Number returns the issue or pull request number (0 for a malformed id).
func (r Report) Number() int {
	_, n, _ := strings.Cut(string(r), "#")
	v, _ := strconv.Atoi(n)
	return v
}

// URL returns the report's page on GitHub.
func (r Report) URL() string {
	return fmt.Sprintf("https://github.com/%s/issues/%d", r.Repo(), r.Number())
}

// Catalog is everything a build declares, as `orchsim list --format json`
// prints it. Each table is in list order (group, then name); scenarios by
// name.
type Catalog struct {
	Switches    []Switch     `json:"switches"`
	Invariants  []Invariant  `json:"invariants"`
	Obligations []Obligation `json:"obligations"`
	Mutants     []Mutant     `json:"mutants"`
	Probes      []Probe      `json:"probes"`
	// CommitPoints are where --strategy commit places its faults
	// (model.DeclareCommitPoint).
	CommitPoints []CommitPoint `json:"commit_points"`
	Scenarios    []Scenario    `json:"scenarios"`
	// Harness lists the failures the harness itself reports like
	// invariants (model-panic, event-budget-exceeded).
	Harness  []Harness `json:"harness"`
	Profiles []Profile `json:"profiles"`
	// Record is the public record (Record) with the switches that cover
	// each report.
	Record []RecordRow `json:"record"`
}

// Switch is one behaviour a report describes and a fix changes: off under
// the reported profile, on under fixed (--fix NAME, --unfix NAME).
type Switch struct {
	Name  string `json:"name"`
	Group Group  `json:"group"`
	// Reports are the public reports whose behaviour the switch turns off.
	Reports []Report `json:"reports"`
	// Source names where the behaviour is documented beyond the reports
	// (a seed report file, an upstream PR, MODEL.md).
	Source string `json:"source"`
	// Scenario is where the bug is found alone: under
	// `--profile fixed --unfix NAME` a seed of it violates one of
	// Invariants.
	Scenario string `json:"scenario"`
	// Invariants are the invariants (or obligations) that catch the bug.
	Invariants []string `json:"invariants"`
	// Reported and Fixed say what the switch does off and on.
	Reported string `json:"reported"`
	Fixed    string `json:"fixed"`
	// Upstream names where upstream merged the fix (a PR or commit); empty
	// while it is not merged. The upstream profile turns on exactly these.
	Upstream string `json:"upstream"`
	// Script is the script replaying the report's steps (a path under
	// scenarios/testdata; "" when there is none).
	Script string `json:"script"`
	// Mechanism names the model mechanism the bug lives in ("package:
	// what").
	Mechanism string `json:"mechanism"`
}

// Invariant is a safety or liveness property checked over every run.
type Invariant struct {
	Name     string   `json:"name"`
	Group    Group    `json:"group"`
	Kind     string   `json:"kind"` // "safety" or "liveness"
	Property string   `json:"property"`
	Source   string   `json:"source"`
	Reports  []Report `json:"reports"`
}

// Obligation is a liveness obligation a model opens and must discharge
// before the heal phase ends.
type Obligation struct {
	Name     string `json:"name"`
	Group    Group  `json:"group"`
	Property string `json:"property"`
	Source   string `json:"source"`
}

// Mutant is a deliberately wrong fix the invariants must catch (--mutant
// NAME, on top of the fixed profile in the mutation gate).
type Mutant struct {
	Name  string `json:"name"`
	Group Group  `json:"group"`
	Doc   string `json:"doc"`
	// Scenario is where the mutation gate is expected to kill it, and
	// Invariants the invariants expected to.
	Scenario   string   `json:"scenario"`
	Invariants []string `json:"invariants"`
	// GateSeeds and GateStrategy are what the mutation gate gives it:
	// seeds per scenario and the strategy.
	GateSeeds    uint64 `json:"gate_seeds"`
	GateStrategy string `json:"gate_strategy"`
}

// Probe is a sometimes-assertion: a situation a campaign should reach.
type Probe struct {
	Name  string `json:"name"`
	Group Group  `json:"group"`
	Doc   string `json:"doc"`
}

// CommitPoint is a lifecycle edge a model declares where a durable write
// and its acknowledgement are separated; the commit strategy places Fault
// exactly there (at most model.CommitFaultsPerPoint times per run).
type CommitPoint struct {
	Name  string `json:"name"`
	Group Group  `json:"group"`
	// Doc says which write is done, what is still pending and what the
	// fault does.
	Doc string `json:"doc"`
	// Fault names the fault placed: "server-restart", "renderer.reload", ...
	Fault string `json:"fault"`
}

// Scenario is a named workload and fault plan.
type Scenario struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
	// HorizonMs is the default virtual duration of a run, in milliseconds.
	HorizonMs int64 `json:"horizon_ms"`
	// Groups are the groups whose invariants judge it; Invariants the
	// resulting list.
	Groups     []Group  `json:"groups"`
	Invariants []string `json:"invariants"`
}

// Harness is a failure of the harness reported like an invariant.
type Harness struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
}

// Profile is a preset of switches.
type Profile struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
}
