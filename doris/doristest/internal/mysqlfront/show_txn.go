package mysqlfront

import (
	"strconv"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris"
)

// Messages of FE ShowTransactionStmt / DatabaseTransactionMgr
// (docs/doris-facts.md §6.2).
const (
	msgTxnBadWhere = "Where clause should looks like one of them: id = 123 or label =/like 'label' or status = 'prepare/precommitted/committed/visible/aborted'"
	msgTxnNoWhere  = "Missing transaction id"
)

// showTransaction handles
// SHOW TRANSACTION [FROM|IN db] WHERE id = N | label = 'x' | label LIKE 'x%' | status = 's'
// (docs/doris-facts.md §6.2): 15 VARCHAR columns in doris.TransactionColumns order.
func (ss *session) showTransaction(st stmt, i int) (*resultSpec, error) {
	explicit := ""
	if st.at(i).is("FROM") || st.at(i).is("IN") {
		explicit = st.at(i + 1).name()
		if explicit == "" {
			return nil, syntaxError(st)
		}
		i += 2
	}
	db, err := ss.resolveDB(explicit)
	if err != nil {
		return nil, err
	}
	if i == len(st.toks) {
		return nil, errf(msgTxnNoWhere)
	}
	if !st.at(i).is("WHERE") {
		return nil, syntaxError(st)
	}
	q, byID, err := parseTxnWhere(st.toks[i+1:])
	if err != nil {
		return nil, err
	}
	if err := ss.knownDB(db); err != nil {
		return nil, err
	}
	var txns []doris.Transaction
	if !byID || q.ID > 0 { // TxnQuery.ID is > 0 when set; no txn has id <= 0
		txns, err = ss.s.b.Transactions(db, q)
		if err != nil {
			return nil, backendError(err)
		}
	}
	switch {
	case len(txns) == 0 && q.Label != "":
		return nil, errf("transaction with label %s does not exist", q.Label)
	case len(txns) == 0 && byID:
		return nil, errf("transaction with id %d does not exist", q.ID)
	}
	spec := stringCols(doris.TransactionColumns...)
	for _, t := range txns {
		spec.rows = append(spec.rows, txnRow(t))
	}
	return &spec, nil
}

// parseTxnWhere reads `id = N`, `label = 'x'`, `label like 'x'` or
// `status = 's'`. Anything else is Doris's bad-predicate error.
func parseTxnWhere(toks []token) (q TxnQuery, byID bool, err error) {
	bad := errf(msgTxnBadWhere)
	if len(toks) != 3 && !(len(toks) == 4 && toks[2].isPunct("-")) {
		return TxnQuery{}, false, bad
	}
	key, op := toks[0], toks[1]
	val := toks[len(toks)-1]
	isEq := op.isPunct("=")
	switch {
	case key.is("id") && isEq:
		if val.kind != tokNumber && val.kind != tokString {
			return TxnQuery{}, false, bad
		}
		n, err := strconv.ParseInt(strings.TrimSpace(val.val), 10, 64)
		if err != nil {
			return TxnQuery{}, false, bad
		}
		if len(toks) == 4 {
			n = -n
		}
		return TxnQuery{ID: n}, true, nil
	case len(toks) == 4:
		return TxnQuery{}, false, bad
	case key.is("label") && isEq && val.kind == tokString:
		return TxnQuery{Label: val.val}, false, nil
	case key.is("label") && op.is("like") && val.kind == tokString:
		return TxnQuery{LabelLike: val.val}, false, nil
	case key.is("status") && isEq && val.kind == tokString:
		s := doris.TxnStatus(strings.ToUpper(val.val))
		switch s {
		case doris.TxnPrepare, doris.TxnPrecommitted, doris.TxnCommitted, doris.TxnVisible, doris.TxnAborted:
			return TxnQuery{Status: s}, false, nil
		}
	}
	return TxnQuery{}, false, bad
}

// txnRow renders one transaction as FE DatabaseTransactionMgr.getTxnStateInfo
// does; zero times are NULL (TimeUtils.longToTimeString prints `\N`).
func txnRow(t doris.Transaction) []any {
	tm := func(v time.Time) any {
		if v.IsZero() {
			return nil
		}
		return v.Format(doris.TimeLayout)
	}
	return []any{
		strconv.FormatInt(t.ID, 10),
		t.Label,
		t.Coordinator,
		string(t.Status),
		t.SourceType,
		tm(t.PrepareTime),
		tm(t.PreCommitTime),
		tm(t.CommitTime),
		tm(t.PublishTime),
		tm(t.FinishTime),
		t.Reason,
		strconv.FormatInt(t.ErrorReplicasCount, 10),
		strconv.FormatInt(t.ListenerID, 10),
		strconv.FormatInt(t.TimeoutMs, 10),
		t.ErrMsg,
	}
}
