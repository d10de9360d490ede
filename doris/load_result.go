package doris

import (
	"encoding/json"
	"fmt"
	"io"
)

// Stream Load Status values (§2.2).
const (
	StatusSuccess            = "Success"
	StatusPublishTimeout     = "Publish Timeout"
	StatusLabelAlreadyExists = "Label Already Exists"
	StatusFail               = "Fail"
)

// ExistingJobStatus values of a Label Already Exists answer (§2.3).
const (
	JobRunning      = "RUNNING"
	JobPrecommitted = "PRECOMMITTED"
	JobFinished     = "FINISHED"
)

// LoadResult is the BE's Stream Load answer (§2.1, field names and JSON
// types of StreamLoadContext::to_json). Optional fields are zero when the
// BE did not print them.
type LoadResult struct {
	TxnID                  int64  `json:"TxnId"` // -1 when no txn was begun
	Label                  string `json:"Label"`
	Comment                string `json:"Comment"`
	TwoPhaseCommit         string `json:"TwoPhaseCommit"` // "true"/"false": a string on the wire
	GroupCommit            bool   `json:"GroupCommit,omitempty"`
	GroupCommitMode        string `json:"GroupCommitMode,omitempty"`
	LoadID                 string `json:"LoadId,omitempty"`
	Status                 string `json:"Status"`
	ExistingJobStatus      string `json:"ExistingJobStatus,omitempty"` // only with Label Already Exists
	Message                string `json:"Message"`
	NumberTotalRows        int64  `json:"NumberTotalRows"`
	NumberLoadedRows       int64  `json:"NumberLoadedRows"`
	NumberFilteredRows     int64  `json:"NumberFilteredRows"`
	NumberUnselectedRows   int64  `json:"NumberUnselectedRows"`
	LoadBytes              int64  `json:"LoadBytes"`
	LoadTimeMs             int64  `json:"LoadTimeMs"`
	BeginTxnTimeMs         int64  `json:"BeginTxnTimeMs"`
	StreamLoadPutTimeMs    int64  `json:"StreamLoadPutTimeMs"`
	ReadDataTimeMs         int64  `json:"ReadDataTimeMs"`
	WriteDataTimeMs        int64  `json:"WriteDataTimeMs"`
	ReceiveDataTimeMs      int64  `json:"ReceiveDataTimeMs"`
	CommitAndPublishTimeMs int64  `json:"CommitAndPublishTimeMs"`
	ErrorURL               string `json:"ErrorURL,omitempty"`
	FirstErrorMsg          string `json:"FirstErrorMsg,omitempty"`

	// ExistingTxnID is the txn id holding the label, parsed from Message of
	// a Label Already Exists answer (§2.5); 0 otherwise.
	ExistingTxnID int64 `json:"-"`
}

// Succeeded reports whether Status is Success or Publish Timeout (§10).
func (r *LoadResult) Succeeded() bool {
	return r.Status == StatusSuccess || r.Status == StatusPublishTimeout
}

// maxAnswerBytes bounds every Doris answer read into memory.
const maxAnswerBytes = 1 << 20

// decodeLoadResult parses a BE Stream Load answer.
func decodeLoadResult(r io.Reader) (*LoadResult, error) {
	var res LoadResult
	if err := json.NewDecoder(io.LimitReader(r, maxAnswerBytes)).Decode(&res); err != nil {
		return nil, fmt.Errorf("decode stream load answer: %w", err)
	}
	if res.Status == "" {
		return nil, fmt.Errorf("decode stream load answer: no Status field")
	}
	if res.Status == StatusLabelAlreadyExists {
		res.ExistingTxnID = existingTxnID(res.Message)
	}
	return &res, nil
}
