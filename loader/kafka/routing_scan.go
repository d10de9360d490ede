package kafka

import (
	"bytes"
	"strings"

	"github.com/doris-sink/doris-sink/loader/kafka/internal/jsontext"
)

// debeziumSourceCompact is debeziumSource's fast path for compact JSON
// (what Debezium's JSON converter writes): one validating pass of the
// word-at-a-time scanner (jsonscan.go) over the top-level object and the
// "payload" object, reading source.db and source.table when they are plain
// strings. ok is false when v is not compact, a key or value needs
// unescaping, or there is no source.table: the caller then takes the
// encoding/json path, which decides. Routing runs before conversion with
// per-table converters, so without this every Debezium record was decoded
// twice by encoding/json (BenchmarkCDCTables).
func debeziumSourceCompact(v []byte) (db, table string, ok bool) {
	src, payload, ok := sourceFields(v)
	if !ok {
		return "", "", false
	}
	if src == nil && payload != nil {
		if src, _, ok = sourceFields(payload); !ok {
			return "", "", false
		}
	}
	if src == nil {
		return "", "", false
	}
	dbRaw, tableRaw, ok := dbTableFields(src)
	if !ok || tableRaw == nil || dbRaw == nil { // encoding/json would also match "DB", "Table": let it decide
		return "", "", false
	}
	db, ok1 := plainString(dbRaw)
	table, ok2 := plainString(tableRaw)
	if !ok1 || !ok2 || table == "" {
		return "", "", false
	}
	return db, table, true
}

// sourceFields returns the raw "source" and "payload" values of the
// compact JSON object v (nil when absent); ok is false when v is not one.
func sourceFields(v []byte) (source, payload []byte, ok bool) {
	ok = eachField(v, func(key, val []byte) {
		switch string(key) {
		case "source":
			source = val
		case "payload":
			payload = val
		}
	})
	if source != nil && (len(source) == 0 || source[0] != '{') {
		source = nil // null or another value: no source
	}
	if payload != nil && (len(payload) == 0 || payload[0] != '{') {
		payload = nil
	}
	return source, payload, ok
}

// dbTableFields returns the raw "db" and "table" values of the compact
// JSON object v.
func dbTableFields(v []byte) (db, table []byte, ok bool) {
	ok = eachField(v, func(key, val []byte) {
		switch string(key) {
		case "db":
			db = val
		case "table":
			table = val
		}
	})
	return db, table, ok
}

// eachField calls fn with the raw key (without quotes) and value of every
// top-level field of the compact JSON object v, validating as it goes;
// it returns false, stopping, at anything else (whitespace, an escaped
// key, invalid JSON). Later duplicates win, as in encoding/json.
func eachField(v []byte, fn func(key, val []byte)) bool {
	if len(v) < 2 || v[0] != '{' {
		return false
	}
	i := 1
	if v[i] == '}' {
		return i+1 == len(v)
	}
	for {
		if i >= len(v) || v[i] != '"' {
			return false
		}
		kEnd, ok := jsontext.ScanString(v, i)
		if !ok || kEnd >= len(v) || v[kEnd] != ':' {
			return false
		}
		key := v[i+1 : kEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		vEnd, ok := scanValue(v, kEnd+1, 1)
		if !ok || vEnd >= len(v) {
			return false
		}
		fn(key, v[kEnd+1:vEnd])
		switch v[vEnd] {
		case ',':
			i = vEnd + 1
		case '}':
			return vEnd+1 == len(v)
		default:
			return false
		}
	}
}

// plainString returns the text of a raw JSON string of ASCII characters
// without escapes (encoding/json decodes anything else the same way only
// when it is valid UTF-8: let it decide); null is "" and ok.
func plainString(raw []byte) (string, bool) {
	if string(raw) == "null" {
		return "", true
	}
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c >= 0x80 {
			return "", false
		}
	}
	return string(raw[1 : len(raw)-1]), true
}

// expandTemplate replaces "{db}" and "{table}" in tpl in one pass (like
// strings.NewReplacer, without building one per record).
func expandTemplate(tpl, db, table string) string {
	var b strings.Builder
	b.Grow(len(tpl) + len(db) + len(table))
	for i := 0; i < len(tpl); {
		switch {
		case strings.HasPrefix(tpl[i:], "{db}"):
			b.WriteString(db)
			i += len("{db}")
		case strings.HasPrefix(tpl[i:], "{table}"):
			b.WriteString(table)
			i += len("{table}")
		default:
			b.WriteByte(tpl[i])
			i++
		}
	}
	return b.String()
}
