package protorow

import (
	"bytes"
	"encoding/base64"
	"errors"
	"math/big"
	"runtime"
	"strings"
	"testing"
)

// Review of issue 25: a confluent.type.Decimal's value of any size was
// turned into digits (big.Int: 4 s of CPU and MiBs of garbage for 1 MiB)
// and written into the row, though no Doris DECIMAL holds more than 76
// digits. A value past that fails on its byte count, before any digit is
// made; values of up to 76 digits (and redundant sign bytes) decode.
//
// Not parallel: the allocation bound reads the process-wide TotalAlloc,
// which the package's parallel tests would add to (CI saw 61 KB).
func TestReviewHugeConfluentDecimalFails(t *testing.T) {
	d := newConnectDecoder(t)
	raw := bytes.Repeat([]byte{0x5a}, 64<<10)
	payload := encode(t, message(t, d, "connect.Row", `{"amount":{"value":"`+base64.StdEncoding.EncodeToString(raw)+`","scale":2}}`))
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	_, err := d.AppendJSON(nil, payload)
	runtime.ReadMemStats(&ms1)
	var de *DecodeError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "76 digits") {
		t.Fatalf("err %v, want a DecodeError naming Doris's 76 digits", err)
	}
	if grew := ms1.TotalAlloc - ms0.TotalAlloc; grew > 16<<10 {
		t.Errorf("allocated %d bytes before failing a 64 KiB decimal", grew)
	}
	// 76 nines (32 bytes) padded with sign bytes to 50 still decode.
	nines := strings.Repeat("9", 76)
	for _, neg := range []bool{false, true} {
		n, _ := new(big.Int).SetString(nines, 10)
		want := nines
		if neg {
			n.Neg(n)
			want = "-" + nines
		}
		if got := connectField(t, d, `{"amount":{"value":"`+twos(n, 50)+`"}}`, "amount"); got != want {
			t.Errorf("76 digits in 50 bytes: %s, want %s", got, want)
		}
	}
}
