package replay

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/orchsim/orchsim/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func sample() *File {
	return &File{Scenario: "tab-ownership", Profile: "reported", Seed: 5, Strategy: "swarm", Horizon: Duration(24 * time.Hour),
		Violation:   &sim.Violation{Invariant: "thread-keeps-its-tabs", At: time.Hour, Message: "m"},
		Fingerprint: "0123456789abcdef", Events: 3, Tape: []sim.Choice{{Actor: "a", Label: "x", N: 3, Value: 2}}}
}

func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.json")
	require.NoError(t, Write(path, sample()))
	got, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, sample().Tape, got.Tape)
	assert.Equal(t, Format, got.Format)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	entries, _ := os.ReadDir(filepath.Dir(path))
	assert.Len(t, entries, 1, "no temporary file left behind")
}

func TestWriteFollowsSymlinksAndKeepsDevices(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
	require.NoError(t, os.Symlink(target, link))
	require.NoError(t, WriteFileAtomic(link, []byte("new")))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSymlink, "the link is still a link")
	b, _ := os.ReadFile(target)
	assert.Equal(t, "new", string(b))

	fifo := filepath.Join(dir, "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan []byte)
	go func() {
		b, _ := os.ReadFile(fifo)
		done <- b
	}()
	require.NoError(t, WriteFileAtomic(fifo, []byte("through the pipe")))
	assert.Equal(t, "through the pipe", string(<-done))
	fi, err = os.Lstat(fifo)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeNamedPipe, "the pipe was not replaced by a file")

	assert.Error(t, WriteFileAtomic(dir, []byte("x")), "a directory is refused")
	assert.Error(t, WriteFileAtomic("", []byte("x")))
}

// A dangling link names the file to create: the write creates the link's
// target (through a chain of links, relative ones included) and leaves the
// link a link, as the doc of WriteFileAtomic says.
func TestWriteCreatesADanglingLinksTarget(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink("chain.json", link))
	require.NoError(t, os.Symlink(filepath.Join("sub", "real.json"), filepath.Join(dir, "chain.json")))
	target, err := WriteTarget(link)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "sub", "real.json"), target)

	require.NoError(t, Write(link, sample()))
	for _, l := range []string{link, filepath.Join(dir, "chain.json")} {
		fi, err := os.Lstat(l)
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode()&os.ModeSymlink, "%s is still a link", l)
	}
	got, err := Read(filepath.Join(dir, "sub", "real.json"))
	require.NoError(t, err)
	assert.Equal(t, sample().Tape, got.Tape)
	entries, _ := os.ReadDir(filepath.Join(dir, "sub"))
	assert.Len(t, entries, 1, "no temporary file left behind")

	nowhere := filepath.Join(dir, "nowhere.json")
	require.NoError(t, os.Symlink(filepath.Join(dir, "no", "such", "dir.json"), nowhere))
	assert.Error(t, WriteFileAtomic(nowhere, []byte("x")), "the target's directory does not exist")
	fi, err := os.Lstat(nowhere)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSymlink, "a failed write leaves the link alone")

	loop := filepath.Join(dir, "loop.json")
	require.NoError(t, os.Symlink(loop, loop))
	assert.Error(t, WriteFileAtomic(loop, []byte("x")))
}

func TestParseRejects(t *testing.T) {
	for name, body := range map[string]string{
		"garbage":        "{not json",
		"wrong format":   `{"format":"other","version":1}`,
		"future version": `{"format":"orchsim-replay","version":3,"scenario":"s","fingerprint":"0123456789abcdef","horizon":"1h"}`,
		"no scenario":    `{"format":"orchsim-replay","version":1,"fingerprint":"0123456789abcdef","horizon":"1h"}`,
		"zero horizon":   `{"format":"orchsim-replay","version":1,"scenario":"s","fingerprint":"0123456789abcdef","horizon":"0s"}`,
		"bad print":      `{"format":"orchsim-replay","version":1,"scenario":"s","fingerprint":"xyz","horizon":"1h"}`,
		"unknown field":  `{"format":"orchsim-replay","version":1,"scenario":"s","fingerprint":"0123456789abcdef","horizon":"1h","extra":1}`,
		"tape range":     `{"format":"orchsim-replay","version":1,"scenario":"s","fingerprint":"0123456789abcdef","horizon":"1h","tape":[{"actor":"a","label":"x","n":2,"v":2}]}`,
	} {
		_, err := Parse([]byte(body))
		assert.Error(t, err, name)
	}
}

