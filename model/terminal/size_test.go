package terminal

import (
	"testing"
	"unsafe"
)

// A terminal-remount seed mounts about a thousand panes: a Pane stays in
// the 176-byte size class (it was 208, a quarter of the scenario's bytes).
func TestPane_Size(t *testing.T) {
	if n := unsafe.Sizeof(Pane{}); n > 176 {
		t.Fatalf("Pane is %d bytes, want at most 176 (order its fields: bools together)", n)
	}
}

// ID is the tail of the pane's actor.
func TestPane_IDIsTheActorsTail(t *testing.T) {
	p := &Pane{actor: panePrefix + "p12"}
	if p.ID() != "p12" {
		t.Fatalf("ID %q", p.ID())
	}
}
