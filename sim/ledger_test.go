package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func init() {
	DeclareObligation(ObligationInfo{Name: "test-ledger-kept", Property: "a test's promise is kept",
		Source: "sim/ledger_test.go", Group: "test"})
}

// The ledger keeps open obligations oldest first through discharges,
// re-opens and enough churn to compact it; touching one keeps its place.
func TestLedger_KeepsOrderThroughChurn(t *testing.T) {
	k := NewKernel(false)
	l := NewLedger(k)
	const name = "test-ledger-kept"
	var want []string
	for i := range 200 {
		e := fmt.Sprintf("e%d", i)
		l.Open(name, e, "opened")
		want = append(want, e)
		if i%3 != 0 { // discharge two in three, the older ones first
			l.Discharge(name, want[0])
			want = want[1:]
		}
	}
	k.now = time.Minute
	l.Open(name, want[0], "touched by a second open")
	l.Touch(name, want[1], "touched")
	l.Discharge(name, "never-opened")
	var got []string
	for _, o := range l.Pending() {
		got = append(got, o.Entity)
	}
	require.Equal(t, want, got)
	p := l.Pending()
	assert.Equal(t, time.Minute, p[0].Touched)
	assert.Equal(t, "touched by a second open", p[0].LastEvent)
	assert.Zero(t, p[0].OpenedAt)
	assert.Equal(t, "touched", p[1].LastEvent)
	l.Discharge(name, want[0])
	l.Open(name, want[0], "re-opened")
	p = l.Pending()
	assert.Equal(t, want[0], p[len(p)-1].Entity, "a re-opened obligation is the newest")
	v := l.Violation(2*time.Minute, time.Hour)
	require.NotNil(t, v)
	assert.Contains(t, v.Message, want[1]+" still open")
	assert.Contains(t, v.Message, fmt.Sprintf("(%d more obligations open)", len(want)-1))
}
