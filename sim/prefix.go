package sim

// PrefixSource answers draws from a recorded tape until Switch is called,
// and from a fresh seeded stream afterwards: the run replays a recorded
// prefix and continues with new draws (a branch of that run, or a
// reseeded continuation). With record set it keeps every draw it answered
// as a tape of its own, so the continuation replays from that tape like
// any run (TapeSource).
type PrefixSource struct {
	Actors
	tape     *TapeSource
	fresh    *SeededSource
	switched bool
	record   bool
	out      []Choice
}

var _ Source = (*PrefixSource)(nil)

// NewPrefixSource returns a source that replays tape, then, once switched,
// draws from seed.
func NewPrefixSource(tape []Choice, seed uint64, record bool) *PrefixSource {
	return &PrefixSource{tape: NewTapeSource(tape, false), fresh: NewSeededSource(seed, false), record: record}
}

// Switch makes every later draw a fresh one.
func (p *PrefixSource) Switch() { p.switched = true }

// Switched reports whether the prefix has ended.
func (p *PrefixSource) Switched() bool { return p.switched }

// Draw implements Source.
func (p *PrefixSource) Draw(actor int, label string, n uint64) uint64 {
	name := p.ActorName(actor)
	var v uint64
	if p.switched {
		v = p.fresh.Draw(p.fresh.Actor(name), label, n)
	} else {
		v = p.tape.Draw(p.tape.Actor(name), label, n)
	}
	if p.record {
		p.out = append(p.out, Choice{Actor: name, Label: label, N: n, Value: v})
	}
	return v
}

// Tape returns the draws answered so far (nil unless recording).
func (p *PrefixSource) Tape() []Choice { return p.out }
