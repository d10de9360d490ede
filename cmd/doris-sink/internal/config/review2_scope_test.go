package config

import (
	"strings"
	"testing"
)

// review2: a rule group returning several errors at once (validateCDC)
// is filtered error by error: with a bad doris key beside a bad run-only
// key, OnlyDoris reports the doris one alone.
func TestReview2OnlyDorisFiltersNestedErrors(t *testing.T) {
	t.Parallel()
	_, err := load(t, "doris: {create_table_buckets: -1}\nrecords: {schema_evolution: bogus}\n", nil, nil, OnlyDoris)
	keyError(t, err, "doris.create_table_buckets")
	if strings.Contains(err.Error(), "records.schema_evolution") {
		t.Fatalf("OnlyDoris kept the run-only error: %v", err)
	}
}
