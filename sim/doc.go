// Package sim is orchsim's deterministic kernel: a virtual clock, one event
// queue, the choice sources every random decision is drawn from, the trace
// with its fingerprint, and the run loop. It knows nothing of T3 Code; the
// models in orchsim/model are plain structs driven by its callbacks.
//
// # Determinism rules
//
// The same seed and the same binary must give a byte-identical trace on any
// GOMAXPROCS, with or without -race. Therefore, in sim, model and invariants:
//
//   - no goroutines, channels or select: one goroutine runs every callback;
//   - no wall clock: time is Kernel.Elapsed, timers are Kernel.AfterFunc
//     (no time.Now, time.Sleep, time.After, time.AfterFunc, time.NewTimer,
//     time.Tick);
//   - no math/rand, math/rand/v2 or crypto/rand: every random decision is a
//     labelled draw from the run's Source through a Rand;
//   - no ranging over maps: iterate slices, or sorted keys;
//   - no os: models do no I/O; ids come from counters or the Source.
//
// lint_test.go enforces these rules on the source of those packages.
//
// Events at the same virtual instant run in scheduling order; an exploration
// strategy may permute them only through draws from the run's Source, so the
// permutation replays too.
package sim
