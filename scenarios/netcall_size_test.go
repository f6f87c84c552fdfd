package scenarios

import (
	"testing"
	"unsafe"
)

// A chaos seed sends a few thousand network calls, allocated 16 at a time
// (sim.Slab): at 432 bytes a slab of them is 6,912 bytes, a size class of
// its own; at 464 it took 8,192.
func TestNetCall_Size(t *testing.T) {
	if n := unsafe.Sizeof(netCall{}); n > 432 {
		t.Fatalf("netCall is %d bytes, want at most 432", n)
	}
}
