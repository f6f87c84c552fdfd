package sim

import "math/bits"

// PRNG is orchsim's own pseudo-random generator (xoshiro256**, seeded through
// SplitMix64). It is owned rather than borrowed from math/rand/v2 so that a
// seed recorded today replays the same stream after any Go upgrade: the
// algorithm and the integer-only helpers below are part of the replay format.
//
// The API is integer-only, in the manner of TigerBeetle's stdx.PRNG:
// probabilities are Ratios, never floats.
type PRNG struct {
	s [4]uint64
}

// NewPRNG returns a generator whose whole stream is a function of seed.
func NewPRNG(seed uint64) *PRNG {
	p := &PRNG{}
	p.Seed(seed)
	return p
}

// Seed resets the generator to the stream of seed.
func (p *PRNG) Seed(seed uint64) {
	x := seed
	for i := range p.s {
		x, p.s[i] = splitmix64(x)
	}
	if p.s == [4]uint64{} { // the all-zero state is a fixed point of xoshiro
		p.s[0] = 1
	}
}

func splitmix64(x uint64) (next, out uint64) {
	x += 0x9e3779b97f4a7c15
	z := x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return x, z ^ (z >> 31)
}

// Uint64 returns the next 64 uniformly distributed bits.
// The state is read into locals and written back whole, which keeps the
// function within the compiler's inlining budget (every draw makes it).
func (p *PRNG) Uint64() uint64 {
	s0, s1, s2, s3 := p.s[0], p.s[1], p.s[2], p.s[3]
	result := bits.RotateLeft64(s1*5, 7) * 9
	t := s1 << 17
	s2 ^= s0
	s3 ^= s1
	s1 ^= s2
	s0 ^= s3
	s2 ^= t
	s3 = bits.RotateLeft64(s3, 45)
	p.s = [4]uint64{s0, s1, s2, s3}
	return result
}

// Below returns a uniform value in [0, n) without modulo bias (Lemire's
// multiply-and-reject). It panics when n == 0: a draw from an empty range is a
// bug in the caller, not a choice.
func (p *PRNG) Below(n uint64) uint64 {
	if n == 0 {
		panic("sim: PRNG.Below(0)")
	}
	hi, lo := bits.Mul64(p.Uint64(), n)
	if lo < n {
		hi = p.reject(n, hi, lo)
	}
	return hi
}

// reject is Below's rejection loop, from a first draw whose low word lo is
// below n (about n/2^64 of draws), out of line so that the common path
// stays short.
func (p *PRNG) reject(n, hi, lo uint64) uint64 {
	threshold := -n % n
	for lo < threshold {
		hi, lo = bits.Mul64(p.Uint64(), n)
	}
	return hi
}

// Ratio is a probability Numerator/Denominator, kept as integers so that the
// stream never depends on floating-point rounding.
type Ratio struct {
	Numerator   uint64
	Denominator uint64
}

// Per returns the Ratio n/d, for example Per(1, 20) for 5%.
func Per(n, d uint64) Ratio { return Ratio{Numerator: n, Denominator: d} }

// Percent returns the Ratio n/100.
func Percent(n uint64) Ratio { return Ratio{Numerator: n, Denominator: 100} }

// Valid reports whether r is a probability: 0 <= r <= 1 with a non-zero denominator.
func (r Ratio) Valid() bool { return r.Denominator > 0 && r.Numerator <= r.Denominator }

// hashString is 64-bit FNV-1a, used to derive a sub-stream seed from an actor
// name so that a sub-stream depends on the name, not on creation order.
func hashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}

const fnvOffset64 = 0xcbf29ce484222325

// SubSeed derives the seed of the sub-stream named actor within the run
// seeded by seed. Adding a new actor (or a new draw in one actor) does not
// shift any other actor's stream.
func SubSeed(seed uint64, actor string) uint64 {
	h := hashString(fnvOffset64, actor)
	_, out := splitmix64(seed ^ h)
	return out
}
