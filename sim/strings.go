package sim

import (
	"strconv"
	"time"
	"unsafe"
)

// Strings builds the short strings a run's models put in trace attributes
// and ids (a count, a revision, "p12", "3-7") without one allocation per
// string: each is appended to a chunk of bytes and returned as a string
// over those bytes. Bytes once handed out are never written again (a full
// chunk is left to the strings that point into it and a new one started),
// so a string stays valid however long it is kept, like any other; the
// collector frees a chunk when no string points into it. One allocation
// per chunk instead of one per string: the first chunk is
// StringsFirstChunk bytes and each next one twice the last, up to
// StringsChunk (a run has a dozen Strings, its checkers' among them, and
// most keep a few hundred bytes a seed: a first chunk of StringsChunk was
// mostly never written).
//
// The zero value is ready to use. A Strings belongs to one run (it is not
// safe for concurrent use); model.Env holds the run's.
type Strings struct {
	buf []byte
}

// StringsChunk is the largest chunk of a Strings in bytes; a string over a
// quarter of it gets an allocation of its own.
const StringsChunk = 4096

// StringsFirstChunk is the size in bytes of a Strings' first chunk.
const StringsFirstChunk = 256

// Bytes returns b as a string (a copy: b may be reused after the call).
func (s *Strings) Bytes(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(s.buf)-len(s.buf) < len(b) {
		if len(b) > StringsChunk/4 {
			return string(b)
		}
		s.buf = make([]byte, 0, max(min(max(2*cap(s.buf), StringsFirstChunk), StringsChunk), len(b)))
	}
	start := len(s.buf)
	s.buf = append(s.buf, b...)
	return unsafe.String(&s.buf[start], len(b))
}

// Copy returns a copy of x built by s: for a string made on the stack (a
// formatted value that would otherwise escape to the heap).
func (s *Strings) Copy(x string) string {
	return s.Bytes(unsafe.Slice(unsafe.StringData(x), len(x)))
}

// Duration is d.String().
func (s *Strings) Duration(d time.Duration) string { return s.Copy(d.String()) }

// T is FormatT(d).
func (s *Strings) T(d time.Duration) string {
	ms := d.Milliseconds()
	if ms < 0 {
		return formatTSlow(ms)
	}
	h, m, sec, frac := ms/3_600_000, ms/60_000%60, ms/1000%60, ms%1000
	var buf [32]byte
	b := append(buf[:0], 'T', '+')
	if h < 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, h, 10)
	b = append(b, ':', byte('0'+m/10), byte('0'+m%10), ':', byte('0'+sec/10), byte('0'+sec%10),
		'.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	return s.Bytes(b)
}

// Itoa is strconv.Itoa(n).
func (s *Strings) Itoa(n int) string {
	if 0 <= n && n < 100 {
		return strconv.Itoa(n) // a static string, no allocation
	}
	if n < 1000 && n >= 100 { // a pane's size, a revision: static too
		i := 3 * (n - 100)
		return threeDigits[i : i+3]
	}
	var b [24]byte
	return s.Bytes(strconv.AppendInt(b[:0], int64(n), 10))
}

// threeDigits is "100101102...999": Itoa's numbers of three digits.
var threeDigits = func() string {
	b := make([]byte, 0, 3*900)
	for n := 100; n < 1000; n++ {
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return string(b)
}()

// Join is prefix + strconv.Itoa(n), as in "p12" or "w3".
func (s *Strings) Join(prefix string, n int) string {
	var b [48]byte
	return s.Bytes(strconv.AppendInt(append(b[:0], prefix...), int64(n), 10))
}

// Concat is a + b.
func (s *Strings) Concat(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	var buf [64]byte
	return s.Bytes(append(append(buf[:0], a...), b...))
}

// Range is "first-last", or "first" when they are equal.
func (s *Strings) Range(first, last int) string {
	if first == last {
		return s.Itoa(first)
	}
	var b [48]byte
	out := strconv.AppendInt(b[:0], int64(first), 10)
	out = append(out, '-')
	return s.Bytes(strconv.AppendInt(out, int64(last), 10))
}
