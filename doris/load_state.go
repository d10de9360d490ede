package doris

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// LoadState returns the state of the latest txn holding label in db, via
// FE GET /api/{db}/get_load_state (§6.1): PREPARE, PRECOMMITTED, COMMITTED,
// VISIBLE, ABORTED, or TxnUnknown when no txn has the label (never used, or
// cleaned after retention, §4). Errors: *TxnError (Op "load state") for
// Doris error answers (ErrUnauthorized, ErrNotFound for an unknown db when
// the message says so), plain errors for transport failures. It is a read:
// safe to retry, never ambiguous.
func (c *Client) LoadState(ctx context.Context, db, label string) (TxnStatus, error) {
	if db == "" || label == "" {
		return "", fmt.Errorf("load state: db and label are required")
	}
	if err := ValidateDatabaseName(db); err != nil {
		return "", fmt.Errorf("load state: %w", err)
	}
	ctx, cancel := withTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	what := fmt.Sprintf("load state of label %s in db %s", label, db)
	ans, err := c.doSmall(ctx, what, http.MethodGet, []string{"api", db, "get_load_state"},
		url.Values{"label": {label}}, nil, false)
	if err != nil {
		return "", err
	}
	te := &TxnError{Op: "load state", DB: db, Label: label}
	if ans.status != http.StatusOK {
		te.Code, te.Message = fmt.Sprintf("HTTP %d", ans.status), snippet(ans.body)
		return "", te
	}
	a, err := decodeFEAnswer(ans.body)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if a.Code != nil && *a.Code == 0 {
		s := TxnStatus(a.dataString())
		switch s {
		case TxnUnknown, TxnPrepare, TxnPrecommitted, TxnCommitted, TxnVisible, TxnAborted:
			return s, nil
		}
		return "", fmt.Errorf("%s: unexpected state %q", what, snippet([]byte(s)))
	}
	te.Code, te.Message = a.refusal()
	return "", te
}
