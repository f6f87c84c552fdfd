package report

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/replay"
	"github.com/orchsim/orchsim/scenarios"
	"github.com/orchsim/orchsim/shrink"
	"github.com/orchsim/orchsim/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// corpusDir holds the replay files of the seed bugs.
const corpusDir = "../testdata/corpus/reported"

// corpusFiles lists the seed bugs' replay files (000, 002, and any added).
func corpusFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no replay files in %s", corpusDir)
	return files
}

// replayRun re-runs a replay file with its trace kept.
func replayRun(t *testing.T, path string) (scenarios.Config, scenarios.Result) {
	t.Helper()
	f, err := replay.Read(path)
	require.NoError(t, err)
	prof, err := f.Spec().Profile()
	require.NoError(t, err)
	strategy, err := scenarios.ParseStrategy(f.Strategy)
	require.NoError(t, err)
	cfg := scenarios.Config{Scenario: f.Scenario, Seed: f.Seed, Profile: prof, Strategy: strategy, Off: f.Off,
		Horizon: time.Duration(f.Horizon), Tape: f.Tape, KeepTrace: true}
	res, err := scenarios.Run(cfg)
	require.NoError(t, err)
	return cfg, res
}

func seedBug000(t *testing.T) *Run {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "000-*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	_, res := replayRun(t, files[0])
	require.NotNil(t, res.Violation, "seed bug 000 must still fail")
	return FromResult(&res, "orchsim replay "+files[0])
}

// mermaidLine is the grammar of every line Mermaid writes: the subset of
// Mermaid's sequence diagram syntax it uses.
var mermaidLine = regexp.MustCompile(`^(sequenceDiagram|    title [^;#%"<>{}]+|\s*%% .*|    participant [A-Za-z0-9_]+ as [^;#%"<>:{}]+|` +
	`\s+[A-Za-z0-9_]+(--?>>|--x)[A-Za-z0-9_]+: .+|\s+Note over [A-Za-z0-9_]+(,[A-Za-z0-9_]+)?: .+|    rect rgb\(\d+, \d+, \d+\)|    end)$`)

// rawUnsafe is what message and note text must not contain once its
// entity codes (#35;) are taken out: no statement separator, no entity,
// comment or directive start, no markup.
var (
	rawUnsafe = regexp.MustCompile(`[;#"%<>{}` + "`" + `]`)
	entity    = regexp.MustCompile(`#[0-9]+;`)
)

func checkMermaidSyntax(t *testing.T, out string) {
	t.Helper()
	require.True(t, strings.HasPrefix(out, "sequenceDiagram\n"), "starts with the diagram type")
	require.True(t, strings.HasSuffix(out, "\n"))
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		require.Regexp(t, mermaidLine, l, "line %d", i+1)
		if strings.Contains(l, "%% ") || strings.HasPrefix(strings.TrimSpace(l), "participant ") || strings.HasPrefix(l, "    title ") {
			continue
		}
		if _, text, ok := strings.Cut(l, ": "); ok {
			text = entity.ReplaceAllString(strings.ReplaceAll(text, "<br/>", " "), "")
			assert.NotRegexp(t, rawUnsafe, text, "line %d carries an unescaped character", i+1)
		}
	}
}

func TestMermaid_SeedBug000(t *testing.T) {
	r := seedBug000(t)
	out := string(Mermaid(r))
	checkMermaidSyntax(t, out)
	for _, want := range []string{
		"participant user as user",
		"participant agent_thread_b as agent thread-b",
		"participant psm as provider session manager",
		"participant registry as credential registry",
		"participant browser as browser host",
		"agent_thread_b->>browser: T+00:00:03.301 preview_open",
		"browser-->>agent_thread_b: agentMismatch",
		"Note over psm: T+00:30:05.303 timer: session.release",
		"rect rgb(",
		"VIOLATED thread-keeps-its-tabs",
		"%% replay: orchsim replay ",
	} {
		assert.Contains(t, out, want)
	}
	assert.Regexp(t, `Note over user,server: ⋯ 29m\S+ later ⋯`, out, "the idle silence is drawn")
	// The trigger is drawn inside the violation's block.
	block := out[strings.Index(out, "rect rgb("):]
	assert.Contains(t, block, "preview_navigate")
	assert.True(t, strings.HasSuffix(block, "    end\n"))
}

