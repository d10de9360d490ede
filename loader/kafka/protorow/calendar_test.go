package protorow

import (
	"encoding/base64"
	"math/big"
	"math/rand/v2"
	"testing"
)

func newConnectDecoder(t *testing.T) *Decoder {
	t.Helper()
	d, err := New(readTestdata(t, "connect.proto"), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// twos returns n as big-endian two's complement in size bytes.
func twos(n *big.Int, size int) string {
	v := new(big.Int).Set(n)
	if v.Sign() < 0 {
		v.Add(v, new(big.Int).Lsh(big.NewInt(1), uint(size*8)))
	}
	b := v.FillBytes(make([]byte, size))
	return base64.StdEncoding.EncodeToString(b)
}

func connectField(t *testing.T, d *Decoder, js, key string) string {
	t.Helper()
	f := fields(t, decodeRow(t, d, encode(t, message(t, d, "connect.Row", js))))
	v, ok := f[key]
	if !ok {
		return "<absent>"
	}
	return v
}

// TestConfluentDecimal: confluent.type.Decimal (a known dependency, no
// reference needed) is a JSON number with its scale applied.
func TestConfluentDecimal(t *testing.T) {
	t.Parallel()
	d := newConnectDecoder(t)
	big38, _ := new(big.Int).SetString("-99999999999999999999999999999999999999", 10)
	huge, _ := new(big.Int).SetString("123456789012345678901234567890123456789012", 10)
	for _, c := range []struct {
		name  string
		n     *big.Int
		size  int
		scale int
		want  string
	}{
		{"scale 2", big.NewInt(12345), 2, 2, "123.45"},
		{"negative, leading zeros", big.NewInt(-5), 1, 3, "-0.005"},
		{"zero", big.NewInt(0), 1, 2, "0.00"},
		{"no scale", big.NewInt(-128), 1, 0, "-128"},
		{"negative scale", big.NewInt(7), 1, -2, "700"},
		{"int64 min", big.NewInt(-1 << 63), 8, 0, "-9223372036854775808"},
		{"9 bytes", new(big.Int).Lsh(big.NewInt(1), 64), 9, 1, "1844674407370955161.6"},
		{"38 digits", big38, 16, 10, "-9999999999999999999999999999.9999999999"},
		{"more than 16 bytes", huge, 18, 2, "1234567890123456789012345678901234567890.12"},
	} {
		js := `{"amount":{"value":"` + twos(c.n, c.size) + `","precision":40,"scale":` + big.NewInt(int64(c.scale)).String() + `}}`
		if got := connectField(t, d, js, "amount"); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if got := connectField(t, d, `{"amount":{}}`, "amount"); got != "0" {
		t.Errorf("empty decimal: %s", got)
	}
}

// TestGoogleTypeDate: google.type.Date is a Doris DATE; a partial date is
// null.
func TestGoogleTypeDate(t *testing.T) {
	t.Parallel()
	d := newConnectDecoder(t)
	for js, want := range map[string]string{
		`{"day":{"year":2024,"month":2,"day":29}}`: `"2024-02-29"`,
		`{"day":{"year":7,"month":1,"day":2}}`:     `"0007-01-02"`,
		`{"day":{"month":12,"day":25}}`:            `null`,
	} {
		if got := connectField(t, d, js, "day"); got != want {
			t.Errorf("%s: %s, want %s", js, got, want)
		}
	}
}

// TestGoogleTypeTimeOfDay: "HH:MM:SS.ffffff".
func TestGoogleTypeTimeOfDay(t *testing.T) {
	t.Parallel()
	d := newConnectDecoder(t)
	if got := connectField(t, d, `{"at":{"hours":7,"minutes":5,"seconds":9,"nanos":123456789}}`, "at"); got != `"07:05:09.123456"` {
		t.Errorf("time of day: %s", got)
	}
}

// TestConfluentDecimalMatchesBig: the allocation-free 128-bit path agrees
// with math/big for values of every width up to 16 bytes.
func TestConfluentDecimalMatchesBig(t *testing.T) {
	t.Parallel()
	d := newConnectDecoder(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 400 {
		size := 1 + i%16
		raw := make([]byte, size)
		for j := range raw {
			raw[j] = byte(rng.Uint32())
		}
		n := new(big.Int).SetBytes(raw)
		if raw[0]&0x80 != 0 {
			n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(size*8)))
		}
		js := `{"amount":{"value":"` + base64.StdEncoding.EncodeToString(raw) + `"}}`
		if got := connectField(t, d, js, "amount"); got != n.String() {
			t.Fatalf("% x: %s, want %s", raw, got, n.String())
		}
	}
}
