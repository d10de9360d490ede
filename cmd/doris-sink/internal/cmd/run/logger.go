package run

import (
	"io"
	"log/slog"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// NewLogger returns the slog logger of log.level and log.format (text or
// json), writing to w.
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
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, &config.KeyError{Key: "log.format", Value: c.Format, Allowed: "want text or json"}
}
