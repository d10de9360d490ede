package table

import (
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris/schema"
)

func fuzzTables(t *testing.T) []*Table {
	return []*Table{
		newTable(t, schema.UniqueKeys, []string{"k"}, map[string]string{"function_column.sequence_col": "s"},
			col("k", "INT NOT NULL"), col("v", "VARCHAR(8)"), col("s", "BIGINT"), col("d", "DECIMAL(6,2)"), col("t", "DATETIME(3)")),
		newTable(t, schema.AggregateKeys, []string{"k"}, nil,
			col("k", "LARGEINT"), col("v", "VARCHAR(8) REPLACE_IF_NOT_NULL"), col("s", "BIGINT SUM"), col("d", "DECIMAL(6,2) MAX"), col("t", "DATE MIN")),
	}
}

// fuzzSpec derives headers from a small selector so the fuzzer explores
// header combinations too.
func fuzzSpec(format string, sel uint8, columns, where string) LoadSpec {
	h := hdr("format", format)
	if sel&1 != 0 {
		h.Set("column_separator", ",")
	}
	if sel&2 != 0 {
		h.Set("enclose", `"`)
		h.Set("escape", `\`)
	}
	if sel&4 != 0 {
		h.Set("strict_mode", "true")
	}
	if sel&8 != 0 {
		h.Set("strip_outer_array", "true")
	}
	if sel&16 != 0 {
		h.Set("trim_double_quotes", "true")
	}
	if sel&32 != 0 {
		h.Set("jsonpaths", `["$.k","$.v"]`)
		h.Set("columns", "k,v")
	}
	if columns != "" {
		h.Set("columns", columns)
	}
	if where != "" {
		h.Set("where", where)
	}
	spec, err := ParseLoadSpec(h)
	if err != nil {
		panic(err)
	}
	return spec
}

func fuzzOne(t *testing.T, format string, sel uint8, columns, where, body string) {
	for _, tb := range fuzzTables(t) {
		b, err := tb.Prepare(fuzzSpec(format, sel, columns, where), strings.NewReader(body))
		if err != nil {
			continue
		}
		if b.FilteredRows+b.UnselectedRows > b.TotalRows || b.LoadBytes != int64(len(body)) {
			t.Fatalf("inconsistent counters %+v for %q", b, body)
		}
		if int64(b.dup.len()) != b.LoadedRows() {
			t.Fatalf("staged %d rows, counters say %d", b.dup.len(), b.LoadedRows())
		}
		tb.Apply(b)
		_ = tb.Rows()
	}
}

func FuzzPrepareCSV(f *testing.F) {
	f.Add(uint8(1), "", "", "1,a,1,1.5,2024-01-01\n2,b,2,x,\\N\n")
	f.Add(uint8(3), "", "k > 0", "1,\"a,b\",1,1,2024-01-01 00:00:00.1234\n")
	f.Add(uint8(5), "k,v,s,tmp,d=tmp*2", "v IS NOT NULL OR s IN (1,2)", "1,a,1,2\n")
	f.Fuzz(func(t *testing.T, sel uint8, columns, where, body string) {
		fuzzOne(t, "csv", sel, columns, where, body)
	})
}

func FuzzPrepareJSON(f *testing.F) {
	f.Add(uint8(0), "", "", `{"k":1,"v":"a","s":1,"d":1.5,"t":"2024-01-01"}`)
	f.Add(uint8(8), "", "", `[{"k":1},{"k":"2","d":"9999.999"}]`)
	f.Add(uint8(32), "", "k != 3", `{"k":3,"v":"x"}`+"\n"+`{"k":`)
	f.Fuzz(func(t *testing.T, sel uint8, columns, where, body string) {
		fuzzOne(t, "json", sel, columns, where, body)
	})
}
