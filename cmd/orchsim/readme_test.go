package main

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's first command and the sample output under it are a promise
// to a new user: the seed it names must still fail the way it shows, with
// the fingerprint it shows. When a model change moves them, this test says
// so; update the README (pick a seed that still fails).
func TestREADME_MainJobOutputIsCurrent(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme := string(b)
	cmd := regexp.MustCompile("go run ./cmd/orchsim (run --scenario (\\S+) --seed (\\d+))\\s").FindStringSubmatch(readme)
	require.NotNil(t, cmd, "README has no run command")
	want := regexp.MustCompile(`(?m)^violation: \S+ at \S+ seed=` + cmd[3] + ` fingerprint=[0-9a-f]{16}$`).FindString(readme)
	require.NotEmpty(t, want, "README shows no violation line for seed %s", cmd[3])
	code, out, _ := cli(t, "run", "--scenario", cmd[2], "--seed", cmd[3])
	assert.Equal(t, exitViolation, code)
	assert.Equal(t, want, lastLineOf(out))
}
