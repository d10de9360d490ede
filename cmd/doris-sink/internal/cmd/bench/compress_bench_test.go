//go:build unix

package bench

import (
	"bytes"
	stdgzip "compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/klauspost/compress/gzip"
	"github.com/pierrec/lz4/v4"
)

// compressBody is the bench's rows (rowGen: typed fields and a random hex
// note) as one Stream Load body of about 32 MiB.
func compressBody(format string, size int) []byte {
	g := newRowGen(format, size, 1)
	body := make([]byte, 0, 32<<20+2*size)
	for i := int64(0); len(body) < 32<<20; i++ {
		body = g.appendRow(body, i)
		body = append(body, '\n')
	}
	return body
}

// cpuNow is this process's user + system CPU time in seconds.
func cpuNow(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// discardBE answers every request as a BE whose load succeeded, after
// reading the body without decoding it: what the sink's side costs, with
// the wire bytes counted. The FE is skipped (doris.be): the 307 is the
// same for every variant.
func discardBE(b *testing.B, wire *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		wire.Add(n)
		fmt.Fprintf(w, `{"TxnId":1,"Label":%q,"Status":"Success","Message":"OK","LoadBytes":%d,"TwoPhaseCommit":"true"}`,
			r.Header.Get("label"), n)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkCompressedStreamLoad is the client side of one Stream Load of
// the bench's JSON rows (1 KiB and 100 B), uncompressed and with each
// compression: cpu-s/GB is this process's CPU (client, transport, and the
// BE stub's body reads) per GB of uncompressed body, wire/raw the bytes on
// the wire over the body's. docs/performance.md "Compression" has the
// figures; compare variants of one run.
func BenchmarkCompressedStreamLoad(b *testing.B) {
	variants := []struct {
		name  string
		comp  doris.Compression
		level int
	}{
		{"none", doris.CompressNone, 0},
		{"gz1", doris.CompressGzip, 1},
		{"gz5", doris.CompressGzip, 5}, // klauspost's DefaultCompression
		{"gz9", doris.CompressGzip, 9},
		{"lz4", doris.CompressLZ4, 0},
	}
	for _, data := range []struct {
		format string
		size   int
	}{{"json", 1024}, {"json", 100}} {
		body := compressBody(data.format, data.size)
		for _, v := range variants {
			b.Run(fmt.Sprintf("%s-%dB/%s", data.format, data.size, v.name), func(b *testing.B) {
				var wire atomic.Int64
				srv := discardBE(b, &wire)
				client, err := doris.NewClient(doris.Config{FE: []string{srv.URL}, BE: []string{srv.URL}, User: "root"})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { client.Close() })
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				cpu0 := cpuNow(b)
				i := 0
				for b.Loop() {
					i++
					req := doris.LoadRequest{DB: "bench", Table: "t", Label: fmt.Sprintf("c-%d", i), Format: data.format,
						ReadJSONByLine: true, Compression: v.comp, CompressionLevel: v.level}
					if _, err := client.StreamLoad(context.Background(), req, bytes.NewReader(body)); err != nil {
						b.Fatal(err)
					}
				}
				raw := float64(i) * float64(len(body))
				b.ReportMetric((cpuNow(b)-cpu0)/(raw/1e9), "cpu-s/GB")
				b.ReportMetric(float64(wire.Load())/raw, "wire/raw")
			})
		}
	}
}

// BenchmarkCompressors is the compressors alone on the same bodies, into
// io.Discard: klauspost/compress gzip (what the client uses) against the
// standard library's, and LZ4 frames. It is why the client uses klauspost.
func BenchmarkCompressors(b *testing.B) {
	type mk func(io.Writer) io.WriteCloser
	compressors := []struct {
		name string
		new  mk
	}{
		{"klauspost-gz1", func(w io.Writer) io.WriteCloser { z, _ := gzip.NewWriterLevel(w, 1); return z }},
		{"klauspost-gz5", func(w io.Writer) io.WriteCloser { z, _ := gzip.NewWriterLevel(w, 5); return z }},
		{"stdlib-gz1", func(w io.Writer) io.WriteCloser { z, _ := stdgzip.NewWriterLevel(w, 1); return z }},
		{"stdlib-gz6", func(w io.Writer) io.WriteCloser { z, _ := stdgzip.NewWriterLevel(w, 6); return z }},
		{"lz4", func(w io.Writer) io.WriteCloser {
			z := lz4.NewWriter(w)
			_ = z.Apply(lz4.BlockSizeOption(lz4.Block256Kb))
			return z
		}},
	}
	body := compressBody("json", 1024)
	for _, c := range compressors {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			var out countWriter
			cpu0, n := cpuNow(b), 0
			for b.Loop() {
				n++
				z := c.new(&out)
				for off := 0; off < len(body); off += 256 << 10 {
					if _, err := z.Write(body[off:min(off+256<<10, len(body))]); err != nil {
						b.Fatal(err)
					}
				}
				if err := z.Close(); err != nil {
					b.Fatal(err)
				}
			}
			raw := float64(n) * float64(len(body))
			b.ReportMetric((cpuNow(b)-cpu0)/(raw/1e9), "cpu-s/GB")
			b.ReportMetric(float64(out.n)/raw, "wire/raw")
		})
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
