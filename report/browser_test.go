//go:build browser

// Browser tests: the Mermaid diagram and the HTML report of the seed bugs,
// rendered in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core). They sit behind the build tag so that `go test ./...`
// stays hermetic; .ci/run installs what they need and runs them as
//
//	apt-get install -y chromium
//	(cd report/browsertest && npm ci)
//	go test -tags browser ./report/...
//
// Screenshots and the rendered inputs are kept as test artifacts in
// $ORCHSIM_ARTIFACTS (default: orchsim-browser-artifacts under the system
// temporary directory).
package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is the module root (report/ is one level down).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "tests run in report/")
	return root
}

func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ORCHSIM_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "orchsim-browser-artifacts")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// orchsimBin builds the CLI once per test binary.
func orchsimBin(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "orchsim-browser-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "orchsim")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/orchsim")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = errors.New(string(out))
		}
	})
	require.NoError(t, buildErr, "go build ./cmd/orchsim")
	return binPath
}

// requireBrowserTools fails (not skips: the tag asks for these tests) with
// the install step that is missing.
func requireBrowserTools(t *testing.T) string {
	t.Helper()
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	_, err := os.Stat(chromium)
	require.NoError(t, err, "Chromium is missing: apt-get install -y chromium (or set CHROMIUM)")
	_, err = exec.LookPath("node")
	require.NoError(t, err, "Node.js is missing")
	dir := filepath.Join(repoRoot(t), "report", "browsertest")
	for _, p := range []string{"node_modules/playwright-core/package.json", "node_modules/mermaid/dist/mermaid.min.js"} {
		_, err := os.Stat(filepath.Join(dir, p))
		require.NoError(t, err, "npm packages are missing: (cd report/browsertest && npm ci)")
	}
	return dir
}

// orchsim runs the CLI and returns its exit code, stdout and stderr.
func orchsim(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(orchsimBin(t), args...)
	cmd.Dir = repoRoot(t)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return code, out.String(), errb.String()
}

// requireReproduces checks a replay's exit: 1 when the recorded violation
// reproduces. 3 (the fingerprint moved because the models changed) is left
// to the corpus test to report; the picture is still of a failing run.
func requireReproduces(t *testing.T, code int, stderr string) {
	t.Helper()
	switch code {
	case 1:
	case 3:
		t.Logf("the fingerprint differs from the replay file (scenarios' corpus test reports it): %s", strings.TrimSpace(stderr))
	default:
		t.Fatalf("replay exit %d, want 1: %s", code, stderr)
	}
}

// render runs render.mjs and decodes its JSON result into out.
func render(t *testing.T, dir, mode, input, screenshot string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "render.mjs", mode, input, screenshot)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node render.mjs %s: %s", mode, stderr.String())
	require.NoError(t, json.Unmarshal(stdout.Bytes(), out), "render.mjs printed: %s", stdout.String())
}

// violationRed is the report's violation colour (#d11f2f) and its tints.
func violationRed(r, g, b float64) bool { return r > 180 && g < 90 && b < 100 }

// violationPink is the Mermaid violation block's background, rgb(255, 221, 221).
func violationPink(r, g, b float64) bool { return r > 245 && g > 205 && g < 235 && b > 205 && b < 235 }

// pixelStats reads a PNG and returns the variance of its luminance and the
// share of its pixels for which mark is true.
func pixelStats(t *testing.T, path string, mark func(r, g, b float64) bool) (variance float64, marked float64, size image.Point) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	b := img.Bounds()
	var n, sum, sumSq, reds float64
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			r8, g8, b8 := float64(r>>8), float64(g>>8), float64(bl>>8)
			l := 0.2126*r8 + 0.7152*g8 + 0.0722*b8
			n++
			sum += l
			sumSq += l * l
			if mark(r8, g8, b8) {
				reds++
			}
		}
	}
	mean := sum / n
	return sumSq/n - mean*mean, reds / n, b.Size()
}

type mermaidResult struct {
	OK           bool     `json:"ok"`
	Error        string   `json:"error"`
	SyntaxError  bool     `json:"syntaxError"`
	SVGLength    int      `json:"svgLength"`
	Messages     int      `json:"messages"`
	Notes        int      `json:"notes"`
	Participants int      `json:"participants"`
	Rects        int      `json:"rects"`
	Text         string   `json:"text"`
	Errors       []string `json:"errors"`
	Requests     []string `json:"requests"`
}

func TestBrowser_MermaidRendersSeedBug000(t *testing.T) {
	dir := requireBrowserTools(t)
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "corpus", "reported", "000-*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1, "the replay file of seed bug 000")
	rel, err := filepath.Rel(repoRoot(t), files[0])
	require.NoError(t, err)
	code, diagram, stderr := orchsim(t, "replay", rel, "--format", "mermaid")
	requireReproduces(t, code, stderr)
	require.True(t, strings.HasPrefix(diagram, "sequenceDiagram\n"), diagram)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if code == 3 { // then the mismatch message follows it
		last = lines[max(0, len(lines)-2)]
	}
	assert.Regexp(t, `^violation: thread-keeps-its-tabs at T\+`, last, "the last line goes to stderr")

	art := artifactsDir(t)
	input := filepath.Join(art, "seed-bug-000.mmd")
	require.NoError(t, os.WriteFile(input, []byte(diagram), 0o644))
	shot := filepath.Join(art, "seed-bug-000-mermaid.png")
	var res mermaidResult
	render(t, dir, "mermaid", input, shot, &res)
	t.Logf("artifacts: %s, %s", input, shot)

	require.True(t, res.OK, "Mermaid failed to render the diagram: %s", res.Error)
	assert.Empty(t, res.Error)
	assert.False(t, res.SyntaxError, "Mermaid drew its syntax error picture")
	assert.Empty(t, res.Errors, "console errors")
	assert.Empty(t, res.Requests, "rendering fetched nothing")
	assert.GreaterOrEqual(t, res.Participants, 2*5, "participants are drawn at the top and bottom")
	assert.Greater(t, res.Messages, 20)
	assert.Greater(t, res.Notes, 1, "the timer and the violation are notes")
	assert.Equal(t, 1, res.Rects, "the violation's highlighted block")
	for _, want := range []string{"provider session manager", "credential registry", "browser host", "agentMismatch",
		"VIOLATED thread-keeps-its-tabs", "session.release"} {
		assert.Contains(t, res.Text, want)
	}
	variance, pink, size := pixelStats(t, shot, violationPink)
	assert.Greater(t, variance, 100.0, "the screenshot is not blank (%v)", size)
	assert.Greater(t, pink, 0.005, "the violation block is highlighted in the picture")
}

