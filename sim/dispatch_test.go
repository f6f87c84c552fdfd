package sim

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// recorder notes every event it is fed and fails on kind bad.
type recorder struct {
	name, bad string
	kinds     []string
	seen      []string
}

func (r *recorder) Name() string { return r.name }

func (r *recorder) Observe(ev *Event) *Violation {
	r.seen = append(r.seen, ev.Kind)
	if r.bad != "" && ev.Kind == r.bad {
		return &Violation{Invariant: r.name, Message: "saw " + ev.Kind}
	}
	return nil
}

// scoped is a recorder that declares its kinds.
type scoped struct{ recorder }

func (d *scoped) ObservedKinds() []string { return d.kinds }

// TestKindDispatch: a checker that declares kinds is fed only those, in
// order with the others; one that declares none, or an empty list, is fed
// everything, and a kind string built at run time finds its checkers too.
func TestKindDispatch(t *testing.T) {
	k := NewKernel(false)
	tr := k.Trace()
	all := &recorder{name: "all"}
	ab := &scoped{recorder{name: "ab", kinds: []string{"a", "b"}}}
	empty := &scoped{recorder{name: "empty", kinds: []string{}}}
	c := &scoped{recorder{name: "c", kinds: []string{"c", ""}}}
	for _, x := range []Checker{all, ab, empty, c} {
		tr.AddChecker(x)
	}
	kinds := []string{"a", "c", "x", "b", "", "a", string([]byte{'c'}), "x"}
	for _, kind := range kinds {
		tr.Emit("actor", kind, "")
	}
	if !slices.Equal(all.seen, kinds) || !slices.Equal(empty.seen, kinds) {
		t.Errorf("undeclared checkers saw %q and %q, want %q", all.seen, empty.seen, kinds)
	}
	if want := []string{"a", "b", "a"}; !slices.Equal(ab.seen, want) {
		t.Errorf("ab saw %q, want %q", ab.seen, want)
	}
	if want := []string{"c", "", "c"}; !slices.Equal(c.seen, want) {
		t.Errorf("c saw %q, want %q", c.seen, want)
	}
}

// TestKindDispatchFirstViolation: the first violation is the first in
// registration order among the checkers an event feeds, and the keep-going
// mode still feeds every checker of the kind that has not failed.
func TestKindDispatchFirstViolation(t *testing.T) {
	for _, keepGoing := range []bool{false, true} {
		k := NewKernel(false)
		tr := k.Trace()
		tr.SetKeepGoing(keepGoing)
		tr.AddChecker(&scoped{recorder{name: "first", kinds: []string{"x"}, bad: "b"}})
		tr.AddChecker(&scoped{recorder{name: "second", kinds: []string{"b"}, bad: "b"}})
		tr.AddChecker(&recorder{name: "third", bad: "b"})
		tr.Emit("actor", "a", "")
		tr.Emit("actor", "b", "")
		if v := tr.Violation(); v == nil || v.Invariant != "second" {
			t.Fatalf("keepGoing=%v: violation %+v, want second's", keepGoing, v)
		}
		var later []string
		for _, v := range tr.Later() {
			later = append(later, v.Invariant)
		}
		if want := map[bool][]string{false: nil, true: {"third"}}[keepGoing]; !slices.Equal(later, want) {
			t.Errorf("keepGoing=%v: later %q, want %q", keepGoing, later, want)
		}
	}
}

// TestKindDispatchLateChecker: a checker added after events were emitted
// is fed the kinds already seen.
func TestKindDispatchLateChecker(t *testing.T) {
	k := NewKernel(false)
	tr := k.Trace()
	tr.AddChecker(&recorder{name: "early"})
	tr.Emit("actor", "a", "")
	late := &scoped{recorder{name: "late", kinds: []string{"a"}}}
	tr.AddChecker(late)
	tr.Emit("actor", "a", "")
	if len(late.seen) != 1 {
		t.Errorf("late checker saw %q, want one a", late.seen)
	}
}

// dispatchCheckers is a checker set shaped like a scenario's: n checkers,
// every fifth undeclared, the others declaring three of the kinds each.
func dispatchCheckers(n int, kinds []string) []Checker {
	out := make([]Checker, n)
	for i := range out {
		if i%5 == 0 {
			out[i] = &counting{}
			continue
		}
		out[i] = &kindCounting{kinds: []string{kinds[i%len(kinds)], kinds[(i*7)%len(kinds)], kinds[(i*13)%len(kinds)]}}
	}
	return out
}

// counting counts the events it is fed, comparing the kind the way the
// invariants do.
type counting struct{ n int }

func (*counting) Name() string { return "counting" }
func (c *counting) Observe(ev *Event) *Violation {
	switch ev.Kind {
	case "never-1", "never-2", "never-3":
		return &Violation{}
	}
	c.n++
	return nil
}

