package check

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/drift"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/schema"
)

// probeLabel is looked up to test FE HTTP, auth and the database; no load
// ever uses it.
const probeLabel = "doris-sink-check-probe"

// FE config keys and Doris's defaults (docs/doris-facts.md §4, §5).
var feDefaults = map[string]int64{
	"stream_load_default_precommit_timeout_second": 3600,
	"streaming_label_keep_max_second":              43200,
	"label_num_threshold":                          2000,
	"max_running_txn_num_per_db":                   1000,
	"stream_load_default_timeout_second":           259200,
}

func checkDoris(ctx context.Context, r *Report, f *cmdutil.Factory, cfg *config.Config) {
	db, table := cfg.Doris.Database, cfg.Doris.Table
	client, err := f.Doris(cfg)
	if err != nil {
		r.add(Fail, "doris client", "%v", err)
		return
	}
	defer client.Close()
	for _, w := range cmdutil.SecurityWarnings(cfg, client) {
		r.add(Warn, "security", "%s", w)
	}
	defer func() {
		host, _, _ := net.SplitHostPort(cfg.Doris.MySQL)
		if plain, known := client.MySQLPlaintext(); plain && known && !cmdutil.IsLoopback(host) {
			r.add(Warn, "doris mysql tls", "the MySQL login to %s crossed a plaintext connection (doris.mysql_tls=%s): set doris.tls.ca_file and doris.mysql_tls: required", cfg.Doris.MySQL, client.MySQLTLS())
		}
	}()
	st, err := client.LoadState(ctx, db, probeLabel)
	switch {
	case errors.Is(err, doris.ErrUnauthorized):
		r.add(Fail, "doris auth", "user %s rejected by the FE: %v", cfg.Doris.User, err)
		return
	case errors.Is(err, doris.ErrNotFound):
		r.add(Fail, "doris database", "database %s not found: %v", db, err)
		return
	case err != nil:
		r.add(Fail, "doris fe", "FE HTTP %s unreachable or failing: %v", strings.Join(cfg.Doris.FE, ","), err)
		return
	}
	r.add(OK, "doris fe", "%s reachable, user %s accepted, database %s exists (get_load_state answered %s)", strings.Join(cfg.Doris.FE, ","), cfg.Doris.User, db, st)

	t, err := client.ShowCreateTable(ctx, db, table)
	switch {
	case errors.Is(err, doris.ErrNotFound) && cfg.Doris.CreateTable.Enabled:
		r.add(OK, "doris table", "table %s.%s does not exist yet: doris.create_table creates it from the first record's Debezium schema "+
			"(Unique Key on the record key, merge-on-write) before the first load", db, table)
	case errors.Is(err, doris.ErrNotFound):
		r.add(Fail, "doris table", "table %s.%s not found: %v", db, table, err)
	case errors.Is(err, doris.ErrUnauthorized):
		r.add(Fail, "doris mysql", "user %s rejected on %s: %v", cfg.Doris.User, cfg.Doris.MySQL, err)
	case err != nil:
		r.add(Fail, "doris mysql", "SHOW CREATE TABLE %s.%s over %s failed: %v", db, table, cfg.Doris.MySQL, err)
	default:
		r.add(OK, "doris table", "%s.%s exists: %s", db, table, describe(t))
		checkModel(r, cfg, t)
		checkDrift(r, cfg, t)
	}
	checkRouted(ctx, r, client, cfg)
	checkClocks(ctx, r, client, cfg)
}

func describe(t *schema.Table) string {
	s := fmt.Sprintf("%s KEY(%s)", t.Keys, strings.Join(t.KeyColumns, ", "))
	if t.Keys == schema.UniqueKeys {
		if t.MergeOnWrite() {
			s += ", merge-on-write"
		} else {
			s += ", merge-on-read"
		}
		if c := t.SequenceColumn(); c != "" {
			s += ", sequence column " + c
		}
	}
	return s
}

