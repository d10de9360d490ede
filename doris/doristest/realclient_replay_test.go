package doristest

// Replays of real Doris clients' Stream Load requests, header for header, and
// the checks their response parsers make. Sources (read, not copied):
//   - Flink connector (apache/doris-flink-connector @ 79ae9b03,
//     flink-doris-connector-base/.../flink/): sink/HttpPutBuilder.java,
//     sink/writer/DorisStreamLoad.java (startLoad, abortPreCommit,
//     abortTransaction, handlePreCommitResponse), sink/committer/DorisCommitter.java,
//     sink/batch/DorisBatchStreamLoad.java, sink/ResponseUtil.java,
//     cfg/DorisExecutionOptions.java (compress_type gz added by default).
//   - Kafka connector (apache/doris-kafka-connector @ 6e614d8,
//     src/main/java/org/apache/doris/kafka/connector/): writer/load/DorisStreamLoad.java,
//     utils/HttpPutBuilder.java, writer/commit/DorisCommitter.java,
//     cfg/DorisOptions.java (format json, read_json_by_line true,
//     compress_type gz by default), writer/LabelGenerator.java.
//   - Go SDK (apache/doris sdk/go-doris-sdk): pkg/load/loader/request_builder.go,
//     pkg/load/config/load_config.go (GroupCommit's zero value is SYNC),
//     pkg/load/load.go (DefaultCSVFormat sends line_delimiter `\n`),
//     pkg/load/loader/stream_loader.go and resp_content.go (success is
//     Status equal-fold "success").

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// Patterns of ResponseUtil.java (Flink; the Kafka connector has the same
// COMMITTED_PATTERN).
var (
	flinkLabelExist = regexp.MustCompile(`Label \[(.*)\] has already been used, relate to txn \[(\d+)\]`)
	flinkCommitted  = regexp.MustCompile(`transaction \[(\d+)\] is already \b(COMMITTED|committed|VISIBLE|visible)\b, not pre-committed.`)
	flinkAborted    = regexp.MustCompile(`transaction \[(\d+)\] is already|transaction \[(\d+)\] not found`)
)

// javaRespContent is the connectors' RespContent (Jackson,
// ignoreUnknown = true): TxnId a Long, TwoPhaseCommit a String.
type javaRespContent struct {
	TxnID             *int64  `json:"TxnId"`
	Label             *string `json:"Label"`
	Status            string  `json:"Status"`
	TwoPhaseCommit    *string `json:"TwoPhaseCommit"`
	ExistingJobStatus string  `json:"ExistingJobStatus"`
	Message           *string `json:"Message"`
	NumberLoadedRows  int64   `json:"NumberLoadedRows"`
	ErrorURL          string  `json:"ErrorURL"`
}

