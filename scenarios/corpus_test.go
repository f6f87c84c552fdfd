package scenarios

import (
	"path/filepath"
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
// A file that no longer fails is reported as "fixed: delete it or move it to
// passing/", never ignored. A fingerprint that drifted (the models changed
// since it was recorded) is logged, not failed: the story is the contract.
const corpusRoot = "../testdata/corpus"

func TestCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpusRoot, "*", "*.json"))
	require.NoError(t, err)
	top, err := filepath.Glob(filepath.Join(corpusRoot, "*.json"))
	require.NoError(t, err)
	files = append(files, top...)
	require.NotEmpty(t, files, "the corpus holds the seed bugs' shrunk failures")
	for _, path := range files {
		rel, _ := filepath.Rel(corpusRoot, path)
		t.Run(rel, func(t *testing.T) {
			f, err := replay.Read(path)
			require.NoError(t, err)
			prof, err := model.NewProfile(f.Profile, f.Fixes, f.Mutants)
			require.NoError(t, err)
			strategy, err := ParseStrategy(f.Strategy)
			require.NoError(t, err)
			cfg := Config{Scenario: f.Scenario, Seed: f.Seed, Profile: prof, Strategy: strategy, Off: f.Off,
				Horizon: time.Duration(f.Horizon), Tape: f.Tape}
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
			if got := replay.FormatFingerprint(res.Fingerprint); got != f.Fingerprint {
				t.Logf("fingerprint drifted: recorded %s, now %s (re-record with orchsim replay and shrink)", f.Fingerprint, got)
			}
			if strings.HasPrefix(rel, "reported"+string(filepath.Separator)) {
				cfg.Profile = model.MustProfile(model.PresetFixed, nil, f.Mutants)
				fixed := mustRun(t, cfg)
				assert.Nil(t, fixed.Violation, "the fixed profile must pass the reported failure")
			}
		})
	}
}
