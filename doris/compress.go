package doris

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/pierrec/lz4/v4"
)

// Compression is a Stream Load body compression the client applies itself:
// it compresses the body as it streams and sends the matching compress_type
// header (BE be/src/util/load_util.cpp LoadUtil::parse_format,
// be/src/exec/decompressor.cpp). The empty value sends the body as it is.
type Compression string

// The compressions the client implements. Doris also accepts bz2, deflate,
// lzo, lz4_block, lzop and snappy_block; it has no zstd (parse_format maps
// it to nothing: a CSV load fails with "unknown data format").
const (
	CompressNone Compression = ""
	// CompressGzip is compress_type gz: one gzip member (RFC 1952).
	CompressGzip Compression = "gz"
	// CompressLZ4 is compress_type lz4: one LZ4 frame (the BE's
	// LZ4FRAME decompressor, what doris-streamloader --compress sends).
	CompressLZ4 Compression = "lz4"
)

// CompressionNames lists the values ParseCompression accepts (besides "").
const CompressionNames = "gz or lz4"

// DefaultGzipLevel is the gzip level used when LoadRequest.CompressionLevel
// is zero: level 1 costs about half the CPU of the library default for a
// few percent more bytes on JSON lines (docs/performance.md
// "Compression").
const DefaultGzipLevel = gzip.BestSpeed

// ParseCompression parses a compress_type value the client can produce:
// "gz" or "lz4", in any case (Doris compares it case-insensitively); ""
// is CompressNone. Any other value is an error naming the allowed ones.
func ParseCompression(s string) (Compression, error) {
	switch strings.ToLower(s) {
	case "":
		return CompressNone, nil
	case "gz":
		return CompressGzip, nil
	case "lz4":
		return CompressLZ4, nil
	case "zstd", "zst":
		return CompressNone, fmt.Errorf("compress_type %q: Doris Stream Load has no zstd: BE be/src/util/load_util.cpp "+
			"LoadUtil::parse_format knows gz, lzo, bz2, lz4, lz4_block, lzop, snappy_block and deflate only, and maps "+
			"any other value to PLAIN (a CSV load fails with unknown data format, a JSON body would be parsed as if "+
			"uncompressed); use %s", s, CompressionNames)
	}
	return CompressNone, fmt.Errorf("compress_type %q: want %s (the client compresses the body itself; Doris has no zstd)", s, CompressionNames)
}

func (c Compression) validate(level int) error {
	switch c {
	case CompressNone:
		if level != 0 {
			return fmt.Errorf("load request: CompressionLevel %d without Compression", level)
		}
	case CompressGzip:
		if level != 0 && (level < gzip.BestSpeed || level > gzip.BestCompression) {
			return fmt.Errorf("load request: gzip CompressionLevel %d: want 0 (default %d) or %d..%d",
				level, DefaultGzipLevel, gzip.BestSpeed, gzip.BestCompression)
		}
	case CompressLZ4:
		if level != 0 {
			return fmt.Errorf("load request: CompressionLevel %d: lz4 takes none", level)
		}
	default:
		return fmt.Errorf("load request: Compression %q: want %s or none", string(c), CompressionNames)
	}
	return nil
}

// lz4BlockSize bounds the LZ4 writer's block buffer (the library default
// is 4 MiB per writer); LZ4's window is 64 KiB, so bigger blocks gain
// almost nothing on the wire.
const lz4BlockSize = lz4.Block256Kb

// compressInput is how much of the caller's body one compression step
// reads: the loader's body buffer size (loader.DefaultBufferSize).
const compressInput = 256 << 10

// newCompressor returns the writer that compresses into w.
func newCompressor(c Compression, level int, w io.Writer) (io.WriteCloser, error) {
	switch c {
	case CompressGzip:
		if level == 0 {
			level = DefaultGzipLevel
		}
		return gzip.NewWriterLevel(w, level)
	case CompressLZ4:
		zw := lz4.NewWriter(w)
		if err := zw.Apply(lz4.BlockSizeOption(lz4BlockSize), lz4.ConcurrencyOption(1)); err != nil {
			return nil, err
		}
		return zw, nil
	}
	return nil, fmt.Errorf("compression %q: want %s", string(c), CompressionNames)
}

// compressedBody is the body the transport reads for a compressed load. It
// pulls from src (the counting, detachable loadBody) only when the
// transport asks for bytes, so it adds no goroutine and holds at most one
// input step plus the compressor's state: the caller's body is never
// buffered whole, and a transport that stops reading (the answer is in,
// the request failed) stops the reads from src. At src's EOF it ends the
// compressed stream (gzip trailer, LZ4 end mark); after another src error
// the stream is left incomplete and the error returned, so the request
// fails and Doris never sees a complete body.
type compressedBody struct {
	src  io.Reader
	zw   io.WriteCloser // compresses into out
	out  bytes.Buffer   // compressed bytes not yet read by the transport
	in   []byte
	err  error // set once src ended; io.EOF after a complete stream
	what Compression
}

func newCompressedBody(src io.Reader, c Compression, level int) (*compressedBody, error) {
	cb := &compressedBody{src: src, in: make([]byte, compressInput), what: c}
	zw, err := newCompressor(c, level, &cb.out)
	if err != nil {
		return nil, err
	}
	cb.zw = zw
	return cb, nil
}

// Read returns compressed bytes, compressing the next input step when
// none are pending.
func (cb *compressedBody) Read(p []byte) (int, error) {
	for cb.out.Len() == 0 {
		if cb.err != nil {
			return 0, cb.err
		}
		cb.step()
	}
	return cb.out.Read(p)
}

// step reads one input step from src and compresses it into out.
func (cb *compressedBody) step() {
	n, err := cb.src.Read(cb.in)
	if n > 0 {
		if _, werr := cb.zw.Write(cb.in[:n]); werr != nil {
			cb.err = fmt.Errorf("compress body (%s): %w", cb.what, werr)
			return
		}
	}
	switch {
	case err == io.EOF:
		if cerr := cb.zw.Close(); cerr != nil {
			cb.err = fmt.Errorf("compress body (%s): end of stream: %w", cb.what, cerr)
			return
		}
		cb.err = io.EOF
	case err != nil:
		cb.err = err
	}
}
