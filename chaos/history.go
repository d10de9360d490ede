package chaos

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
)

// Event is one produced record of the history. Every event has a unique
// EID, belongs to key K and carries that key's next version Ver; Sum is the
// CRC-32 (IEEE) of Payload, so a row whose payload was altered is caught.
// Its JSON field names are the table's column names.
type Event struct {
	EID     int64  `json:"eid"`
	K       int64  `json:"k"`
	Ver     int64  `json:"ver"`
	Payload string `json:"payload"`
	Sum     int64  `json:"sum"`
}

// Checksum is the Sum of payload.
func Checksum(payload string) int64 { return int64(crc32.ChecksumIEEE([]byte(payload))) }

// Valid reports whether e's Sum matches its Payload.
func (e Event) Valid() bool { return e.Sum == Checksum(e.Payload) }

// History generates the produced events: event ids 1, 2, … and per-key
// versions 1, 2, … for keys 1..Keys. It is deterministic given its PRNG.
// It is not safe for concurrent use.
type History struct {
	keys    int
	nextEID int64
	vers    map[int64]int64
	// bad counts malformed records generated.
	bad int
}

// NewHistory returns a generator over keys keys.
func NewHistory(keys int) *History {
	return &History{keys: keys, nextEID: 1, vers: map[int64]int64{}}
}

// Next returns the next event, its key drawn from rng.
func (h *History) Next(rng *rand.Rand) Event {
	k := int64(rng.IntN(h.keys)) + 1
	h.vers[k]++
	e := Event{EID: h.nextEID, K: k, Ver: h.vers[k]}
	h.nextEID++
	e.Payload = fmt.Sprintf("p-%d-%d-%08x", e.K, e.Ver, rng.Uint32())
	e.Sum = Checksum(e.Payload)
	return e
}

// Malformed returns the value of the next malformed record: not a JSON
// object, but tagged so the checker can find it in the dead-letter topic.
func (h *History) Malformed() []byte {
	h.bad++
	return fmt.Appendf(nil, "malformed-%d {not json", h.bad)
}

// Encode is the Kafka record value of e.
func (e Event) Encode() []byte {
	b, _ := json.Marshal(e) // a struct of ints and a string always marshals
	return b
}

// KeyBytes is the Kafka record key of e: its key, so that one key's
// versions stay in one partition, in order.
func (e Event) KeyBytes() []byte { return fmt.Appendf(nil, "k%d", e.K) }