// replay sends one request as the client builds it. A nil body is
// HttpPutBuilder.setEmptyEntity (Content-Length: 0); chunked sends the body
// with Transfer-Encoding: chunked (InputStreamEntity, GzipCompressingEntity).
func replay(t *testing.T, url string, headers [][2]string, body []byte, chunked bool) (int, []byte) {
	t.Helper()
	var rd io.Reader = bytes.NewReader(body)
	if chunked {
		rd = io.MultiReader(bytes.NewReader(body)) // hides the length
	}
	req, err := http.NewRequest(http.MethodPut, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if chunked {
		req.ContentLength = -1
	}
	for _, h := range headers {
		req.Header.Set(h[0], h[1])
	}
	resp, err := noRedirect().Do(req)
	if err != nil {
		t.Fatalf("PUT %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw
}

func basicHeader(user, pw string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
}

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// handlePreCommitResponse (Flink DorisStreamLoad): HTTP 200 and a body
// whose Label and TxnId are not null.
func flinkParse(t *testing.T, code int, raw []byte) javaRespContent {
	t.Helper()
	if code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", code, raw)
	}
	var rc javaRespContent
	if err := json.Unmarshal(raw, &rc); err != nil {
		t.Fatalf("RespContent: %v: %s", err, raw)
	}
	if rc.Label == nil || rc.TxnID == nil {
		t.Fatalf("Response error : %s", raw)
	}
	return rc
}

func flinkSuccess(rc javaRespContent) bool {
	return rc.Status == "Success" || rc.Status == "Publish Timeout" // LoadConstants.DORIS_SUCCESS_STATUS
}

// DorisCommitter / DorisStreamLoad.abortTransaction: {"status","msg"} as a
// Map<String,String>.
func twoPCParse(t *testing.T, url string, headers [][2]string) (status, msg string) {
	t.Helper()
	code, raw := replay(t, url, headers, nil, false)
	if code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", code, raw)
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("2PC reply: %v: %s", err, raw)
	}
	return m["status"], m["msg"]
}

func createUniqueTable(t *testing.T, s *Server, name string) {
	t.Helper()
	ddl := "CREATE TABLE " + name + " (id BIGINT, v VARCHAR(32)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 " +
		"PROPERTIES ('replication_num' = '1')"
	if err := s.CreateTable(testDB, ddl); err != nil {
		t.Fatal(err)
	}
}

// Flink connector, default streaming sink (2PC, enable-delete, gz): a chunked
// gzip CSV body with the delete sign as last column, precommit, commit by
// txn id, a repeated commit recognised by COMMITTED_PATTERN.
func TestRealClient_FlinkConnector_2PCStreaming(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	createUniqueTable(t, s, "fl")
	auth := basicHeader("root", "")
	label := "flink_demo_fl_0_1" // LabelGenerator: {prefix}_{db_table}_{subtask}_{chk}
	code, raw := replay(t, s.BEURL()+"/api/demo/fl/_stream_load", [][2]string{
		{"Expect", "100-continue"},
		{"Authorization", auth},
		{"hidden_columns", "__DORIS_DELETE_SIGN__"},
		{"label", label},
		{"compress_type", "gz"},
		{"two_phase_commit", "true"},
		{"Content-Encoding", "gzip"}, // GzipCompressingEntity
	}, gz(t, "1\ta\t0\n2\tb\t0\n3\tc\t1"), true)
	rc := flinkParse(t, code, raw)
	if !flinkSuccess(rc) || rc.TwoPhaseCommit == nil || *rc.TwoPhaseCommit != "true" {
		t.Fatalf("precommit: %s", raw)
	}
	wantEq(t, "NumberLoadedRows", rc.NumberLoadedRows, 3)

	commit := [][2]string{{"Expect", "100-continue"}, {"Authorization", auth},
		{"txn_id", fmt.Sprint(*rc.TxnID)}, {"txn_operation", "commit"}}
	status, msg := twoPCParse(t, s.BEURL()+"/api/demo/_stream_load_2pc", commit)
	wantEq(t, "commit status "+msg, status, "Success")
	status, msg = twoPCParse(t, s.BEURL()+"/api/demo/_stream_load_2pc", commit)
	if status == "Success" || !flinkCommitted.MatchString(msg) {
		t.Fatalf("second commit: %s %q must match COMMITTED_PATTERN", status, msg)
	}
	rows, _ := s.Rows(testDB, "fl")
	wantEq(t, "rows (id 3 carried the delete sign)", len(rows), 2)
}

// Flink abortPreCommit on restore: an empty 2PC load per label from the
// restored checkpoint on (with the sink's properties, so compress_type gz
// on an empty body). A fresh label answers Success and its txn is aborted; a
// PRECOMMITTED label answers Label Already Exists (not FINISHED) with the txn
// id in Message; a VISIBLE one answers FINISHED.
func TestRealClient_FlinkConnector_AbortPreCommitProbe(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	auth := basicHeader("root", "")
	probe := func(label string) javaRespContent {
		t.Helper()
		code, raw := replay(t, s.BEURL()+"/api/demo/orders/_stream_load", [][2]string{
			{"Authorization", auth}, {"Expect", "100-continue"}, {"two_phase_commit", "true"},
			{"label", label}, {"compress_type", "gz"},
		}, nil, false)
		rc := flinkParse(t, code, raw)
		if rc.TwoPhaseCommit == nil || *rc.TwoPhaseCommit != "true" { // Preconditions.checkState
			t.Fatalf("probe %s: TwoPhaseCommit: %s", label, raw)
		}
		return rc
	}
	abort := func(id int64) (string, string) {
		t.Helper()
		return twoPCParse(t, s.BEURL()+"/api/demo/_stream_load_2pc", [][2]string{
			{"Authorization", auth}, {"Expect", "100-continue"}, {"txn_id", fmt.Sprint(id)}, {"txn_operation", "abort"},
		})
	}

	pre := precommit(t, s, "fp_demo_orders_0_1", "1\ta\n")
	rc := probe("fp_demo_orders_0_1")
	wantEq(t, "probe precommitted", rc.Status, "Label Already Exists")
	if rc.ExistingJobStatus == "FINISHED" {
		t.Fatal("a PRECOMMITTED label must not be FINISHED")
	}
	mm := flinkLabelExist.FindStringSubmatch(*rc.Message)
	if mm == nil || mm[1] != "fp_demo_orders_0_1" || mm[2] != fmt.Sprint(pre) {
		t.Fatalf("Message %q must give label and txn id %d (LABEL_EXIST_PATTERN)", *rc.Message, pre)
	}
	if st, msg := abort(pre); st != "Success" {
		t.Fatalf("abort: %s %s", st, msg)
	}
	if st, msg := abort(pre); st == "Success" || !flinkAborted.MatchString(msg) {
		t.Fatalf("second abort %s %q must match ABORTTED_PATTERN", st, msg)
	}

	rc = probe("fp_demo_orders_0_2")
	if !flinkSuccess(rc) {
		t.Fatalf("fresh probe: %+v", rc)
	}
	if st, msg := abort(*rc.TxnID); st != "Success" {
		t.Fatalf("abort probe txn: %s %s", st, msg)
	}

	m, _ := load(t, s, "orders", "2\tb\n", hdr{"label": "fp_demo_orders_0_3"})
	wantEq(t, "visible load", m["Status"], any("Success"))
	rc = probe("fp_demo_orders_0_3")
	wantEq(t, "probe visible", rc.Status, "Label Already Exists")
	wantEq(t, "ExistingJobStatus", rc.ExistingJobStatus, "FINISHED")
}

// Flink batch mode (DorisBatchStreamLoad): no 2PC, label {prefix}_{table}_{uuid},
// gzip; with group_commit in the properties the label is left out.
func TestRealClient_FlinkConnector_BatchMode(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	auth := basicHeader("root", "")
	code, raw := replay(t, s.BEURL()+"/api/demo/orders/_stream_load", [][2]string{
		{"label", "fb_orders_0b1e0f2c-6a0d-4c3e-9d49-3d5c1d4b9e77"}, {"Expect", "100-continue"},
		{"Authorization", auth}, {"compress_type", "gz"}, {"Content-Encoding", "gzip"},
	}, gz(t, "1\ta\n2\tb"), true)
	rc := flinkParse(t, code, raw)
	if !flinkSuccess(rc) || rc.NumberLoadedRows != 2 {
		t.Fatalf("batch load: %s", raw)
	}
	code, raw = replay(t, s.BEURL()+"/api/demo/orders/_stream_load", [][2]string{
		{"Expect", "100-continue"}, {"Authorization", auth}, {"compress_type", "gz"},
		{"group_commit", "async_mode"}, {"Content-Encoding", "gzip"},
	}, gz(t, "3\tc"), true)
	rc = flinkParse(t, code, raw)
	if !flinkSuccess(rc) || !strings.HasPrefix(*rc.Label, "group_commit_") {
		t.Fatalf("group commit batch load: %s", raw)
	}
}

// Kafka connector defaults (json, read_json_by_line, gz) at-least-once
// (two_phase_commit "false") and exactly-once (2PC, then DorisCommitter by
// txn id); with group commit it sets a null label, sent as an empty header.
func TestRealClient_KafkaConnector(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	auth := basicHeader("root", "")
	body := gz(t, `{"id":1,"v":"a"}`+"\n"+`{"id":2,"v":"b"}`)
	kc := func(label, twoPC string, extra ...[2]string) javaRespContent {
		t.Helper()
		h := [][2]string{
			{"Authorization", auth}, {"label", label}, {"Expect", "100-continue"},
			{"two_phase_commit", twoPC}, {"format", "json"}, {"read_json_by_line", "true"},
			{"compress_type", "gz"}, {"Content-Encoding", "gzip"},
		}
		code, raw := replay(t, s.BEURL()+"/api/demo/orders/_stream_load", append(h, extra...), body, true)
		if code != http.StatusOK {
			t.Fatalf("HTTP %d", code)
		}
		var rc javaRespContent
		if err := json.Unmarshal(raw, &rc); err != nil || rc.Message == nil { // "response error : "
			t.Fatalf("KafkaRespContent: %v: %s", err, raw)
		}
		if !flinkSuccess(rc) { // DORIS_SUCCESS_STATUS
			t.Fatalf("stream load error: %s", raw)
		}
		return rc
	}
	// LabelGenerator: {topic}__KC_{partition}__KC_{db_table}__KC_{lastOffset}__KC_{counter}
	rc := kc("orders__KC_0__KC_demo_orders__KC_1__KC_417", "false")
	wantEq(t, "at-least-once rows", rc.NumberLoadedRows, 2)

	rc = kc("orders__KC_1__KC_demo_orders__KC_1__KC_418", "true")
	commit := [][2]string{{"Expect", "100-continue"}, {"Authorization", auth},
		{"txn_id", fmt.Sprint(*rc.TxnID)}, {"txn_operation", "commit"}}
	status, msg := twoPCParse(t, s.BEURL()+"/api/demo/_stream_load_2pc", commit)
	if status != "Success" && !flinkCommitted.MatchString(msg) {
		t.Fatalf("commit: %s %s", status, msg)
	}

	rc = kc("", "false", [2]string{"group_commit", "sync_mode"})
	if !strings.HasPrefix(*rc.Label, "group_commit_") {
		t.Fatalf("group commit label %q", *rc.Label)
	}
	rows, _ := s.Rows(testDB, "orders")
	wantEq(t, "rows", len(rows), 6)
}

// sdkRespContent is the Go SDK's RespContent (jsoniter, standard-library
// compatible: unknown fields ignored).
type sdkRespContent struct {
	TxnID          int64  `json:"TxnId"`
	Label          string `json:"Label"`
	Status         string `json:"Status"`
	TwoPhaseCommit string `json:"TwoPhaseCommit"`
	Message        string `json:"Message"`
}

// Go SDK defaults: DefaultCSVFormat (column_separator ",", line_delimiter
// `\n` as two characters) and the zero GroupCommit (SYNC: group_commit
// sync_mode, no label); DefaultJSONFormat (format json, strip_outer_array
// false, read_json_by_line true) with GroupCommit OFF and a generated label.
func TestRealClient_GoSDK_Defaults(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	auth := basicHeader("root", "")
	sdk := func(h [][2]string, body string) sdkRespContent {
		t.Helper()
		code, raw := replay(t, s.BEURL()+"/api/demo/orders/_stream_load",
			append([][2]string{{"Authorization", auth}, {"Expect", "100-continue"}}, h...), []byte(body), false)
		if code != http.StatusOK {
			t.Fatalf("stream load error: HTTP %d", code)
		}
		var rc sdkRespContent
		if err := json.Unmarshal(raw, &rc); err != nil {
			t.Fatalf("failed to unmarshal response: %v", err)
		}
		if !strings.EqualFold(rc.Status, "success") { // isSuccessStatus
			t.Fatalf("load failed: %s", raw)
		}
		return rc
	}
	rc := sdk([][2]string{{"format", "csv"}, {"column_separator", ","}, {"line_delimiter", `\n`},
		{"group_commit", "sync_mode"}}, "1,a\n2,b\n")
	if !strings.HasPrefix(rc.Label, "group_commit_") {
		t.Fatalf("Label %q", rc.Label)
	}
	rc = sdk([][2]string{{"format", "json"}, {"strip_outer_array", "false"}, {"read_json_by_line", "true"},
		{"label", "load_demo_orders_1767225600000_5f1c8a52-1f7e-4c43-8a3a-0a8f5e0b6e11"}},
		`{"id":3,"v":"c"}`+"\n"+`{"id":4,"v":"d"}`+"\n")
	wantEq(t, "TwoPhaseCommit", rc.TwoPhaseCommit, "false")
	rows, _ := s.Rows(testDB, "orders")
	wantEq(t, "rows", len(rows), 4)
}
