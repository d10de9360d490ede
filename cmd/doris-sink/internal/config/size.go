package config

import (
	"fmt"
	"strconv"
	"strings"
)

// ByteSize is a size in bytes written like "256MiB", "1GB" or "1048576".
type ByteSize int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	// Longest suffixes first so "MiB" is not read as "B".
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"TB", 1000 * 1000 * 1000 * 1000},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseSize parses a non-negative size: an integer with an optional unit
// B, KB/MB/GB/TB (powers of 1000), KiB/MiB/GiB/TiB or K/M/G/T (powers of
// 1024). Units are case-insensitive; spaces between number and unit are
// allowed. Flink-style "10mb" and "1gb" parse as powers of 1000.
func ParseSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range sizeUnits {
		if len(t) > len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			mult = u.mult
			t = strings.TrimSpace(t[:len(t)-len(u.suffix)])
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a size: want a non-negative integer with an optional unit (B, KiB, MiB, GiB, KB, MB, GB)")
	}
	if n > 0 && mult > (1<<63-1)/n {
		return 0, fmt.Errorf("size overflows int64")
	}
	return ByteSize(n * mult), nil
}

// String prints the size with the largest binary unit that divides it.
func (b ByteSize) String() string {
	for _, u := range []struct {
		s string
		m int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && int64(b)%u.m == 0 {
			return strconv.FormatInt(int64(b)/u.m, 10) + u.s
		}
	}
	return strconv.FormatInt(int64(b), 10) + "B"
}

// MarshalText prints String, so JSON dumps read like the config file.
func (b ByteSize) MarshalText() ([]byte, error) { return []byte(b.String()), nil }
