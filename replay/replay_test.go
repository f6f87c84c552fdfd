package replay

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"orchsim/sim"
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
