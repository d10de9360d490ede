package bench

import (
	"encoding/hex"
	"math/rand/v2"
	"strconv"
)

// rowGen makes rows of an exact size in a format: a few typed fields and
// a random hex note that pads the row to size (half the bytes of a 1 KiB
// row are random, so compression cannot make it small). It is not safe for concurrent
// use.
type rowGen struct {
	format string
	size   int
	pool   []byte
	ts     int64
}

// newRowGen returns a generator with a deterministic pool (seed).
func newRowGen(format string, size int, seed uint64) *rowGen {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	raw := make([]byte, 32<<10)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	return &rowGen{format: format, size: size, pool: []byte(hex.EncodeToString(raw)), ts: 1_760_000_000_000}
}

// appendRow appends row i to dst and returns it.
func (g *rowGen) appendRow(dst []byte, i int64) []byte {
	start := len(dst)
	csv := g.format == "csv"
	if csv {
		dst = strconv.AppendInt(dst, i, 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, g.ts+i, 10)
		dst = append(dst, ",c-"...)
		dst = strconv.AppendInt(dst, i%1000, 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, i%100000, 10)
		dst = append(dst, ".25,"...)
	} else {
		dst = append(dst, `{"id":`...)
		dst = strconv.AppendInt(dst, i, 10)
		dst = append(dst, `,"ts":`...)
		dst = strconv.AppendInt(dst, g.ts+i, 10)
		dst = append(dst, `,"customer":"c-`...)
		dst = strconv.AppendInt(dst, i%1000, 10)
		dst = append(dst, `","amount":`...)
		dst = strconv.AppendInt(dst, i%100000, 10)
		dst = append(dst, `.25,"note":"`...)
	}
	tail := 0
	if !csv {
		tail = 2 // `"}`
	}
	pad := g.size - (len(dst) - start) - tail
	if pad < 1 {
		pad = 1
	}
	off := int((i * 7919) % int64(len(g.pool)-pad))
	dst = append(dst, g.pool[off:off+pad]...)
	if !csv {
		dst = append(dst, `"}`...)
	}
	return dst
}
