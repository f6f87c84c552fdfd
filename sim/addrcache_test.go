package sim

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// A map looked up through an AddrCache (Get, else the map and Put; Forget
// on every delete or change) answers as the map alone does, over random
// puts, deletes and lookups of keys that share bytes (the same string,
// substrings of one string), have equal bytes at other addresses, or are
// empty, more keys than the cache has slots.
func TestAddrCache_LookupsMatchTheMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := strings.Repeat("s1s2s3session", 4)
		var keys []string
		for range rapid.IntRange(1, 3*AddrCacheSlots).Draw(t, "keys") {
			i := rapid.IntRange(0, len(base)).Draw(t, "from")
			j := rapid.IntRange(i, min(len(base), i+8)).Draw(t, "to")
			k := base[i:j]
			if rapid.Bool().Draw(t, "copy") {
				k = strings.Clone(k) // equal bytes elsewhere
			}
			keys = append(keys, k)
		}
		key := rapid.SampledFrom(keys)
		truth := map[string]int{}
		var c AddrCache[int]
		lookup := func(k string) int {
			if v, ok := c.Get(k); ok {
				return v
			}
			v := truth[k]
			c.Put(k, v)
			return v
		}
		for step := range rapid.IntRange(1, 300).Draw(t, "steps") {
			k := key.Draw(t, "key")
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0:
				truth[k] = step + 1
				c.Forget(k)
			case 1:
				delete(truth, k)
				c.Forget(k)
			case 2:
				if rapid.Bool().Draw(t, "reset") {
					c.Reset()
				}
			default:
				if got, want := lookup(k), truth[k]; got != want {
					t.Fatalf("step %d: lookup(%q) = %d, the map says %d", step, k, got, want)
				}
			}
		}
	})
}

// Get misses a key until it is Put, and an empty key always.
func TestAddrCache_EmptyAndUnknownMiss(t *testing.T) {
	var c AddrCache[int]
	if _, ok := c.Get(""); ok {
		t.Fatal("empty key hit an empty cache")
	}
	c.Put("", 1)
	if _, ok := c.Get(""); ok {
		t.Fatal("empty key hit after Put")
	}
	s := strings.Clone("s7")
	if _, ok := c.Get(s); ok {
		t.Fatal("unknown key hit")
	}
	c.Put(s, 7)
	if v, ok := c.Get(s); !ok || v != 7 {
		t.Fatalf("Get after Put: %d, %v", v, ok)
	}
	if _, ok := c.Get(strings.Clone(s)); ok {
		t.Fatal("equal bytes at another address hit")
	}
}

// Two keys at the same address whose lengths differ by the slot count
// share a slot: the longer one misses where the shorter was put.
func TestAddrCache_SameAddressOtherLengthMisses(t *testing.T) {
	var c AddrCache[int]
	s := strings.Repeat("abcdefgh", 8)
	short, long := s[:4], s[:4+AddrCacheSlots]
	if addrSlot(short) != addrSlot(long) {
		t.Fatalf("the test wants one slot for both keys")
	}
	c.Put(short, 1)
	if _, ok := c.Get(long); ok {
		t.Fatal("a key of another length at the same address hit")
	}
	if v, ok := c.Get(short); !ok || v != 1 {
		t.Fatalf("Get(short) = %d, %v", v, ok)
	}
}
