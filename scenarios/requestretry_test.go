package scenarios

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/orchsim/orchsim/invariants"
	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/orchestrator"
)

// reportAlone is the seed report's bug alone (fixed~stable-request-namespace),
// so the bugs added to reported later do not end its runs first.
var reportAlone = model.Spec{Preset: model.PresetFixed, Unfix: []string{string(orchestrator.StableRequestNamespace)}}

func TestRequestRetry_ReportedFindsTheBug(t *testing.T) {
	got := outcomes(t, RequestRetry, model.MustSpec(reportAlone), 1, 100)
	assert.GreaterOrEqual(t, got[invariants.OneEffectPerRequest], 10, "outcomes: %v", got)
}

var duplicateMessage = regexp.MustCompile(`ran (\S+) with clientRequestId .* \(credential re-issued by (.*)\)$`)

// The failing seeds cover several re-issue paths and several tools: the
// violation message names both. The profile pins the report's own bug
// (fixed~stable-request-namespace), so bugs added to reported later, which
// end some seeds first, do not change what this counts.
func TestRequestRetry_BugReachedThroughSeveralPathsAndTools(t *testing.T) {
	paths, tools := map[string]int{}, map[string]int{}
	prof := model.MustSpec(reportAlone)
	for seed := uint64(1); seed <= 100; seed++ {
		res := mustRun(t, Config{Scenario: RequestRetry, Seed: seed, Profile: prof})
		if res.Violation == nil || res.Violation.Invariant != invariants.OneEffectPerRequest {
			continue
		}
		m := duplicateMessage.FindStringSubmatch(res.Violation.Message)
		if m == nil {
			t.Fatalf("seed %d: message does not name tool and path: %s", seed, res.Violation.Message)
		}
		tools[m[1]]++
		paths[m[2]]++
	}
	t.Logf("tools %v", tools)
	t.Logf("re-issue paths %v", paths)
	assert.GreaterOrEqual(t, len(tools), 3)
	assert.GreaterOrEqual(t, len(paths), 3)
	for _, p := range []string{"server restart", "idle release and resume", "provider crash and restart"} {
		assert.Positive(t, paths[p], p)
	}
}

func TestRequestRetry_FixedPasses(t *testing.T) {
	got := outcomes(t, RequestRetry, model.MustProfile(model.PresetFixed, nil, nil), 1, 300)
	assert.Equal(t, map[string]int{"ok": 300}, got)
}

func TestRequestRetry_GlobalNamespaceMutantIsCaught(t *testing.T) {
	got := outcomes(t, RequestRetry, model.MustProfile(model.PresetFixed, nil, []string{string(orchestrator.GlobalRequestNamespace)}), 1, 200)
	assert.Positive(t, got[invariants.RequestKeysScopedPerThread], "outcomes %v", got)
}

// The models compose in one server: each scenario passes with every fix but
// the other scenario's, and fails on its own bug with every fix but its
// own.
func TestRequestRetry_FixesAreIndependent(t *testing.T) {
	alone := func(s model.Switch) model.Profile {
		return model.MustSpec(model.Spec{Preset: model.PresetFixed, Unfix: []string{string(s)}})
	}
	got := outcomes(t, TabOwnership, alone(model.StableTabOwner), 1, 50)
	assert.Positive(t, got[invariants.ThreadKeepsItsTabs], "tab-ownership still fails without its own fix: %v", got)
	got = outcomes(t, RequestRetry, alone(model.StableTabOwner), 1, 100)
	assert.Equal(t, map[string]int{"ok": 100}, got, "the request fix alone holds request-retry")
	got = outcomes(t, TabOwnership, alone(orchestrator.StableRequestNamespace), 1, 100)
	assert.Equal(t, map[string]int{"ok": 100}, got, "the tab fix alone holds tab-ownership")
	got = outcomes(t, RequestRetry, alone(orchestrator.StableRequestNamespace), 1, 50)
	assert.Positive(t, got[invariants.OneEffectPerRequest])
}
