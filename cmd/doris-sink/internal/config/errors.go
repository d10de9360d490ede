package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/doris-sink/doris-sink/doris"
)

// KeyError is an invalid value of one key.
type KeyError struct {
	// Key is the config key, e.g. "delivery.guarantee".
	Key string
	// Value is the rejected value as text (secrets are never included).
	Value string
	// Allowed says what the key accepts.
	Allowed string
}

// Error returns `<key>: <value> is invalid; <allowed>`.
func (e *KeyError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: missing; %s", e.Key, e.Allowed)
	}
	return fmt.Sprintf("%s: %q is invalid; %s", e.Key, e.Value, e.Allowed)
}

// ConflictError is a combination of keys that cannot work together.
type ConflictError struct {
	// Keys are the conflicting keys with their values, "key=value".
	Keys []string
	// Reason says why.
	Reason string
	// Fix says the way out.
	Fix string
}

// Error names both keys, why, and the way out.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s: %s; %s", strings.Join(e.Keys, " with "), e.Reason, e.Fix)
}

// UnknownKeyError is a key no doris-sink version knows: a typo or an
// unsupported Flink option.
type UnknownKeyError struct {
	Key    string
	Source string // "file", "env" or "flags"
	// Line is the key's line in a config file (0: unknown or not a file).
	Line int
	// Hint says what is wrong when it is not a typo ("" when nothing is
	// known): a section given a value, a section's key at the top level.
	Hint string
}

// Error names the key, where it came from, and what is wrong.
func (e *UnknownKeyError) Error() string {
	src := e.Source
	if e.Line > 0 {
		src += " line " + strconv.Itoa(e.Line)
	}
	if e.Hint != "" {
		return fmt.Sprintf("%s: unknown key (from %s): %s", e.Key, src, e.Hint)
	}
	return fmt.Sprintf("%s: unknown key (from %s); see docs/configuration.md for the keys and Flink aliases", e.Key, src)
}

// FileError is a config file or secret file that cannot be read or parsed.
type FileError struct {
	Key  string // the key naming the file, "" for the config file itself
	Path string
	Err  error
}

// Error names the file.
func (e *FileError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("config file %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s: read %s: %v", e.Key, e.Path, e.Err)
}

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }

// IsConfigError reports whether err (or any error it joins) comes from
// loading or validating the configuration.
func IsConfigError(err error) bool {
	var (
		ke *KeyError
		ce *ConflictError
		ue *UnknownKeyError
		fe *FileError
	)
	return errors.As(err, &ke) || errors.As(err, &ce) || errors.As(err, &ue) || errors.As(err, &fe)
}

// errList collects errors in order.
type errList []error

// add appends err. The values a *KeyError or *ConflictError quotes pass
// through doris.Redact first: whatever key they come from, a
// "user:password@host" (with or without a scheme) never reaches the text.
func (l *errList) add(err error) {
	switch e := err.(type) {
	case nil:
		return
	case *KeyError:
		e.Value = doris.Redact(e.Value)
	case *ConflictError:
		for i, k := range e.Keys {
			e.Keys[i] = doris.Redact(k)
		}
	}
	*l = append(*l, err)
}

func (l errList) err() error { return errors.Join(l...) }

// errorKeys returns the config keys err is about ("" for an error of no
// key).
func errorKeys(err error) []string {
	var ke *KeyError
	var ce *ConflictError
	var fe *FileError
	switch {
	case errors.As(err, &ke):
		return []string{ke.Key}
	case errors.As(err, &ce):
		keys := make([]string, len(ce.Keys))
		for i, k := range ce.Keys {
			keys[i], _, _ = strings.Cut(k, "=")
		}
		return keys
	case errors.As(err, &fe):
		return []string{fe.Key}
	}
	return []string{""}
}
