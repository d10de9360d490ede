package doris

import (
	"regexp"
	"strconv"
)

// messageCode maps one Doris message pattern to a sentinel (kerr style: one
// table, matched in order, first match wins).
type messageCode struct {
	re  *regexp.Regexp
	err error
	doc string // where Doris prints it
}

// messageCodes is the only place Doris message text is matched.
var messageCodes = []messageCode{
	{regexp.MustCompile(`has already been used, relate to txn|^\[LABEL_ALREADY_EXISTS\]`), ErrLabelAlreadyExists,
		"§2.4 LabelAlreadyUsedException from FE begin"},
	{regexp.MustCompile(`too many filtered rows|Encountered unqualified data|^\[DATA_QUALITY_ERROR\]`), ErrDataQuality,
		"§8 BE executor filter ratio"},
	{regexp.MustCompile(`(?i)is already (committed|visible)(, not pre-committed|, could not abort)`), ErrTxnAlreadyCommitted,
		"§3.3 commit and abort state checks"},
	{regexp.MustCompile(`is already aborted[.,] abort reason`), ErrTxnAlreadyAborted,
		"§3.3 commit (period) and abort (comma) of an ABORTED txn"},
	{regexp.MustCompile(`running transaction not found, label=`), ErrRunningTxnNotFound,
		"§3.3 step 2, label with no txn in an accepted state"},
	{regexp.MustCompile(`transaction \[\d+\] not found|transaction not found, label=|transaction with (label|id) .* does not exist`), ErrTxnNotFound,
		"§3.3 steps 2-3; §6.2 SHOW TRANSACTION"},
	{regexp.MustCompile(`check schema compatibility failed, partial update can't commit`), ErrSchemaIncompatible,
		"§13 checkSchemaCompatibility at commit"},
	{regexp.MustCompile(`is prepare, not pre-committed`), ErrTxnNotPrecommitted,
		"§3.3 commit of a PREPARE txn"},
	{regexp.MustCompile(`current running txns on db .* larger than limit`), ErrRunningTxnQuota,
		"§5, §8 checkRunningTxnExceedLimit"},
	{regexp.MustCompile(`no valid Basic authorization|Need auth information|Access denied|^Unauthorized$|\[NOT_AUTHORIZED\]`), ErrUnauthorized,
		"§1.2 FE, §1.3 BE, MySQL 1045"},
	{regexp.MustCompile(`(?i)unknown database|table not found, tableName=|unknown table|^\[NOT_FOUND\]`), ErrNotFound,
		"§2.4, §3.3 step 1"},
}

// classify returns the sentinel for a Doris message, or nil.
func classify(msg string) error {
	for _, c := range messageCodes {
		if c.re.MatchString(msg) {
			return c.err
		}
	}
	return nil
}

var (
	reRelateToTxn = regexp.MustCompile(`relate to txn \[(\d+)\]`)
	reTxnIDInMsg  = regexp.MustCompile(`transaction \[(\d+)\]`)
	reAbortReason = regexp.MustCompile(`is already aborted[.,] abort reason: (.*)$`)
)

// existingTxnID parses the txn id of a Label Already Exists message (§2.5,
// the Flink connector's LABEL_EXIST_PATTERN); 0 when absent.
func existingTxnID(msg string) int64 {
	return parseIDGroup(reRelateToTxn, msg)
}

// txnIDInMessage parses "transaction [<id>]" from a 2PC message; 0 when absent.
func txnIDInMessage(msg string) int64 {
	return parseIDGroup(reTxnIDInMsg, msg)
}

// abortReason returns the reason of an "is already aborted" message.
func abortReason(msg string) string {
	m := reAbortReason.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	return m[1]
}

func parseIDGroup(re *regexp.Regexp, msg string) int64 {
	m := re.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	id, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0
	}
	return id
}