func TestMermaid_Deterministic(t *testing.T) {
	a, b := seedBug000(t), seedBug000(t)
	assert.Equal(t, string(Mermaid(a)), string(Mermaid(b)))
	assert.Equal(t, string(HTML(a)), string(HTML(b)))
}

func ev(at time.Duration, actor, kind, outcome string, attrs ...sim.Attr) sim.Event {
	return sim.Event{At: at, Actor: actor, Kind: kind, Outcome: outcome, Attrs: attrs}
}

func numbered(events ...sim.Event) []sim.Event {
	for i := range events {
		events[i].Seq = uint64(i)
	}
	return events
}

func TestMermaid_EscapesWhatMermaidCannotParse(t *testing.T) {
	nasty := `a;b #1 "q" <b>x</b> 50% {c} ` + "`t`"
	r := &Run{Scenario: "s", Seed: 1, Profile: "reported", Trace: numbered(
		ev(0, "agent/thread-a", "t3_thread_send", "accepted; again #2", sim.A("text", nasty)),
		ev(time.Second, "fault", "response-lost", "", sim.A("thread", "thread-a"), sim.A("why", nasty)),
	)}
	out := string(Mermaid(r))
	checkMermaidSyntax(t, out)
	assert.Contains(t, out, "a#59;b #35;1 #34;q#34; #60;b#62;x#60;/b#62; 50#37; #123;c#125; #96;t#96;")
	assert.Contains(t, out, "orch-->>agent_thread_a: accepted#59; again #35;2")
	assert.Equal(t, "a#59;b", Escape("a;b"))
}

func TestMermaid_Routes(t *testing.T) {
	r := &Run{Scenario: "s", Seed: 1, Profile: "reported", Trace: numbered(
		ev(0, "world", "swarm", "", sim.A("crash", "1/4")),
		ev(0, "user/thread-a", "prompt", "", sim.A("thread", "thread-a")),
		ev(1, "agent/thread-a", "delegate_task", "accepted", sim.A("thread", "thread-a"), sim.A("clientRequestId", "r1")),
		ev(2, "agent/thread-a", "preview_open", "ok", sim.A("thread", "thread-a"), sim.A("tab", "tab_1")),
		ev(2, "agent/thread-a", "schedule_task", "accepted", sim.A("thread", "thread-a")),
		ev(2, "fault", "response-lost", "", sim.A("thread", "thread-a"), sim.A("tool", "schedule_task")),
		ev(3, "mcp-client/thread-a", "timeout", "", sim.A("tool", "delegate_task")),
		ev(4, "fault", "provider-crash", "", sim.A("providerSessionId", "psess:codex")),
		ev(5, "pane/p1", "pane.mount", "", sim.A("session", "s1")),
		ev(6, "main", "spawn", "starting", sim.A("session", "s1"), sim.A("backend", "s1#1")),
		ev(7, "agent/s1", "screen", "composer", sim.A("session", "s1"), sim.A("backend", "s1#1")),
		ev(8, "renderer", "wake.recover", "ok", sim.A("session", "s1")),
		ev(9, "something-new", "did.it", ""),
		ev(10, "harness", "heal", "", sim.A("until", "T+25:00:00.000")),
	)}
	out := string(Mermaid(r))
	checkMermaidSyntax(t, out)
	for _, want := range []string{
		"%% T+00:00:00.000  world", // set-up as a comment
		"user->>server: T+00:00:00.000 prompt thread=thread-a",
		"agent_thread_a->>orch: T+00:00:00.000 delegate_task clientRequestId=r1", // thread= implied by the agent
		"orch-->>agent_thread_a: accepted",
		"agent_thread_a->>browser: T+00:00:00.000 preview_open tab=tab_1",
		"orch--xagent_thread_a: accepted (answer lost)",
		"Note over agent_thread_a: T+00:00:00.000 fault: response-lost tool=schedule_task",
		"Note over agent_thread_a: T+00:00:00.000 timer: timeout tool=delegate_task",
		"Note over psm: T+00:00:00.000 fault: provider-crash",
		"pane_p1->>renderer: T+00:00:00.000 pane.mount session=s1",
		"mainproc->>agent_s1: T+00:00:00.000 spawn backend=s1#35;1 → starting",
		"agent_s1->>mainproc: T+00:00:00.000 screen backend=s1#35;1 → composer",
		"mainproc-->>renderer: T+00:00:00.000 wake.recover session=s1 → ok",
		"x_something_new->>x_something_new: T+00:00:00.000 did.it",
		"Note over user,x_something_new: T+00:00:00.000 harness heal until=T+25:00:00.000",
	} {
		assert.Contains(t, out, want)
	}
	// People left, the server's components in call order, the desktop app's
	// processes, its backends last.
	order := regexp.MustCompile(`participant (\S+)`).FindAllStringSubmatch(out, -1)
	var ids []string
	for _, m := range order {
		ids = append(ids, m[1])
	}
	assert.Equal(t, []string{"user", "agent_thread_a", "psm", "browser", "orch", "server", "pane_p1", "renderer",
		"mainproc", "agent_s1", "x_something_new"}, ids)
}

