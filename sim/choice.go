package sim

import (
	"fmt"
	"math/bits"
	"time"
)

// Choice is one recorded draw: which actor drew, at which labelled site, from
// a range of size N, and the value it got. A tape of Choices replays a run;
// choices are addressed by (Actor, Label, occurrence) rather than by tape
// position alone, so a replay file survives an edit that adds a draw to
// another actor or another site.
type Choice struct {
	Actor string `json:"actor"`
	Label string `json:"label"`
	N     uint64 `json:"n"`
	Value uint64 `json:"v"`
}

// Source is where every random decision of a run comes from. A Source is
// used by one goroutine (the run's); implementations are not safe for
// concurrent use.
type Source interface {
	// Actor returns the handle of the sub-stream named name, creating it on
	// first use. The same name always denotes the same sub-stream.
	Actor(name string) int
	// Draw returns a value in [0, n) for the site label of actor; n > 0.
	// Value 0 is by convention the simplest outcome (no fault, shortest
	// gap, first option) so that a shrunk or empty tape is a quiet run.
	Draw(actor int, label string, n uint64) uint64
	// ActorName returns the name registered for a handle.
	ActorName(actor int) string
}

// Actors is the registry of actor names every Source keeps: Actor hands out
// dense handles in first-registration order, ActorName maps them back. The
// zero value is ready to use. Sources embed it.
type Actors struct {
	names []string
	index map[string]int
}

// register returns the handle of name, registering it on first use; the
// second return value reports whether it was new.
func (a *Actors) register(name string) (int, bool) {
	if i, ok := a.index[name]; ok {
		return i, false
	}
	if a.index == nil {
		a.index = make(map[string]int)
	}
	a.names = append(a.names, name)
	a.index[name] = len(a.names) - 1
	return len(a.names) - 1, true
}

// Actor implements Source.
func (a *Actors) Actor(name string) int {
	i, _ := a.register(name)
	return i
}

// ActorName implements Source.
func (a *Actors) ActorName(actor int) string { return a.names[actor] }

// SeededSource draws from one PRNG sub-stream per actor, all derived from a
// single run seed, and can record what it drew as a tape.
type SeededSource struct {
	Actors
	seed    uint64
	streams []PRNG
	record  bool
	tape    []Choice
}

var _ Source = (*SeededSource)(nil)

// NewSeededSource returns a source for seed. With record set, every draw is
// appended to Tape().
func NewSeededSource(seed uint64, record bool) *SeededSource {
	return &SeededSource{seed: seed, record: record}
}

// Seed returns the run seed.
func (s *SeededSource) Seed() uint64 { return s.seed }

// Actor implements Source: a new actor gets its own PRNG sub-stream.
func (s *SeededSource) Actor(name string) int {
	i, isNew := s.register(name)
	if isNew {
		var p PRNG
		p.Seed(SubSeed(s.seed, name))
		s.streams = append(s.streams, p)
	}
	return i
}

// Draw implements Source.
func (s *SeededSource) Draw(actor int, label string, n uint64) uint64 {
	// PRNG.Below, inlined: every draw of a seeded run comes here.
	if n == 0 {
		panic("sim: PRNG.Below(0)")
	}
	p := &s.streams[actor]
	v, lo := bits.Mul64(p.Uint64(), n)
	if lo < n {
		v = p.reject(n, v, lo)
	}
	if s.record {
		s.tape = append(s.tape, Choice{Actor: s.names[actor], Label: label, N: n, Value: v})
	}
	return v
}

// Tape returns the draws recorded so far (nil unless recording).
func (s *SeededSource) Tape() []Choice { return s.tape }

// TapeSource replays a recorded tape. A draw is answered by the next unused
// choice recorded for the same (actor, label); a site with no recorded
// choice left gets 0, the simplest outcome, and a recorded value outside the
// asked range is clamped to n-1. This makes any edited or truncated tape a
// valid run, which is what shrinking needs.
type TapeSource struct {
	Actors
	queues map[tapeKey]*tapeQueue
	order  []*tapeQueue // queues in first-seen order, for iteration
	// Misses counts draws that found no recorded choice.
	Misses int
	// Mismatches counts draws whose recorded range differed from the asked one.
	Mismatches int
	record     bool
	tape       []Choice
}

// tapeKey addresses the recorded choices of one site of one actor (a
// struct, so that looking a draw up does not build a string).
type tapeKey struct {
	actor, label string
}

type tapeQueue struct {
	values []Choice
	next   int
}

var _ Source = (*TapeSource)(nil)

// NewTapeSource returns a source that replays tape. With record set, the
// draws actually made (after defaulting and clamping) are kept as a new tape.
func NewTapeSource(tape []Choice, record bool) *TapeSource {
	t := &TapeSource{queues: make(map[tapeKey]*tapeQueue), record: record}
	for _, c := range tape {
		key := tapeKey{c.Actor, c.Label}
		q := t.queues[key]
		if q == nil {
			q = &tapeQueue{}
			t.queues[key] = q
			t.order = append(t.order, q)
		}
		q.values = append(q.values, c)
	}
	return t
}

