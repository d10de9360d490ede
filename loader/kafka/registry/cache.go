package registry

// boundedMap is a map that holds at most max entries: putting a new key
// into a full one first deletes an arbitrary other entry (Go's map
// iteration order). Lookups read m directly and cost nothing extra, unlike
// an LRU's bookkeeping on every hit; a forgotten entry is fetched again
// when next needed. The caller synchronises.
type boundedMap[K comparable, V any] struct {
	m   map[K]V
	max int
}

func newBoundedMap[K comparable, V any](max int) boundedMap[K, V] {
	return boundedMap[K, V]{m: make(map[K]V), max: max}
}

// put sets m[k] = v, evicting another entry if m is full.
func (b *boundedMap[K, V]) put(k K, v V) {
	if _, ok := b.m[k]; !ok && len(b.m) >= b.max {
		for old := range b.m {
			delete(b.m, old)
			break
		}
	}
	b.m[k] = v
}
