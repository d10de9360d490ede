package doristest

// Behavior: the compress_type header (docs/doris-facts.md §1.4, §12), following
// be/src/util/load_util.cpp LoadUtil::parse_format (newest stored version,
// the one that accepts arrow and compressed JSON) and
// be/src/exec/decompressor.cpp:
//   - CSV (and csv_with_names[_and_types], which the BE treats as CSV):
//     gz, lzo, bz2, lz4 (LZ4 *frame*), lz4_block, lzop, snappy_block, deflate,
//     case-insensitive; any other value, zstd included, leaves the format
//     FORMAT_UNKNOWN and the load fails at once (before begin_txn, TxnId -1)
//     with "[DATA_FILE_TYPE_ERROR]unknown data format, format=<format header>".
//   - JSON: the value picks a decompressor the same way, and an unknown value
//     means PLAIN (no error): the body is read as it is.
//   - gz uses zlib inflate with gzip/zlib auto-detection and continues across
//     concatenated members; deflate is the zlib format (inflateInit2 with
//     15 window bits, not raw deflate); bz2 continues across streams; lz4 is
//     the LZ4 frame format (LZ4F_decompress), as doris-streamloader --compress
//     writes it.
//   - The body is decompressed as it streams in, never buffered whole here.
//     LoadBytes is the number of bytes received (ctx->receive_bytes), i.e.
//     the compressed size.
//   - A corrupt body fails the fragment: "[INTERNAL_ERROR]<decompressor
//     message>", the txn is rolled back.
//   - lzo, lzop, lz4_block and snappy_block (Hadoop block formats) are
//     accepted by Doris but not emulated: the load fails with an
//     INTERNAL_ERROR that says so (docs/emulator.md "Not emulated").

import (
	"bufio"
	"compress/bzip2"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"strings"

	"github.com/pierrec/lz4/v4"
)

// compressType is a parsed compress_type header; "" is plain.
type compressType string

const (
	compressPlain   compressType = ""
	compressGZ      compressType = "gz"
	compressBZ2     compressType = "bz2"
	compressLZ4     compressType = "lz4"
	compressDeflate compressType = "deflate"
)

// compressNotEmulated are compress_type values Doris accepts for CSV but the
// emulator cannot decode.
var compressNotEmulated = map[string]bool{"lzo": true, "lzop": true, "lz4_block": true, "snappy_block": true}

// parseCompressType is LoadUtil::parse_format's compress_type half. format is
// the lower-cased format header ("" = csv). ok is false when the BE leaves the
// format FORMAT_UNKNOWN.
func parseCompressType(format, header string) (ct compressType, notEmulated string, ok bool) {
	v := strings.ToLower(header)
	known := func() (compressType, string, bool) {
		switch v {
		case "gz":
			return compressGZ, "", true
		case "bz2":
			return compressBZ2, "", true
		case "lz4":
			return compressLZ4, "", true
		case "deflate":
			return compressDeflate, "", true
		}
		if compressNotEmulated[v] {
			return compressPlain, v, true
		}
		return compressPlain, "", false
	}
	switch format {
	case "", "csv", "csv_with_names", "csv_with_names_and_types":
		if v == "" {
			return compressPlain, "", true
		}
		return known()
	case "json":
		ct, ne, _ := known() // unknown → PLAIN, no error
		return ct, ne, true
	default:
		// parquet, orc, arrow: compress_type is not consulted.
		return compressPlain, "", true
	}
}

// decompressReader decodes a compressed body as it is read. Its first error
// is kept in err so the load can report it as the BE does.
type decompressReader struct {
	ct  compressType
	src io.Reader
	r   io.Reader // nil until the first Read
	err error     // decompression failure ("" when the body was fine)
}

func newDecompressReader(ct compressType, src io.Reader) *decompressReader {
	return &decompressReader{ct: ct, src: src}
}

func (d *decompressReader) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if d.r == nil {
		if err := d.open(); err != nil {
			if err == io.EOF { // an empty body is an empty load
				return 0, io.EOF
			}
			return 0, d.fail(err)
		}
	}
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF {
		return n, d.fail(err)
	}
	return n, err
}

func (d *decompressReader) open() error {
	br := bufio.NewReader(d.src)
	if _, err := br.Peek(1); err != nil {
		return err
	}
	switch d.ct {
	case compressGZ:
		// DETECT_CODEC: zlib accepts a gzip or a zlib header.
		if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
			zr, err := gzip.NewReader(br) // multistream by default
			if err != nil {
				return err
			}
			d.r = zr
			return nil
		}
		zr, err := zlib.NewReader(br)
		if err != nil {
			return err
		}
		d.r = zr
	case compressDeflate:
		zr, err := zlib.NewReader(br)
		if err != nil {
			return err
		}
		d.r = zr
	case compressBZ2:
		d.r = bzip2.NewReader(br)
	case compressLZ4:
		d.r = lz4.NewReader(br)
	default:
		d.r = br
	}
	return nil
}

// decompressError is a corrupt body, in the decompressor's words
// (decompressor.cpp).
type decompressError struct{ msg string }

func (e *decompressError) Error() string { return e.msg }

// fail records a decompression error.
func (d *decompressReader) fail(err error) error {
	var msg string
	switch d.ct {
	case compressGZ, compressDeflate:
		msg = fmt.Sprintf("Failed to inflate. return code: -3 (%v)", err)
	case compressBZ2:
		msg = fmt.Sprintf("Failed to bz2 decompress. status code: -4 (%v)", err)
	case compressLZ4:
		msg = fmt.Sprintf("Decompression error: %v", err)
	default:
		msg = err.Error()
	}
	d.err = &decompressError{msg: msg}
	return d.err
}