// Draw implements Source.
func (t *TapeSource) Draw(actor int, label string, n uint64) uint64 {
	name := t.names[actor]
	var v uint64
	q := t.queues[tapeKey{name, label}]
	if q == nil || q.next >= len(q.values) {
		t.Misses++
	} else {
		c := q.values[q.next]
		q.next++
		if c.N != n {
			t.Mismatches++
		}
		v = c.Value
		if v >= n {
			v = n - 1
		}
	}
	if t.record {
		t.tape = append(t.tape, Choice{Actor: name, Label: label, N: n, Value: v})
	}
	return v
}

// Tape returns the draws made (nil unless recording).
func (t *TapeSource) Tape() []Choice { return t.tape }

// Unused counts recorded choices that no draw consumed.
func (t *TapeSource) Unused() int {
	n := 0
	for _, q := range t.order {
		n += len(q.values) - q.next
	}
	return n
}

// Rand is one actor's view of the run's Source: every random decision a model
// or actor makes goes through one of these, with a label naming the site.
type Rand struct {
	src   Source
	actor int
}

// NewRand returns the sub-stream of src named actor.
func NewRand(src Source, actor string) *Rand {
	return &Rand{src: src, actor: src.Actor(actor)}
}

// Name returns the actor name of this stream.
func (r *Rand) Name() string { return r.src.ActorName(r.actor) }

// Below returns a value in [0, n); n must be > 0.
func (r *Rand) Below(label string, n uint64) uint64 {
	if n == 0 {
		panic(fmt.Sprintf("sim: %s drew from an empty range at %q", r.Name(), label))
	}
	if n == 1 {
		return 0
	}
	return r.src.Draw(r.actor, label, n)
}

// IntN returns a value in [0, n); n must be > 0.
func (r *Rand) IntN(label string, n int) int { return int(r.Below(label, uint64(n))) }

// Chance returns true with probability p. The draw's zero value means false,
// so a zeroed tape disables every chance-driven fault.
func (r *Rand) Chance(label string, p Ratio) bool {
	if p.Numerator == 0 {
		return false
	}
	if p.Numerator >= p.Denominator {
		return true
	}
	return r.Below(label, p.Denominator) >= p.Denominator-p.Numerator
}

// Pick returns an index into weights, chosen with probability proportional to
// its weight. Index 0 is what a zero draw gives, so list the simplest option
// first. It panics if all weights are zero.
func (r *Rand) Pick(label string, weights ...uint64) int {
	var total uint64
	for _, w := range weights {
		total += w
	}
	v := r.Below(label, total)
	for i, w := range weights {
		if v < w {
			return i
		}
		v -= w
	}
	panic("unreachable")
}

// Duration returns a duration in [min, max] with millisecond granularity; a
// zero draw gives min.
func (r *Rand) Duration(label string, min, max time.Duration) time.Duration {
	if max <= min {
		return min
	}
	steps := uint64((max-min)/time.Millisecond) + 1
	return min + time.Duration(r.Below(label, steps))*time.Millisecond
}

// Hex returns digits random lowercase hex digits (at most 16), for ids that
// are random upstream (UUIDs) but must come from the run's source here.
func (r *Rand) Hex(label string, digits int) string {
	const hexdigits = "0123456789abcdef"
	if digits < 1 || digits > 16 {
		panic("sim: Rand.Hex digits out of range")
	}
	var n uint64 = 1 << (4 * uint(digits))
	if digits == 16 {
		n = 0
	}
	var v uint64
	if n == 0 {
		hi := r.Below(label, 1<<32)
		lo := r.Below(label, 1<<32)
		v = hi<<32 | lo
	} else {
		v = r.Below(label, n)
	}
	buf := make([]byte, digits)
	for i := digits - 1; i >= 0; i-- {
		buf[i] = hexdigits[v&15]
		v >>= 4
	}
	return string(buf)
}

// BytesSource draws from a byte string, as `go test -fuzz` supplies one:
// each draw consumes up to 8 bytes (as many as the range needs) and takes
// the value modulo n; once the bytes run out every draw is 0, so an empty
// input is the quietest run (no faults, shortest gaps, first options).
type BytesSource struct {
	Actors
	data []byte
}

var _ Source = (*BytesSource)(nil)

// NewBytesSource returns a source drawing from data.
func NewBytesSource(data []byte) *BytesSource {
	return &BytesSource{data: data}
}

// Draw implements Source.
func (b *BytesSource) Draw(actor int, label string, n uint64) uint64 {
	var v uint64
	for need := n - 1; need > 0 && len(b.data) > 0; need >>= 8 {
		v = v<<8 | uint64(b.data[0])
		b.data = b.data[1:]
	}
	return v % n
}
