package invariants

import (
	"strings"
	"testing"

	"github.com/orchsim/orchsim/sim"
)

// TestResultField_MatchesFields: the one-pass resultField finds what the
// strings.Fields definition finds, over random results built of names,
// values, ASCII and Unicode spaces and other non-ASCII runes.
func TestResultField_MatchesFields(t *testing.T) {
	parts := []string{"task", "child", "=", "task=", "x", "T1", " ", "  ", "\t", "\n", "\v", "\f", "\r", "\u00a0", "\u0085", "\u2003", "é", "taské", "task=é", "\x80", "",
		"node:delegated-task:command:mcp:thread%3Aenv-1", "!", "\x01", "\x7f", "~", "\x1f", "ask=", "xtask="}
	names := []string{"task", "child", "ta", "", "task=", "task x", "=", "é"}
	p := sim.NewPRNG(5)
	for trial := 0; trial < 60000; trial++ {
		var b strings.Builder
		for n := p.Below(12); n > 0; n-- {
			b.WriteString(parts[p.Below(uint64(len(parts)))])
		}
		r, name := b.String(), names[p.Below(uint64(len(names)))]
		if got, want := resultField(r, name), resultFieldSlow(r, name); got != want {
			t.Fatalf("resultField(%q, %q) = %q, want %q", r, name, got, want)
		}
	}
	if got := resultField("task=T1 child=thread-9", "child"); got != "thread-9" {
		t.Errorf("child = %q", got)
	}
}
