package kafka

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris/schema"
	"github.com/doris-sink/doris-sink/loader/kafka/cdcschema"
)

// valueKind is how a Debezium value is rewritten for its Doris column.
type valueKind uint8

const (
	valDays       valueKind = iota + 1 // int days since 1970-01-01 → "2006-01-02"
	valMillis                          // int ms since the epoch → "2006-01-02 15:04:05.000"
	valMicros                          // int µs → "… .000000"
	valNanos                           // int ns → "… .000000" (Doris keeps µs)
	valZoned                           // ISO-8601 with offset → UTC "2006-01-02 15:04:05.000000"
	valDecimal                         // base64 two's-complement unscaled bytes → "123.45"
	valVarDecimal                      // {"scale":s,"value":base64} → "123.45"
	valTimeMillis                      // int ms since midnight → "15:04:05.000"
	valTimeMicros                      // int µs since midnight → "15:04:05.000000"
	valTimeNanos                       // int ns since midnight → "15:04:05.000000"
)

type valueConv struct {
	kind  valueKind
	scale int // valDecimal
}

// SetValueConversions makes a debezium Converter rewrite the values of the
// row image whose Debezium encoding the Doris column cannot parse: the
// integer dates and timestamps of io.debezium.time.* and the Connect
// Date/Timestamp, the base64 bytes of a Connect Decimal, the struct of a
// VariableScaleDecimal, a ZonedTimestamp into a DATETIME. fields are the
// row schema, cols the table's columns: a value is rewritten only when its
// column has the type the mapping gives it (docs/configuration.md "Debezium
// types"), so a table that keeps the raw encoding (e.g. a BIGINT for a
// Timestamp) still gets it. nil fields turn the rewriting off.
func (c *Converter) SetValueConversions(fields []cdcschema.Field, cols []schema.Column) {
	if c.format != FormatDebezium {
		return
	}
	var m map[string]valueConv
	for _, f := range fields {
		col, ok := findColumn(cols, f.Name)
		if !ok {
			continue
		}
		if vc, ok := conversionFor(f, col.Type); ok {
			if m == nil {
				m = map[string]valueConv{}
			}
			m[f.Name] = vc
		}
	}
	c.vals = m
}

func findColumn(cols []schema.Column, name string) (schema.Column, bool) {
	for _, c := range cols {
		if c.Name == name {
			return c, true
		}
	}
	return schema.Column{}, false
}

// conversionFor says how a value of f loads into a column of type colType.
func conversionFor(f cdcschema.Field, colType string) (valueConv, bool) {
	base := strings.ToUpper(colType)
	if i := strings.IndexAny(base, "(<"); i >= 0 {
		base = base[:i]
	}
	temporal := strings.HasPrefix(base, "DATE") // DATE, DATEV2, DATETIME, DATETIMEV2
	text := base == "STRING" || base == "VARCHAR" || base == "CHAR" || base == "TEXT"
	numeric := strings.HasPrefix(base, "DECIMAL") || base == "DOUBLE" || base == "FLOAT"
	switch f.Semantic {
	case cdcschema.DebeziumDate, cdcschema.ConnectDate:
		return valueConv{kind: valDays}, temporal || text
	case cdcschema.DebeziumTimestamp, cdcschema.ConnectTimestamp:
		return valueConv{kind: valMillis}, temporal || text
	case cdcschema.DebeziumMicroTimestamp:
		return valueConv{kind: valMicros}, temporal || text
	case cdcschema.DebeziumNanoTimestamp:
		return valueConv{kind: valNanos}, temporal || text
	case cdcschema.DebeziumZonedTimestamp:
		return valueConv{kind: valZoned}, temporal
	case cdcschema.ConnectDecimal:
		scale, _ := strconv.Atoi(f.Parameters[cdcschema.ParamScale])
		return valueConv{kind: valDecimal, scale: scale}, numeric || text
	case cdcschema.DebeziumVarScaleDec:
		return valueConv{kind: valVarDecimal}, numeric || text
	case cdcschema.ConnectTime, cdcschema.DebeziumTime:
		return valueConv{kind: valTimeMillis}, text
	case cdcschema.DebeziumMicroTime:
		return valueConv{kind: valTimeMicros}, text
	case cdcschema.DebeziumNanoTime:
		return valueConv{kind: valTimeNanos}, text
	}
	return valueConv{}, false
}

