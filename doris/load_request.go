package doris

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// LoadRequest describes one Stream Load (§1.4). Empty fields send no header,
// so Doris's defaults apply.
type LoadRequest struct {
	DB, Table string
	// Label is the load label (§4: ^[-_A-Za-z0-9:]{1,128}$). Empty lets the
	// BE generate one; an exactly-once loader always sets it.
	Label string
	// Format is "csv" (Doris default) or "json"; other Doris formats pass
	// through unchecked.
	Format string
	// TwoPhaseCommit sends two_phase_commit: true; the answer's TxnID is then
	// PRECOMMITTED and must be committed or aborted (§5).
	TwoPhaseCommit bool
	// Columns and Where are the columns / where headers.
	Columns, Where string
	// MaxFilterRatio is max_filter_ratio; nil leaves Doris's default 0.
	MaxFilterRatio *float64
	// ColumnSeparator and LineDelimiter (CSV).
	ColumnSeparator, LineDelimiter string
	// StripOuterArray and ReadJSONByLine (JSON); false sends no header.
	StripOuterArray, ReadJSONByLine bool
	// SequenceCol is function_column.sequence_col.
	SequenceCol string
	// MergeType is APPEND, DELETE or MERGE; DeleteCondition is the delete
	// header used with MERGE.
	MergeType       string
	DeleteCondition string
	// HiddenColumns is hidden_columns, e.g. __DORIS_DELETE_SIGN__.
	HiddenColumns []string
	// PartialColumns sends partial_columns: true.
	PartialColumns bool
	// Timeout is the Doris-side load timeout header (whole seconds, ≥1);
	// zero leaves stream_load_default_timeout_second. The client-side bound
	// is Config.LoadTimeout.
	Timeout time.Duration
	// Headers are raw headers sent as is (e.g. doris.properties from the
	// config). A typed field above wins over the same key here.
	Headers map[string]string
	// ContentLength is the body size when known; -1 or 0 means unknown and
	// the body is sent chunked. A nil body sends Content-Length: 0.
	ContentLength int64
	// Compression makes the client compress the body as it streams (gzip
	// or an LZ4 frame) and send compress_type with it; a nil body is sent
	// empty and without the header. The compressed size is unknown, so
	// ContentLength must stay 0 (chunked). A compress_type in Headers
	// instead is sent as is: it declares a body the caller compressed
	// itself (e.g. a .gz file); the two together are refused.
	Compression Compression
	// CompressionLevel is the gzip level (1..9); 0 is DefaultGzipLevel.
	// Only gzip has levels.
	CompressionLevel int
	// BESlot spreads loads over BEs deterministically: 0 (the default)
	// leaves the choice to the client (Config.BE round robin, or the FE's
	// redirect); s > 0 sends the load to BE (s−1) mod n of Config.BE when
	// set, else, with Config.BESpread BESpreadBackends, of the BEs the FE's
	// GET /api/backends lists alive (sorted by host:port). The loader sets
	// it to 1 + sub-load + checkpoint, so the K sub-loads of a table land
	// on K different BEs (when there are K) and each checkpoint rotates
	// them. A BE refusing the connection is skipped for that load. Ignored
	// with BESpreadFE and no Config.BE.
	BESlot int
}

// reservedHeaders may not be set through LoadRequest.Headers.
var reservedHeaders = map[string]bool{
	"authorization": true, "expect": true, "content-length": true,
	"transfer-encoding": true, "host": true,
}

func (r *LoadRequest) validate() error {
	if r.DB == "" || r.Table == "" {
		return errors.New("load request: DB and Table are required")
	}
	if r.BESlot < 0 {
		return fmt.Errorf("load request %s.%s label %s: BESlot %d is negative", r.DB, r.Table, r.Label, r.BESlot)
	}
	if err := ValidateDatabaseName(r.DB); err != nil {
		return fmt.Errorf("load request: %w", err)
	}
	if err := ValidateTableName(r.Table); err != nil {
		return fmt.Errorf("load request: %w", err)
	}
	for k := range r.Headers {
		if reservedHeaders[strings.ToLower(k)] {
			return fmt.Errorf("load request: header %q is set by the client", k)
		}
	}
	if err := r.Compression.validate(r.CompressionLevel); err != nil {
		return err
	}
	if r.Compression != CompressNone {
		for k := range r.Headers {
			if strings.EqualFold(k, "compress_type") {
				return fmt.Errorf("load request: header %q and Compression %q: set one (the header declares a body compressed by the caller)", k, string(r.Compression))
			}
		}
		if r.ContentLength > 0 {
			return fmt.Errorf("load request: ContentLength %d with Compression %q: the compressed size is unknown, leave it 0", r.ContentLength, string(r.Compression))
		}
	}
	if r.Timeout < 0 || (r.Timeout > 0 && r.Timeout < time.Second) {
		return fmt.Errorf("load request: Timeout %v: want 0 or at least 1s", r.Timeout)
	}
	return nil
}

// header builds the Stream Load headers (names from §1.4) without
// Authorization, Expect and body framing. compress_type is set for a
// Compression only when there is a body to compress.
func (r *LoadRequest) header(hasBody bool) http.Header {
	h := make(http.Header)
	set := func(k, v string) {
		if v != "" {
			h[k] = []string{v} // Doris header names are lower case; keep them so
		}
	}
	for k, v := range r.Headers {
		h[strings.ToLower(k)] = []string{v}
	}
	set("label", r.Label)
	set("format", r.Format)
	if r.TwoPhaseCommit {
		set("two_phase_commit", "true") // exactly "true", case-sensitive (§1.4)
	}
	set("columns", r.Columns)
	set("where", r.Where)
	if r.MaxFilterRatio != nil {
		set("max_filter_ratio", strconv.FormatFloat(*r.MaxFilterRatio, 'f', -1, 64))
	}
	set("column_separator", r.ColumnSeparator)
	set("line_delimiter", r.LineDelimiter)
	if r.StripOuterArray {
		set("strip_outer_array", "true")
	}
	if r.ReadJSONByLine {
		set("read_json_by_line", "true")
	}
	set("function_column.sequence_col", r.SequenceCol)
	set("merge_type", r.MergeType)
	set("delete", r.DeleteCondition)
	set("hidden_columns", strings.Join(r.HiddenColumns, ","))
	if r.PartialColumns {
		set("partial_columns", "true")
	}
	if hasBody {
		set("compress_type", string(r.Compression))
	}
	if r.Timeout > 0 {
		set("timeout", strconv.FormatInt(int64(r.Timeout/time.Second), 10))
	}
	return h
}
