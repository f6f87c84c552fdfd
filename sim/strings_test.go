package sim

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// Every string a Strings builds equals the standard library's, and stays
// equal after later strings fill its chunk and start new ones.
func TestStrings_MatchStdlibAndStayValid(t *testing.T) {
	var s Strings
	type pair struct{ got, want string }
	var kept []pair
	durs := []time.Duration{0, 1, 999, time.Microsecond, 1500 * time.Microsecond, time.Second, 61 * time.Second,
		90 * time.Minute, -3 * time.Millisecond, 25*time.Hour + 7*time.Millisecond}
	for i := -150; i < 3000; i++ {
		n := i * 37
		kept = append(kept, pair{s.Itoa(n), strconv.Itoa(n)}, pair{s.Join("p", n), "p" + strconv.Itoa(n)},
			pair{s.Range(n, n+i%3), rangeWant(n, n+i%3)}, pair{s.Concat("pane/", s.Itoa(i)), "pane/" + strconv.Itoa(i)},
			pair{s.Bytes([]byte(strconv.Itoa(n) + "B")), strconv.Itoa(n) + "B"})
		d := durs[(i+150)%len(durs)] * time.Duration(1+i%7)
		kept = append(kept, pair{s.Duration(d), d.String()}, pair{s.T(d * 997), FormatT(d * 997)})
	}
	long := string(make([]byte, StringsChunk))
	kept = append(kept, pair{s.Copy(long), long}, pair{s.Concat("", "x"), "x"}, pair{s.Concat("x", ""), "x"}, pair{s.Copy(""), ""})
	for i, p := range kept {
		if p.got != p.want {
			t.Fatalf("string %d: got %q, want %q", i, p.got, p.want)
		}
	}
}

func rangeWant(a, b int) string {
	if a == b {
		return fmt.Sprint(a)
	}
	return fmt.Sprintf("%d-%d", a, b)
}

// Building a string allocates only when a chunk fills.
func TestStrings_DoNotAllocatePerString(t *testing.T) {
	var s Strings
	s.Itoa(1000) // the first chunk
	n := 0
	allocs := testing.AllocsPerRun(100, func() {
		n++
		_ = s.Itoa(1000 + n)
		_ = s.Join("w", n)
		_ = s.Duration(time.Duration(n) * 1500 * time.Millisecond)
	})
	// About 20 bytes a run: a 4 KiB chunk lasts about 200 runs.
	if allocs > 0.05 {
		t.Fatalf("%.2f allocations per run, want about none", allocs)
	}
}

// Chunks start at StringsFirstChunk bytes and double up to StringsChunk; a
// string longer than the next chunk gets a chunk its size.
func TestStrings_ChunksGrowFromTheFirst(t *testing.T) {
	var s Strings
	var caps []int
	for range 5000 {
		s.Itoa(12345)
		if c := cap(s.buf); len(caps) == 0 || caps[len(caps)-1] != c {
			caps = append(caps, c)
		}
	}
	want := []int{StringsFirstChunk, 512, 1024, 2048, StringsChunk}
	if fmt.Sprint(caps) != fmt.Sprint(want) {
		t.Fatalf("chunk sizes %v, want %v", caps, want)
	}
	var u Strings
	big := string(make([]byte, 600))
	if got := u.Copy(big); got != big || cap(u.buf) != 600 {
		t.Fatalf("a 600-byte first string: chunk of %d bytes", cap(u.buf))
	}
	if u.Copy("x"); cap(u.buf) != 1200 {
		t.Fatalf("after a full 600-byte chunk: chunk of %d bytes, want 1200", cap(u.buf))
	}
}
