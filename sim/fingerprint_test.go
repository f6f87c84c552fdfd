package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// The trace's incremental fingerprint equals HashCanonical over the
// concatenated canonical encodings, for any events: strings of every length
// around the 8-byte word boundaries, any number of attributes, large times
// and sequence numbers (multi-byte varints).
func TestFingerprint_MatchesCanonical(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		str := rapid.StringN(0, 20, 40)
		k := NewKernel(true)
		tr := k.Trace()
		// A trace that keeps nothing folds the same (Emit's path without
		// building the event).
		bare := NewKernel(false)
		n := rapid.IntRange(0, 12).Draw(t, "events")
		for range n {
			k.now += time.Duration(rapid.Uint64Range(0, 1<<40).Draw(t, "gap"))
			bare.now = k.now
			var attrs []Attr
			for range rapid.IntRange(0, 4).Draw(t, "attrs") {
				attrs = append(attrs, A(str.Draw(t, "key"), str.Draw(t, "value")))
			}
			actor, kind, outcome := str.Draw(t, "actor"), str.Draw(t, "kind"), str.Draw(t, "outcome")
			tr.Emit(actor, kind, outcome, attrs...)
			bare.Trace().Emit(actor, kind, outcome, attrs...)
		}
		assert.Equal(t, tr.Fingerprint(), bare.Trace().Fingerprint())
		var buf []byte
		for i := range tr.Events() {
			buf = AppendCanonical(buf, &tr.Events()[i])
		}
		want, err := HashCanonical(buf)
		require.NoError(t, err)
		assert.Equal(t, want, tr.Fingerprint())
	})
}

// Strings that differ only past the first word, only in their last
// (zero-padded) word, or only by trailing zero bytes, and attributes that
// trade bytes between key and value, all fingerprint differently.
func TestFingerprint_SeparatesNearStrings(t *testing.T) {
	variants := [][]Attr{
		{A("thread", "thread-1")},
		{A("thread", "thread-2")},
		{A("thread", "thread-1\x00")},
		{A("thread", "thread-10")},
		{A("threa", "dthread-1")},
		{A("thread", "thread-1"), A("", "")},
		{A("session/12345678", "x")},
		{A("session/12345679", "x")},
		{},
	}
	seen := map[uint64]int{}
	for i, attrs := range variants {
		k := NewKernel(false)
		k.Trace().Emit("agent/thread-1", "t3_preview_navigate", "ok", attrs...)
		f := k.Trace().Fingerprint()
		if j, dup := seen[f]; dup {
			t.Fatalf("variants %d and %d share fingerprint %016x", j, i, f)
		}
		seen[f] = i
	}
}

func TestHashCanonical_RejectsTruncatedAndOverlong(t *testing.T) {
	ev := Event{At: time.Hour, Seq: 300, Actor: "psm", Kind: "session.release", Attrs: []Attr{A("thread", "t1")}, Outcome: "stopped"}
	whole := AppendCanonical(nil, &ev)
	_, err := HashCanonical(whole)
	require.NoError(t, err)
	for cut := 1; cut < len(whole); cut++ {
		_, err := HashCanonical(whole[:cut])
		assert.ErrorIs(t, err, ErrBadCanonical, "cut at %d of %d", cut, len(whole))
	}
	overlong := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}
	_, err = HashCanonical(overlong)
	assert.ErrorIs(t, err, ErrBadCanonical)
	empty, err := HashCanonical(nil)
	require.NoError(t, err)
	assert.Equal(t, NewKernel(false).Trace().Fingerprint(), empty, "no events: the empty trace's fingerprint")
}

// fpStringBytewise is fpString's definition: the length, then the bytes
// in 8-byte little-endian words, the last one zero-padded.
func fpStringBytewise(h uint64, s string) uint64 {
	h = fpFold(h, uint64(len(s)))
	for len(s) > 0 {
		var w uint64
		for i := min(len(s), 8) - 1; i >= 0; i-- {
			w = w<<8 | uint64(s[i])
		}
		h = fpFold(h, w)
		s = s[min(len(s), 8):]
	}
	return h
}

// TestFpString_MatchesBytewise: the word-loading fpString folds the same
// words as the byte-wise definition, for every length to 40 and random
// bytes (zero and high bytes included), from random states.
func TestFpString_MatchesBytewise(t *testing.T) {
	p := NewPRNG(11)
	for n := 0; n <= 40; n++ {
		for trial := 0; trial < 200; trial++ {
			b := make([]byte, n)
			for i := range b {
				switch p.Below(4) {
				case 0:
					b[i] = 0
				case 1:
					b[i] = 0xff
				default:
					b[i] = byte(p.Below(256))
				}
			}
			h := p.Below(1 << 62)
			if got, want := fpString(h, string(b)), fpStringBytewise(h, string(b)); got != want {
				t.Fatalf("len %d %x: fpString %x, byte-wise %x", n, b, got, want)
			}
		}
	}
}

// TestFpStep_IsFpFold: a chain of folds in product form (fpStep, the state
// kept before its xor-shift) yields fpFold's states, from random states and
// words, over chains of every length to 12.
func TestFpStep_IsFpFold(t *testing.T) {
	p := NewPRNG(12)
	for trial := 0; trial < 2000; trial++ {
		h := p.Uint64()
		x := (h ^ p.Uint64()) * fpMul // a first fold's product
		h = x ^ x>>32
		for range trial % 13 {
			w := p.Uint64()
			if p.Below(4) == 0 {
				w = p.Below(256) // small words (lengths, counts) too
			}
			h = fpFold(h, w)
			x = fpStep(x, w)
			if got := x ^ x>>32; got != h {
				t.Fatalf("trial %d: product form %x, fpFold %x", trial, got, h)
			}
		}
	}
}