type kindCounting struct {
	counting
	kinds []string
}

func (k *kindCounting) ObservedKinds() []string { return k.kinds }

// TestKindDispatchNoAllocs: once every kind has been seen, Emit does not
// allocate, kind strings built at run time included.
func TestKindDispatchNoAllocs(t *testing.T) {
	kinds := dispatchKinds()
	k := NewKernel(false)
	tr := k.Trace()
	for _, c := range dispatchCheckers(45, kinds) {
		tr.AddChecker(c)
	}
	dynamic := string(append([]byte(nil), kinds[3]...))
	emit := func() {
		for _, kind := range kinds {
			tr.Emit("agent/thread-1", kind, "ok", A("thread", "thread-1"))
		}
		tr.Emit("agent/thread-1", dynamic, "ok")
	}
	emit()
	if n := testing.AllocsPerRun(100, emit); n != 0 {
		t.Errorf("Emit allocated %.1f times per round after warm-up", n)
	}
}

func dispatchKinds() []string {
	var kinds []string
	for _, k := range []string{"session", "credential", "tab", "pty", "run", "task"} {
		for _, v := range []string{"open", "start", "release", "issue", "attach", "detach"} {
			kinds = append(kinds, k+"."+v)
		}
	}
	return kinds
}

// BenchmarkTraceEmitDispatch is one Emit fed to 45 checkers shaped like a
// scenario's (BenchmarkTraceEmit has none), cycling through 36 kinds.
func BenchmarkTraceEmitDispatch(b *testing.B) {
	kinds := dispatchKinds()
	for _, n := range []int{0, 45} {
		b.Run(fmt.Sprintf("checkers=%d", n), func(b *testing.B) {
			k := NewKernel(false)
			tr := k.Trace()
			for _, c := range dispatchCheckers(n, kinds) {
				tr.AddChecker(c)
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				k.now += time.Millisecond
				tr.Emit("agent/thread-1", kinds[i%len(kinds)], "ok", A("thread", "thread-1"), A("tab", "tab_12"))
			}
		})
	}
}

// probe is a checker with any declaration: kinds, actor prefixes, and a
// deadline that moves with what it has seen (due after every event it
// is fed whose outcome is "arm", NoDeadline after "disarm"). It records the
// times (unique per event) it is fed and fails on kind bad.
type probe struct {
	name, bad string
	seen      []uint64
	deadline  time.Duration
}

func (p *probe) Name() string { return p.name }
func (p *probe) Observe(ev *Event) *Violation {
	p.seen = append(p.seen, uint64(ev.At))
	switch ev.Outcome {
	case "arm":
		p.deadline = ev.At + time.Duration(len(p.name))*time.Millisecond
	case "disarm":
		p.deadline = NoDeadline
	}
	if p.bad != "" && ev.Kind == p.bad {
		return &Violation{Invariant: p.name, Message: "saw " + ev.Kind}
	}
	return nil
}

type probeKinds struct {
	*probe
	kinds []string
}

func (p probeKinds) ObservedKinds() []string { return p.kinds }

type probeActors struct {
	*probe
	actors []string
}

func (p probeActors) ObservedActors() []string { return p.actors }

type probeBoth struct {
	probeKinds
	actors []string
}

func (p probeBoth) ObservedActors() []string { return p.actors }

type probeDue struct{ probeBoth }

func (p probeDue) Due() time.Duration { return p.deadline }

