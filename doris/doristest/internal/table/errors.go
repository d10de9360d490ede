package table

import "fmt"

// Error is a load failure with the Doris status code that a BE would report
// (docs/doris-facts.md §2.4). Error() returns the bare text; Message() returns the
// Stream Load `Message` field form "[CODE]text" (with the FE's
// "TStatus: errCode = 2, detailMessage = " wrapping when FromFE).
type Error struct {
	Code   string // e.g. INVALID_ARGUMENT, DATA_QUALITY_ERROR, ANALYSIS_ERROR
	Msg    string
	FromFE bool // raised by FE planning (streamLoadPut), not by the BE itself
}

// Error returns the bare Doris message text.
func (e *Error) Error() string { return e.Msg }

// Message returns the text of the Stream Load response `Message` field.
// The FE errCode number is not reliable across versions (docs/doris-facts.md §2.4);
// 2 is what released builds print.
func (e *Error) Message() string {
	if e.FromFE {
		return "[" + e.Code + "]TStatus: errCode = 2, detailMessage = " + e.Msg
	}
	return "[" + e.Code + "]" + e.Msg
}

func beInvalid(format string, args ...any) *Error {
	return &Error{Code: "INVALID_ARGUMENT", Msg: fmt.Sprintf(format, args...)}
}

func feAnalysis(format string, args ...any) *Error {
	return &Error{Code: "ANALYSIS_ERROR", Msg: fmt.Sprintf(format, args...), FromFE: true}
}

func dataQuality(format string, args ...any) *Error {
	return &Error{Code: "DATA_QUALITY_ERROR", Msg: fmt.Sprintf(format, args...)}
}
