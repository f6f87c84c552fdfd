package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// The shipped CI files: every orchsim command line they run must name
// subcommands and flags the CLI has, with values of the right type.
const (
	workflowDir = "../../.github/workflows"
	k8sDir      = "../../deploy/kubernetes"
)

// workflow is the part of a GitHub Actions workflow the checks read.
type workflow struct {
	Name string                 `yaml:"name"`
	Jobs map[string]workflowJob `yaml:"jobs"`
}

type workflowJob struct {
	Needs    any `yaml:"needs"`
	Strategy struct {
		Matrix map[string]any `yaml:"matrix"`
	} `yaml:"strategy"`
	Steps []workflowStep `yaml:"steps"`
}

type workflowStep struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
}

// k8sObject is the part of a Kubernetes manifest the checks read.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    *int   `yaml:"completions"`
		Parallelism    *int   `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				Containers []struct {
					Name    string   `yaml:"name"`
					Command []string `yaml:"command"`
					Args    []string `yaml:"args"`
					Env     []struct {
						Name string `yaml:"name"`
					} `yaml:"env"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func readWorkflow(t *testing.T, name string) workflow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(workflowDir, name))
	require.NoError(t, err)
	var w workflow
	require.NoError(t, yaml.Unmarshal(b, &w), name)
	require.NotEmpty(t, w.Jobs, "%s has jobs", name)
	return w
}

func readManifests(t *testing.T, name string) []k8sObject {
	t.Helper()
	f, err := os.Open(filepath.Join(k8sDir, name))
	require.NoError(t, err)
	defer f.Close()
	dec := yaml.NewDecoder(f)
	var out []k8sObject
	for {
		var o k8sObject
		err := dec.Decode(&o)
		if err == io.EOF {
			break
		}
		require.NoError(t, err, name)
		out = append(out, o)
	}
	require.NotEmpty(t, out, name)
	return out
}

// ghExpr is a GitHub Actions expression, ${{ ... }}.
var ghExpr = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// expandExpressions replaces ${{ matrix.shard }} with a shard index (so
// --shard 0/16 is checked like a literal) and any other expression with a
// shell variable (a value known only when the workflow runs).
func expandExpressions(s string) string {
	return ghExpr.ReplaceAllStringFunc(s, func(m string) string {
		if ghExpr.FindStringSubmatch(m)[1] == "matrix.shard" {
			return "0"
		}
		return "$GITHUB_EXPRESSION"
	})
}

// shellWords splits a shell script into simple commands, each a list of
// words with quotes removed. It knows what CI scripts use: quotes,
// backslash escapes and line continuations, $(...) and ${...}, and the
// operators ; & && || | ( ) and newlines between commands; redirections
// (> >> < 2> 2>&1) and their targets are dropped.
func shellWords(script string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord, dropNext := false, false
	flushWord := func() {
		if inWord {
			if dropNext {
				dropNext = false
			} else {
				words = append(words, w.String())
			}
		}
		w.Reset()
		inWord = false
	}
	flushCmd := func() {
		flushWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	rs := []rune(script)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\\' && i+1 < len(rs):
			i++
			if rs[i] != '\n' {
				w.WriteRune(rs[i])
				inWord = true
			}
		case c == '\'':
			inWord = true
			for i++; i < len(rs) && rs[i] != '\''; i++ {
				w.WriteRune(rs[i])
			}
		case c == '"':
			inWord = true
			for i++; i < len(rs) && rs[i] != '"'; i++ {
				if rs[i] == '\\' && i+1 < len(rs) {
					i++
				}
				w.WriteRune(rs[i])
			}
		case c == '$' && i+1 < len(rs) && (rs[i+1] == '(' || rs[i+1] == '{'):
			open, closing := rs[i+1], map[rune]rune{'(': ')', '{': '}'}[rs[i+1]]
			depth := 0
			inWord = true
			for ; i < len(rs); i++ {
				w.WriteRune(rs[i])
				if rs[i] == open {
					depth++
				} else if rs[i] == closing {
					if depth--; depth == 0 {
						break
					}
				}
			}
		case c == '#' && !inWord:
			for i+1 < len(rs) && rs[i+1] != '\n' {
				i++
			}
		case c == ' ' || c == '\t':
			flushWord()
		case c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
			flushCmd()
		case c == '>' || c == '<':
			if inWord && (w.String() == "1" || w.String() == "2") {
				w.Reset() // the file descriptor of 2> or 1>
				inWord = false
			}
			flushWord()
			for i+1 < len(rs) && rs[i+1] == '>' {
				i++
			}
			if i+1 < len(rs) && rs[i+1] == '&' {
				i++
				if i+1 < len(rs) && rs[i+1] >= '0' && rs[i+1] <= '9' {
					for i+1 < len(rs) && rs[i+1] >= '0' && rs[i+1] <= '9' {
						i++ // 2>&1: no target
					}
					continue
				}
			}
			dropNext = true // the redirection's target
		default:
			w.WriteRune(c)
			inWord = true
		}
	}
	flushCmd()
	return cmds
}

