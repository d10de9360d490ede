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

// review2: a .json config with anything after its object (a second
// connector's body pasted below it) is refused; the rest was ignored.
func TestReview2ConnectJSONTrailingContentRefused(t *testing.T) {
	t.Parallel()
	body := `{"name": "o", "topics": "orders", "doris.urls": "fe1", "doris.http.port": "8030", "doris.database": "demo", "doris.topic2table.map": "orders:orders"}
{"name": "p", "config": {"doris.database": "other"}}`
	if _, err := Load(LoadOptions{File: writeFile(t, "c.json", body), Need: NeedRun}); err == nil {
		t.Fatal("a .json config with a second object after the first was accepted")
	}
}
