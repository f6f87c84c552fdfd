package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/orchsim/orchsim/model"
)

// Hunt 2's modelling defect (docs/findings.md): in terminal-remount seed
// 2022910 under fixed and commit, a delivery's paste times out unabsorbed
// (a slow TUI), the user sends the same prompt again, and the second paste,
// drawn faster, was shown before the first: its Enter then landed while the
// first was still accumulating. A PTY is a byte stream, so Claude absorbs
// input in the order it was written; with that, the seed passes. The test
// first checks that the run still contains the coincidence (a paste written
// while an earlier one is unabsorbed), so it cannot pass vacuously.
func TestFindings_LaterPasteNeverOvertakesAnEarlierOne(t *testing.T) {
	res := mustRun(t, Config{Scenario: TerminalRemount, Seed: 2022910,
		Profile: model.MustProfile(model.PresetFixed, nil, nil), Strategy: Commit, KeepTrace: true})
	pending, overlapped := 0, false
	for _, ev := range res.Trace {
		switch {
		case ev.Actor == "main" && ev.Kind == "delivery.write" && strings.HasPrefix(ev.Get("data"), "paste("):
			if pending > 0 {
				overlapped = true
			}
			pending++
		case ev.Kind == "composer" && ev.Outcome == "absorbed" && pending > 0:
			pending--
		}
	}
	require.True(t, overlapped, "seed 2022910 no longer writes a paste while an earlier one is unabsorbed: the models changed; find another seed with `orchsim fuzz --scenario terminal-remount --profile fixed --strategy commit` and this model change reverted")
	assert.Nil(t, res.Violation, "seed 2022910 under fixed/commit: %v", res.Violation)
}
