package demo

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// The order round's "one row per event" check runs on the audit table,
// where it can fail: an event loaded twice fails it, and reconcile's
// checks fail on a wrong served row.
func TestOrderChecksFailOnDoubledEventOrWrongState(t *testing.T) {
	t.Parallel()
	io, out, _ := cmdutil.TestStreams("", false)
	n := narrator{mu: &sync.Mutex{}, w: io.Out}
	env, err := startEnv(t.Context(), t.TempDir(), io.ErrOut, "")
	if err != nil {
		t.Fatal(err)
	}
	defer env.close()
	if err := env.createTables(t.Context()); err != nil {
		t.Fatal(err)
	}
	evs := orderEvents(10)
	exec := func(q string) {
		t.Helper()
		if _, err := env.db.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	row := func(e event) string {
		return fmt.Sprintf("(%d, %d, '%s', %s)", e.OrderID, e.OpVersion, e.Status, e.Amount)
	}
	var audit, state []string
	for _, e := range evs {
		audit = append(audit, row(e))
	}
	for _, e := range expectedState(evs) {
		state = append(state, row(e))
	}
	exec("INSERT INTO " + auditTable + " VALUES " + strings.Join(audit, ", "))
	exec("INSERT INTO " + stateTable + " VALUES " + strings.Join(state, ", "))
	env.check(t.Context(), evs, n)
	for _, line := range []string{"[FAIL] one row per event", "[FAIL] reconcile"} {
		if strings.Contains(out.String(), line) {
			t.Fatalf("correct tables fail %q:\n%s", line, out)
		}
	}
	// An event loaded twice.
	exec("INSERT INTO " + auditTable + " VALUES " + row(evs[3]))
	out.Reset()
	if env.check(t.Context(), evs, n) || !strings.Contains(out.String(), "[FAIL] one row per event: no (order_id, op_version) twice in order_event_audit (1 found, e.g. 4/1)") {
		t.Errorf("a doubled event passed:\n%s", out)
	}
	// A late event overwrote the served row (no sequence column would do it).
	exec("INSERT INTO " + stateTable + " VALUES (2, 9, 'CANCELLED', 12.02)")
	out.Reset()
	if env.check(t.Context(), evs, n) || !strings.Contains(out.String(), "mismatched 1, e.g. 2") {
		t.Errorf("a wrong served row passed:\n%s", out)
	}
}
