package table

// keyStore holds the rows of a UNIQUE or AGGREGATE table by key, compactly:
// each key's current record is encoded into an append-only rowStore arena
// (flags, sequence value, then the row's values) and an index maps the key
// string to the record. Replacing a key appends a new record; the old one
// becomes dead and is dropped by compaction (a rebuild into a new arena when
// dead records outnumber live ones). Records are never changed once written,
// so a Snapshot (a view of the arena plus a list of refs) stays valid while
// later loads apply.
type keyStore struct {
	arena rowStore
	index map[string]uint64 // key → record ref
	dead  int               // superseded records in arena
	width int               // values per row
	buf   []byte
}

func newKeyStore(width int) *keyStore {
	return &keyStore{index: map[string]uint64{}, width: width}
}

// Record flags.
const recDeleted byte = 1

// encodeRecord appends the record of e to b.
func encodeRecord(b []byte, e entry) []byte {
	if e.deleted {
		b = append(b, recDeleted)
		return appendValue(b, e.seq)
	}
	b = append(b, 0)
	b = appendValue(b, e.seq)
	return encodeRow(b, e.row)
}

// decodeRecord decodes a record of width values.
func decodeRecord(b []byte, width int) entry {
	e := entry{deleted: b[0]&recDeleted != 0}
	var seq [1]any
	decodeRow(b[1:], 1, seq[:])
	e.seq = seq[0]
	if !e.deleted {
		e.row = decodeRow(skipValue(b[1:]), width, nil)
	}
	return e
}

// recordValue decodes value col of a live record without the others.
func recordValue(b []byte, col int) any { return valueAt(skipValue(b[1:]), col) }

func (k *keyStore) get(key string) (entry, bool) {
	ref, ok := k.index[key]
	if !ok {
		return entry{}, false
	}
	return decodeRecord(k.arena.at(ref), k.width), true
}

func (k *keyStore) put(key string, e entry) {
	k.buf = encodeRecord(k.buf[:0], e)
	ref := k.arena.addRaw(k.buf)
	if _, ok := k.index[key]; ok {
		k.dead++
	}
	k.index[key] = ref
	k.maybeCompact()
}

func (k *keyStore) del(key string) {
	if _, ok := k.index[key]; ok {
		delete(k.index, key)
		k.dead++
		k.maybeCompact()
	}
}

// each calls fn for every key (tombstones included) until it returns false.
func (k *keyStore) each(fn func(key string, e entry) bool) {
	for key, ref := range k.index {
		if !fn(key, decodeRecord(k.arena.at(ref), k.width)) {
			return
		}
	}
}

// liveRefs lists the records of the keys that are not deleted.
func (k *keyStore) liveRefs() []uint64 {
	out := make([]uint64, 0, len(k.index))
	for _, ref := range k.index {
		if k.arena.at(ref)[0]&recDeleted == 0 {
			out = append(out, ref)
		}
	}
	return out
}

// maybeCompact rebuilds the arena once dead records outnumber live ones.
func (k *keyStore) maybeCompact() {
	if k.dead < 1024 || k.dead < len(k.index) {
		return
	}
	var arena rowStore
	for key, ref := range k.index {
		b := k.arena.at(ref)
		k.index[key] = arena.addRaw(b[:recordLen(b, k.width)])
	}
	k.arena, k.dead = arena, 0
}

// recordLen is the encoded length of the record at the start of b.
func recordLen(b []byte, width int) int {
	rest := skipValue(b[1:])
	if b[0]&recDeleted == 0 {
		for range width {
			rest = skipValue(rest)
		}
	}
	return len(b) - len(rest)
}
