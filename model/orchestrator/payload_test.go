package orchestrator

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/model/mcp"
	"github.com/orchsim/orchsim/sim"
)

// The payloads and namespaces are built by appending (no fmt, no
// allocation per part); they must stay the strings the fmt and
// concatenation forms gave, since receipts compare them and traces show
// them.
func TestPayloadAndNamespace_MatchTheirFmtForms(t *testing.T) {
	odd := []string{"", "plain", `quo"te`, "back\\slash", "tab\tnew\nline", "ünï€ode", "\x00\x7f", "\xff\xfe bad utf-8",
		strings.Repeat("long ", 80)}
	var specs []ThreadSpec
	for i, s := range odd {
		specs = append(specs, ThreadSpec{Title: s, Prompt: odd[(i+1)%len(odd)], Instance: odd[(i+2)%len(odd)]})
	}
	for _, s := range specs {
		want := fmt.Sprintf("title=%q prompt=%q instance=%q", s.Title, s.Prompt, s.Instance)
		if got := entryPayload(s); got != want {
			t.Errorf("entryPayload(%+v) = %q, want %q", s, got, want)
		}
	}
	for n := 0; n <= len(specs)+2; n++ {
		parts := []string{fmt.Sprintf("entries=%d", n)}
		for i := 0; i < n; i++ {
			s := specAt(specs, i)
			parts = append(parts, fmt.Sprintf("title=%q prompt=%q instance=%q", s.Title, s.Prompt, s.Instance))
		}
		if got, want := batchPayload(n, specs), strings.Join(parts, ";"); got != want {
			t.Errorf("batchPayload(%d) = %q, want %q", n, got, want)
		}
	}
	var str sim.Strings
	for _, tool := range []string{model.ToolThreadSend, model.ToolTaskCancel, model.ToolCreateThreads} {
		for _, s := range odd {
			c := Call{ToolCall: model.ToolCall{Tool: tool, Target: s, TaskID: s + "t"}}
			want := "thread:" + s
			if tool == model.ToolTaskCancel {
				want = "task:" + s + "t"
			} else if tool == model.ToolCreateThreads {
				want = "thread:caller" + s
			}
			if got := aggregateOf(&str, c, "caller"+s); got != want {
				t.Errorf("aggregateOf(%s, %q) = %q, want %q", tool, s, got, want)
			}
		}
	}
	for _, s := range odd {
		if got, want := string(appendEnc([]byte("x"), s)), "x"+Enc(s); got != want {
			t.Errorf("appendEnc(%q) = %q, want %q", s, got, want)
		}
	}
	for _, preset := range []string{model.PresetReported, model.PresetFixed, model.PresetUpstream} {
		o := &Orchestrator{env: &model.Env{Profile: model.MustProfile(preset, nil, nil)}}
		for _, s := range odd {
			for _, scope := range []mcp.Scope{{EnvironmentID: "env:" + s, RequestNamespace: "ns " + s, Thread: &mcp.ThreadScope{ThreadID: "thread:" + s}},
				{EnvironmentID: s, RequestNamespace: s}} {
				if got, want := o.encNamespace(scope), Enc(RequestNamespace(o.env.Profile, scope)); got != want {
					t.Errorf("%s: encNamespace(%+v) = %q, want %q", preset, scope, got, want)
				}
			}
		}
	}
}
