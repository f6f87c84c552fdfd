package sim

import (
	"errors"
	"time"
)

// The fingerprint of a trace is a 64-bit hash of its canonical encoding
// (AppendCanonical), computed event by event as the trace grows. It folds
// values, not bytes: each uvarint of the encoding is folded as one 64-bit
// word, and each string as its length followed by its bytes in 8-byte
// little-endian words (the last one zero-padded). One fold is a xor, a
// multiply and a xor-shift, a bijection of the state for a given word, so
// a typical event costs about ten dependent folds where a byte-wise hash
// (FNV-1a, which this replaced) took one multiply per byte of the encoding.
//
// HashCanonical is the definition, over the bytes; Trace.Fingerprint is the
// incremental form, and TestFingerprint_MatchesCanonical holds them equal.

const (
	fpSeed = 0x9e3779b97f4a7c15 // the state before the first event
	fpMul  = 0xd6e8feb86659fd93 // odd, so the multiply is a bijection
)

// fpFold folds the word w into the state h.
func fpFold(h, w uint64) uint64 {
	h = (h ^ w) * fpMul
	return h ^ h>>32
}

// fpStep is fpFold for a chain of folds, in product form: a chain keeps x,
// the product of its last fold before the xor-shift (the state is
// h = x ^ x>>32), so that fpStep(x, w) is fpFold(x^x>>32, w)'s product.
// The value is the same; only the order of operations differs: x^w and
// x>>32 do not depend on each other, so a fold waits two operations for x
// (the two xors' and the shift's), not three, then the multiply. A trace
// folds about ten words per event one after the other, so this shortens
// the event's critical path (TestFpStep_IsFpFold).
func fpStep(x, w uint64) uint64 { return (x ^ w ^ x>>32) * fpMul }

// fpString folds the length of s, then its bytes eight at a time (the
// last word zero-padded). The last, partial word is read with at most two
// overlapping loads instead of byte by byte; TestFpString_MatchesBytewise
// holds it equal to the byte-wise definition for every length.
func fpString(h uint64, s string) uint64 {
	n := len(s)
	x := (h ^ uint64(n)) * fpMul // product form (fpStep)
	whole := s
	for len(s) >= 8 {
		x = fpStep(x, le64(s))
		s = s[8:]
	}
	r := uint(len(s)) // bytes in the partial word, 0 to 7
	var w uint64
	switch {
	case r == 0:
		return x ^ x>>32
	case n >= 8:
		// The word ending at the string's end, its first 8-r bytes
		// (already folded) shifted out.
		w = le64(whole[n-8:]) >> ((64 - 8*r) & 63)
	case r >= 4:
		// Two 4-byte words overlapping in the middle: the bytes both
		// hold are the same, so or-ing them places each byte once.
		w = le32(s) | le32(s[r-4:])<<((8*(r-4))&63)
	case r >= 2:
		w = le16(s) | le16(s[r-2:])<<((8*(r-2))&63)
	default:
		w = uint64(s[0])
	}
	x = fpStep(x, w)
	return x ^ x>>32
}

// le64, le32 and le16 read the first 8, 4 and 2 bytes of s as a
// little-endian word (the compiler makes each one load).
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func le32(s string) uint64 {
	_ = s[3]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24
}

func le16(s string) uint64 {
	_ = s[1]
	return uint64(s[0]) | uint64(s[1])<<8
}

// fpEvent folds ev's canonical encoding into h.
func fpEvent(h uint64, ev *Event) uint64 {
	h = fpFold(h, uint64(ev.At))
	h = fpFold(h, ev.Seq)
	h = fpString(h, ev.Actor)
	h = fpString(h, ev.Kind)
	h = fpFold(h, uint64(len(ev.Attrs)))
	for i := range ev.Attrs {
		h = fpString(h, ev.Attrs[i].Key)
		h = fpString(h, ev.Attrs[i].Value)
	}
	return fpString(h, ev.Outcome)
}

