package sim

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

type chainNode struct {
	id          int
	key         string
	next, next2 *chainNode
}

func chainOf(c *Chains[chainNode], key string, link func(*chainNode) **chainNode) []int {
	var ids []int
	for n := c.First(key); n != nil; n = *link(n) {
		ids = append(ids, n.id)
	}
	return ids
}

// Chains against a map of slices: random appends and removals (of a first
// node, a later one, or one not in the chain) leave every key's chain the
// model's slice, in order.
func TestChains_MatchesSlicesPerKey(t *testing.T) {
	link := func(n *chainNode) **chainNode { return &n.next }
	rapid.Check(t, func(t *rapid.T) {
		var c Chains[chainNode]
		model := map[string][]*chainNode{}
		keys := []string{"a", "b", "c"}
		var all []*chainNode
		for i := range rapid.IntRange(0, 200).Draw(t, "ops") {
			key := rapid.SampledFrom(keys).Draw(t, "key")
			if len(all) == 0 || rapid.Bool().Draw(t, "append") {
				n := &chainNode{id: i, key: key}
				c.Append(key, n, link)
				model[key] = append(model[key], n)
				all = append(all, n)
				continue
			}
			n := rapid.SampledFrom(all).Draw(t, "node")
			c.Remove(key, n, link) // key may not be n's: then nothing changes
			if j := slices.Index(model[key], n); j >= 0 {
				model[key] = slices.Delete(model[key], j, j+1)
				require.Nil(t, n.next, "a removed node keeps no link")
			}
		}
		for _, key := range keys {
			var want []int
			for _, n := range model[key] {
				want = append(want, n.id)
			}
			require.Equal(t, want, chainOf(&c, key, link), "chain %s", key)
			if len(want) == 0 {
				_, kept := c.first[key]
				require.False(t, kept, "an emptied key leaves the map")
			}
		}
	})
}

// One node in two chains through two link fields: each chain keeps its
// own order.
func TestChains_TwoLinksPerNode(t *testing.T) {
	l1 := func(n *chainNode) **chainNode { return &n.next }
	l2 := func(n *chainNode) **chainNode { return &n.next2 }
	var byKey, byParity Chains[chainNode]
	nodes := make([]*chainNode, 6)
	for i := range nodes {
		nodes[i] = &chainNode{id: i, key: fmt.Sprint(i % 3)}
		byKey.Append(nodes[i].key, nodes[i], l1)
		byParity.Append(fmt.Sprint(i%2), nodes[i], l2)
	}
	byParity.Remove("0", nodes[2], l2)
	require.Equal(t, []int{0, 4}, chainOf(&byParity, "0", l2))
	require.Equal(t, []int{2, 5}, chainOf(&byKey, "2", l1), "the other chain is untouched")
}