// Every seed bug's diagram renders too (each draws other arrows: lost
// answers, terminal processes).
func TestBrowser_MermaidRendersEverySeedBug(t *testing.T) {
	dir := requireBrowserTools(t)
	art := artifactsDir(t)
	for _, file := range corpusFiles(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			abs, err := filepath.Abs(file)
			require.NoError(t, err)
			rel, err := filepath.Rel(repoRoot(t), abs)
			require.NoError(t, err)
			code, diagram, stderr := orchsim(t, "replay", rel, "--format", "mermaid")
			requireReproduces(t, code, stderr)
			input := filepath.Join(art, name+".mmd")
			require.NoError(t, os.WriteFile(input, []byte(diagram), 0o644))
			shot := filepath.Join(art, name+"-mermaid.png")
			var res mermaidResult
			render(t, dir, "mermaid", input, shot, &res)
			require.True(t, res.OK, "Mermaid failed to render %s: %s", input, res.Error)
			assert.False(t, res.SyntaxError)
			assert.Empty(t, res.Errors)
			assert.Equal(t, 1, res.Rects, "the violation's highlighted block")
			variance, _, size := pixelStats(t, shot, violationPink)
			assert.Greater(t, variance, 100.0, "the screenshot is not blank (%v)", size)
		})
	}
}

type htmlResult struct {
	Lanes            int      `json:"lanes"`
	LanesDrawn       int      `json:"lanesDrawn"`
	LanesDeclared    int      `json:"lanesDeclared"`
	LaneNames        []string `json:"laneNames"`
	Events           int      `json:"events"`
	EventsDeclared   int      `json:"eventsDeclared"`
	Violation        bool     `json:"violation"`
	ViolationVisible bool     `json:"violationVisible"`
	ViolationText    string   `json:"violationText"`
	Details          string   `json:"details"`
	Replay           string   `json:"replay"`
	Errors           []string `json:"errors"`
	Requests         []string `json:"requests"`
}

func TestBrowser_HTMLReportOfEachSeedBug(t *testing.T) {
	dir := requireBrowserTools(t)
	art := artifactsDir(t)
	for _, file := range corpusFiles(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			_, res := replayRun(t, file)
			require.NotNil(t, res.Violation)
			steps := make([]step, len(res.Trace))
			for i := range res.Trace {
				steps[i] = route(&res.Trace[i])
			}
			laneOf := laneNamer(res.Trace, steps)
			actors := map[string]bool{} // by lane: a large family shares one
			for i := range res.Trace {
				actors[laneOf(res.Trace[i].Actor)] = true
			}
			abs, err := filepath.Abs(file)
			require.NoError(t, err)
			rel, err := filepath.Rel(repoRoot(t), abs)
			require.NoError(t, err)
			page := filepath.Join(art, name+".html")
			code, _, stderr := orchsim(t, "replay", rel, "--html", page)
			requireReproduces(t, code, stderr)
			shot := filepath.Join(art, name+".png")
			var got htmlResult
			render(t, dir, "html", page, shot, &got)
			t.Logf("artifacts: %s, %s", page, shot)

			assert.Empty(t, got.Errors, "script errors")
			require.Len(t, got.Requests, 1, "the page loads itself and nothing else: %v", got.Requests)
			assert.True(t, strings.HasPrefix(got.Requests[0], "file://"))
			assert.Equal(t, got.LanesDeclared, got.Lanes)
			assert.Equal(t, got.Lanes, got.LanesDrawn, "every lane has a size on the page")
			assert.GreaterOrEqual(t, got.Lanes, len(actors), "a lane per actor at least")
			for a := range actors {
				assert.Contains(t, got.LaneNames, a)
			}
			assert.Equal(t, len(res.Trace), got.Events)
			assert.Equal(t, got.EventsDeclared, got.Events)
			assert.True(t, got.Violation, "the violation is marked on the timeline")
			assert.True(t, got.ViolationVisible, "the timeline is scrolled to the violation")
			assert.Contains(t, got.ViolationText, res.Violation.Invariant)
			assert.Contains(t, got.Details, res.Violation.Invariant, "the details panel starts on the violation")
			assert.Equal(t, "orchsim replay "+rel, got.Replay)

			variance, red, size := pixelStats(t, shot, violationRed)
			assert.Greater(t, variance, 100.0, "the screenshot is not blank (%v)", size)
			assert.Greater(t, red, 0.001, "the violation is visible in red")
		})
	}
}