// convertValues rewrites the values of c.vals in the compact JSON object in
// c.buf. A value that is null or not in the expected encoding is kept as it
// is (so a row converted twice is unchanged).
func (c *Converter) convertValues() {
	row := c.buf.Bytes()
	out := c.vbuf[:0]
	i := 1 // after '{'
	out = append(out, '{')
	for i < len(row) && row[i] == '"' {
		kEnd := skipStringFast(row, i)
		key := row[i+1 : kEnd-1]
		vStart := kEnd + 1 // compact: ':' right after the key
		var vEnd int
		if row[vStart] == '"' {
			vEnd = skipStringFast(row, vStart)
		} else {
			vEnd = skipValue(row, vStart)
		}
		out = append(out, row[i:vStart]...)
		val := row[vStart:vEnd]
		if vc, ok := c.vals[string(key)]; ok { // no allocation: map lookup of string(bytes)
			out = appendConverted(out, vc, val)
		} else {
			out = append(out, val...)
		}
		i = vEnd
		if i < len(row) && row[i] == ',' {
			out = append(out, ',')
			i++
		}
	}
	out = append(out, row[i:]...)
	c.vbuf = out
	c.buf.Reset()
	c.buf.Write(out)
}

// appendConverted appends val (a raw JSON value) converted by vc.
func appendConverted(out []byte, vc valueConv, val []byte) []byte {
	if len(val) == 0 || val[0] == 'n' { // null
		return append(out, val...)
	}
	switch vc.kind {
	case valDays, valMillis, valMicros, valNanos, valTimeMillis, valTimeMicros, valTimeNanos:
		n, err := strconv.ParseInt(string(val), 10, 64) // string(val): no allocation for a short conversion
		if err != nil {
			return append(out, val...)
		}
		out = append(out, '"')
		switch vc.kind {
		case valDays:
			out = time.Unix(n*86400, 0).UTC().AppendFormat(out, time.DateOnly)
		case valMillis:
			out = time.UnixMilli(n).UTC().AppendFormat(out, "2006-01-02 15:04:05.000")
		case valMicros:
			out = time.UnixMicro(n).UTC().AppendFormat(out, "2006-01-02 15:04:05.000000")
		case valNanos:
			out = time.Unix(0, n).UTC().AppendFormat(out, "2006-01-02 15:04:05.000000")
		case valTimeMillis:
			out = time.UnixMilli(n).UTC().AppendFormat(out, "15:04:05.000")
		case valTimeMicros:
			out = time.UnixMicro(n).UTC().AppendFormat(out, "15:04:05.000000")
		case valTimeNanos:
			out = time.Unix(0, n).UTC().AppendFormat(out, "15:04:05.000000")
		}
		return append(out, '"')
	case valZoned:
		var s string
		if json.Unmarshal(val, &s) != nil {
			return append(out, val...)
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return append(out, val...)
		}
		out = append(out, '"')
		out = t.UTC().AppendFormat(out, "2006-01-02 15:04:05.000000")
		return append(out, '"')
	case valDecimal:
		if d, ok := decodeDecimal(val, vc.scale); ok {
			return append(append(append(out, '"'), d...), '"')
		}
	case valVarDecimal:
		var v struct {
			Scale int    `json:"scale"`
			Value []byte `json:"value"` // base64 in JSON
		}
		if json.Unmarshal(val, &v) == nil && v.Value != nil {
			return append(append(append(out, '"'), unscaledString(v.Value, v.Scale)...), '"')
		}
	}
	return append(out, val...)
}

// decodeDecimal decodes a Connect Decimal's JSON value (a base64 string of
// the big-endian two's-complement unscaled value) into decimal text.
func decodeDecimal(val []byte, scale int) (string, bool) {
	if len(val) < 2 || val[0] != '"' || bytes.IndexByte(val, '\\') >= 0 {
		return "", false
	}
	raw, err := base64.StdEncoding.DecodeString(string(val[1 : len(val)-1]))
	if err != nil || len(raw) == 0 {
		return "", false
	}
	return unscaledString(raw, scale), true
}

// unscaledString renders the two's-complement big-endian integer b divided
// by 10^scale.
func unscaledString(b []byte, scale int) string {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 { // negative: subtract 2^(8·len)
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	s := n.String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
