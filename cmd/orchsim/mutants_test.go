package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"orchsim/model"
)

// Every mutant is killed by some invariant within a few seeds, and the
// table names each mutant.
func TestMutants_AllKilled(t *testing.T) {
	code, out, errOut := cli(t, "mutants", "--seeds", "60")
	assert.Equal(t, exitOK, code, "%s%s", out, errOut)
	for _, m := range model.Mutants() {
		assert.Contains(t, out, string(m.Name))
	}
	assert.NotContains(t, out, "SURVIVED")
}

func TestMutants_BadSeeds(t *testing.T) {
	code, _, errOut := cli(t, "mutants", "--seeds", "0")
	assert.Equal(t, exitUsage, code)
	assert.True(t, strings.HasPrefix(errOut, "orchsim: "))
}
