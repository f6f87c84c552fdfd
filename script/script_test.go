package script

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the script files' expected output with the actual output (review the diff)")

// testdata is where the project's script files live.
const testdata = "../scenarios/testdata"

// TestScripts runs every script file under scenarios/testdata (found by
// their language line, see Discover) and compares each command's output
// with the file's. Regenerate the expected output with
//
//	go test ./script -run TestScripts -rewrite
//
// and read the diff; `orchsim script --rewrite FILE...` does the same for
// chosen files.
func TestScripts(t *testing.T) {
	files, err := Discover(testdata)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 41, "every script of scenarios/testdata is discovered")
	for _, path := range files {
		rel, err := filepath.Rel(testdata, path)
		require.NoError(t, err)
		t.Run(filepath.ToSlash(rel), func(t *testing.T) { Check(t, path, *rewrite) })
	}
}

// Check runs the script file at path and fails t on an error or on output
// that differs from the file's (printing the diff); with rewrite it
// writes the actual output into the file instead.
func Check(t *testing.T, path string, rewrite bool) {
	t.Helper()
	res, err := RunFile(path)
	require.NoError(t, err)
	if rewrite {
		require.NoError(t, WriteAtomic(path, res.Rewritten()))
		return
	}
	if d := res.Diff(); d != "" {
		t.Errorf("output differs from the file's (go test ./script -run TestScripts -rewrite):\n%s", d)
	}
}

func TestDiscover_RefusesAScriptWithoutLanguage(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "CASES"), []byte("# ids\nOM-01\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ok"), []byte("# language: t3\n"), 0o644))
	files, err := Discover(dir)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "ok")}, files, "a file without a language line and separators is not a script")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "forgot"), []byte("new\n----\nok\n"), 0o644))
	_, err = Discover(dir)
	require.ErrorContains(t, err, "forgot: has ---- separators but no")
}

// Render with each command's expected output gives the file back byte for
// byte: -rewrite changes only the outputs that changed.
func TestRender_RoundTripsEveryScript(t *testing.T) {
	files, err := Discover(testdata)
	require.NoError(t, err)
	for _, path := range files {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		f, err := Parse(path, data)
		require.NoError(t, err)
		var want []string
		for _, c := range f.Commands {
			want = append(want, c.Expected)
		}
		require.Equal(t, string(data), string(f.Render(want)), path)
	}
}

func TestParse_Format(t *testing.T) {
	src := "# head\n# language: terminal\n\ncmd a=1 b=(x y, (z, w)) bare \\\n  more\n----\none\ntwo\n\n# between\nnext\n----\n----\nx\n\ny\n----\n----\n\nlast\n----\n"
	f, err := Parse("f", []byte(src))
	require.NoError(t, err)
	require.Equal(t, "terminal", f.Language)
	require.Len(t, f.Commands, 3)
	c := f.Commands[0]
	require.Equal(t, 4, c.Line)
	require.Equal(t, []Arg{{"a", []string{"1"}}, {"b", []string{"x y", "(z, w)"}}, {"bare", nil}, {"more", nil}}, c.Args)
	require.Equal(t, "one\ntwo\n", c.Expected)
	require.Equal(t, "x\n\ny\n", f.Commands[1].Expected)
	require.Equal(t, 11, f.Commands[1].Line)
	require.Equal(t, "", f.Commands[2].Expected)
	// Rendering new outputs: a blank line in an output takes the ---- ---- form.
	got := string(f.Render([]string{"one\n", "x\n", "a\n\nb\n"}))
	require.Equal(t, "# head\n# language: terminal\n\ncmd a=1 b=(x y, (z, w)) bare \\\n  more\n----\none\n\n# between\nnext\n----\nx\n\nlast\n----\n----\na\n\nb\n----\n----\n", got)
}

func TestParse_Errors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"new\n----\n\n", `f:1: no "# language: NAME" line before the first command (languages: t3, terminal)`},
		{"# language: t3\nnew x=(a\n----\n", "f:2: cannot parse the command line at column 7: new x=(a"},
		{"# language: t3\n# language: t3\n", "f:2: a second language line (the first is line 1)"},
		{"# language: t3\nnew\n----\n----\nx\n----\n----\ny\n", "f:8: non-blank line after the closing ---- ---- pair"},
	} {
		_, err := Parse("f", []byte(tc.src))
		require.EqualError(t, err, tc.want, tc.src)
	}
}

// A misspelt or unused argument, an unknown command or language, and input
// under a command are errors naming the file and line.
func TestRun_BadCommandsNameTheLine(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"# language: terminal\nnew profile=reported chek=none\n----\n", `f:2: new: unknown or unused argument "chek=none"`},
		{"# language: terminal\nboot\n----\n", "f:2: boot before new"},
		{"# language: terminal\nnew\n----\n\nfly s1\n----\n", `f:5: unknown command "fly"`},
		{"# language: t3\nnew threads=(a:codex) sed=2\n----\n", `f:2: new: unknown or unused argument "sed=2"`},
		{"# language: t3\nnew threads=(a:codex)\ninput\n----\n", "f:2: new takes no input (lines between the command and ----)"},
		{"# language: cobol\nnew\n----\n", `f:1: unknown language "cobol" (languages: t3, terminal)`},
		{"# language: t3\nnew threads=(a:codex)\n----\n\nprompt thread=a\n----\n\ncall thread=a tool=delegate_task client-timeout=default\n----\n",
			"f:8: client-timeout=default: instance codex has no client-side call timeout"},
		{"# language: t3\nnew threads=(a:codex)\n----\n\nregistry liveness=soon\n----\n", `f:5: registry: liveness="soon": time: invalid duration "soon"`},
		{"# language: t3\nnew threads=(a:codex) nested=2/1\n----\n", `f:2: nested="2/1": want a chance N/D with 0 <= N <= D, D > 0`},
		{"# language: t3\nnew threads=(a:codex) nested=half\n----\n", `f:2: nested="half": want a chance N/D with 0 <= N <= D, D > 0`},
		{"# language: t3\nnew threads=(a:codex) scheduling=yes\n----\n", `f:2: new: scheduling="yes": want true or false`},
		{"# language: t3\nnew threads=(a:codex)\n----\n\nschedule which=#1 on=false\n----\n", "f:5: schedule which=#1: want #N, one of the 0 schedule rows so far"},
		{"# language: t3\nnew threads=(a:codex)\n----\n\nschedule which=1\n----\n", "f:5: schedule which=1: want #N, one of the 0 schedule rows so far"},
		{"# language: t3\nnew threads=(a:codex)\n----\n\nstorm thread=a events=0\n----\n", "f:5: storm events=0: want a positive number of events"},
		{"# language: t3\nnew threads=(a:codex)\n----\n\nprompt thread=a\n----\n\ncall thread=a tool=delegate_task call-id=toolu_1 redelivered\n----\n",
			"f:8: call redelivered needs the call-id= of an earlier call"},
	} {
		_, err := Run("f", []byte(tc.src))
		require.EqualError(t, err, tc.want, tc.src)
	}
}

// A new invariant changes no script's expected output: a test build that
// registers one more invariant in every group the languages check
// (invariants/extra_testbuild.go) runs TestScripts, and a test showing the
// extra invariant did judge the scripts.
func TestScripts_NewInvariantChangesNoGolden(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goBin, "test", "-count=1", "-tags", "orchsim_extra_invariant",
		"-run", "^(TestScripts|TestExtraInvariantReachesTheScripts)$", "-v", ".")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: TestExtraInvariantReachesTheScripts")
	require.Contains(t, string(out), "--- PASS: TestScripts ")
}
