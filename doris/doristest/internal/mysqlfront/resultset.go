package mysqlfront

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/go-mysql-org/go-mysql/mysql"
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
	rows  [][]any
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
		case colInt:
			n, ok := toInt64(v)
			if !ok {
				return nil, fmt.Errorf("column %d: %T is not an integer", i, v)
			}
			data = binary.LittleEndian.AppendUint64(data, uint64(n))
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
