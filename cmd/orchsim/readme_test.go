package main

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's run commands and the sample output under them are a promise
// to a new user: each seed it names must still end the way it shows, with
// the fingerprint it shows. When a model change moves them, this test says
// so; update the README (pick seeds that still fail).
func TestREADME_SamplesAreCurrent(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme := string(b)
	cmds := regexp.MustCompile("go run ./cmd/orchsim run --scenario (\\S+) --seed (\\d+)\\s").FindAllStringSubmatch(readme, -1)
	require.NotEmpty(t, cmds, "README has no run command")
	checked := 0
	for _, cmd := range cmds {
		want := regexp.MustCompile(`(?m)^violation: \S+ at \S+ seed=` + cmd[2] + ` fingerprint=[0-9a-f]{16}$`).FindString(readme)
		if want == "" {
			continue // a command without a sample (e.g. the fixed profile)
		}
		code, out, _ := cli(t, "run", "--scenario", cmd[1], "--seed", cmd[2])
		assert.Equal(t, exitViolation, code, "%s seed %s", cmd[1], cmd[2])
		assert.Equal(t, want, lastLineOf(out))
		checked++
	}
	assert.GreaterOrEqual(t, checked, 2, "the first screen's main job and the second report both show a sample")
}
