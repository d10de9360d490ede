package check

import (
	"context"
	"slices"
	"strings"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// checkRegistry asks the Schema Registry of a registry format for its
// subjects, and whether the topic's value subject (TopicNameStrategy,
// <topic>-value) is there. A missing subject is a warning only: records
// are decoded by the schema id they carry, whatever subject registered it.
func checkRegistry(ctx context.Context, r *Report, cfg *config.Config) {
	if !config.IsRegistryFormat(cfg.Records.Format) {
		return
	}
	c, err := cmdutil.SchemaRegistry(cfg)
	if err != nil {
		r.add(Fail, "schema registry", "%v", err)
		return
	}
	urls := strings.Join(cfg.Records.SchemaRegistry.URLs, ",")
	subjects, err := c.Subjects(ctx)
	if err != nil {
		r.add(Fail, "schema registry", "%s unreachable or refusing: %v", urls, err)
		return
	}
	r.add(OK, "schema registry", "%s reachable (%d subjects); records.format %s", urls, len(subjects), cfg.Records.Format)
	if want := cfg.Kafka.Topic + "-value"; slices.Contains(subjects, want) {
		r.add(OK, "schema subject", "subject %s exists", want)
	} else {
		r.add(Warn, "schema subject", "no subject %s: producers with the default TopicNameStrategy have not registered a schema yet "+
			"(other strategies are fine: each record is decoded with the schema id it carries)", want)
	}
}
