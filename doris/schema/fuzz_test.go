package schema

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzParseCreateTable: parsing never panics, errors are *ParseError, and
// every parsed table survives CreateTableSQL → ParseCreateTable unchanged.
func FuzzParseCreateTable(f *testing.F) {
	for _, s := range []string{articleDDL, showCreateDDL, "CREATE TABLE t (a INT)", "create table `a``b`.c (x struct<`y z`:map<int,string>> comment '\\n')"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ddl string) {
		tb, err := ParseCreateTable(ddl)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		_ = tb.Validate()
		sql := tb.CreateTableSQL()
		back, err := ParseCreateTable(sql)
		if err != nil {
			t.Fatalf("reparse: %v\n%s", err, sql)
		}
		if !reflect.DeepEqual(back, tb) {
			t.Fatalf("round trip differs:\n got %+v\nwant %+v\nSQL:\n%s", back, tb, sql)
		}
	})
}
