package server

import (
	"strings"
	"testing"

	"github.com/orchsim/orchsim/model/browser"
	"github.com/orchsim/orchsim/sim"
)

// showKey builds the trace's key attribute by the run's strings; it must
// stay browser.ShowKey's string.
func TestShowKey_MatchesBrowserShowKey(t *testing.T) {
	var str sim.Strings
	for _, k := range []string{"", "plain", "t1\x00c2", "\x00", "a\x00b\x00c", strings.Repeat("x\x00", 200)} {
		if got, want := showKey(&str, k), browser.ShowKey(k); got != want {
			t.Errorf("showKey(%q) = %q, want %q", k, got, want)
		}
	}
}
