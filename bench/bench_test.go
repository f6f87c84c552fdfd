package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The four engines run the same events: same count, same digest of
// (session, kind, virtual time).
func TestCheck_EnginesAgree(t *testing.T) {
	results, err := Check(50, 7, 90*time.Minute)
	require.NoError(t, err)
	require.Len(t, results, len(Engines))
	assert.Greater(t, results[0].Events, uint64(100))
}

// Different seeds give different runs.
func TestCheck_SeedMatters(t *testing.T) {
	a, err := Open(Bare, 10, 1)
	require.NoError(t, err)
	b, err := Open(Bare, 10, 2)
	require.NoError(t, err)
	a.Advance(10 * time.Hour)
	b.Advance(10 * time.Hour)
	assert.NotEqual(t, a.Digest(), b.Digest())
}

// Measure runs at least the asked events, and the kernel's fingerprint of a
// given workload does not change between runs.
func TestMeasure_KernelIsDeterministic(t *testing.T) {
	var prints []uint64
	for range 2 {
		in, err := Open(Kernel, 100, 3)
		require.NoError(t, err)
		in.Advance(time.Hour)
		r := in.Measure(5000)
		assert.GreaterOrEqual(t, r.Events, uint64(5000))
		assert.Less(t, r.Events, uint64(5000+256))
		assert.Positive(t, r.Virtual)
		prints = append(prints, in.Fingerprint())
		in.Close()
	}
	assert.Equal(t, prints[0], prints[1])
}

func TestOpen_BadArguments(t *testing.T) {
	_, err := Open("nope", 1, 1)
	assert.ErrorContains(t, err, `unknown engine "nope"`)
	_, err = Open(Kernel, 0, 1)
	assert.ErrorContains(t, err, "0 sessions")
}

func TestSig(t *testing.T) {
	for x, want := range map[float64]string{0.1234: "0.123", 12.34: "12.3", 1234: "1234", 12345: "12.3k", 1.234e6: "1.23M", 5.9e9: "5.9G"} {
		assert.Equal(t, want, sig(x), "%g", x)
	}
}
