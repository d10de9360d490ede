package demo

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/reconcile"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/verify"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// served is one order's row: its version and status.
type served struct {
	version int64
	status  string
}

// check runs the evidence checks of the seed article and prints each; it
// reports whether all passed.
func (e *env) check(ctx context.Context, evs []event, n narrator) bool {
	ok := true
	// The business layer (reconcile): the served state equals the state
	// rebuilt from the audit table, and every event is in the audit once.
	rep, err := reconcile.Run(ctx, e.client, reconcile.Spec{
		Audit: reconcile.Table{DB: demoDB, Name: auditTable}, Served: reconcile.Table{DB: demoDB, Name: stateTable},
		Key: []string{"order_id"}, Version: "op_version", DeleteWhen: "status = '" + statusDeleted + "'",
		Sums: []string{"amount"}, EventID: []string{"order_id", "op_version"}})
	if err != nil {
		return n.check(false, "reconcile %s with %s: %v", stateTable, auditTable, err)
	}
	dupEv := rep.Check(reconcile.KindDuplicateEvent)
	ok = n.check(dupEv.Count == 0, "one row per event: no (order_id, op_version) twice in %s (%d found%s)",
		auditTable, dupEv.Count, firstKeys(dupEv)) && ok
	var bad []string
	for _, c := range rep.Checks {
		if c.Kind != reconcile.KindDuplicateEvent && c.Count > 0 {
			bad = append(bad, fmt.Sprintf("%s %d%s", c.Kind, c.Count, firstKeys(&c)))
		}
	}
	ok = n.check(len(bad) == 0, "reconcile: %s equals the state rebuilt from %s (row of max op_version per order, %d deleted orders absent; %d orders; no mismatched, missing, resurrected, unaudited or tied key)%s",
		stateTable, auditTable, rep.DeletedKeys, rep.ServedRows, strings.Join(append([]string{""}, bad...), "; ")) && ok
	for _, sm := range rep.Sums {
		ok = n.check(sm.Equal, "reconcile: SUM(%s) served %s = rebuilt %s", sm.Column, sm.Served, sm.Rebuilt) && ok
	}
	state, err := e.orders(ctx, "SELECT order_id, op_version, status FROM order_state_eos")
	if err != nil {
		return n.check(false, "read %s: %v", stateTable, err)
	}
	want := map[int64]served{}
	for id, ev := range expectedState(evs) {
		want[id] = served{ev.OpVersion, ev.Status}
	}
	lateWins := 0
	for _, r := range state {
		if r.status == statusCancelled {
			lateWins++
		}
	}
	ok = n.check(sameOrders(state, want) && lateWins == 0, "served state equals the producer's expectation: the late CANCELLED (v2) never overwrote PAID (v3), deletes applied") && ok

	cnt, err := e.query(ctx, "SELECT COUNT(*) FROM order_event_audit")
	audit := int64(-1)
	if err == nil && len(cnt) == 1 {
		audit, _ = strconv.ParseInt(cnt[0][0], 10, 64)
	}
	ok = n.check(audit == int64(len(evs)), "exactly once: %s has %d rows for %d events produced", auditTable, audit, len(evs)) && ok

	for _, c := range e.tables {
		rep, err := verify.VerifyConfig(ctx, &cmdutil.Factory{}, c, false, false)
		if err != nil {
			ok = n.check(false, "verify %s: %v", c.Doris.Table, err) && ok
			continue
		}
		msg := fmt.Sprintf("ledger of %s verifies against Doris and Kafka: %d checkpoints, labels VISIBLE, %d offsets contiguous from offset 0",
			c.Doris.Table, len(rep.Checkpoints), rep.Offsets)
		if err := rep.Err(); err != nil {
			msg += fmt.Sprintf(" — %v: %v", err, rep.Findings)
		}
		ok = n.check(rep.Err() == nil && rep.Offsets == int64(len(evs)), "%s", msg) && ok
	}
	for _, st := range []string{"precommitted", "prepare"} {
		rows, err := e.query(ctx, "SHOW TRANSACTION FROM "+demoDB+" WHERE status = '"+st+"'")
		ok = n.check(err == nil && len(rows) == 0, "no lingering %s transaction: SHOW TRANSACTION WHERE status = '%s' returns %s",
			st, st, rowsOrErr(rows, err)) && ok
	}
	return ok
}

// firstKeys is ", e.g. k1 k2 …" for a finding with keys.
func firstKeys(c *reconcile.Check) string {
	if c == nil || len(c.Keys) == 0 {
		return ""
	}
	var ks []string
	for i, k := range c.Keys {
		if i == 5 {
			ks = append(ks, "…")
			break
		}
		ks = append(ks, strings.Join(k, "/"))
	}
	return ", e.g. " + strings.Join(ks, " ")
}

func rowsOrErr(rows [][]string, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	if len(rows) == 0 {
		return "no rows"
	}
	return fmt.Sprintf("%d rows, e.g. %v", len(rows), rows[0])
}

func sameOrders(a, b map[int64]served) bool {
	if len(a) != len(b) {
		return false
	}
	for id, r := range a {
		if b[id] != r {
			return false
		}
	}
	return true
}

// orders reads (order_id, version, status) rows.
func (e *env) orders(ctx context.Context, q string) (map[int64]served, error) {
	rows, err := e.query(ctx, q)
	if err != nil {
		return nil, err
	}
	out := map[int64]served{}
	for _, r := range rows {
		id, err1 := strconv.ParseInt(r[0], 10, 64)
		v, err2 := strconv.ParseInt(r[1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%q: bad row %v", q, r)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("%q: order %d appears twice", q, id)
		}
		out[id] = served{v, r[2]}
	}
	return out, nil
}

// query runs q in the demo database and returns every row as strings.
func (e *env) query(ctx context.Context, q string) ([][]string, error) {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "USE "+demoDB); err != nil {
		return nil, err
	}
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		raw := make([]any, len(cols))
		ns := make([]nullString, len(cols))
		for i := range raw {
			raw[i] = &ns[i]
		}
		if err := rows.Scan(raw...); err != nil {
			return nil, err
		}
		r := make([]string, len(cols))
		for i := range ns {
			r[i] = string(ns[i])
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// nullString scans any column as text (NULL → "").
type nullString string

func (s *nullString) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*s = ""
	case []byte:
		*s = nullString(x)
	default:
		*s = nullString(fmt.Sprint(x))
	}
	return nil
}
