package sim

import "slices"

// Unindex removes the first v from the list m[k] of an index kept as a map
// of slices (each list in insertion order, looked up only, never ranged
// over), and deletes the key once its list is empty, so that an index of a
// world that comes and goes does not keep a key per value it ever held.
// A v not in m[k] changes nothing.
func Unindex[K, V comparable](m map[K][]V, k K, v V) {
	list, ok := m[k]
	if !ok {
		return
	}
	i := slices.Index(list, v)
	if i < 0 {
		return
	}
	list = slices.Delete(list, i, i+1)
	if len(list) == 0 {
		delete(m, k)
		return
	}
	m[k] = list
}
