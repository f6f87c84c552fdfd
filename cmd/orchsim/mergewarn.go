package main

import (
	"fmt"
	"io"

	"github.com/orchsim/orchsim/fuzz"
)

// warnMissingReplayFiles warns, in one line, of the replay files m names
// that exist neither as resolved against their summary's directory
// (readSummary) nor from the working directory.
func warnMissingReplayFiles(w io.Writer, m *fuzz.Merged) {
	n, first := 0, ""
	for _, f := range m.ReplayFiles() {
		if !exists(f) {
			if n == 0 {
				first = f
			}
			n++
		}
	}
	if n > 0 {
		fmt.Fprintf(w, "orchsim: warning: %s the summaries name found in neither the summary's directory nor the working directory (first: %s): download the shards' corpus beside their summaries, or merge from where the fuzz ran\n",
			plural(n, "replay file"), first)
	}
}
