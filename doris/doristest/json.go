package doristest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// field is one key/value of an ordered JSON object. Values are int64, int,
// string, bool, nil, a nested []field object or a []any array of these.
type field struct {
	key string
	val any
}

// prettyJSON writes an object the way rapidjson's PrettyWriter does: one
// member per line, 4-space indent, `"key": value` (docs/doris-facts.md §2.1, §3.4).
func prettyJSON(fields []field) []byte {
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, f := range fields {
		b.WriteString("    ")
		writeJSONString(&b, f.key)
		b.WriteString(": ")
		writeJSONValue(&b, f.val)
		if i < len(fields)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}")
	return b.Bytes()
}

// compactJSON writes an ordered object without whitespace, like the FE's
// Jackson serializer for RestBaseResult / ResponseBody (docs/doris-facts.md §1.2, §6.1).
func compactJSON(fields []field) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, f.key)
		b.WriteByte(':')
		writeJSONValue(&b, f.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func writeJSONValue(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case string:
		writeJSONString(b, x)
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int:
		b.WriteString(strconv.Itoa(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case []field: // a nested ordered object (FE REST replies)
		b.Write(compactJSON(x))
	case []any: // an array of such values
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONValue(b, e)
		}
		b.WriteByte(']')
	case nil:
		b.WriteString("null")
	default:
		enc, _ := json.Marshal(x)
		b.Write(enc)
	}
}

// writeJSONString escapes like rapidjson's Writer (BE) and Jackson (FE),
// which agree: '"', '\\' and the short forms \b \f \n \r \t; other bytes
// below 0x20 as \u00XX with upper-case hex; everything else (non-ASCII,
// U+2028, invalid UTF-8) is written through unchanged (docs/doris-facts.md §2.1).
func writeJSONString(b *bytes.Buffer, s string) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// writeBEJSON sends a BE reply: always HTTP 200 (docs/doris-facts.md §8).
func writeBEJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// writeFEJSON sends an FE REST reply: HTTP 200 with a compact JSON body
// (docs/doris-facts.md §1.2: "All response will return with http code 200").
func writeFEJSON(w http.ResponseWriter, fields []field) {
	body := compactJSON(fields)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// writeFEFailed sends RestBaseResult {"status":"FAILED","msg":msg}.
func writeFEFailed(w http.ResponseWriter, msg string) {
	writeFEJSON(w, []field{{"status", "FAILED"}, {"msg", msg}})
}

// writeFEResponseBody sends ResponseBody {"msg","code","data","count"}.
func writeFEResponseBody(w http.ResponseWriter, msg string, code int, data string) {
	writeFEJSON(w, []field{{"msg", msg}, {"code", code}, {"data", data}, {"count", 0}})
}
