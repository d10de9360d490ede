package config

import (
	"slices"
	"strings"
)

// validateFor validates c for need; with OnlyDoris it keeps only the
// errors whose every key is one such a command reads (doris.*, job.name): every
// rule is still checked in one place (validate), and a command reading
// the Doris keys alone is not refused by a rule of the others.
func (c *Config) validateFor(need Need) error {
	err := c.validate(need)
	if err == nil || need&OnlyDoris == 0 {
		return err
	}
	var kept errList
	for _, e := range unjoin(err) {
		if !slices.ContainsFunc(errorKeys(e), func(k string) bool {
			return k != "job.name" && !strings.HasPrefix(k, "doris.")
		}) {
			kept.add(e) // every key it names is read (a conflict with a run key is not)
		}
	}
	return kept.err()
}

// unjoin returns the errors errors.Join joined, at every depth (a rule
// group such as validateCDC joins its own), so each is filtered alone (err
// alone otherwise).
func unjoin(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, unjoin(e)...)
	}
	return out
}
