package table

import "bytes"

// keyStore holds the rows of a UNIQUE or AGGREGATE table by key, compactly:
// each key's current record is encoded into an append-only rowStore arena
//
//	flags (recDeleted), the key columns' values, the sequence value, then
//	(live records) the other columns' values in schema order
//
// and an open-addressing hash table of record refs finds a key by hashing
// and comparing the record's key bytes, so a key costs its record plus
// ~11 bytes of table. Replacing a key appends a new record; superseded ones
// are dropped by compaction (a rebuild into a new arena once they outnumber
// the live ones). Records are never changed once written, so a Snapshot (an
// arena view plus a list of refs) stays valid while later loads apply.
type keyStore struct {
	arena rowStore
	slots []uint64 // 0 empty, slotGone removed, else ref+1
	used  int      // slots not empty
	keys  int      // keys held (tombstone records included)
	dead  int      // records in arena no key points to
	lay   *recordLayout
	buf   []byte
}

// recordLayout says where each column's value sits in a record.
type recordLayout struct {
	keyIdx []int
	width  int
	pos    []int // column → index in the record's value sequence (after flags)
}

const slotGone = ^uint64(0)

// Record flags.
const recDeleted byte = 1

func newKeyStore(keyIdx []int, width int) *keyStore {
	lay := &recordLayout{keyIdx: keyIdx, width: width, pos: make([]int, width)}
	isKey := make([]bool, width)
	for j, k := range keyIdx {
		lay.pos[k], isKey[k] = j, true
	}
	next := len(keyIdx) + 1 // after the keys and the sequence
	for i := range width {
		if !isKey[i] {
			lay.pos[i] = next
			next++
		}
	}
	return &keyStore{lay: lay}
}

// encodeKey appends the key columns' values of row to b.
func encodeKey(b []byte, keyIdx []int, row []any) []byte {
	for _, k := range keyIdx {
		b = appendValue(b, row[k])
	}
	return b
}

// recordKey returns the key bytes of a record.
func (l *recordLayout) recordKey(rec []byte) []byte {
	rest := rec[1:]
	for range l.keyIdx {
		rest = skipValue(rest)
	}
	return rec[1 : len(rec)-len(rest)]
}

// encodeRecord appends the record of e (key bytes key) to b.
func (l *recordLayout) encodeRecord(b, key []byte, e entry) []byte {
	if e.deleted {
		b = append(b, recDeleted)
	} else {
		b = append(b, 0)
	}
	b = append(b, key...)
	b = appendValue(b, e.seq)
	if e.deleted {
		return b
	}
	for i, v := range e.row {
		if l.pos[i] > len(l.keyIdx) {
			b = appendValue(b, v)
		}
	}
	return b
}

// decodeRecord decodes a record into an entry (its row the caller's).
func (l *recordLayout) decodeRecord(rec []byte) entry {
	e := entry{deleted: rec[0]&recDeleted != 0}
	row := make([]any, l.width)
	var one [1]any
	b := rec[1:]
	for _, k := range l.keyIdx {
		decodeRow(b, 1, one[:])
		row[k], b = one[0], skipValue(b)
	}
	decodeRow(b, 1, one[:])
	e.seq, b = one[0], skipValue(b)
	if e.deleted {
		return e
	}
	for i := range l.width {
		if l.pos[i] > len(l.keyIdx) {
			decodeRow(b, 1, one[:])
			row[i], b = one[0], skipValue(b)
		}
	}
	e.row = row
	return e
}

// value decodes column col of a live record without the others.
func (l *recordLayout) value(rec []byte, col int) any { return valueAt(rec[1:], l.pos[col]) }

// recordLen is the encoded length of the record at the start of b.
func (l *recordLayout) recordLen(b []byte) int {
	n := len(l.keyIdx) + 1
	if b[0]&recDeleted == 0 {
		n = l.width + 1
	}
	rest := b[1:]
	for range n {
		rest = skipValue(rest)
	}
	return len(b) - len(rest)
}

func hashKey(key []byte) uint64 {
	h := uint64(14695981039346656037) // FNV-1a
	for _, c := range key {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// find returns the slot holding key (found) or the slot to insert it into.
func (k *keyStore) find(key []byte) (slot int, found bool) {
	if len(k.slots) == 0 {
		return -1, false
	}
	mask := len(k.slots) - 1
	insert := -1
	for i := int(hashKey(key)) & mask; ; i = (i + 1) & mask {
		switch s := k.slots[i]; s {
		case 0:
			if insert < 0 {
				insert = i
			}
			return insert, false
		case slotGone:
			if insert < 0 {
				insert = i
			}
		default:
			if bytes.Equal(k.lay.recordKey(k.arena.at(s-1)), key) {
				return i, true
			}
		}
	}
}

func (k *keyStore) get(key []byte) (entry, bool) {
	i, ok := k.find(key)
	if !ok {
		return entry{}, false
	}
	return k.lay.decodeRecord(k.arena.at(k.slots[i] - 1)), true
}

func (k *keyStore) put(key []byte, e entry) {
	if (k.used+1)*4 > len(k.slots)*3 {
		k.rehash(max(16, len(k.slots)*2))
	}
	k.buf = k.lay.encodeRecord(k.buf[:0], key, e)
	ref := k.arena.addRaw(k.buf)
	i, found := k.find(key)
	switch {
	case found:
		k.dead++
	case k.slots[i] == 0:
		k.used++
		k.keys++
	default:
		k.keys++
	}
	k.slots[i] = ref + 1
	k.maybeCompact()
}

func (k *keyStore) del(key []byte) {
	if i, ok := k.find(key); ok {
		k.slots[i] = slotGone
		k.keys--
		k.dead++
		k.maybeCompact()
	}
}

// each calls fn for every key (tombstone records included) until it returns
// false. key is the record's key bytes (valid for good: arenas are never
// reused).
func (k *keyStore) each(fn func(key []byte, e entry) bool) {
	for _, s := range k.slots {
		if s == 0 || s == slotGone {
			continue
		}
		rec := k.arena.at(s - 1)
		if !fn(k.lay.recordKey(rec), k.lay.decodeRecord(rec)) {
			return
		}
	}
}

// liveRefs lists the records of the keys that are not deleted.
func (k *keyStore) liveRefs() []uint64 {
	out := make([]uint64, 0, k.keys)
	for _, s := range k.slots {
		if s != 0 && s != slotGone && k.arena.at(s - 1)[0]&recDeleted == 0 {
			out = append(out, s-1)
		}
	}
	return out
}

// rehash rebuilds the slot table with n slots (a power of two).
func (k *keyStore) rehash(n int) {
	old := k.slots
	k.slots, k.used = make([]uint64, n), 0
	for _, s := range old {
		if s == 0 || s == slotGone {
			continue
		}
		i, _ := k.find(k.lay.recordKey(k.arena.at(s - 1)))
		k.slots[i] = s
		k.used++
	}
}

// maybeCompact rebuilds the arena once dead records outnumber live ones.
func (k *keyStore) maybeCompact() {
	if k.dead < 1024 || k.dead < k.keys {
		return
	}
	var arena rowStore
	for i, s := range k.slots {
		if s == 0 || s == slotGone {
			continue
		}
		b := k.arena.at(s - 1)
		k.slots[i] = arena.addRaw(b[:k.lay.recordLen(b)]) + 1
	}
	k.arena, k.dead = arena, 0
	k.rehash(len(k.slots)) // drops the removed-slot markers
}
