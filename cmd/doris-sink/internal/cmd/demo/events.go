package demo

import (
	"fmt"
	"strconv"
)

// Order statuses of the demo events, with their op_version.
const (
	statusCreated   = "CREATED"   // v1
	statusCancelled = "CANCELLED" // v2, produced after PAID: a late, older event
	statusPaid      = "PAID"      // v3
	statusDeleted   = "DELETED"   // v4, a delete (__DORIS_DELETE_SIGN__ = 1)
)

// event is one order event as produced to Kafka (a flat JSON object).
type event struct {
	OrderID   int64
	OpVersion int64
	Status    string
	Amount    string
	Delete    bool
}

// JSON renders the event as the record value. __DORIS_DELETE_SIGN__ is
// loaded by the Unique Key table (hidden_columns) and ignored by the
// audit table, which has no such column.
func (e event) JSON() []byte {
	del := 0
	if e.Delete {
		del = 1
	}
	return fmt.Appendf(nil, `{"order_id":%d,"op_version":%d,"status":%q,"amount":%s,"__DORIS_DELETE_SIGN__":%d}`,
		e.OrderID, e.OpVersion, e.Status, e.Amount, del)
}

// Key is the record key: the order id, so one order's events stay in one
// partition, in order.
func (e event) Key() []byte { return strconv.AppendInt(nil, e.OrderID, 10) }

// orderEvents returns the events of orders 1..n in production order:
// create v1 for all, pay v3, then the late cancel v2 (older than pay,
// arriving after it), then a delete v4 for every fifth order.
func orderEvents(n int) []event {
	var out []event
	amount := func(id int) string { return fmt.Sprintf("%d.%02d", 10+id, id%100) }
	for id := 1; id <= n; id++ {
		out = append(out, event{OrderID: int64(id), OpVersion: 1, Status: statusCreated, Amount: amount(id)})
	}
	for id := 1; id <= n; id++ {
		out = append(out, event{OrderID: int64(id), OpVersion: 3, Status: statusPaid, Amount: amount(id)})
	}
	for id := 1; id <= n; id += 2 {
		out = append(out, event{OrderID: int64(id), OpVersion: 2, Status: statusCancelled, Amount: amount(id)})
	}
	for id := 5; id <= n; id += 5 {
		out = append(out, event{OrderID: int64(id), OpVersion: 4, Status: statusDeleted, Amount: amount(id), Delete: true})
	}
	return out
}

// expectedState is the state a correct pipeline serves: per order, the
// event with the highest op_version, absent when that is a delete.
func expectedState(evs []event) map[int64]event {
	best := map[int64]event{}
	for _, e := range evs {
		if b, ok := best[e.OrderID]; !ok || e.OpVersion >= b.OpVersion {
			best[e.OrderID] = e
		}
	}
	for id, e := range best {
		if e.Delete {
			delete(best, id)
		}
	}
	return best
}