func TestMermaid_LongTraceIsCutInTheMiddle(t *testing.T) {
	var trace []sim.Event
	for i := 0; i < 1000; i++ {
		trace = append(trace, ev(time.Duration(i)*time.Second, "psm", "turn.start", "", sim.A("thread", fmt.Sprintf("thread-%d", i%3))))
	}
	trace = append(trace, ev(1000*time.Second, "invariant", "x-holds", "VIOLATED: it did not"))
	r := &Run{Scenario: "s", Seed: 1, Profile: "reported", Trace: numbered(trace...),
		Violation: &sim.Violation{Invariant: "x-holds", At: 1000 * time.Second}}
	out := string(Mermaid(r))
	checkMermaidSyntax(t, out)
	assert.Less(t, len(out), 50_000, "Mermaid's maxTextSize")
	assert.Contains(t, out, "… 851 events from T+00:00:50.000 to T+00:15:00.000 not drawn")
	assert.Contains(t, out, "VIOLATED x-holds")
	assert.Equal(t, MaxDiagramEvents, strings.Count(out, "turn.start")+1)
}

func TestMermaid_EmptyRunParses(t *testing.T) {
	out := string(Mermaid(&Run{Scenario: "s"}))
	checkMermaidSyntax(t, out)
	assert.Contains(t, out, "participant server")
}

func TestStory_ShrinksLongFailingRuns(t *testing.T) {
	cfg := scenarios.Config{Scenario: "tab-ownership", Seed: 5, Profile: tabOwnerBugAlone(), KeepTrace: true}
	res, err := scenarios.Run(cfg)
	require.NoError(t, err)
	require.NotNil(t, res.Violation)
	require.Greater(t, len(res.Trace), StoryThreshold, "seed 5 is a long failing run")
	s := Story(cfg, &res, "orchsim run --scenario tab-ownership --seed 5", StoryShrink)
	assert.Equal(t, res.Events, s.ShrunkFrom)
	assert.Less(t, len(s.Trace), len(res.Trace))
	require.NotNil(t, s.Violation)
	assert.Equal(t, res.Violation.Invariant, s.Violation.Invariant)
	out := string(Mermaid(s))
	checkMermaidSyntax(t, out)
	assert.Contains(t, out, fmt.Sprintf("%%%% shrunk from %d events", res.Events))
	// Bounded by runs, not time: the same story every time.
	again := Story(cfg, &res, "orchsim run --scenario tab-ownership --seed 5", StoryShrink)
	assert.Equal(t, out, string(Mermaid(again)))

	cfg.Profile = model.MustProfile(model.PresetFixed, nil, nil)
	ok, err := scenarios.Run(cfg)
	require.NoError(t, err)
	require.Nil(t, ok.Violation)
	s = Story(cfg, &ok, "", StoryShrink)
	assert.Zero(t, s.ShrunkFrom, "a passing run is drawn as it is")
	assert.Len(t, s.Trace, len(ok.Trace))
}

