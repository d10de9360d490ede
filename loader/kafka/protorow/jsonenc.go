package protorow

import (
	"encoding/base64"
	"github.com/doris-sink/doris-sink/loader/kafka/internal/jsontext"
	"math"
	"strconv"
)

// quote returns s as a JSON string (used when building plans).
func quote(s string) []byte {
	b, _ := appendString(nil, []byte(s), false)
	return b
}

// appendString appends s as a JSON string (jsontext). With validate,
// invalid UTF-8 stops it and bad is the offset of the first invalid byte in
// s; otherwise invalid bytes become U+FFFD and bad is -1.
func appendString(dst, s []byte, validate bool) (out []byte, bad int) {
	if validate {
		return jsontext.AppendValidString(dst, s)
	}
	return jsontext.AppendString(dst, s), -1
}

// appendBytes appends b as a JSON string in standard base64 with padding
// (protojson's encoding of bytes).
func appendBytes(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendFloat appends f the way encoding/json does (shortest repr that
// round-trips at the given bit size, exponent form outside [1e-6, 1e21)).
// NaN and ±Inf have no JSON number: they are written as the strings "NaN",
// "Infinity" and "-Infinity", which Doris parses into FLOAT/DOUBLE columns:
// a JSON value for a number column is parsed from its text
// (be/src/vec/data_types/serde/data_type_number_serde.cpp
// deserialize_one_cell_from_json; be/src/util/string_parser.hpp
// string_to_float_internal hands it to fast_float::from_chars, which
// accepts nan/inf/infinity in any case).
func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
