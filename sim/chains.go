package sim

// Chains indexes nodes of type N by a string key, each key's nodes in
// the order they were appended, as a singly linked chain through a link
// field of N: the map holds a key's first node, and link(n) is the
// address of n's field that points to the next node of the same key.
// Finding a key's first node is one map lookup, appending walks the
// key's chain, removing walks it up to the node removed: a cost in the
// key's nodes, not in all of them (a world of 1,000 threads keeps
// hundreds of runs, turns or processes at once, few per key). One N may
// sit in several Chains through different link fields.
//
// The zero value is empty and ready to use. Lookup only: never ranged
// over, so it decides nothing by order.
type Chains[N any] struct {
	first map[string]*N
}

// First returns key's first node, or nil.
func (c *Chains[N]) First(key string) *N { return c.first[key] }

// Append puts n, whose link must be nil, last in key's chain.
func (c *Chains[N]) Append(key string, n *N, link func(*N) **N) {
	if c.first == nil {
		c.first = map[string]*N{}
	}
	q := c.first[key]
	if q == nil {
		c.first[key] = n
		return
	}
	for *link(q) != nil {
		q = *link(q)
	}
	*link(q) = n
}

// Remove unlinks n from key's chain and clears its link; a node not in
// the chain is left as it is.
func (c *Chains[N]) Remove(key string, n *N, link func(*N) **N) {
	q := c.first[key]
	if q == n {
		if next := *link(n); next == nil {
			delete(c.first, key)
		} else {
			c.first[key] = next
		}
		*link(n) = nil
		return
	}
	for ; q != nil; q = *link(q) {
		if *link(q) == n {
			*link(q) = *link(n)
			*link(n) = nil
			return
		}
	}
}