// fpEmit is fpEvent for the event Trace.Emit appends, from its fields.
func fpEmit(h uint64, at time.Duration, seq uint64, actor, kind, outcome string, attrs []Attr) uint64 {
	// The whole event in product form (fpStep).
	x := (h ^ uint64(at)) * fpMul
	x = fpStep(x, seq)
	{
		// fpString(h, actor), inlined.
		s := actor
		n := len(s)
		x = fpStep(x, uint64(n))
		whole := s
		for len(s) >= 8 {
			x = fpStep(x, le64(s))
			s = s[8:]
		}
		if r := uint(len(s)); r != 0 {
			var w uint64
			switch {
			case n >= 8:
				w = le64(whole[n-8:]) >> ((64 - 8*r) & 63)
			case r >= 4:
				w = le32(s) | le32(s[r-4:])<<((8*(r-4))&63)
			case r >= 2:
				w = le16(s) | le16(s[r-2:])<<((8*(r-2))&63)
			default:
				w = uint64(s[0])
			}
			x = fpStep(x, w)
		}
	}
	{
		// fpString(h, kind), inlined.
		s := kind
		n := len(s)
		x = fpStep(x, uint64(n))
		whole := s
		for len(s) >= 8 {
			x = fpStep(x, le64(s))
			s = s[8:]
		}
		if r := uint(len(s)); r != 0 {
			var w uint64
			switch {
			case n >= 8:
				w = le64(whole[n-8:]) >> ((64 - 8*r) & 63)
			case r >= 4:
				w = le32(s) | le32(s[r-4:])<<((8*(r-4))&63)
			case r >= 2:
				w = le16(s) | le16(s[r-2:])<<((8*(r-2))&63)
			default:
				w = uint64(s[0])
			}
			x = fpStep(x, w)
		}
	}
	x = fpStep(x, uint64(len(attrs)))
	if len(attrs) == 0 && outcome == "" {
		x = fpStep(x, 0) // the outcome's length; no word
		return x ^ x>>32
	}
	h = x ^ x>>32
	for i := range attrs {
		h = fpString(h, attrs[i].Key)
		h = fpString(h, attrs[i].Value)
	}
	return fpString(h, outcome)
}

// fpFinish spreads the state's bits over the fingerprint (SplitMix64's
// finaliser), so that traces differing in their last word differ in every
// hex digit.
func fpFinish(h uint64) uint64 {
	h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
	h = (h ^ h>>27) * 0x94d049bb133111eb
	return h ^ h>>31
}

// ErrBadCanonical is returned by HashCanonical for bytes that are not a
// sequence of whole canonical event encodings.
var ErrBadCanonical = errors.New("not a canonical event encoding")

// HashCanonical returns the fingerprint of the trace whose events'
// canonical encodings (AppendCanonical), concatenated, are b: it decodes
// every uvarint and string of every event and folds them in order. It is
// the definition Trace.Fingerprint implements incrementally. It returns
// ErrBadCanonical when b ends inside an event or holds an
// overlong uvarint.
func HashCanonical(b []byte) (uint64, error) {
	h := uint64(fpSeed)
	d := canonicalDecoder{b: b}
	for len(d.b) > 0 && d.err == nil {
		h = fpFold(h, d.uvarint())  // time
		h = fpFold(h, d.uvarint())  // sequence number
		h = fpString(h, d.string()) // actor
		h = fpString(h, d.string()) // kind
		n := d.uvarint()
		h = fpFold(h, n)
		for i := uint64(0); i < n && d.err == nil; i++ {
			h = fpString(h, d.string()) // key
			h = fpString(h, d.string()) // value
		}
		h = fpString(h, d.string()) // outcome
	}
	if d.err != nil {
		return 0, d.err
	}
	return fpFinish(h), nil
}

type canonicalDecoder struct {
	b   []byte
	err error
}

func (d *canonicalDecoder) uvarint() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if d.err != nil {
			return 0
		}
		if len(d.b) == 0 || shift > 63 {
			d.err = ErrBadCanonical
			return 0
		}
		c := d.b[0]
		d.b = d.b[1:]
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
}

func (d *canonicalDecoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = ErrBadCanonical
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
