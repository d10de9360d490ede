package table

import (
	"strings"
	"unicode/utf8"
)

// Behavior: column_separator and line_delimiter are converted by the FE, not
// the BE: the BE forwards the raw header in TStreamLoadPutRequest
// (stream_load.cpp _process_put) and StreamLoadTask.setColumnSeparator /
// setLineDelimiter run Separator.analyze(), i.e. Separator.convertSeparator
// (fe/fe-core/src/main/java/org/apache/doris/analysis/Separator.java):
//   - a value starting with `\x` or `\X` is hex: every `\x`/`\X` (any case)
//     is removed, the rest must be non-empty ("Hex str is empty"), only hex
//     digits ("Hex str format error") and of even length ("Hex str length
//     error"); each pair is one byte. Java appends (char) of the signed byte,
//     so a byte ≥ 0x80 becomes U+FF80..U+FFFF and reaches the BE UTF-8
//     encoded (three bytes) through thrift;
//   - anything else is unescaped: `\\` `\'` `\"` `\r` `\t` `\n` become the
//     character; any other `\c` stays as the two characters; a trailing lone
//     `\` stays.
// Errors are AnalysisException from streamLoadPut: the load fails with
// "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = <text>" after the
// txn was begun (it is rolled back).

const hexDigits = "0123456789ABCDEF"

// convertSeparator is Separator.convertSeparator for a non-empty header value.
func convertSeparator(v string) (string, error) {
	if !strings.HasPrefix(strings.ToUpper(v), `\X`) {
		return unescapeSeparator(v), nil
	}
	hexStr := strings.NewReplacer(`\x`, "", `\X`, "").Replace(v)
	if hexStr == "" {
		return "", feAnalysis("Hex str is empty")
	}
	for _, c := range strings.ToUpper(hexStr) {
		if !strings.ContainsRune(hexDigits, c) {
			return "", feAnalysis("Hex str format error")
		}
	}
	if len(hexStr)%2 != 0 {
		return "", feAnalysis("Hex str length error")
	}
	up := strings.ToUpper(hexStr)
	var b strings.Builder
	for i := 0; i+1 < len(up); i += 2 {
		n := byte(strings.IndexByte(hexDigits, up[i])<<4 | strings.IndexByte(hexDigits, up[i+1]))
		if n < 0x80 {
			b.WriteByte(n)
			continue
		}
		// (char) of a negative Java byte: sign-extended to 0xFF80..0xFFFF.
		b.WriteRune(rune(0xFF00 | uint16(n)))
	}
	return b.String(), nil
}

// unescapeSeparator is Separator.unescape.
func unescapeSeparator(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	slash := false
	for i := 0; i < len(v); {
		r, size := utf8.DecodeRuneInString(v[i:])
		i += size
		if slash {
			slash = false
			switch r {
			case '\\', '\'', '"':
				b.WriteRune(r)
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			default:
				b.WriteByte('\\')
				b.WriteRune(r)
			}
			continue
		}
		if r == '\\' {
			if i == len(v) {
				b.WriteByte('\\')
			} else {
				slash = true
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
