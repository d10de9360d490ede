package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// limitBufBytes is the size of one buffer of record values handed to the
// HTTP body: the body's WriteTo writes each whole (one chunk), as the
// loader's body does.
const limitBufBytes = 1 << 20

// limitTransport is the transport of the limit line: the doris client's
// connection settings (doris.BaseTransport: HTTP/1.1, 64 KiB write buffer,
// keep-alive), so the bytes cross the same kind of connection.
func limitTransport(s spec) (*http.Transport, error) {
	t := doris.BaseTransport()
	if s.TLSCAPEM != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(s.TLSCAPEM)) {
			return nil, errors.New("limit: the spec's CA (tls_ca_pem) holds no PEM certificate")
		}
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return t, nil
}

// limitBody is one streaming PUT's body: buffers of record values arrive
// on bufs and WriteTo writes each straight to the connection, then hands
// it back on free.
type limitBody struct {
	bufs chan []byte
	free chan []byte
	cur  []byte // Read's leftover (Read is the fallback; net/http uses WriteTo)
}

func (b *limitBody) WriteTo(w io.Writer) (int64, error) {
	var n int64
	if len(b.cur) > 0 {
		k, err := w.Write(b.cur)
		n += int64(k)
		if err != nil {
			return n, err
		}
		b.cur = nil
	}
	for buf := range b.bufs {
		k, err := w.Write(buf)
		n += int64(k)
		b.free <- buf[:0]
		if err != nil {
			// Drain so the producer never blocks on a failed request.
			go func() {
				for buf := range b.bufs {
					b.free <- buf[:0]
				}
			}()
			return n, err
		}
	}
	return n, nil
}

func (b *limitBody) Read(p []byte) (int, error) {
	for len(b.cur) == 0 {
		buf, ok := <-b.bufs
		if !ok {
			return 0, io.EOF
		}
		b.cur = append(b.cur[:0], buf...)
		b.free <- buf[:0]
	}
	n := copy(p, b.cur)
	b.cur = b.cur[n:]
	return n, nil
}

// limitPut is one PUT in flight.
type limitPut struct {
	body *limitBody
	done chan error
}

// runLimit is the physical-limit line: the bare consumer, then every
// record value (and a newline, the row delimiter the sink writes) copied
// into a buffer and sent through a streaming HTTP PUT to the parent's
// discarding sink, one PUT per checkpoint interval — the sink's path with
// no conversion, no checkpoint store and no transaction. The window is
// sampled after each poll's values were handed to the body, as the sink's.
func runLimit(ctx context.Context, s spec) (workerResult, error) {
	var res workerResult
	m, err := startMeter(s.CPUProfile)
	if err != nil {
		return res, err
	}
	rt, err := limitTransport(s)
	if err != nil {
		return res, err
	}
	defer rt.CloseIdleConnections()
	hc := &http.Client{Transport: rt}
	cl, left, err := newBareConsumer(s)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	probe := newWindowProbe(s.TotalBytes)
	if err := m.watch(probe); err != nil {
		return res, err
	}
	free := make(chan []byte, 2)
	free <- make([]byte, 0, limitBufBytes)
	free <- make([]byte, 0, limitBufBytes)
	buf := <-free
	var put *limitPut
	open := func() error {
		body := &limitBody{bufs: make(chan []byte), free: free}
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, s.LimitURL, body)
		if err != nil {
			return fmt.Errorf("limit: %w", err)
		}
		req.ContentLength = -1 // chunked, as a Stream Load body
		put = &limitPut{body: body, done: make(chan error, 1)}
		go func(p *limitPut) {
			resp, err := hc.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("limit sink answered %s", resp.Status)
				}
			}
			p.done <- err
		}(put)
		return nil
	}
	// flush hands buf to the open PUT and takes an empty buffer.
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		select {
		case put.body.bufs <- buf:
		case err := <-put.done:
			return fmt.Errorf("limit PUT to %s: ended early: %v", s.LimitURL, err)
		}
		buf = <-free
		return nil
	}
	closePut := func() error {
		if err := flush(); err != nil {
			return err
		}
		close(put.body.bufs)
		if err := <-put.done; err != nil {
			return fmt.Errorf("limit PUT to %s: %w", s.LimitURL, err)
		}
		return nil
	}
	if err := open(); err != nil {
		return res, err
	}
	interval := s.Interval
	if interval <= 0 {
		interval = time.Second
	}
	opened := time.Now()
	for left > 0 {
		fs := cl.PollRecords(ctx, kafka.DefaultPollMaxRecords)
		if err := pollErr(fs); err != nil {
			return res, err
		}
		var werr error
		fs.EachRecord(func(r *kgo.Record) {
			res.Records++
			res.Bytes += int64(len(r.Value))
			if r.Offset+1 == s.End[r.Partition] {
				left--
			}
			if werr != nil {
				return
			}
			if len(buf)+len(r.Value)+1 > cap(buf) {
				werr = flush()
			}
			buf = append(append(buf, r.Value...), '\n')
		})
		if werr != nil {
			return res, werr
		}
		if res.FirstRecord == 0 && res.Records > 0 {
			res.FirstRecord = time.Now().UnixNano()
		}
		probe.observe(res.Bytes, res.Records)
		if left > 0 && time.Since(opened) >= interval {
			if err := closePut(); err != nil {
				return res, err
			}
			if err := open(); err != nil {
				return res, err
			}
			opened = time.Now()
		}
	}
	res.LastByte = time.Now().UnixNano()
	if err := closePut(); err != nil {
		return res, err
	}
	if err := m.stop(&res); err != nil {
		return res, err
	}
	res.Done = time.Now().UnixNano()
	res.Window = probe.result()
	return res, nil
}
