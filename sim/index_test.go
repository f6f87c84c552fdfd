package sim

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUnindex(t *testing.T) {
	m := map[string][]int{"a": {1, 2, 1}, "b": {3}}
	Unindex(m, "a", 1) // the first 1 only, order kept
	assert.Equal(t, []int{2, 1}, m["a"])
	Unindex(m, "a", 7) // absent value: unchanged
	assert.Equal(t, []int{2, 1}, m["a"])
	Unindex(m, "c", 1) // absent key: not created
	_, ok := m["c"]
	assert.False(t, ok)
	Unindex(m, "b", 3) // last value: the key goes
	_, ok = m["b"]
	assert.False(t, ok)
	Unindex(m, "a", 2)
	Unindex(m, "a", 1)
	assert.Empty(t, m)
	assert.True(t, slices.Equal([]int(nil), m["a"]))
}
