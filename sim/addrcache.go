package sim

import "unsafe"

// AddrCache remembers up to AddrCacheSlots string keys by the address and
// length of their bytes, each with a value, in front of a map the caller
// keeps as the truth. A model's ids (a session's "s3") are built once and
// then copied by value through its messages and into every event's
// attributes, so a lookup mostly comes with the very bytes of an earlier
// one: two compares find it, where a map lookup hashes and compares the
// key. A key with the same bytes at another address misses (the caller
// asks its map and Puts the answer). Strings are immutable and the cache
// holds the address it keys on (keeping those bytes alive), so a hit is
// the same key. The caller must Forget a key it deletes from its map, or
// a changed value, before the next Get.
//
// The zero value is empty and ready to use. Lookup only: it is never
// ranged over, so it decides nothing by order.
type AddrCache[V any] struct {
	keys [AddrCacheSlots]addrKey
	vals [AddrCacheSlots]V
}

// AddrCacheSlots is the number of keys an AddrCache remembers (a power of
// two); a Put replaces the key in its slot.
const AddrCacheSlots = 16

type addrKey struct {
	p *byte
	n int
}

func addrSlot(s string) int {
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return int((p>>3 ^ p>>9 ^ uintptr(len(s))) & (AddrCacheSlots - 1))
}

// Get returns the value Put for a key with the same bytes at the same
// address as s, and whether there was one. An empty s always misses.
func (c *AddrCache[V]) Get(s string) (V, bool) {
	i := addrSlot(s)
	if k := &c.keys[i]; k.p == unsafe.StringData(s) && k.n == len(s) && k.p != nil {
		return c.vals[i], true
	}
	var zero V
	return zero, false
}

// Put remembers v for s (an empty s is not remembered).
func (c *AddrCache[V]) Put(s string, v V) {
	if len(s) == 0 {
		return
	}
	i := addrSlot(s)
	c.keys[i], c.vals[i] = addrKey{unsafe.StringData(s), len(s)}, v
}

// Forget drops every remembered key equal to s, at any address.
func (c *AddrCache[V]) Forget(s string) {
	var zero V
	for i := range c.keys {
		if k := &c.keys[i]; k.n == len(s) && k.p != nil && unsafe.String(k.p, k.n) == s {
			c.keys[i], c.vals[i] = addrKey{}, zero
		}
	}
}

// Reset drops every key.
func (c *AddrCache[V]) Reset() { *c = AddrCache[V]{} }