// The wall clock is only a safety net: when it stops a shrink before its
// run bound, the diagram says that it depends on the machine.
func TestStory_SafetyNetIsReported(t *testing.T) {
	cfg := scenarios.Config{Scenario: "tab-ownership", Seed: 5, Profile: tabOwnerBugAlone(), KeepTrace: true}
	res, err := scenarios.Run(cfg)
	require.NoError(t, err)
	var now time.Time
	slow := shrink.Options{Budget: time.Minute, MaxRuns: StoryShrink.MaxRuns, Now: func() time.Time {
		now = now.Add(10 * time.Second) // every look at the clock finds 10 s gone
		return now
	}}
	out := string(Mermaid(Story(cfg, &res, "", slow)))
	assert.Contains(t, out, "wall-clock safety net after")
	assert.Contains(t, out, "this story depends on the machine's speed")
	out = string(Mermaid(Story(cfg, &res, "", StoryShrink)))
	assert.NotContains(t, out, "safety net", "the run bound, not the clock, ends a story's shrink")
}

func TestHTML_SeedBugs(t *testing.T) {
	for _, f := range corpusFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, res := replayRun(t, f)
			require.NotNil(t, res.Violation)
			out := string(HTML(FromResult(&res, "orchsim replay "+f)))
			assert.True(t, strings.HasPrefix(out, "<!DOCTYPE html>\n"))
			steps := make([]step, len(res.Trace))
			for i := range res.Trace {
				steps[i] = route(&res.Trace[i])
			}
			laneOf := laneNamer(res.Trace, steps)
			lanes := map[string]bool{}
			for i := range res.Trace {
				lanes[laneOf(res.Trace[i].Actor)] = true
			}
			for l := range lanes {
				assert.Contains(t, out, fmt.Sprintf(`<g class="lane" data-lane="%s">`, l))
			}
			assert.Contains(t, out, `id="violation-marker"`)
			assert.Contains(t, out, `<section id="violation" class="violation-box">`)
			assert.Contains(t, out, res.Violation.Invariant)
			assert.Contains(t, out, "orchsim replay "+f)
			assert.Equal(t, len(res.Trace), strings.Count(out, `<g class="ev `))
			assert.Equal(t, len(res.Trace), strings.Count(out, "<title>")-1, "a hover title per event")
		})
	}
}

// The page loads nothing: no script, style, image or font from outside.
// Its only outside addresses are links to the public reports a known bug
// cites, which load nothing until clicked.
func TestHTML_IsSelfContained(t *testing.T) {
	out := string(HTML(seedBug000(t)))
	for _, banned := range []string{"http://", "src=", "<link", "@import", "url(http", "//cdn"} {
		assert.NotContains(t, out, banned)
	}
	links := regexp.MustCompile(`<a href="https://github\.com/[^"]+">`).ReplaceAllString(out, "")
	assert.NotContains(t, links, "https://", "only links to reports")
}

func TestHTML_EscapesEverything(t *testing.T) {
	evil := `</script><script>alert(1)</script><img src=x onerror=alert(2)>"'&`
	r := &Run{Scenario: "s<b>", Seed: 1, Profile: "reported", Replay: "orchsim replay " + evil, Trace: numbered(
		ev(0, "agent/<x>", evil, evil, sim.A(evil, evil)),
		ev(time.Second, "invariant", "x-holds", "VIOLATED: "+evil),
	), Violation: &sim.Violation{Invariant: "x-holds", At: time.Second, Message: evil}}
	out := string(HTML(r))
	assert.NotContains(t, out, "<script>alert")
	assert.NotContains(t, out, "<img")
	assert.Equal(t, 1, strings.Count(out, "<script>"), "only the page's own script")
	assert.Contains(t, out, "&lt;/script&gt;")
}

