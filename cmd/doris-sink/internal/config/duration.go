package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// flinkUnits are the duration units Flink's TimeUtils accepts that Go's
// time.ParseDuration does not.
var flinkUnits = map[string]time.Duration{
	"ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond,
	"millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

// ParseDuration parses a Go duration ("10s", "1m30s") or a Flink one
// ("10 s", "1min", "500 ms"); a bare integer is milliseconds, as in Flink.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if d, err := time.ParseDuration(t); err == nil {
		return d, nil
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a duration")
	}
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	if unit == "" {
		return time.Duration(n) * time.Millisecond, nil
	}
	m, ok := flinkUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q", unit)
	}
	return time.Duration(n) * m, nil
}
