package model

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// uniqueID draws ids of every shape uniqueSet splits: random hex with a
// few prefixes or many (past maxUniquePrefixes), leading zeros, runs
// longer than 12 digits, upper case, ".N" suffixes, no hex at all.
func uniqueID(t *rapid.T) string {
	prefix := rapid.SampledFrom([]string{"", "conn-", "tok_", "x.", "X", "9-"}).Draw(t, "prefix")
	if rapid.IntRange(0, 4).Draw(t, "many") == 0 {
		prefix = fmt.Sprintf("p%dz-", rapid.IntRange(0, 400).Draw(t, "prefix-n"))
	}
	digits := rapid.StringOfN(rapid.SampledFrom([]rune("0123456789abcdefA")), 0, 15, -1).Draw(t, "digits")
	id := prefix + digits
	if rapid.IntRange(0, 5).Draw(t, "suffixed") == 0 {
		id = fmt.Sprintf("%s.%d", id, rapid.IntRange(2, 12).Draw(t, "suffix"))
	}
	return id
}

// uniqueSet answers as a set of strings does, whatever ids it is given.
func TestUniqueSet_MatchesStringSet(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var u uniqueSet
		want := map[string]bool{}
		if rapid.Bool().Draw(t, "fill") { // number every prefix there is
			for i := range maxUniquePrefixes + 5 {
				id := fmt.Sprintf("f%dq-a%d", i, i%10)
				u.add(id)
				want[id] = true
			}
		}
		for range rapid.IntRange(1, 600).Draw(t, "ops") {
			id := uniqueID(t)
			require.Equal(t, want[id], u.has(id), "has %q", id)
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 1:
				u.add(id)
				want[id] = true
				require.True(t, u.has(id), "has %q after add", id)
			case 2:
				require.Equal(t, !want[id], u.insert(id), "insert %q", id)
				want[id] = true
			}
		}
		for id, in := range want {
			require.Equal(t, in, u.has(id), "has %q", id)
		}
	})
}

// Env.Unique hands out every id once, suffixing repeats as before.
func TestEnv_UniqueSuffixesRepeats(t *testing.T) {
	var e Env
	require.Equal(t, "3fa9c2d1", e.Unique("3fa9c2d1"))
	require.Equal(t, "3fa9c2d1.2", e.Unique("3fa9c2d1"))
	require.Equal(t, "3fa9c2d1.3", e.Unique("3fa9c2d1"))
	require.Equal(t, "conn-3fa9c2d1", e.Unique("conn-3fa9c2d1"))
	require.Equal(t, "03fa9c2d1", e.Unique("03fa9c2d1"))
	require.Equal(t, "conn-3fa9c2d1.2", e.Unique("conn-3fa9c2d1"))
}

// wordSet answers as a map does, through its growths, for words that
// differ in their low bits only, their high bits only, or anywhere.
func TestWordSet_MatchesMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s wordSet
		want := map[uint64]bool{}
		shift := rapid.SampledFrom([]uint{0, 8, 32, 56}).Draw(t, "shift")
		for range rapid.IntRange(1, 3000).Draw(t, "ops") {
			w := rapid.Uint64Range(1, 400).Draw(t, "w") << shift
			if rapid.IntRange(0, 3).Draw(t, "random") == 0 || w == 0 { // 0 is no word: a shift can overflow to it
				w = rapid.Uint64Min(1).Draw(t, "any")
			}
			require.Equal(t, want[w], s.has(w), "has %x", w)
			require.Equal(t, !want[w], s.insert(w), "insert %x", w)
			want[w] = true
		}
		for w := range want {
			require.True(t, s.has(w), "has %x", w)
		}
		require.Equal(t, len(want), s.n)
	})
}
