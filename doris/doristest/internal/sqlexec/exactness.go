package sqlexec

import "strings"

// The SQL engine computes DECIMAL arithmetic in float64 and integer
// arithmetic in int64; where that cannot give Doris's answer the emulator
// refuses the query with an error starting with NotEmulatedPrefix instead of
// answering wrongly (issue 26).

// NotEmulatedPrefix starts every refusal of a query the emulator's SQL
// engine cannot evaluate exactly as Doris does.
const NotEmulatedPrefix = "the Doris emulator cannot evaluate this query exactly: "

// MaxExactDigits is the number of significant decimal digits a float64
// carries exactly (DBL_DIG): a DECIMAL column value with more is refused
// where a query reads it, as SQLite would round it.
const MaxExactDigits = 15

// SignificantDigits counts the significant digits of a decimal number's text
// ("-0012.3400" has 4); ok is false when s is not a plain decimal number.
func SignificantDigits(s string) (n int, ok bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimLeft(s, "+-")
	if s == "" || strings.ContainsAny(s, "eE") {
		return 0, false
	}
	intPart, frac, _ := strings.Cut(s, ".")
	digits := intPart + frac
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	digits = strings.Trim(digits, "0")
	return len(digits), true
}
