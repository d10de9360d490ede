package doris

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/doris-sink/doris-sink/doris/safetext"
)

// feAnswer decodes the JSON shapes FE and BE small answers take:
//   - RestBaseResult {"status":"OK|FAILED","msg":...} (§1.2, §3.1)
//   - ResponseBody {"msg":...,"code":N,"data":...,"count":0} (§1.2 Unauthorized, §6.1)
//   - BE 2PC {"status":"Success|<CODE>","msg":...} (§3.4)
type feAnswer struct {
	Status string          `json:"status"`
	Msg    string          `json:"msg"`
	Code   *int            `json:"code"`
	Data   json.RawMessage `json:"data"`
}

// dataString returns data as text (a JSON string unquoted, else raw).
func (a *feAnswer) dataString() string {
	var s string
	if err := json.Unmarshal(a.Data, &s); err == nil {
		return s
	}
	return string(a.Data)
}

// unauthorized reports the FE ResponseBody for an auth failure (§1.2).
func (a *feAnswer) unauthorized() bool {
	return a.Code != nil && *a.Code == http.StatusUnauthorized || a.Msg == "Unauthorized"
}

// refusal returns the code and message of an answer that is not a success:
// "Unauthorized" and the reason for the FE auth body (§1.2), status and msg
// for RestBaseResult and BE 2PC bodies (§1.2, §3.4), else msg and data for
// other ResponseBody answers (§6.1).
func (a *feAnswer) refusal() (code, msg string) {
	switch {
	case a.unauthorized():
		return "Unauthorized", a.dataString()
	case a.Status != "":
		return a.Status, a.Msg
	default:
		return a.Msg, a.dataString()
	}
}

func decodeFEAnswer(body []byte) (*feAnswer, error) {
	var a feAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("decode answer %q: %w", snippet(body), err)
	}
	return &a, nil
}

// readAnswer reads at most maxAnswerBytes of a response body and closes it.
func readAnswer(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return b, fmt.Errorf("read answer: %w", err)
	}
	return b, nil
}

// snippet bounds a body quoted in an error and escapes its control
// characters (safetext).
func snippet(b []byte) string {
	const max = 256
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		return safetext.Escape(s[:max]) + "…"
	}
	return safetext.Escape(s)
}

// httpStatusSentinel returns the sentinel for a bare non-200 status (BE
// enable_all_http_auth, §1.3; unknown paths, §8).
func httpStatusSentinel(code int) error {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		return ErrUnauthorized
	case http.StatusNotFound:
		return ErrNotFound
	}
	return nil
}