// A replay file is one JSON object: trailing garbage or a second object
// (two files concatenated) is a malformed file, not a replay of the first.
func TestParseRejectsDataAfterTheObject(t *testing.T) {
	good, err := Marshal(sample())
	require.NoError(t, err)
	_, err = Parse(append(good, " \n\t\n"...))
	require.NoError(t, err, "trailing white space is fine")
	for name, tail := range map[string]string{
		"garbage":       "garbage",
		"a brace":       "}",
		"second object": string(good),
	} {
		_, err := Parse(append(append([]byte{}, good...), tail...))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "malformed replay file", name)
	}
}

// An explicit empty tape is a tape (every draw answers 0), an absent one
// re-draws from the seed; the writer omits an empty tape.
func TestEmptyTapeIsKeptApartFromNoTape(t *testing.T) {
	f := sample()
	f.Tape = []sim.Choice{}
	b, err := Marshal(f)
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"tape"`)
	got, err := Parse(b)
	require.NoError(t, err)
	assert.Nil(t, got.Tape, "absent: re-drawn from the seed")
	withEmpty := strings.Replace(string(b), `"events": 3`, `"events": 3, "tape": []`, 1)
	_, err = Parse([]byte(withEmpty))
	require.ErrorIs(t, err, ErrTapeEdited, "a tape added by hand is an edit")
	withEmpty = regexp.MustCompile(`,\s*"tape_hash": "[0-9a-f]+"`).ReplaceAllString(withEmpty, "")
	_, err = Parse([]byte(withEmpty))
	require.ErrorIs(t, err, ErrTapeEdited, "a version-2 tape without a tape_hash")
	withEmpty = strings.Replace(withEmpty, `"version": 2`, `"version": 1`, 1)
	got, err = Parse([]byte(withEmpty))
	require.NoError(t, err)
	assert.NotNil(t, got.Tape, "present and empty: replayed as an empty tape")
	assert.Empty(t, got.Tape)
}

// The tape hash covers what decides the draws (scenario, seed, strategy,
// off, compacted, the tape): editing any of them is refused as an edited or
// damaged tape. What a user edits to test a fix (profile, fixes, mutants,
// horizon) is not covered; nor is the recorded outcome, which replay
// checks against the run. A version-1 file without a tape_hash is read as
// before; a version-2 one with a tape is refused.
func TestTapeHash_RefusesAnEditedTape(t *testing.T) {
	good, err := Marshal(sample())
	require.NoError(t, err)
	require.Contains(t, string(good), `"tape_hash": "`+TapeHash(sample())+`"`)
	_, err = Parse(good)
	require.NoError(t, err)
	edit := func(old, new string) []byte {
		t.Helper()
		require.Contains(t, string(good), old)
		return []byte(strings.Replace(string(good), old, new, 1))
	}
	for name, b := range map[string][]byte{
		"a tape value within its range": edit(`"v":2`, `"v":1`),
		"a tape range":                  edit(`"n":3`, `"n":4`),
		"a tape entry's site":           edit(`"label":"x"`, `"label":"y"`),
		"the tape cut":                  edit(`"tape": [`+"\n"+`    {"actor":"a","label":"x","n":3,"v":2}`+"\n  ]", `"tape": []`),
		"the tape removed":              edit(`,`+"\n"+`  "tape": [`+"\n"+`    {"actor":"a","label":"x","n":3,"v":2}`+"\n  ]", ``),
		"the seed":                      edit(`"seed": 5`, `"seed": 2`),
		"the scenario":                  edit(`"scenario": "tab-ownership"`, `"scenario": "request-retry"`),
		"the strategy":                  edit(`"strategy": "swarm"`, `"strategy": "random"`),
		"off":                           edit(`"strategy": "swarm",`, `"strategy": "swarm", "off": ["user/thread-a"],`),
		"compacted":                     edit(`"events": 3,`, `"events": 3, "compacted": true,`),
	} {
		_, err := Parse(b)
		require.Error(t, err, name)
		assert.ErrorIs(t, err, ErrTapeEdited, name)
		assert.Contains(t, err.Error(), "the tape was edited or damaged: ", name)
	}
	for name, b := range map[string][]byte{
		"the profile":     edit(`"profile": "reported"`, `"profile": "fixed"`),
		"fixes":           edit(`"profile": "reported",`, `"profile": "reported", "fixes": ["stable-tab-owner"],`),
		"the horizon":     edit(`"horizon": "24h0m0s"`, `"horizon": "2h0m0s"`),
		"the fingerprint": edit(`"fingerprint": "0123456789abcdef"`, `"fingerprint": "0000000000000000"`),
		"no tape_hash, version 1": []byte(strings.Replace(regexp.MustCompile(`,\s*"tape_hash": "[0-9a-f]+"`).ReplaceAllString(string(edit(`"v":2`, `"v":1`)), ""),
			`"version": 2`, `"version": 1`, 1)),
	} {
		_, err := Parse(b)
		assert.NoError(t, err, name)
	}
	_, err = Parse(edit(`"tape_hash": "`, `"tape_hash": "zz`))
	assert.ErrorContains(t, err, "malformed replay file: tape_hash")
}

// A compacted tape leaves out trailing zero choices, so an empty one is a
// tape of zeros, not a run to re-draw from the seed: it is written "tape":
// [] and read back as a present, empty tape.
func TestCompactedEmptyTapeIsWritten(t *testing.T) {
	f := sample()
	f.Tape, f.Compacted = nil, true
	b, err := Marshal(f)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"compacted": true`)
	assert.Contains(t, string(b), `"tape": []`)
	got, err := Parse(b)
	require.NoError(t, err)
	assert.NotNil(t, got.Tape)
	assert.Empty(t, got.Tape)
	assert.True(t, got.Compacted)
}

func TestStreamFD(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "out.json")
	require.NoError(t, os.Symlink("/dev/stdout", link))
	pid := strconv.Itoa(os.Getpid())
	for path, want := range map[string]int{
		"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2, "/dev/fd/3": 3, "/dev/../dev/fd/4": 4,
		"/proc/self/fd/1": 1, "/proc/thread-self/fd/2": 2, "/proc/" + pid + "/fd/7": 7, link: 1,
	} {
		fd, ok := StreamFD(path)
		assert.True(t, ok, path)
		assert.Equal(t, want, fd, path)
	}
	for _, path := range []string{"/dev/null", "/dev/full", "/dev/fd/x", "/dev/fd/03", "/dev/fd/-1", "/proc/1/fd/1",
		filepath.Join(dir, "f.json"), "stdout", ""} {
		_, ok := StreamFD(path)
		assert.False(t, ok, path)
	}
}

