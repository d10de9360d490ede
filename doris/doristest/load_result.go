package doristest

// loadResult is the Stream Load reply of docs/doris-facts.md §2.1
// (StreamLoadContext::to_json): fields in this exact order, TwoPhaseCommit as
// a string, ExistingJobStatus only with "Label Already Exists", ErrorURL and
// FirstErrorMsg only when non-empty, TxnId -1 when no txn was begun,
// rapidjson PrettyWriter layout plus a trailing "\n". A group-commit load
// writes "GroupCommit": true (a JSON bool) instead of TwoPhaseCommit and
// leaves out BeginTxnTimeMs and CommitAndPublishTimeMs
// (stream_load_context.cpp to_json).
type loadResult struct {
	TxnID             int64
	Label             string
	Comment           string
	TwoPhaseCommit    bool
	GroupCommit       bool // "GroupCommit": true replaces TwoPhaseCommit; no BeginTxnTimeMs / CommitAndPublishTimeMs
	Status            string
	ExistingJobStatus string
	Message           string

	TotalRows, LoadedRows, FilteredRows, UnselectedRows, LoadBytes int64

	LoadTimeMs, BeginTxnTimeMs, StreamLoadPutTimeMs, ReadDataTimeMs int64
	WriteDataTimeMs, ReceiveDataTimeMs, CommitAndPublishTimeMs      int64
	ErrorURL, FirstErrorMsg                                         string
}

// Stream Load Status values (docs/doris-facts.md §2.2).
const (
	statusSuccess        = "Success"
	statusPublishTimeout = "Publish Timeout"
	statusLabelExists    = "Label Already Exists"
	statusFail           = "Fail"
)

func (r *loadResult) json() []byte {
	tpc := "false"
	if r.TwoPhaseCommit {
		tpc = "true"
	}
	fs := []field{
		{"TxnId", r.TxnID},
		{"Label", r.Label},
		{"Comment", r.Comment},
	}
	if r.GroupCommit {
		fs = append(fs, field{"GroupCommit", true})
	} else {
		fs = append(fs, field{"TwoPhaseCommit", tpc})
	}
	fs = append(fs, field{"Status", r.Status})
	if r.Status == statusLabelExists {
		fs = append(fs, field{"ExistingJobStatus", r.ExistingJobStatus})
	}
	fs = append(fs,
		field{"Message", r.Message},
		field{"NumberTotalRows", r.TotalRows},
		field{"NumberLoadedRows", r.LoadedRows},
		field{"NumberFilteredRows", r.FilteredRows},
		field{"NumberUnselectedRows", r.UnselectedRows},
		field{"LoadBytes", r.LoadBytes},
		field{"LoadTimeMs", r.LoadTimeMs},
	)
	if !r.GroupCommit {
		fs = append(fs, field{"BeginTxnTimeMs", r.BeginTxnTimeMs})
	}
	fs = append(fs,
		field{"StreamLoadPutTimeMs", r.StreamLoadPutTimeMs},
		field{"ReadDataTimeMs", r.ReadDataTimeMs},
		field{"WriteDataTimeMs", r.WriteDataTimeMs},
		field{"ReceiveDataTimeMs", r.ReceiveDataTimeMs},
	)
	if !r.GroupCommit {
		fs = append(fs, field{"CommitAndPublishTimeMs", r.CommitAndPublishTimeMs})
	}
	if r.ErrorURL != "" {
		fs = append(fs, field{"ErrorURL", r.ErrorURL})
	}
	if r.FirstErrorMsg != "" {
		fs = append(fs, field{"FirstErrorMsg", r.FirstErrorMsg})
	}
	return append(prettyJSON(fs), '\n')
}
