package doristest

import (
	"encoding/json"
	"net/http"
	"strconv"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func decodeInto(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }
