package fileload

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// splittable refuses, before anything begins, a Stream Load header whose
// meaning does not survive the load's cutting of the files into chunks on
// '\n' and spreading them over W bodies.
//
//   - line_delimiter other than "\n" (written `\n` or `\x0a`): the chunks are cut, and a file's
//     missing last newline added, on '\n' (be/src/vec/exec/format/csv/
//     csv_reader.cpp splits on the header's delimiter, any string). "\r\n"
//     is refused too: a value may then hold a bare '\n', where a cut falls.
//   - enclose: an enclosed value may hold '\n' (csv_reader.cpp's
//     enclose-aware line reader), so a cut may fall inside it.
//   - skip_lines: be/src/http/action/stream_load.cpp reads HTTP_SKIP_LINES
//     into TStreamLoadPutRequest.skip_lines, and CsvReader
//     (be/src/vec/exec/format/csv/csv_reader.cpp) skips that many lines of
//     a range that starts at offset 0 — each Stream Load BODY: each of the W
//     bodies would lose its first lines (data rows mid-file), and the header
//     of a body's second file would be loaded as a row. Strip headers from
//     the files instead.
func splittable(key, value string) error {
	switch strings.ToLower(key) {
	case "line_delimiter":
		if strings.ContainsAny(value, "\r\n") {
			return fmt.Errorf("header line_delimiter %q: a header value cannot hold a raw newline (HTTP refuses it); "+
				"write it escaped, as Doris reads it: \\n", value)
		}
		if feSeparator(value) != "\n" {
			return fmt.Errorf("header line_delimiter %q: the load cuts files into chunks on \"\\n\" and supports only "+
				"that line delimiter (a cut would split or glue rows); convert the files to \"\\n\"-terminated lines",
				value)
		}
	case "enclose":
		return fmt.Errorf("header enclose %q: an enclosed value may hold a newline, where the load may cut a file "+
			"into chunks (splitting the row); load such files with one Stream Load, not doris-sink load", value)
	case "skip_lines":
		return fmt.Errorf("header skip_lines %q: Doris skips the lines at the start of each Stream Load body, and "+
			"the load sends each file in chunks over several bodies (data rows would be skipped, later files' "+
			"header lines loaded); remove the header lines from the files instead", value)
	}
	return nil
}

// feSeparator decodes a separator header as the FE does
// (fe/fe-core/src/main/java/org/apache/doris/analysis/Separator.java
// convertSeparator, docs/doris-facts.md "Separators"): `\x`/`\X` hex, or
// the escapes \\ \' \" \r \t \n unescaped. A value the FE refuses
// (bad hex) comes back as given.
func feSeparator(v string) string {
	if strings.HasPrefix(strings.ToUpper(v), `\X`) {
		b, err := hex.DecodeString(strings.NewReplacer(`\x`, "", `\X`, "").Replace(v))
		if err != nil || len(b) == 0 {
			return v
		}
		return string(b)
	}
	return strings.NewReplacer(`\\`, `\`, `\'`, `'`, `\"`, `"`, `\r`, "\r", `\t`, "\t", `\n`, "\n").Replace(v)
}
