package sim

import "testing"

func TestSlabNewDistinctZero(t *testing.T) {
	var s Slab[[3]int]
	seen := map[*[3]int]bool{}
	for i := 0; i < 5*SlabSize+3; i++ {
		p := s.New()
		if *p != [3]int{} {
			t.Fatalf("value %d not zero: %v", i, *p)
		}
		if seen[p] {
			t.Fatalf("value %d handed out twice", i)
		}
		seen[p] = true
		p[0], p[1], p[2] = i, i, i // written values stay with their pointer
	}
	for p := range seen {
		if p[0] != p[1] || p[1] != p[2] {
			t.Fatalf("value overwritten: %v", *p)
		}
	}
}

func TestSlabNewAllocs(t *testing.T) {
	var s Slab[int64]
	n := testing.AllocsPerRun(10, func() {
		for i := 0; i < SlabSize; i++ {
			s.New()
		}
	})
	if n > 1 {
		t.Fatalf("%v allocations per %d values, want at most 1", n, SlabSize)
	}
}
