package doristest

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"strings"
	"testing"

	"github.com/pierrec/lz4/v4"
)

func gzipBytes(t *testing.T, parts ...string) string {
	t.Helper()
	var b bytes.Buffer
	for _, p := range parts { // one gzip member each
		w := gzip.NewWriter(&b)
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func zlibBytes(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func lz4Bytes(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := lz4.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// bzip2 of "1\ta\n2\tb\n" (bzip2 -9); Go's standard library only decodes.
const bz2Body = "\x42\x5a\x68\x39\x31\x41\x59\x26\x53\x59\x33\xe7\xb8\xf9\x00\x00\x02\x49\x00\x00\x30\x30\x00\x30\x00\x20\x00\x21\xa6\x99\xa0\xc0\x3e\x00\x85\x85\xdc\x91\x4e\x14\x24\x0c\xf9\xee\x3e\x40"

// compress_type decompresses CSV bodies (be/src/util/load_util.cpp,
// be/src/exec/decompressor.cpp): gz (gzip or zlib, concatenated members),
// deflate (zlib format), bz2, lz4 (frame). LoadBytes is the compressed size.
func TestStreamLoad_CompressType_LoadUtil(t *testing.T) {
	t.Parallel()
	const plain = "1\ta\n2\tb\n"
	cases := []struct {
		name, ct, body string
	}{
		{"gz", "gz", gzipBytes(t, plain)},
		{"GZ upper case", "GZ", gzipBytes(t, plain)},
		{"gz two members", "gz", gzipBytes(t, "1\ta\n", "2\tb\n")},
		{"gz zlib auto-detected", "gz", zlibBytes(t, plain)},
		{"deflate is zlib", "deflate", zlibBytes(t, plain)},
		{"bz2", "bz2", bz2Body},
		{"lz4 frame", "lz4", lz4Bytes(t, plain)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newServer(t)
			m, raw := load(t, s, "orders", c.body, hdr{"label": "c1", "compress_type": c.ct})
			wantEq(t, "Status "+raw, m["Status"], any("Success"))
			wantEq(t, "NumberLoadedRows", num(t, m, "NumberLoadedRows"), 2)
			wantEq(t, "LoadBytes (compressed)", num(t, m, "LoadBytes"), int64(len(c.body)))
			rows, err := s.Rows(testDB, "orders")
			if err != nil || len(rows) != 2 {
				t.Fatalf("rows = %v, %v", rows, err)
			}
		})
	}
}

// JSON bodies are decompressed too in the newest load_util.cpp; an unknown
// compress_type on JSON means PLAIN, not an error.
func TestStreamLoad_CompressType_JSON_LoadUtil(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	body := `{"id":1,"v":"a"}` + "\n" + `{"id":2,"v":"b"}` + "\n"
	m, raw := load(t, s, "orders", gzipBytes(t, body), hdr{"label": "j1", "format": "json", "compress_type": "gz"})
	wantEq(t, "gz json "+raw, m["Status"], any("Success"))
	wantEq(t, "NumberLoadedRows", num(t, m, "NumberLoadedRows"), 2)
	m, raw = load(t, s, "orders", body, hdr{"label": "j2", "format": "json", "compress_type": "bogus"})
	wantEq(t, "bogus json "+raw, m["Status"], any("Success"))
	wantEq(t, "NumberLoadedRows", num(t, m, "NumberLoadedRows"), 2)
}

// An unknown compress_type leaves a CSV format FORMAT_UNKNOWN: the BE answers
// before begin_txn (TxnId -1) with the format header in the text. zstd is not
// in LoadUtil::parse_format for stream load.
func TestStreamLoad_CompressType_Unknown_LoadUtil(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for _, c := range []struct{ format, ct, want string }{
		{"", "bogus", "[DATA_FILE_TYPE_ERROR]unknown data format, format="},
		{"csv", "zstd", "[DATA_FILE_TYPE_ERROR]unknown data format, format=csv"},
		{"CSV_with_names", "gzip", "[DATA_FILE_TYPE_ERROR]unknown data format, format=CSV_with_names"},
	} {
		h := hdr{"label": "u-" + c.ct, "compress_type": c.ct}
		if c.format != "" {
			h["format"] = c.format
		}
		m, raw := load(t, s, "orders", "1\ta\n", h)
		wantEq(t, "Status "+raw, m["Status"], any("Fail"))
		wantEq(t, "Message", m["Message"], any(c.want))
		wantEq(t, "TxnId", num(t, m, "TxnId"), -1)
	}
}

// A corrupt body fails the fragment and rolls the txn back.
func TestStreamLoad_CompressType_Corrupt_Decompressor(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for _, ct := range []string{"gz", "deflate", "bz2", "lz4"} {
		m, raw := load(t, s, "orders", "1\ta\n2\tb\n", hdr{"label": "bad-" + ct, "compress_type": ct})
		wantEq(t, ct+" Status "+raw, m["Status"], any("Fail"))
		msg, _ := m["Message"].(string)
		if !strings.HasPrefix(msg, "[INTERNAL_ERROR]") {
			t.Fatalf("%s: Message %q", ct, msg)
		}
		tx, err := s.TxnByLabel(testDB, "bad-"+ct)
		if err != nil || tx.Status != "ABORTED" {
			t.Fatalf("%s: txn %+v, %v; want ABORTED", ct, tx, err)
		}
	}
	rows, _ := s.Rows(testDB, "orders")
	wantEq(t, "rows", len(rows), 0)
}

// lzo, lzop, lz4_block and snappy_block are valid in Doris but not emulated:
// the load fails saying so instead of parsing compressed bytes as text.
func TestStreamLoad_CompressType_NotEmulated(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m, raw := load(t, s, "orders", "x", hdr{"label": "sn", "compress_type": "snappy_block"})
	wantEq(t, "Status "+raw, m["Status"], any("Fail"))
	if msg, _ := m["Message"].(string); !strings.Contains(msg, "not emulated") {
		t.Fatalf("Message %q", msg)
	}
}
