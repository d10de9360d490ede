package loader

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris"
)

// errBodyAbandoned ends the body of a load given up by the writer.
var errBodyAbandoned = errors.New("loader: stream load body abandoned")

// errLoadAnswered fails body writes after Doris answered the load.
var errLoadAnswered = errors.New("loader: stream load already answered")

// loadStream is one streaming Stream Load: rows are appended to a buffer of
// bufSize bytes, which is handed to the Doris client through a bodyPipe
// when full (zero-copy: the transport writes it as one chunk); StreamLoad runs in its own goroutine. Memory is bounded by
// bufSize (or one row when a row is larger), whatever the load's size.
//
// Until Doris has read the first byte of the body, every row written is
// still in buf, so a load refused at begin (Label Already Exists, the
// running-txn quota) can be restarted with the same rows (unread). A loadStream is used by one
// goroutine.
type loadStream struct {
	req    doris.LoadRequest
	cancel context.CancelFunc
	pw     *bodyPipe // the writer side; Doris reads pw.reader()
	buf    []byte
	size   int
	delim  []byte
	rows   int64
	done   chan struct{}
	res    *doris.LoadResult
	err    error
	// now, when set, times the buffer hand-overs of write: blocked sums
	// how long they waited for Doris (Config.SubLoadsAuto's measure).
	now     func() time.Time
	blocked time.Duration
}

// startLoad begins the Stream Load req in a goroutine bounded by ctx.
//
// When ctx ends the body is closed with its cause: the HTTP transport
// reads the body in its own goroutine, which a cancelled request does not
// interrupt, and StreamLoad returns only after that goroutine ends. Without
// the close, a load whose ctx ended while no row was being handed over (a
// crash failpoint, a Participant's Begin ctx cancelled before Abort) would
// keep both goroutines and the connection forever.
func startLoad(ctx context.Context, client Doris, req doris.LoadRequest, size int, delim []byte) *loadStream {
	ctx, cancel := context.WithCancel(ctx)
	pw := newBodyPipe()
	s := &loadStream{req: req, cancel: cancel, pw: pw, buf: make([]byte, 0, size), size: size, delim: delim,
		done: make(chan struct{})}
	stop := context.AfterFunc(ctx, func() {
		pw.CloseWithError(fmt.Errorf("stream load %s: body: %w", req.Label, context.Cause(ctx)))
	})
	go func() {
		defer close(s.done)
		defer stop()
		pr := pw.reader()
		res, err := client.StreamLoad(ctx, req, pr)
		s.res, s.err = res, err
		if err == nil && res == nil {
			s.err = fmt.Errorf("stream load %s: no result", req.Label)
		}
		cerr := s.err
		if cerr == nil {
			cerr = errLoadAnswered
		}
		pr.CloseWithError(cerr) // fails body writes after the answer
	}()
	return s
}

// write appends row and the line delimiter, flushing a full buffer. The
// row is in the buffer even when the flush fails (see unread).
func (s *loadStream) write(ctx context.Context, row []byte) error {
	s.buf = append(s.buf, row...)
	if len(s.delim) == 1 {
		s.buf = append(s.buf, s.delim[0])
	} else {
		s.buf = append(s.buf, s.delim...)
	}
	s.rows++
	if len(s.buf) >= s.size {
		if s.now == nil {
			return s.flush(ctx)
		}
		t0 := s.now()
		err := s.flush(ctx)
		s.blocked += s.now().Sub(t0)
		return err
	}
	return nil
}

// flush hands the buffer to Doris; it blocks until Doris read it. On
// failure it returns the load's own error when the load ended. If ctx ends
// while Doris stalls, the body is broken off (the load fails: its outcome
// is then settled by label, like any failed load).
func (s *loadStream) flush(ctx context.Context) error {
	if len(s.buf) == 0 {
		return nil
	}
	stop := context.AfterFunc(ctx, func() {
		s.pw.CloseWithError(fmt.Errorf("stream load %s: body write: %w", s.req.Label, context.Cause(ctx)))
	})
	n, err := s.pw.Write(s.buf)
	stop()
	s.buf = s.buf[:copy(s.buf, s.buf[n:])]
	if err != nil {
		return s.failure(err)
	}
	if cap(s.buf) > 2*s.size { // a huge row grew it; give the memory back
		s.buf = make([]byte, 0, s.size)
	}
	return nil
}

// failure waits for the load to end after a body write failed and returns
// its error.
func (s *loadStream) failure(werr error) error {
	<-s.done
	if s.err != nil {
		return s.err
	}
	return fmt.Errorf("stream load %s: body: %w", s.req.Label, werr)
}

// finish ends the body and waits for Doris's answer (for 2PC: the
// precommit). ctx ending cancels the load: the outcome is then unknown.
func (s *loadStream) finish(ctx context.Context) (*doris.LoadResult, error) {
	if err := s.flush(ctx); err != nil {
		return nil, err
	}
	s.pw.Close()
	select {
	case <-s.done:
	case <-ctx.Done():
		s.abandon()
		return nil, fmt.Errorf("stream load %s: %w (outcome unknown: look the label up)", s.req.Label, ctx.Err())
	}
	if s.err != nil {
		return nil, s.err
	}
	return s.res, nil
}