// With stdout redirected to a file, /dev/stdout resolves to that file:
// a write to a stream goes to the descriptor, after what was written to it
// and before what comes next, and neither truncates nor replaces the file.
func TestWriteFileAtomic_WritesAStreamInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.txt")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	before, err := os.Stat(path)
	require.NoError(t, err)
	_, err = f.WriteString("timeline\n")
	require.NoError(t, err)
	for _, name := range []string{"/dev/fd/", "/proc/self/fd/"} {
		require.NoError(t, WriteFileAtomic(name+strconv.Itoa(int(f.Fd())), []byte("json\n")))
	}
	_, err = f.WriteString("last line\n")
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "timeline\njson\njson\nlast line\n", string(b))
	after, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "the file was not replaced")
}

// The settings hash covers what a user edits to test a fix (profile,
// fixes, mutants, horizon, event budget), lists in any order; the file
// still parses when they are edited, and says so.
func TestSettingsHash_SaysWhenTheSettingsWereEdited(t *testing.T) {
	f := sample()
	f.Fixes, f.EventBudget = []string{"b", "a"}, 50
	good, err := Marshal(f)
	require.NoError(t, err)
	require.Contains(t, string(good), `"settings_hash": "`+SettingsHash(f)+`"`)
	require.Contains(t, string(good), `"event_budget": 50`)
	got, err := Parse(good)
	require.NoError(t, err)
	assert.False(t, got.SettingsEdited())
	assert.Equal(t, uint64(50), got.EventBudget)
	edit := func(old, new string) *File {
		t.Helper()
		require.Contains(t, string(good), old)
		f, err := Parse([]byte(strings.Replace(string(good), old, new, 1)))
		require.NoError(t, err)
		return f
	}
	assert.False(t, edit(`"b",`, `"b" ,`).SettingsEdited(), "white space")
	for name, f := range map[string]*File{
		"the profile":      edit(`"profile": "reported"`, `"profile": "fixed"`),
		"fixes":            edit(`"b",`, `"b", "c",`),
		"mutants":          edit(`"profile": "reported",`, `"profile": "reported", "mutants": ["m"],`),
		"the horizon":      edit(`"horizon": "24h0m0s"`, `"horizon": "2h0m0s"`),
		"the event budget": edit(`"event_budget": 50`, `"event_budget": 51`),
	} {
		assert.True(t, f.SettingsEdited(), name)
	}
	f.Fixes = []string{"a", "b"}
	assert.Equal(t, SettingsHash(f), got.SettingsHash, "lists are sorted")
	noBudget := sample()
	b, err := Marshal(noBudget)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "event_budget", "the default budget is left out")
}