// shellKeywords may precede a command.
var shellKeywords = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "do": true, "while": true,
	"until": true, "!": true, "time": true, "exec": true, "command": true, "{": true}

// orchsimArgs returns the arguments of an orchsim invocation in a simple
// command (bin/orchsim ..., orchsim ..., go run ./cmd/orchsim ...), or nil.
func orchsimArgs(words []string) []string {
	for len(words) > 0 && (shellKeywords[words[0]] || regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`).MatchString(words[0])) {
		words = words[1:]
	}
	if len(words) == 0 {
		return nil
	}
	if filepath.Base(words[0]) == "orchsim" {
		return append([]string{}, words[1:]...)
	}
	if words[0] == "go" && len(words) > 2 && words[1] == "run" {
		for i, w := range words[2:] {
			if w == "./cmd/orchsim" || w == "github.com/orchsim/orchsim/cmd/orchsim" {
				return append([]string{}, words[i+3:]...)
			}
		}
	}
	return nil
}

// checkCommand checks one orchsim command line against the CLI: the
// subcommand exists, every flag is one of its flags, every literal value
// parses as the flag's type, the positional arguments are accepted, and
// fuzz gets exactly one of --seeds and --budget and a valid --shard.
func checkCommand(args []string) error {
	root := withMerge(newRoot(io.Discard, io.Discard))
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd == root {
		return fmt.Errorf("no subcommand in %q", args)
	}
	var positional []string
	flags := map[string]string{}
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			positional = append(positional, rest[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := cmd.Flags().Lookup(name)
		if !strings.HasPrefix(a, "--") && len(name) == 1 {
			f = cmd.Flags().ShorthandLookup(name)
		}
		if f == nil {
			return fmt.Errorf("%s has no flag %s", cmd.CommandPath(), a)
		}
		if !hasVal && f.Value.Type() != "bool" {
			if i+1 >= len(rest) {
				return fmt.Errorf("%s %s needs a value", cmd.CommandPath(), a)
			}
			i++
			val, hasVal = rest[i], true
		}
		flags[f.Name] = val
		if hasVal && !strings.Contains(val, "$") {
			if err := f.Value.Set(val); err != nil {
				return fmt.Errorf("%s %s %q: %v", cmd.CommandPath(), a, val, err)
			}
		}
	}
	if cmd.Args != nil {
		if err := cmd.Args(cmd, positional); err != nil {
			return fmt.Errorf("%s: %v", cmd.CommandPath(), err)
		}
	}
	if cmd.Name() == "fuzz" {
		_, seeds := flags["seeds"]
		_, budget := flags["budget"]
		if seeds == budget {
			return fmt.Errorf("fuzz needs exactly one of --seeds and --budget: %q", args)
		}
		if s, ok := flags["shard"]; ok && !strings.Contains(s, "$") {
			if _, _, err := parseShard(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// orchsimCommands lists the orchsim invocations in a script.
func orchsimCommands(script string) [][]string {
	var out [][]string
	for _, words := range shellWords(expandExpressions(script)) {
		if args := orchsimArgs(words); args != nil {
			out = append(out, args)
		}
	}
	return out
}

func TestShellWords(t *testing.T) {
	got := shellWords(`set +e
../bin/orchsim fuzz --scenario all --profile "$PROFILE" \
  --start "$START" --shard 3/16 --corpus 'a b' # comment
for f in corpus/*.json; do bin/orchsim replay "$f" --html "${f%.json}.html" > /dev/null 2>&1 || true; done
x=$(date -u +%s) && echo "$(( x / 86400 ))" >> "$GITHUB_OUTPUT"`)
	assert.Equal(t, [][]string{
		{"set", "+e"},
		{"../bin/orchsim", "fuzz", "--scenario", "all", "--profile", "$PROFILE", "--start", "$START", "--shard", "3/16", "--corpus", "a b"},
		{"for", "f", "in", "corpus/*.json"},
		{"do", "bin/orchsim", "replay", "$f", "--html", "${f%.json}.html"},
		{"true"},
		{"done"},
		{"x=$(date -u +%s)"},
		{"echo", "$(( x / 86400 ))"},
	}, got)
	assert.Equal(t, []string{"replay", "$f", "--html", "${f%.json}.html"}, orchsimArgs(got[3]))
	assert.Equal(t, []string{"fuzz", "--seeds", "3"}, orchsimArgs([]string{"go", "run", "./cmd/orchsim", "fuzz", "--seeds", "3"}))
	assert.Nil(t, orchsimArgs([]string{"go", "test", "./..."}))
}

func TestCheckCommand_CatchesMistakes(t *testing.T) {
	t.Setenv("JOB_COMPLETION_INDEX", "0")
	for _, ok := range [][]string{
		{"fuzz", "--scenario", "all", "--seeds", "10000", "--profile", "fixed"},
		{"fuzz", "--scenario", "all", "--budget", "$BUDGET", "--shard", "/16"},
		{"replay", "x.json", "--format", "mermaid", "--html", "x.html"},
		{"run", "--scenario", "tab-ownership", "--seed=5"},
		{"merge-summaries", "--out", "m.json", "a.json", "b.json"},
	} {
		assert.NoError(t, checkCommand(ok), "%q", ok)
	}
	for _, bad := range [][]string{
		{"fuzzz", "--scenario", "all"},                                    // unknown subcommand
		{"fuzz", "--scenario", "all", "--seed", "3"},                      // fuzz has --seeds, not --seed
		{"fuzz", "--scenario", "all", "--seeds", "many"},                  // not a number
		{"fuzz", "--scenario", "all", "--budget", "forty"},                // not a duration
		{"fuzz", "--scenario", "all"},                                     // neither --seeds nor --budget
		{"fuzz", "--scenario", "all", "--seeds", "1", "--shard", "16/16"}, // index out of range
		{"replay"},            // needs FILE
		{"run", "--scenario"}, // needs a value
		{"replay", "x.json", "--formatt", "text"},
	} {
		assert.Error(t, checkCommand(bad), "%q", bad)
	}
}

func TestWorkflows_CommandsExistInTheCLI(t *testing.T) {
	t.Setenv("JOB_COMPLETION_INDEX", "0")
	files, err := filepath.Glob(filepath.Join(workflowDir, "*.yml"))
	require.NoError(t, err)
	for _, want := range []string{"ci.yml", "nightly-fuzz.yml"} {
		require.Contains(t, files, filepath.Join(workflowDir, want))
	}
	seen := map[string]bool{}
	for _, f := range files {
		w := readWorkflow(t, filepath.Base(f))
		n := 0
		for jobName, job := range w.Jobs {
			for _, step := range job.Steps {
				if step.Run == "" {
					continue
				}
				for _, args := range orchsimCommands(step.Run) {
					n++
					seen[args[0]] = true
					t.Logf("%s/%s: orchsim %s", filepath.Base(f), jobName, strings.Join(args, " "))
					assert.NoError(t, checkCommand(args), "%s job %s step %q: orchsim %s", filepath.Base(f), jobName, step.Name,
						strings.Join(args, " "))
				}
			}
		}
		assert.NotZero(t, n, "%s runs orchsim", f)
	}
	for _, sub := range []string{"fuzz", "replay", "merge-summaries"} {
		assert.True(t, seen[sub], "the workflows run orchsim %s", sub)
	}
}

func TestWorkflows_CI(t *testing.T) {
	w := readWorkflow(t, "ci.yml")
	var scripts []string
	for _, job := range w.Jobs {
		for _, s := range job.Steps {
			scripts = append(scripts, s.Run)
		}
	}
	all := strings.Join(scripts, "\n")
	assert.Contains(t, all, "go test ./...")
	assert.Contains(t, all, "go test -tags browser")
	gate := false
	for _, args := range orchsimCommands(all) {
		if args[0] == "fuzz" && strings.Contains(strings.Join(args, " "), "--scenario all --profile fixed --seeds 10000") {
			gate = true
		}
	}
	assert.True(t, gate, "ci.yml gates on fuzz --scenario all --profile fixed --seeds 10000")
}

func TestWorkflows_NightlyShards(t *testing.T) {
	t.Setenv("JOB_COMPLETION_INDEX", "0")
	w := readWorkflow(t, "nightly-fuzz.yml")
	shard, ok := w.Jobs["shard"]
	require.True(t, ok, "a shard job")
	values, ok := shard.Strategy.Matrix["shard"].([]any)
	require.True(t, ok, "matrix.shard is a list")
	require.Len(t, values, 16)
	for i, v := range values {
		assert.Equal(t, i, v, "shards are 0..15")
	}
	var fuzzShard, recheck string
	uploads := 0
	for _, s := range shard.Steps {
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
			uploads++
			assert.Contains(t, s.With["name"], "${{ matrix.shard }}", "one artifact per shard")
		}
		if strings.Contains(s.Run, "--shard ${{ matrix.shard }}/") {
			for _, args := range shellWords(s.Run) {
				a := orchsimArgs(args)
				for i := range a {
					if a[i] == "--shard" && i+1 < len(a) {
						fuzzShard = a[i+1]
					}
					if a[i] == "--check-determinism" && i+1 < len(a) {
						recheck = a[i+1]
					}
				}
			}
		}
		if strings.Contains(s.Run, "orchsim replay") {
			assert.Contains(t, s.Run, "--html", "HTML reports of the failures")
		}
	}
	assert.Equal(t, "${{ matrix.shard }}/16", fuzzShard, "fuzz --shard ${{ matrix.shard }}/16")
	assert.Equal(t, "1", recheck, "the nightly shards re-check 1% of their seeds (fuzz --check-determinism 1)")
	assert.Equal(t, 1, uploads)

	merge, ok := w.Jobs["merge"]
	require.True(t, ok, "a merge job")
	assert.Equal(t, "shard", merge.Needs)
	merged := false
	for _, s := range merge.Steps {
		for _, args := range orchsimCommands(s.Run) {
			merged = merged || args[0] == "merge-summaries"
		}
	}
	assert.True(t, merged, "the merge job runs orchsim merge-summaries")
}

// CI cross-builds the six release targets, and the release workflow runs
// GoReleaser on a tag.
func TestWorkflows_CrossBuildAndRelease(t *testing.T) {
	w := readWorkflow(t, "ci.yml")
	cross, ok := w.Jobs["cross-build"]
	require.True(t, ok, "ci.yml has a cross-build job")
	assert.ElementsMatch(t, []any{"linux", "darwin", "windows"}, cross.Strategy.Matrix["goos"])
	assert.ElementsMatch(t, []any{"amd64", "arm64"}, cross.Strategy.Matrix["goarch"])
	r := readWorkflow(t, "release.yml")
	uses := false
	for _, s := range r.Jobs["release"].Steps {
		uses = uses || strings.HasPrefix(s.Uses, "goreleaser/goreleaser-action@")
	}
	assert.True(t, uses, "release.yml runs GoReleaser")
	b, err := os.ReadFile("../../.goreleaser.yaml")
	require.NoError(t, err)
	for _, want := range []string{"goos: [linux, darwin, windows]", "goarch: [amd64, arm64]", "checksum:", "./cmd/orchsim"} {
		assert.Contains(t, string(b), want)
	}
}

func TestKubernetes_IndexedJob(t *testing.T) {
	t.Setenv("JOB_COMPLETION_INDEX", "0")
	files, err := filepath.Glob(filepath.Join(k8sDir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	commands := map[string]int{}
	for _, f := range files {
		for _, o := range readManifests(t, filepath.Base(f)) {
			require.NotEmpty(t, o.APIVersion, f)
			require.NotEmpty(t, o.Kind, f)
			for _, c := range o.Spec.Template.Spec.Containers {
				var cmds [][]string
				if len(c.Command) >= 2 && filepath.Base(c.Command[0]) == "sh" && c.Command[len(c.Command)-1] == "-c" {
					require.Len(t, c.Args, 1, "%s: one script", f)
					cmds = orchsimCommands(c.Args[0])
				} else if args := orchsimArgs(append(append([]string{}, c.Command...), c.Args...)); args != nil {
					cmds = [][]string{args}
				}
				require.NotEmpty(t, cmds, "%s container %s runs orchsim", f, c.Name)
				for _, args := range cmds {
					t.Logf("%s/%s: orchsim %s", filepath.Base(f), c.Name, strings.Join(args, " "))
					commands[args[0]]++
					assert.NoError(t, checkCommand(args), "%s: orchsim %s", f, strings.Join(args, " "))
				}
			}
		}
	}
	assert.NotZero(t, commands["fuzz"])
	assert.NotZero(t, commands["merge-summaries"])

	objs := readManifests(t, "fuzz-job.yaml")
	require.Len(t, objs, 1)
	job := objs[0]
	assert.Equal(t, "batch/v1", job.APIVersion)
	assert.Equal(t, "Job", job.Kind)
	assert.Equal(t, "Indexed", job.Spec.CompletionMode, "JOB_COMPLETION_INDEX is set for Indexed Jobs")
	require.NotNil(t, job.Spec.Completions)
	require.NotNil(t, job.Spec.Parallelism)
	assert.Equal(t, *job.Spec.Completions, *job.Spec.Parallelism, "completions = parallelism")
	require.Len(t, job.Spec.Template.Spec.Containers, 1)
	script := job.Spec.Template.Spec.Containers[0].Args[0]
	var shards, recheck string
	for _, args := range orchsimCommands(script) {
		for i := range args {
			if args[0] == "fuzz" && args[i] == "--shard" && i+1 < len(args) {
				shards = args[i+1]
			}
			if args[0] == "fuzz" && args[i] == "--check-determinism" && i+1 < len(args) {
				recheck = args[i+1]
			}
		}
	}
	require.True(t, strings.HasPrefix(shards, "/"), "--shard /N takes the index from JOB_COMPLETION_INDEX, got %q", shards)
	n, err := strconv.Atoi(strings.TrimPrefix(shards, "/"))
	require.NoError(t, err)
	assert.Equal(t, *job.Spec.Completions, n, "completions = shards")
	assert.Equal(t, "1", recheck, "the Job re-checks 1% of its seeds (fuzz --check-determinism 1)")
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		assert.NotEqual(t, "JOB_COMPLETION_INDEX", e.Name, "Kubernetes sets the index; the Job must not override it")
	}
}

// TestMergeIsReachable checks that merge-summaries is on the command tree
// the workflows are checked against, registered by main.go or not.
func TestMergeIsReachable(t *testing.T) {
	root := withMerge(newRoot(io.Discard, io.Discard))
	c, _, err := root.Find([]string{"merge-summaries"})
	require.NoError(t, err)
	assert.Equal(t, "merge-summaries", c.Name())
}

// The nightly workflow and the Kubernetes Jobs judge the groups against
// a committed baseline (fuzz and merge-summaries --baseline), and the
// image carries the baselines.
func TestWorkflows_UseTheBaseline(t *testing.T) {
	t.Setenv("JOB_COMPLETION_INDEX", "0")
	var scripts []string
	w := readWorkflow(t, "nightly-fuzz.yml")
	for _, job := range []string{"shard", "merge"} {
		for _, s := range w.Jobs[job].Steps {
			scripts = append(scripts, s.Run)
		}
	}
	for _, f := range []string{"fuzz-job.yaml", "merge-job.yaml"} {
		for _, o := range readManifests(t, f) {
			for _, c := range o.Spec.Template.Spec.Containers {
				scripts = append(scripts, c.Args...)
			}
		}
	}
	with := map[string]int{}
	for _, s := range scripts {
		for _, args := range orchsimCommands(s) {
			for i, a := range args {
				if a == "--baseline" && i+1 < len(args) {
					with[args[0]]++
					assert.Contains(t, args[i+1], "baselines/", "a committed baseline")
				}
			}
		}
	}
	assert.Equal(t, 2, with["fuzz"], "the workflow's shards and the Job's pods")
	assert.Equal(t, 2, with["merge-summaries"], "the workflow's merge and the merge Job")
	b, err := os.ReadFile("../../deploy/Dockerfile")
	require.NoError(t, err)
	assert.Contains(t, string(b), "/usr/share/orchsim/baselines")
}
