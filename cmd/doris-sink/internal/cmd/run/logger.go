package run

import (
	"io"
	"log/slog"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
)

// NewLogger returns the slog logger of log.level and log.format (text or
// json), writing to w. Every line passes through doris.Redact (URL
// userinfo, Authorization-like headers, password= parameters): the logger
// reaches the Doris client, its retryablehttp, the loader and the Kafka
// connector (Build), whose errors may quote URLs.
func NewLogger(c config.Log, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if c.Level != "" {
		if err := level.UnmarshalText([]byte(c.Level)); err != nil {
			return nil, &config.KeyError{Key: "log.level", Value: c.Level, Allowed: "want debug, info, warn or error"}
		}
	}
	ho := &slog.HandlerOptions{Level: level}
	switch c.Format {
	case "", "text":
		return slog.New(doris.RedactingHandler(slog.NewTextHandler(w, ho))), nil
	case "json":
		return slog.New(doris.RedactingHandler(slog.NewJSONHandler(w, ho))), nil
	}
	return nil, &config.KeyError{Key: "log.format", Value: c.Format, Allowed: "want text or json"}
}
