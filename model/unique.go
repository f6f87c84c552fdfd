package model

// uniqueSet is the set of ids Env.Unique has handed out. Most are random
// hex ("3fa9c2d1", "conn-3fa9c2d1") and a run of 1,000 threads hands out
// hundreds of thousands: an id that is a short prefix followed by 1 to 12
// lowercase hex digits is kept as one word (packHex) instead of a string
// key, every other id as a string. The split is a function of the id
// alone (the prefix is everything before the trailing run of hex digits,
// so it never ends in one), so each id has exactly one representation and
// the set answers exactly as a set of strings would.
type uniqueSet struct {
	hexes    wordSet             // packHex of the hex ids
	prefixes map[string]uint64   // the number (1 to maxUniquePrefixes) of each prefix seen
	others   map[string]struct{} // every other id
}

// wordSet is a set of non-zero words: open addressing, linear probing,
// at most three quarters full, doubled when it would be fuller (a Go map
// moves an entry about ten times while it grows to 100,000s; this one
// about twice). Lookups only: it is never ranged over.
type wordSet struct {
	slots []uint64 // 0: free; len a power of two
	n     int
}

// slot returns where w is, or the free slot where it would go.
func (s *wordSet) slot(w uint64) int {
	mask := len(s.slots) - 1
	i := int((w*0x9e3779b97f4a7c15)>>32) & mask
	for s.slots[i] != 0 && s.slots[i] != w {
		i = (i + 1) & mask
	}
	return i
}

// has reports whether w is in s.
func (s *wordSet) has(w uint64) bool {
	return len(s.slots) > 0 && s.slots[s.slot(w)] == w
}

// insert adds w (non-zero) to s and reports whether it was not there.
func (s *wordSet) insert(w uint64) bool {
	if 4*(s.n+1) > 3*len(s.slots) {
		old := s.slots
		s.slots = make([]uint64, max(64, 2*len(old)))
		for _, x := range old {
			if x != 0 {
				s.slots[s.slot(x)] = x
			}
		}
	}
	i := s.slot(w)
	if s.slots[i] == w {
		return false
	}
	s.slots[i] = w
	s.n++
	return true
}

// maxUniquePrefixes bounds the prefixes packed ids use (8 bits of the
// word); an id of a further prefix is kept as a string.
const maxUniquePrefixes = 255

// hexRun returns the length of id's trailing run of lowercase hex digits.
func hexRun(id string) int {
	n := 0
	for i := len(id) - 1; i >= 0; i-- {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			break
		}
		n++
	}
	return n
}

// packHex packs prefix number p, digit count n (1-12) and the digits'
// value: bits 56-63, 48-51 and 0-47.
func packHex(p uint64, digits string) uint64 {
	var v uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		d := uint64(c - '0')
		if c >= 'a' {
			d = uint64(c-'a') + 10
		}
		v = v<<4 | d
	}
	return p<<56 | uint64(len(digits))<<48 | v
}

// key returns id's packed word and true, or false for an id kept as a
// string; add numbers a prefix not seen yet (while numbers are left).
func (u *uniqueSet) key(id string, add bool) (uint64, bool) {
	n := hexRun(id)
	if n == 0 || n > 12 {
		return 0, false
	}
	prefix := id[:len(id)-n]
	p, ok := u.prefixes[prefix]
	if !ok {
		if !add || len(u.prefixes) >= maxUniquePrefixes {
			return 0, false
		}
		if u.prefixes == nil {
			u.prefixes = map[string]uint64{}
		}
		p = uint64(len(u.prefixes)) + 1
		u.prefixes[prefix] = p
	}
	return packHex(p, id[len(id)-n:]), true
}

// has reports whether id is in the set.
func (u *uniqueSet) has(id string) bool {
	if k, ok := u.key(id, false); ok {
		return u.hexes.has(k)
	}
	// An unnumbered prefix while numbers are left: never added as a string.
	if n := hexRun(id); n > 0 && n <= 12 && len(u.prefixes) < maxUniquePrefixes {
		return false
	}
	_, in := u.others[id]
	return in
}

// insert adds id to the set and reports whether it was not there (has
// and add in one: one key, one probe).
func (u *uniqueSet) insert(id string) bool {
	if k, ok := u.key(id, true); ok {
		return u.hexes.insert(k)
	}
	if _, in := u.others[id]; in {
		return false
	}
	if u.others == nil {
		u.others = map[string]struct{}{}
	}
	u.others[id] = struct{}{}
	return true
}

// add puts id in the set.
func (u *uniqueSet) add(id string) { u.insert(id) }
