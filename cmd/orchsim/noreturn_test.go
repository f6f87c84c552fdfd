package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var noReturnMark = regexp.MustCompile(`(?m)^  ⚑ point of no return: after this event the failure was certain \(\d+/\d+ reseeded continuations fail; \d+/\d+ after event \d+\)$`)

// run --no-return marks exactly one line of the timeline, right after an
// event before the violation; the HTML report links the same event; the
// last line is unchanged.
func TestRun_NoReturnMarksTheTimeline(t *testing.T) {
	html := filepath.Join(t.TempDir(), "r.html")
	args := []string{"run", "--scenario", "tab-ownership", "--seed", "5", "--profile", "fixed", "--unfix", "stable-tab-owner"}
	code, plain, _ := cli(t, args...)
	require.Equal(t, exitViolation, code)
	code, out, errOut := cli(t, append(args, "--no-return", "--html", html)...)
	require.Equal(t, exitViolation, code, errOut)
	marks := noReturnMark.FindAllStringIndex(out, -1)
	require.Len(t, marks, 1, out)
	assert.Equal(t, plain, out[:marks[0][0]]+out[marks[0][1]+1:], "the mark is the only difference")
	assert.Less(t, marks[0][0], strings.Index(out, "VIOLATED"), "the point precedes the violation")
	b, err := os.ReadFile(html)
	require.NoError(t, err)
	assert.Contains(t, string(b), "Point of no return (after this event the failure was certain)")
	assert.Contains(t, string(b), " noreturn\"")

	code, mer, _ := cli(t, append(args, "--no-return", "--format", "mermaid")...)
	require.Equal(t, exitViolation, code)
	// The story is the shrunk run: its own point, or a note that it has no
	// clear one.
	assert.Regexp(t, `⚑ point of no return: after this event the failure was certain \(|%% no clear point of no return: `, mer)
}

// explain names the point of no return of the file it explains (the #16184
// story: the lost response), says so when a dense failure has no clear
// one, and --tries outside 1 to 1000 is bad usage.
func TestExplain_NamesThePointOfNoReturn(t *testing.T) {
	dense, _ := failingReplayFile(t)
	code, out, errOut := cli(t, "explain", dense)
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `(?m)^point of no return: (event \d+ .*|none found: no clear point of no return: the failure was likely all along .*)$`, out)
	file := "../../testdata/corpus/reported/002-request-retry-one-effect-per-request.min.json"
	code, out, errOut = cli(t, "explain", file)
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `(?m)^point of no return: event \d+ at T\+\d\d:\d\d:\d\d\.\d{3} \(\d+/\d+ reseeded continuations fail; \d+/\d+ after event \d+\)$`, out)
	assert.Contains(t, out, "\n  after this event the failure was certain\n")
	for _, n := range []string{"0", "1001", "100000000"} {
		code, _, errOut = cli(t, "explain", file, "--tries", n)
		assert.Equal(t, exitUsage, code, n)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
		assert.Contains(t, errOut, "--tries must be 1 to 1000 (got "+n+")")
	}
}

// --no-return with nothing to mark (a JSON timeline, no --html) is bad
// usage, and so is a boolean flag given twice.
func TestNoReturn_RefusedWhereItShowsNothing(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--scenario", "tab-ownership", "--seed", "5", "--no-return", "--format", "json"},
		{"run", "--scenario", "tab-ownership", "--seed", "5", "--no-return", "--no-return"},
		{"run", "--scenario", "tab-ownership", "--seed", "5", "--keep-going=false", "--keep-going"},
	} {
		code, out, errOut := cli(t, args...)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Empty(t, out)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	}
}
