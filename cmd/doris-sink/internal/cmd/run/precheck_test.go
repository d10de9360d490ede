package run

import (
	"fmt"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// A routed table's pre-check uses the properties its loads use:
// doris.properties with the table's tables.<pattern> override (strict_mode
// selects the pre-check's rules), for "db.table" and "table" alike.
func TestRoutedPreCheckProperties(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{}
	cfg.Doris.Properties = map[string]string{"strict_mode": "false", "timezone": "UTC"}
	cfg.Tables = map[string]config.TableOverride{"strict_*": {Properties: map[string]string{"strict_mode": "true"}}}
	props := routedProps(cfg)
	for table, want := range map[string]string{
		"strict_a":    "map[strict_mode:true timezone:UTC]",
		"db.strict_a": "map[strict_mode:true timezone:UTC]",
		"other":       "map[strict_mode:false timezone:UTC]",
	} {
		if got := fmt.Sprint(props(table)); got != want {
			t.Errorf("properties of %s: %s, want %s", table, got, want)
		}
	}
}
