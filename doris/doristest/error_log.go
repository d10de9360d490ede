package doristest

// Behavior: a load with filtered rows gets an ErrorURL
// http://<be>/api/_load_error_log?file=__shard_<n>/error_log_insert_stmt_<id>
// (docs/doris-facts.md §2.1 #19, §8); GET on it returns the rejected-row lines as
// text. Unknown files answer 404. Logs are kept until Close.

import (
	"fmt"
	"net/http"
	"strings"
)

func (s *Server) storeErrorLog(label string, lines []string) string {
	s.mu.Lock()
	s.nextErrLog++
	file := fmt.Sprintf("__shard_%d/error_log_insert_stmt_%s_%d", s.nextErrLog%10, strings.ReplaceAll(label, ":", "_"), s.nextErrLog)
	s.errorLogs[file] = strings.Join(lines, "\n") + "\n"
	s.mu.Unlock()
	return s.BEURL() + "/api/_load_error_log?file=" + file
}

func (s *Server) beErrorLog(w http.ResponseWriter, r *http.Request) {
	file := r.URL.Query().Get("file")
	s.mu.Lock()
	text, ok := s.errorLogs[file]
	s.mu.Unlock()
	if !ok {
		http.Error(w, "error log file not found: "+file, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(text))
}
