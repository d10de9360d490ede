package mysqlfront

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/doris-sink/doris-sink/doris/doristest/internal/sqlexec"
)

// Column types of a result set. colInfer picks one from the values: BIGINT
// when every non-NULL value is an int64, DOUBLE when they are numbers with a
// float among them, VARCHAR otherwise (numbers then rendered as text).
const (
	colInfer  byte = 0
	colString      = mysql.MYSQL_TYPE_VAR_STRING
	colInt         = mysql.MYSQL_TYPE_LONGLONG
	colDouble      = mysql.MYSQL_TYPE_DOUBLE
)

// resultSpec is a result set before encoding: labels, optional fixed types
// (nil = infer every column) and rows of nil, int64, float64 or string.
type resultSpec struct {
	names []string
	types []byte
	// dtypes, when set, holds each column's Doris type ("" = use types /
	// infer); a Doris type decides the column definition (coltypes.go) and
	// the binary encoding.
	dtypes []string
	rows   [][]any
}

// stringCols declares every column VARCHAR, as Doris does for SHOW statements.
func stringCols(names ...string) resultSpec {
	t := make([]byte, len(names))
	for i := range t {
		t[i] = colString
	}
	return resultSpec{names: names, types: t}
}

// build encodes the result set in the text or binary row protocol.
// go-mysql's BuildSimpleResultset is not used: it breaks on empty binary
// results, on a NULL in the first binary row and on mixed-type columns.
func (r resultSpec) build(binaryProto bool) (*mysql.Result, error) {
	types := make([]byte, len(r.names))
	for i := range types {
		if r.types != nil && r.types[i] != colInfer {
			types[i] = r.types[i]
		} else {
			types[i] = inferType(r.rows, i)
		}
	}
	rs := mysql.NewResultset(len(r.names))
	for i, n := range r.names {
		if r.dtypes != nil && r.dtypes[i] != "" {
			d := dorisColDef(r.dtypes[i])
			types[i] = d.typ
			rs.Fields[i] = &mysql.Field{Name: []byte(n), OrgName: []byte(n), Type: d.typ, Charset: d.charset,
				ColumnLength: d.length, Decimal: d.decimals}
			continue
		}
		f := &mysql.Field{Name: []byte(n), Type: types[i], Charset: 33, ColumnLength: 65533}
		if types[i] != colString {
			f.Charset = 63
			f.Flag = mysql.BINARY_FLAG
			f.ColumnLength = 20
			if types[i] == colDouble {
				f.Decimal = 31
			}
		}
		rs.Fields[i] = f
	}
	for ri, row := range r.rows {
		if len(row) != len(r.names) {
			return nil, fmt.Errorf("row %d has %d values for %d columns", ri, len(row), len(r.names))
		}
		var data []byte
		var err error
		if binaryProto {
			data, err = binaryRow(types, row)
		} else {
			data, err = textRow(types, row)
		}
		if err != nil {
			return nil, err
		}
		rs.RowDatas = append(rs.RowDatas, data)
	}
	return mysql.NewResult(rs), nil
}

func inferType(rows [][]any, col int) byte {
	t := byte(colInfer)
	for _, row := range rows {
		if col >= len(row) {
			continue
		}
		switch row[col].(type) {
		case nil:
		case int64, int:
			if t == colInfer {
				t = colInt
			}
		case float64:
			if t == colInfer || t == colInt {
				t = colDouble
			}
		default:
			return colString
		}
	}
	if t == colInfer {
		return colString
	}
	return t
}

func textRow(types []byte, row []any) ([]byte, error) {
	var data []byte
	for i, v := range row {
		if v == nil {
			data = append(data, 0xfb)
			continue
		}
		s, err := textValue(types[i], v)
		if err != nil {
			return nil, err
		}
		data = append(data, mysql.PutLengthEncodedString([]byte(s))...)
	}
	return data, nil
}

func textValue(_ byte, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case bool:
		if x {
			return "1", nil
		}
		return "0", nil
	}
	return "", fmt.Errorf("unsupported result value %T", v)
}

func binaryRow(types []byte, row []any) ([]byte, error) {
	bitmap := make([]byte, (len(row)+7+2)/8)
	data := []byte{0}
	data = append(data, bitmap...)
	for i, v := range row {
		if v == nil {
			pos := i + 2
			data[1+pos/8] |= 1 << (uint(pos) % 8)
			continue
		}
		switch types[i] {
		case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_LONG, colInt:
			n, ok := toInt64(v)
			if !ok {
				return nil, fmt.Errorf("column %d: %T is not an integer", i, v)
			}
			switch types[i] {
			case mysql.MYSQL_TYPE_TINY:
				data = append(data, byte(n))
			case mysql.MYSQL_TYPE_SHORT:
				data = binary.LittleEndian.AppendUint16(data, uint16(n))
			case mysql.MYSQL_TYPE_LONG:
				data = binary.LittleEndian.AppendUint32(data, uint32(n))
			default:
				data = binary.LittleEndian.AppendUint64(data, uint64(n))
			}
		case mysql.MYSQL_TYPE_FLOAT:
			f, ok := toFloat64(v)
			if !ok {
				return nil, fmt.Errorf("column %d: %T is not a number", i, v)
			}
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(f)))
		case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_DATETIME:
			s, err := textValue(types[i], v)
			if err != nil {
				return nil, err
			}
			tm, ok := sqlexec.ParseDatetime(s)
			if !ok {
				return nil, fmt.Errorf("column %d: %q is not a date", i, s)
			}
			data = appendBinaryTime(data, tm, types[i] == mysql.MYSQL_TYPE_DATETIME)
		case colDouble:
			f, ok := toFloat64(v)
			if !ok {
				return nil, fmt.Errorf("column %d: %T is not a number", i, v)
			}
			data = binary.LittleEndian.AppendUint64(data, math.Float64bits(f))
		default:
			s, err := textValue(types[i], v)
			if err != nil {
				return nil, err
			}
			data = append(data, mysql.PutLengthEncodedString([]byte(s))...)
		}
	}
	return data, nil
}

// appendBinaryTime encodes a DATE or DATETIME value of the binary row
// protocol: a length (4, 7 or 11) then year(2) month day [hour minute second
// [microseconds(4)]].
func appendBinaryTime(data []byte, t time.Time, withTime bool) []byte {
	us := t.Nanosecond() / 1000
	n := byte(4)
	switch {
	case withTime && us != 0:
		n = 11
	case withTime && (t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0):
		n = 7
	}
	data = append(data, n)
	data = binary.LittleEndian.AppendUint16(data, uint16(t.Year()))
	data = append(data, byte(t.Month()), byte(t.Day()))
	if n >= 7 {
		data = append(data, byte(t.Hour()), byte(t.Minute()), byte(t.Second()))
	}
	if n == 11 {
		data = binary.LittleEndian.AppendUint32(data, uint32(us))
	}
	return data
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

func toFloat64(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	}
	return 0, false
}