// A tape_hash or settings_hash that is present must be valid: "" and null
// are not "no hash"; a version-2 file with a tape or compacted must carry
// a tape_hash; keys may not repeat or differ in case.
func TestParse_RefusesHashBypassesAndAmbiguousKeys(t *testing.T) {
	good, err := Marshal(sample())
	require.NoError(t, err)
	hash := regexp.MustCompile(`"tape_hash": "[0-9a-f]+"`)
	for name, b := range map[string]string{
		"empty tape_hash":      hash.ReplaceAllString(string(good), `"tape_hash": ""`),
		"null tape_hash":       hash.ReplaceAllString(string(good), `"tape_hash": null`),
		"empty settings_hash":  regexp.MustCompile(`"settings_hash": "[0-9a-f]+"`).ReplaceAllString(string(good), `"settings_hash": ""`),
		"compacted, no hash":   `{"format":"orchsim-replay","version":2,"scenario":"s","fingerprint":"0123456789abcdef","horizon":"1h","compacted":true}`,
		"duplicate key":        strings.Replace(string(good), `"seed": 5,`, `"seed": 5, "seed": 2,`, 1),
		"upper-case key":       strings.Replace(string(good), `"seed": 5,`, `"SEED": 5,`, 1),
		"nested duplicate":     strings.Replace(string(good), `"invariant":`, `"at": 1, "invariant":`, 1),
		"tape key case":        strings.Replace(string(good), `"actor":"a"`, `"Actor":"a"`, 1),
		"upper-case print":     strings.Replace(string(good), `"0123456789abcdef"`, `"0123456789ABCDEF"`, 1),
		"tape_hash upper-case": strings.Replace(string(good), `"tape_hash": "`+TapeHash(sample()), `"tape_hash": "`+strings.ToUpper(TapeHash(sample())), 1),
	} {
		_, err := Parse([]byte(b))
		assert.Error(t, err, name)
	}
	_, err = Parse([]byte(`{"format":"orchsim-replay","version":2,"scenario":"s","fingerprint":"0123456789abcdef","horizon":"1h"}`))
	assert.NoError(t, err, "no tape, not compacted: re-drawn from the seed, nothing to hash")
	_, err = ParseFingerprint("0123456789ABCDEF")
	assert.Error(t, err)
}

// A byte-order mark before the object is skipped; one anywhere else is not.
func TestParse_SkipsALeadingByteOrderMark(t *testing.T) {
	f := &File{Scenario: "tab-ownership", Profile: "reported", Seed: 1, Strategy: "swarm", Horizon: Duration(time.Hour), Fingerprint: "0123456789abcdef"}
	b, err := Marshal(f)
	require.NoError(t, err)
	got, err := Parse(append([]byte("\ufeff"), b...))
	require.NoError(t, err)
	assert.Equal(t, uint64(1), got.Seed)
	_, err = Parse(append(append([]byte("\ufeff"), b...), []byte("\ufeff")...))
	assert.Error(t, err)
}
