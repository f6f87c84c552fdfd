package scenarios

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
	"github.com/orchsim/orchsim/replay"
)

// corpusRoot is the regression corpus: replay files of found failures.
//
//	testdata/corpus/reported/  failures of the reported bugs: each must still
//	                           fail (with its recorded invariant) under its
//	                           recorded profile, and pass under fixed.
//	testdata/corpus/passing/   failures that were fixed and are kept as
//	                           passing regressions: each must pass.
//	testdata/corpus/*.json     any other failure: must still fail as recorded.
//
// The corpus is judged by outcome. A file that no longer fails, or fails
// another invariant, is a failure ("fixed: delete it or move it to
// passing/", never ignored). A fingerprint that drifted with the outcome
// unchanged (the trace gained or changed an attribute since the file was
// recorded) is reported, not failed: the story is the contract, and
//
//	go test ./scenarios -run TestCorpus -rerecord
//
// writes the new fingerprint (and event count) into the file, so that
// `orchsim replay` of it matches again. Review the diff: only those two
// fields change.
const corpusRoot = "../testdata/corpus"

var rerecord = flag.Bool("rerecord", false, "write the new fingerprint of corpus files whose trace drifted, outcome unchanged")

func TestCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpusRoot, "*", "*.json"))
	require.NoError(t, err)
	top, err := filepath.Glob(filepath.Join(corpusRoot, "*.json"))
	require.NoError(t, err)
	files = append(files, top...)
	require.NotEmpty(t, files, "the corpus holds the seed bugs' shrunk failures")
	for _, path := range files {
		rel, _ := filepath.Rel(corpusRoot, path)
		path := path
		t.Run(rel, func(t *testing.T) {
			f, err := replay.Read(path)
			require.NoError(t, err)
			prof, err := f.Spec().Profile()
			require.NoError(t, err)
			strategy, err := ParseStrategy(f.Strategy)
			require.NoError(t, err)
			cfg := Config{Scenario: f.Scenario, Seed: f.Seed, Profile: prof, Strategy: strategy, Off: f.Off,
				Horizon: time.Duration(f.Horizon), Tape: f.Tape, KeepGoing: f.KeepGoing, EventBudget: f.EventBudget}
			res := mustRun(t, cfg)
			if strings.HasPrefix(rel, "passing"+string(filepath.Separator)) {
				assert.Nil(t, res.Violation, "a kept passing regression fails again")
				return
			}
			require.NotNil(t, f.Violation, "a corpus file outside passing/ records its violation")
			if res.Violation == nil {
				t.Fatalf("fixed: %s no longer fails (recorded %s); delete it or move it to passing/", rel, f.Violation.Invariant)
			}
			assert.Equal(t, f.Violation.Invariant, res.Violation.Invariant)
			if got := replay.FormatFingerprint(res.Fingerprint); got != f.Fingerprint && res.Violation.Invariant == f.Violation.Invariant {
				if *rerecord {
					require.NoError(t, rerecordFile(path, f, &res))
					t.Logf("re-recorded %s: fingerprint %s, %d events", rel, got, res.Events)
				} else {
					t.Logf("fingerprint drifted: recorded %s, now %s, same outcome (go test ./scenarios -run TestCorpus -rerecord)", f.Fingerprint, got)
				}
			}
			if strings.HasPrefix(rel, "reported"+string(filepath.Separator)) {
				cfg.Profile = model.MustProfile(model.PresetFixed, nil, f.Mutants)
				fixed := mustRun(t, cfg)
				assert.Nil(t, fixed.Violation, "the fixed profile must pass the reported failure")
			}
		})
	}
}

// rerecordFile writes what a run of f produced (fingerprint, event count
// and the violation's time and message) into the replay file at path,
// keeping everything that decides the run (tape, seed, settings).
func rerecordFile(path string, f *replay.File, res *Result) error {
	f.Fingerprint, f.Events = replay.FormatFingerprint(res.Fingerprint), res.Events
	if res.Violation != nil {
		v := *res.Violation
		f.Violation = &v
	}
	return replay.Write(path, f)
}

// Re-recording a drifted file restores it byte for byte: only the
// fingerprint, event count and violation are rewritten, and Marshal keeps
// the rest as recorded.
func TestCorpus_RerecordRestoresADriftedFile(t *testing.T) {
	src := filepath.Join(corpusRoot, "reported", "000-tab-ownership-thread-keeps-its-tabs.min.json")
	want, err := os.ReadFile(src)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "drifted.json")
	drifted := strings.Replace(string(want), `"events": `, `"events": 9`, 1)
	drifted = regexp.MustCompile(`"fingerprint": "[0-9a-f]{16}"`).ReplaceAllString(drifted, `"fingerprint": "0123456789abcdef"`)
	require.NotEqual(t, string(want), drifted)
	require.NoError(t, os.WriteFile(path, []byte(drifted), 0o644))

	f, err := replay.Read(path)
	require.NoError(t, err)
	prof, err := f.Spec().Profile()
	require.NoError(t, err)
	res := mustRun(t, Config{Scenario: f.Scenario, Seed: f.Seed, Profile: prof, Strategy: Strategy(f.Strategy), Off: f.Off,
		Horizon: time.Duration(f.Horizon), Tape: f.Tape, KeepGoing: f.KeepGoing, EventBudget: f.EventBudget})
	require.NoError(t, rerecordFile(path, f, &res))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}