// checkModel explains what the delivery mode means for the table model
// (docs/design.md §4, docs/doris-facts.md §7).
func checkModel(r *Report, cfg *config.Config, t *schema.Table) {
	eos := cfg.Delivery.Guarantee == config.ExactlyOnce
	props := cfg.Doris.Properties
	switch t.Keys {
	case schema.DuplicateKeys, schema.AggregateKeys:
		what := "every record is a row"
		if t.Keys == schema.AggregateKeys {
			what = "aggregates (SUM, COUNT...) add up every record"
		}
		if eos {
			r.add(OK, "delivery vs model", "%s table under exactly-once: %s once; records produced twice upstream are still counted twice (transport exactly-once is not business dedup)", t.Keys, what)
		} else {
			r.add(Warn, "delivery vs model", "%s table under at-least-once: after a crash, records re-sent are counted twice (%s); use exactly-once or a Unique Key table", t.Keys, what)
		}
	case schema.UniqueKeys:
		seq := t.SequenceColumn() != "" || props["function_column.sequence_col"] != ""
		if !eos {
			r.add(OK, "delivery vs model", "Unique Key table under at-least-once: a record re-sent after a crash upserts the same key again (harmless)")
		} else {
			r.add(OK, "delivery vs model", "Unique Key table under exactly-once: each record is applied once, in checkpoint order")
		}
		if seq {
			r.add(OK, "late events", "sequence column set: an older event cannot overwrite newer state")
		} else {
			r.add(Warn, "late events", "Unique Key without a sequence column: the last load wins, so a late (older) event overwrites newer state; add function_column.sequence_col (table property or doris.properties)")
		}
		if t.SequenceColumn() == schema.SequenceColumn && props["function_column.sequence_col"] == "" {
			r.add(Fail, "sequence column", "the table has a hidden sequence column (function_column.sequence_type): Doris refuses loads without doris.properties.function_column.sequence_col")
		}
	}
	if cfg.Records.Format == config.RecordsDebezium || cfg.Records.Envelope == config.EnvelopeDebezium {
		src := "records.format debezium"
		if cfg.Records.Envelope == config.EnvelopeDebezium {
			src = "records.envelope debezium"
		}
		if t.HasDeleteSign() {
			r.add(OK, "deletes", "%s: op=d rows set %s = 1", src, schema.DeleteSignColumn)
		} else {
			r.add(Fail, "deletes", "%s needs a Unique Key table with the delete sign (%s); %s tables cannot apply deletes", src, schema.DeleteSignColumn, t.Keys)
		}
	}
	checkDeletes(r, cfg, t)
	if strings.EqualFold(props["partial_columns"], "true") && !(t.Keys == schema.UniqueKeys && t.MergeOnWrite()) {
		r.add(Fail, "partial columns", "doris.properties.partial_columns needs a merge-on-write Unique Key table")
	}
	for field, col := range cfg.Records.MetadataColumns {
		if _, _, ok := t.Column(col); !ok {
			r.add(Fail, "metadata columns", "records.metadata_columns.%s names column %s, which %s.%s lacks", field, col, cfg.Doris.Database, cfg.Doris.Table)
		}
	}
}

// checkClocks compares Doris's transaction clocks with the checkpoint
// interval (docs/design.md §2, docs/doris-facts.md §4-§5).
func checkClocks(ctx context.Context, r *Report, c *doris.Client, cfg *config.Config) {
	vals := map[string]int64{}
	source := "FE config"
	for k, def := range feDefaults {
		m, err := c.FrontendConfig(ctx, k)
		v, perr := strconv.ParseInt(m[k], 10, 64)
		if err != nil || perr != nil {
			if source == "FE config" {
				r.add(Warn, "doris clocks", "could not read ADMIN SHOW FRONTEND CONFIG (needs ADMIN): %v; assuming Doris defaults", firstErr(err, perr))
			}
			source = "Doris defaults"
			v = def
		}
		vals[k] = v
	}
	iv := cfg.Delivery.CheckpointInterval
	sec := func(k string) time.Duration { return time.Duration(vals[k]) * time.Second }

	pre := sec("stream_load_default_precommit_timeout_second")
	switch {
	case iv >= pre:
		r.add(Fail, "precommit timeout", "checkpoint_interval %v ≥ stream_load_default_precommit_timeout_second %v: Doris aborts precommitted txns before they are committed", iv, pre)
	case iv > pre/4:
		r.add(Warn, "precommit timeout", "checkpoint_interval %v leaves little room under the precommit timeout %v (%s): a slow commit gets the txn aborted and healed", iv, pre, source)
	default:
		r.add(OK, "precommit timeout", "checkpoint_interval %v ≪ precommit timeout %v (%s)", iv, pre, source)
	}
	if lt := sec("stream_load_default_timeout_second"); iv >= lt {
		r.add(Fail, "load timeout", "checkpoint_interval %v ≥ stream_load_default_timeout_second %v: an open load times out before its barrier", iv, lt)
	}

	b := budgetOf(cfg, vals["label_num_threshold"], sec("streaming_label_keep_max_second"))
	checkLabelBudget(r, b, cfg.Kafka.SessionTimeout, pre, source)
	checkRunningTxns(r, b, vals["max_running_txn_num_per_db"])
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// checkDrift says what Doris changes silently (drift.Analyze): type errors
// turning into NULLs under non-strict mode, key columns first, and how JSON
// fields are matched to columns.
func checkDrift(r *Report, cfg *config.Config, t *schema.Table) {
	d := drift.Analyze(t, cfg)
	if !d.Strict && len(d.NullOnError) > 0 {
		r.add(Warn, "type errors", "%s", d.StrictMessage())
	} else {
		r.add(OK, "type errors", "%s", d.StrictMessage())
	}
	if d.Fields != nil {
		r.add(OK, "json fields", "a JSON field must be named exactly like one of %s, or Doris ignores it: "+
			"run names each such field once in its log and counts them (doris_sink_unknown_fields_total)", strings.Join(d.Fields, ", "))
	}
}