// TestDispatch_MatchesFeeds: over random checker sets (kinds, actor
// prefixes, deadlines, undeclared) and random event streams, the trace
// feeds each checker exactly the events Feeds says, in registration order
// within an event, in both modes, with the table shared by a second trace
// of the same declarations.
func TestDispatch_MatchesFeeds(t *testing.T) {
	p := NewPRNG(7)
	kinds := []string{"a", "b", "c", "", "d.e", "run.start"}
	actors := []string{"agent/t1", "agent/t2", "agent/x1", "aunt", "user/x", "server", "", "fault"}
	// Two prefixes share a first byte (mask compares only those).
	prefixes := []string{"agent/", "user/", "", "agent/t"}
	pick := func(from []string) []string {
		var out []string
		for _, s := range from {
			if p.Below(3) == 0 {
				out = append(out, s)
			}
		}
		return out
	}
	for round := 0; round < 300; round++ {
		n := 1 + int(p.Below(8))
		keepGoing := p.Below(2) == 0
		type spec struct {
			form      int
			ks, as    []string
			name, bad string
		}
		specs := make([]spec, n)
		for i := range specs {
			specs[i] = spec{form: int(p.Below(5)), ks: pick(kinds), as: pick(prefixes), name: fmt.Sprint("c", i, "-", p.Below(40))}
			if p.Below(6) == 0 {
				specs[i].bad = kinds[p.Below(uint64(len(kinds)))]
			}
		}
		mk := func() ([]Checker, []*probe) {
			cs, ps := make([]Checker, n), make([]*probe, n)
			for i, s := range specs {
				pr := &probe{name: s.name, bad: s.bad, deadline: NoDeadline}
				ps[i] = pr
				switch s.form {
				case 0:
					cs[i] = pr
				case 1:
					cs[i] = probeKinds{pr, s.ks}
				case 2:
					cs[i] = probeActors{pr, s.as}
				case 3:
					cs[i] = probeBoth{probeKinds{pr, s.ks}, s.as}
				default:
					cs[i] = probeDue{probeBoth{probeKinds{pr, s.ks}, s.as}}
				}
			}
			return cs, ps
		}
		var events []Event
		for e := 0; e < 40; e++ {
			out := []string{"", "arm", "disarm", "ok"}[p.Below(4)]
			events = append(events, Event{At: time.Duration(e) * 3 * time.Millisecond, Actor: actors[p.Below(uint64(len(actors)))],
				Kind: kinds[p.Below(uint64(len(kinds)))], Outcome: out})
		}
		for trial := 0; trial < 2; trial++ { // the second trace reuses the table
			cs, ps := mkRun(t, mk, events, keepGoing)
			// The reference: Feeds on fresh checkers, event by event, in
			// registration order, stopping as the trace does.
			rcs, rps := mk()
			muted := make([]bool, n)
			failed := false
			for seq, ev := range events {
				if failed && !keepGoing {
					break
				}
				ev.Seq = uint64(seq)
				for i, c := range rcs {
					if muted[i] || !Feeds(c, &ev) {
						continue
					}
					if c.Observe(&ev) != nil {
						muted[i] = true
						if !keepGoing {
							failed = true
							break
						}
					}
				}
			}
			_ = cs
			for i := range ps {
				if !slices.Equal(ps[i].seen, rps[i].seen) {
					t.Fatalf("round %d (keepGoing=%v) checker %d %+v: fed %v, Feeds says %v", round, keepGoing, i, specs[i], ps[i].seen, rps[i].seen)
				}
			}
		}
	}
}

// mkRun emits events (their Seq is the trace's own) into a trace with a
// fresh checker set from mk.
func mkRun(t *testing.T, mk func() ([]Checker, []*probe), events []Event, keepGoing bool) ([]Checker, []*probe) {
	t.Helper()
	k := NewKernel(false)
	tr := k.Trace()
	tr.SetKeepGoing(keepGoing)
	cs, ps := mk()
	for _, c := range cs {
		tr.AddChecker(c)
	}
	for _, ev := range events {
		k.now = ev.At
		tr.Emit(ev.Actor, ev.Kind, ev.Outcome)
	}
	return cs, ps
}

// TestSpanFor_MatchesTable holds the trace's kind cache (sets of two slots
// picked by a kind's address) to the table it caches: over streams of
// many kinds, so that sets overflow and entries are evicted and promoted,
// some built at run time (the same text at another address), each with
// several actor classes, spanFor returns the table's span every time.
func TestSpanFor_MatchesTable(t *testing.T) {
	p := NewPRNG(11)
	var kinds []string
	for i := range 600 {
		kinds = append(kinds, fmt.Sprintf("kind-%d", i))
	}
	actors := []string{"agent/t1", "user/x", "server", "agent/"}
	for round := 0; round < 20; round++ {
		tr := NewTrace(NewKernel(false), false)
		for i := range 6 {
			var ks []string
			for _, k := range kinds {
				if p.Below(5) == 0 {
					ks = append(ks, k)
				}
			}
			pr := &probe{name: fmt.Sprint("c", i), deadline: NoDeadline}
			switch i % 3 {
			case 0:
				tr.AddChecker(probeKinds{pr, ks})
			case 1:
				tr.AddChecker(probeBoth{probeKinds{pr, ks}, []string{"agent/", "user/"}})
			default:
				tr.AddChecker(pr)
			}
		}
		tr.bind()
		hot := kinds[:8+p.Below(200)]
		for n := 0; n < 20000; n++ {
			k := hot[p.Below(uint64(len(hot)))]
			if p.Below(50) == 0 {
				k = kinds[p.Below(uint64(len(kinds)))]
			}
			if p.Below(20) == 0 {
				k = string([]byte(k)) // the same kind at another address
			}
			a := actors[p.Below(uint64(len(actors)))]
			if got, want := tr.spanFor(k, a), tr.table.span(k, tr.table.mask(a)); got != want {
				t.Fatalf("round %d lookup %d: spanFor(%q, %q) = %+v, want %+v", round, n, k, a, got, want)
			}
		}
	}
}
