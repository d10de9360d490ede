package kafka

import (
	"testing"
)

// The compact fast path of debeziumSource answers like encoding/json when
// it answers at all, and declines (ok false) what it cannot decide.
func TestDebeziumSourceCompactAgreesWithDecoder(t *testing.T) {
	t.Parallel()
	for _, v := range []string{
		`{"source":{"db":"shop","table":"orders"},"op":"c"}`,
		`{"schema":{"type":"struct"},"payload":{"before":null,"after":{"id":1},"source":{"db":"shop","table":"items"},"op":"c"}}`,
		`{"source":null,"payload":{"source":{"db":"a","table":"b"}}}`,
		`{"source":{"db":"a","table":"b"},"source":{"db":"c","table":"d"}}`, // later duplicate wins
		`{"source":{"db":null,"table":"t"}}`,
		`{"source":{"db":"a"}}`,
		`{"source":{"table":"t"}}`,                // no db: declined (encoding/json also matches "DB")
		`{"source":{"db":"a","table":"t\u00e9"}}`, // an escape: declined
		`{"source":{"db":"a","table":"té"}}`,      // not ASCII: declined
		`{"source":{"db":"a","table":1}}`,
		`{"source":{"db":"a","table":"t"},"x":tru}`, // invalid: declined
		`{"source": {"db":"a","table":"t"}}`,        // not compact: declined
		`{"source":{"db":"a","table":"t"}`,
		`{"source":{"db":"a","table":"t"}}x`,
		`{"Source":{"db":"a","table":"t"}}`,
		`{}`, `{`, `[]`, `null`, ``, `{"payload":"x"}`, `{"source":"x"}`,
	} {
		fdb, ftable, fok := debeziumSourceCompact([]byte(v))
		sdb, stable, sok := debeziumSource([]byte(v))
		if fok && (!sok || fdb != sdb || ftable != stable) {
			t.Errorf("%s: fast (%q, %q, %v), encoding/json (%q, %q, %v)", v, fdb, ftable, fok, sdb, stable, sok)
		}
	}
	if db, table, ok := debeziumSourceCompact([]byte(`{"payload":{"source":{"db":"shop","table":"orders"}}}`)); !ok || db != "shop" || table != "orders" {
		t.Errorf("compact payload: (%q, %q, %v), want the fast path to answer", db, table, ok)
	}
}

func TestExpandTemplate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ tpl, db, table, want string }{
		{"{db}_{table}", "shop", "orders", "shop_orders"},
		{"{table}", "x", "t", "t"},
		{"raw_{table}_{db}", "d", "{db}", "raw_{db}_d"}, // one pass: a value is not expanded again
		{"{d{table}}", "a", "b", "{db}"},
	} {
		if got := expandTemplate(tc.tpl, tc.db, tc.table); got != tc.want {
			t.Errorf("expandTemplate(%q, %q, %q) = %q, want %q", tc.tpl, tc.db, tc.table, got, tc.want)
		}
	}
}

func FuzzDebeziumSourceCompact(f *testing.F) {
	f.Add([]byte(`{"source":{"db":"shop","table":"orders"},"op":"c"}`))
	f.Add([]byte(`{"payload":{"source":{"db":"a","table":"b"}}}`))
	f.Fuzz(func(t *testing.T, v []byte) {
		fdb, ftable, fok := debeziumSourceCompact(v)
		sdb, stable, sok := debeziumSource(v)
		if fok && (!sok || fdb != sdb || ftable != stable) {
			t.Errorf("%q: fast (%q, %q), encoding/json (%q, %q, %v)", v, fdb, ftable, sdb, stable, sok)
		}
	})
}