func TestHTML_TimeAxis(t *testing.T) {
	assert.Equal(t, 0, gapWidth(0))
	assert.Equal(t, 2, gapWidth(time.Microsecond))
	prev := 0
	for _, d := range []time.Duration{time.Millisecond, 20 * time.Millisecond, time.Second, time.Minute, 30 * time.Minute,
		24 * time.Hour, 1000 * time.Hour} {
		w := gapWidth(d)
		assert.Greater(t, w, prev, "wider for %s", d)
		assert.Less(t, w, 200, "compressed for %s", d)
		prev = w
	}
	r := &Run{Scenario: "s", Trace: numbered(
		ev(0, "psm", "a", ""), ev(31*time.Minute, "psm", "b", ""),
	)}
	out := string(HTML(r))
	assert.Contains(t, out, `<g class="break">`)
	assert.Contains(t, out, ">+31m0s</text>")
	assert.Contains(t, out, ">T+00:31:00.000</text>")
}

func TestHTML_LargeFamiliesShareALane(t *testing.T) {
	var trace []sim.Event
	for i := 0; i < maxFamilyLanes+1; i++ {
		trace = append(trace, ev(time.Duration(i)*time.Second, fmt.Sprintf("pane/p%d", i), "pane.mount", "", sim.A("session", "s1")))
	}
	trace = append(trace, ev(time.Hour, "agent/thread-a", "preview_open", "ok"))
	out := string(HTML(&Run{Scenario: "s", Trace: numbered(trace...)}))
	assert.Contains(t, out, `<g class="lane" data-lane="pane/*">`)
	assert.NotContains(t, out, `data-lane="pane/p1"><rect`)
	assert.Contains(t, out, `<g class="lane" data-lane="agent/thread-a">`, "a small family keeps a lane per actor")
	assert.Contains(t, out, `data-lane="pane/p3" tabindex="0"><title>T+00:00:03.000  pane/p3`, "the event keeps its actor")
}

func TestRunCommand(t *testing.T) {
	sc, err := scenarios.Lookup("tab-ownership")
	require.NoError(t, err)
	res := scenarios.Result{Scenario: "tab-ownership", Seed: 5, Profile: model.MustProfile(model.PresetReported, []string{"stable-tab-owner"}, nil),
		Strategy: scenarios.PCT, Horizon: sc.Horizon}
	assert.Equal(t, "orchsim run --scenario tab-ownership --seed 5 --fix stable-tab-owner --strategy pct", RunCommand(&res))
	res.Profile, res.Strategy, res.Horizon = model.MustProfile(model.PresetFixed, nil, nil), scenarios.Swarm, sc.Horizon+time.Hour
	assert.Equal(t, "orchsim run --scenario tab-ownership --seed 5 --profile fixed --horizon "+(sc.Horizon+time.Hour).String(), RunCommand(&res))
}

func TestCorpusIsWhereTheTestsLook(t *testing.T) {
	_, err := os.Stat(corpusDir)
	require.NoError(t, err)
}

// tabOwnerBugAlone is every fix but stable-tab-owner: the seeds these tests
// name fail on #23021 whatever other bugs the reported profile gains.
func tabOwnerBugAlone() model.Profile {
	return model.MustSpec(model.Spec{Preset: model.PresetFixed, Unfix: []string{string(model.StableTabOwner)}})
}

// A violation's report names the known bugs off in the run that declare
// its invariant, each linked to its report; a fixed switch is not named.
func TestHTML_NamesTheKnownBugs(t *testing.T) {
	cfg := scenarios.Config{Scenario: "tab-ownership", Seed: 5, Profile: tabOwnerBugAlone(), KeepTrace: true}
	res, err := scenarios.Run(cfg)
	require.NoError(t, err)
	require.NotNil(t, res.Violation)
	r := FromResult(&res, "orchsim run --scenario tab-ownership --seed 5")
	require.Len(t, r.Known, 1)
	assert.Equal(t, "stable-tab-owner", r.Known[0].Switch)
	page := string(HTML(r))
	assert.Contains(t, page, `<code>stable-tab-owner</code> <a href="https://github.com/pingdotgg/t3code/issues/23021">t3code#23021</a>`)
}
