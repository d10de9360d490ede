package doris

import (
	"errors"
	"testing"
	"time"
)

// One row per messageCodes entry, with Doris's exact texts (§2.4, §3.3, §5, §8).
func TestClassify(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]error{
		"[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [a] has already been used, relate to txn [9]": ErrLabelAlreadyExists,
		"[DATA_QUALITY_ERROR]too many filtered rows":                                                                           ErrDataQuality,
		"[DATA_QUALITY_ERROR]Encountered unqualified data, stop processing":                                                    ErrDataQuality,
		"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = current running txns on db 10003 is 100, larger than limit 100": ErrRunningTxnQuota,
		"transaction [1] is already visible, not pre-committed.":                                                               ErrTxnAlreadyCommitted,
		"transaction [1] is already aborted. abort reason: timeout by txn manager":                                             ErrTxnAlreadyAborted,
		"running transaction not found, label=x":                                                                               ErrRunningTxnNotFound,
		"transaction not found, label=x":                                                                                       ErrTxnNotFound,
		"transaction with label x does not exist":                                                                              ErrTxnNotFound,
		"transaction with id 3 does not exist":                                                                                 ErrTxnNotFound,
		"transaction [7] check schema compatibility failed, partial update can't commit with old schema sucessfully .":         ErrSchemaIncompatible,
		"transaction [1] is prepare, not pre-committed.":                                                                       ErrTxnNotPrecommitted,
		"[NOT_AUTHORIZED]no valid Basic authorization":                                                                         ErrUnauthorized,
		"Access denied for user 'root'@'127.0.0.1' (using password: YES)":                                                      ErrUnauthorized,
		"[NOT_FOUND]TStatus: errCode = 7, detailMessage = table not found, tableName=t":                                        ErrNotFound,
		"[INTERNAL_ERROR]something else":                                                                                       nil,
	} {
		if got := classify(msg); got != want {
			t.Errorf("classify(%q) = %v, want %v", msg, got, want)
		}
	}
	if id := existingTxnID("Label [a] has already been used, relate to txn [1897945320369152]"); id != 1897945320369152 {
		t.Errorf("existingTxnID = %d", id)
	}
}

func TestLoadErrorMatchesHTTPStatus(t *testing.T) {
	t.Parallel()
	if err := error(&LoadError{Status: "HTTP 401"}); !errors.Is(err, ErrUnauthorized) {
		t.Error("HTTP 401 is not ErrUnauthorized")
	}
	if err := error(&LoadError{Status: StatusLabelAlreadyExists}); !errors.Is(err, ErrLabelAlreadyExists) {
		t.Error("Label Already Exists not matched")
	}
}

// §6.2: 15 VARCHAR columns; \N and NULL are zero times.
func TestParseTransaction(t *testing.T) {
	t.Parallel()
	// NULL reads as "" (scanStrings).
	vals := []string{"1001", "L1", "BE: 127.0.0.1", "PRECOMMITTED", "BACKEND_STREAMING",
		"2026-08-18 10:00:00", "2026-08-18 10:00:05", `\N`, "", `\N`, "", "0", "-1", "600000", ""}
	tx, err := parseTransaction(TransactionColumns, vals)
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 8, 18, 10, 0, 5, 0, time.Local)
	if tx.ID != 1001 || tx.Label != "L1" || tx.Status != TxnPrecommitted || !tx.PreCommitTime.Equal(want) ||
		!tx.CommitTime.IsZero() || !tx.PublishTime.IsZero() || tx.ListenerID != -1 || tx.TimeoutMs != 600000 {
		t.Fatalf("parsed %+v", tx)
	}
	if _, err := parseTransaction(TransactionColumns[:1], []string{"x"}); err == nil {
		t.Fatal("bad id parsed")
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{
		{User: "root"},
		{FE: []string{"http://h:1"}},
		{FE: []string{"ftp://h:1"}, User: "root"},
		{FE: []string{"http://u:p@h:1"}, User: "root"},
		{FE: []string{"http://h:1/api"}, User: "root"},
		{FE: []string{"http://h:1"}, User: "root", MySQL: "h"},
		{FE: []string{"http://h:1"}, User: "root", RequestTimeout: -1},
	} {
		if c, err := NewClient(cfg); err == nil {
			c.Close()
			t.Errorf("%+v accepted", cfg)
		}
	}
	c, err := NewClient(Config{FE: []string{"http://h:8030/"}, User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	if c.cfg.RequestTimeout != DefaultRequestTimeout || c.cfg.ExpectContinueTimeout != DefaultExpectContinueTimeout || c.fe[0].String() != "http://h:8030" {
		t.Fatalf("defaults not applied: %+v", c.cfg)
	}
	if err := c.Close(); err != nil || c.Close() != nil {
		t.Fatal("Close not idempotent")
	}
}