// abandon cancels the load and waits for its goroutine. Doris rolls back a
// load whose body never ended (or it times out); callers abort by label.
func (s *loadStream) abandon() {
	s.cancel()
	s.pw.CloseWithError(errBodyAbandoned)
	<-s.done
}

// unread reports whether Doris has read no body byte: every row written is
// still in buf, so a load refused at begin can be restarted.
func (s *loadStream) unread() bool { return s.pw.handed.Load() == 0 }

// restart begins the same load again carrying the buffered rows over.
func (s *loadStream) restart(ctx context.Context, client Doris) *loadStream {
	s.abandon()
	n := startLoad(ctx, client, s.req, s.size, s.delim)
	n.buf = append(n.buf, s.buf...)
	n.rows, n.now, n.blocked = s.rows, s.now, s.blocked
	return n
}

// existingJobStatus returns the ExistingJobStatus of a Label Already
// Exists error, "" otherwise (docs/doris-facts.md §2.3).
func existingJobStatus(err error) string {
	var le *doris.LoadError
	if errors.As(err, &le) && le.Result != nil {
		return le.Result.ExistingJobStatus
	}
	return ""
}

// loadRequest builds the Stream Load request of a target (docs/doris-facts.md
// §1.4): raw properties pass through, except compress_type, which makes
// the client compress the body (bodyCompression); JSON is sent as JSON
// lines unless the properties say otherwise.
func loadRequest(t Target, lbl string, twoPC bool) doris.LoadRequest {
	req := doris.LoadRequest{DB: t.DB, Table: t.Table, Label: lbl, Format: t.Format, TwoPhaseCommit: twoPC,
		Headers: t.Properties}
	if _, v, ok := compressProperty(t.Properties); ok {
		req.Headers = make(map[string]string, len(t.Properties)-1)
		for hk, hv := range t.Properties {
			if !strings.EqualFold(hk, "compress_type") {
				req.Headers[hk] = hv
			}
		}
		c, err := doris.ParseCompression(v)
		if err != nil {
			c = doris.Compression(v) // checked at New/Begin; the client refuses it anyway
		}
		req.Compression = c
	}
	if strings.EqualFold(t.Format, "json") && !hasProperty(t.Properties, "read_json_by_line") &&
		!hasProperty(t.Properties, "strip_outer_array") {
		req.ReadJSONByLine = true
	}
	return req
}

// compressProperty returns the compress_type property (any case) of p.
func compressProperty(p map[string]string) (key, value string, ok bool) {
	for k, v := range p {
		if strings.EqualFold(k, "compress_type") {
			return k, v, true
		}
	}
	return "", "", false
}

// bodyCompression checks the compress_type property of t: gz or lz4 (any
// case) makes the sink compress the streamed body and send the header; any
// other value is refused, because the header alone would declare a
// compression the body does not have.
func bodyCompression(t Target) (doris.Compression, error) {
	k, v, ok := compressProperty(t.Properties)
	if !ok {
		return doris.CompressNone, nil
	}
	for k2 := range t.Properties {
		if k2 != k && strings.EqualFold(k2, k) {
			return doris.CompressNone, fmt.Errorf("doris.properties: %s and %s: set compress_type once", k, k2)
		}
	}
	c, err := doris.ParseCompression(v)
	if err != nil {
		return doris.CompressNone, fmt.Errorf("doris.properties.%s: %w", k, err)
	}
	return c, nil
}

func hasProperty(p map[string]string, key string) bool {
	for k := range p {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

// lineDelimiter returns the row delimiter of t: the line_delimiter
// property (Doris's "\xNN" hex form decoded) or "\n".
func lineDelimiter(t Target) ([]byte, error) {
	for k, v := range t.Properties {
		if !strings.EqualFold(k, "line_delimiter") {
			continue
		}
		if v == "" {
			return nil, errors.New("doris.properties.line_delimiter is empty")
		}
		if strings.HasPrefix(v, `\x`) {
			b, err := hex.DecodeString(v[2:])
			if err != nil || len(b) == 0 {
				return nil, fmt.Errorf("doris.properties.line_delimiter %q: bad \\x hex form", v)
			}
			return b, nil
		}
		return []byte(v), nil
	}
	return []byte{'\n'}, nil
}

// explainFiltered adds what a user needs to fix a load Doris refused for
// filtered rows ("[DATA_QUALITY_ERROR]too many filtered rows", docs/doris-facts.md
// §2.4, §2.5): the row counters and the BE's error log URL. Replaying the
// same rows fails the same way.
func explainFiltered(err error) error {
	var le *doris.LoadError
	if !errors.As(err, &le) || le.Result == nil {
		return err
	}
	r := le.Result
	what := fmt.Sprintf("%d of %d rows filtered", r.NumberFilteredRows, r.NumberTotalRows)
	if r.ErrorURL != "" {
		what += ", error log " + r.ErrorURL
	}
	return fmt.Errorf("%w (%s; fix or drop the bad rows at the source, or raise doris.properties.max_filter_ratio)", err, what)
}
