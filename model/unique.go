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
	hexes    map[uint64]struct{} // packHex of the hex ids
	prefixes map[string]uint64   // the number (1 to maxUniquePrefixes) of each prefix seen
	others   map[string]struct{} // every other id
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
		_, in := u.hexes[k]
		return in
	}
	// An unnumbered prefix while numbers are left: never added as a string.
	if n := hexRun(id); n > 0 && n <= 12 && len(u.prefixes) < maxUniquePrefixes {
		return false
	}
	_, in := u.others[id]
	return in
}

// add puts id in the set.
func (u *uniqueSet) add(id string) {
	if k, ok := u.key(id, true); ok {
		if u.hexes == nil {
			u.hexes = map[uint64]struct{}{}
		}
		u.hexes[k] = struct{}{}
		return
	}
	if u.others == nil {
		u.others = map[string]struct{}{}
	}
	u.others[id] = struct{}{}
}
