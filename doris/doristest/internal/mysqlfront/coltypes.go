package mysqlfront

import (
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// Column definitions of a result set, as a Doris FE writes them
// (fe MysqlSerializer.writeField): charset, column length, MySQL type and
// decimals come from the column's Doris type; flags are always 0.
//
//	Doris type            MySQL type (PrimitiveType.toMysqlType)  length       decimals
//	BOOLEAN, TINYINT      TINY                                    1, 4         0
//	SMALLINT              SHORT                                   6            0
//	INT                   LONG                                    11           0
//	BIGINT                LONGLONG                                20           0
//	LARGEINT              STRING (use_mysql_bigint_for_largeint off) 255       0
//	FLOAT / DOUBLE        FLOAT / DOUBLE                          12 / 22      31
//	DECIMAL(p,s)          NEWDECIMAL                              p+2 (s>0) or p+1  s
//	DATE                  DATE                                    10           0
//	DATETIME(p)           DATETIME                                19           p
//	CHAR, VARCHAR         STRING                                  255          0
//	STRING                BLOB                                    255          0
//	JSON, VARIANT         JSON                                    255          0
//	anything else         STRING                                  255          0
//
// Charset (Type.getMysqlResultSetFieldCharsetIndex): 33 (utf8) for the
// character types, JSON and LARGEINT; 63 (binary) for numbers and dates.
type colDef struct {
	typ      byte
	length   uint32
	decimals uint8
	charset  uint16
}

// dorisColDef is the column definition of Doris type t ("DECIMAL(10,2)",
// "DATETIME(3)", "BIGINT").
func dorisColDef(t string) colDef {
	base, args := splitType(t)
	switch base {
	case "BOOLEAN", "BOOL":
		return colDef{mysql.MYSQL_TYPE_TINY, 1, 0, 63}
	case "TINYINT":
		return colDef{mysql.MYSQL_TYPE_TINY, 4, 0, 63}
	case "SMALLINT":
		return colDef{mysql.MYSQL_TYPE_SHORT, 6, 0, 63}
	case "INT", "INTEGER":
		return colDef{mysql.MYSQL_TYPE_LONG, 11, 0, 63}
	case "BIGINT":
		return colDef{mysql.MYSQL_TYPE_LONGLONG, 20, 0, 63}
	case "LARGEINT":
		return colDef{mysql.MYSQL_TYPE_STRING, 255, 0, 33}
	case "FLOAT":
		return colDef{mysql.MYSQL_TYPE_FLOAT, 12, 31, 63}
	case "DOUBLE":
		return colDef{mysql.MYSQL_TYPE_DOUBLE, 22, 31, 63}
	case "DECIMAL", "DECIMALV2", "DECIMALV3", "DECIMAL32", "DECIMAL64", "DECIMAL128", "DECIMAL128I", "DECIMAL256":
		p, s := typeArgs(args, 9, 0)
		l := uint32(p + 1)
		if s > 0 {
			l = uint32(p + 2)
		}
		return colDef{mysql.MYSQL_TYPE_NEWDECIMAL, l, uint8(s), 63}
	case "DATE", "DATEV2":
		return colDef{mysql.MYSQL_TYPE_DATE, 10, 0, 63}
	case "DATETIME", "DATETIMEV2":
		p, _ := typeArgs(args, 0, 0)
		return colDef{mysql.MYSQL_TYPE_DATETIME, 19, uint8(p), 63}
	case "STRING", "TEXT":
		return colDef{mysql.MYSQL_TYPE_BLOB, 255, 0, 33}
	case "JSON", "JSONB", "VARIANT":
		return colDef{mysql.MYSQL_TYPE_JSON, 255, 0, 33}
	}
	return colDef{mysql.MYSQL_TYPE_STRING, 255, 0, 33}
}

// splitType splits "DECIMAL(10,2)" into "DECIMAL" and "(10,2)", upper case.
func splitType(t string) (base, args string) {
	t = strings.ToUpper(strings.TrimSpace(t))
	if i := strings.IndexAny(t, "(<"); i >= 0 {
		return strings.TrimSpace(t[:i]), t[i:]
	}
	return t, ""
}

// typeArgs reads "(a,b)", "(a)" or "" with defaults.
func typeArgs(args string, defA, defB int) (int, int) {
	a, b := defA, defB
	args = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(args), "("), ")")
	if args == "" {
		return a, b
	}
	parts := strings.Split(args, ",")
	if n, err := strconv.Atoi(strings.TrimSpace(parts[0])); err == nil {
		a = n
	}
	if len(parts) > 1 {
		if n, err := strconv.Atoi(strings.TrimSpace(parts[1])); err == nil {
			b = n
		}
	}
	return a, b
}

// dorisTypeOfValue is the Doris type of a literal value: integers by
// magnitude (Doris types the literal 5 as TINYINT), decimals as
// DECIMAL(p,s) of their digits, text as VARCHAR.
func dorisTypeOfLiteral(t token) string {
	switch t.kind {
	case tokNumber:
		if n, err := strconv.ParseInt(t.val, 10, 64); err == nil {
			switch {
			case n >= -128 && n <= 127:
				return "TINYINT"
			case n >= -32768 && n <= 32767:
				return "SMALLINT"
			case n >= -2147483648 && n <= 2147483647:
				return "INT"
			}
			return "BIGINT"
		}
		if i := strings.IndexByte(t.val, '.'); i >= 0 && !strings.ContainsAny(t.val, "eE") {
			intDigits := strings.TrimLeft(t.val[:i], "0")
			s := len(t.val) - i - 1
			p := max(len(intDigits)+s, 1)
			return "DECIMAL(" + strconv.Itoa(p) + "," + strconv.Itoa(s) + ")"
		}
		return "DOUBLE"
	case tokString:
		return "VARCHAR(" + strconv.Itoa(len(t.val)) + ")"
	}
	return ""
}

// dorisTypeOfValue is the type of a computed value with no other evidence:
// BIGINT, DOUBLE or VARCHAR, the old value-based inference.
func dorisTypeOfValues(rows [][]any, col int) string {
	switch inferType(rows, col) {
	case colInt:
		return "BIGINT"
	case colDouble:
		return "DOUBLE"
	}
	return "VARCHAR(65533)"
}
