package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's run commands and the sample output under them are a promise
// to a new user: each command, with every flag it shows, must still end
// the way the first sample after it shows, with that sample's fingerprint.
// When a model change moves them, this test says so; update the README
// (pick seeds that still fail).
func TestREADME_SamplesAreCurrent(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme := string(b)
	cmdRe := regexp.MustCompile("(?m)^go run ./cmd/orchsim (run --scenario \\S+ --seed (\\d+)(?: --[a-z-]+ [^\\s#-][^\\s#]*)*) *(?:#.*)?$")
	cmds := cmdRe.FindAllStringSubmatchIndex(readme, -1)
	require.NotEmpty(t, cmds, "README has no run command")
	checked := 0
	for i, m := range cmds {
		args, seed := strings.Fields(readme[m[2]:m[3]]), readme[m[4]:m[5]]
		// The sample is the first violation line of this seed before the
		// next command.
		end := len(readme)
		if i+1 < len(cmds) {
			end = cmds[i+1][0]
		}
		want := regexp.MustCompile(`(?m)^violation: \S+ at \S+ seed=` + seed + ` fingerprint=[0-9a-f]{16}$`).FindString(readme[m[1]:end])
		if want == "" {
			continue // a command without a sample (e.g. the fixed profile)
		}
		code, out, _ := cli(t, args...)
		assert.Equal(t, exitViolation, code, "%v", args)
		assert.Equal(t, want, lastLineOf(out), "%v", args)
		checked++
	}
	assert.GreaterOrEqual(t, checked, 2, "the first screen's main job and the second report both show a sample")
}
