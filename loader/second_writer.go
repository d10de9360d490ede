package loader

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/label"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// checkSecondWriter refuses to recover when Doris runs a txn (PREPARE or
// PRECOMMITTED) under this job's prefix and st's label scope whose label st
// neither announces nor decides (an uncommitted txn of the decided
// checkpoint): it is not a leftover of this store, since every label is
// announced before its load begins and stays announced until Recover saw it
// aborted (docs/design.md §2 invariant 1). Such a txn belongs to a second
// writer using the job's prefix and scope, or the store was rolled back; it
// is never aborted here (*SecondWriterError). Labels of other scopes of the
// prefix belong to other writers (other members of a group) and are left
// alone. It runs before Recover aborts anything, with the state as loaded.
//
// Only labels of the tables the store writes are looked at (the owner's,
// the configured ones, and those its decisions and announcements name):
// another store of the same job name may write another table.
//
// It needs a TxnInspector (SHOW TRANSACTION WHERE LABEL LIKE); without one
// nothing is checked. A listing that fails is logged and skipped: the
// check detects a second writer, it is not what keeps a decision safe
// (commits and aborts of decided labels go by txn id).
func (l *Loader) checkSecondWriter(ctx context.Context, st *checkpoint.State) error {
	ti := l.inspect
	if ti == nil {
		return nil
	}
	known := map[string]bool{}
	tables := map[string]bool{st.Owner.TableName(): true}
	for name := range l.tables.byName {
		tables[name] = true
	}
	for _, a := range st.Announced {
		known[a.Label] = true
		if a.Table != "" {
			tables[a.Table] = true
		}
	}
	for _, d := range append(slices.Clone(st.History), decidedOrNone(st)...) {
		for _, t := range d.Txns {
			tables[t.Table] = true
		}
	}
	if d := st.Decided; d != nil {
		for _, t := range d.Txns {
			if !t.Committed {
				known[t.Label] = true
			}
		}
	}
	// Only the labels of tables this store writes: another store of the
	// same job name may write other tables under the same scope (one
	// process per table).
	var dbs []string
	tags := map[string]bool{}
	for table := range tables {
		db, name, err := checkpoint.SplitTable(table)
		if err != nil {
			continue
		}
		if !slices.Contains(dbs, db) {
			dbs = append(dbs, db)
		}
		tags[label.TableTag(db, name)] = true
		tags[label.HashTableTag(db, name)] = true
	}
	slices.Sort(dbs)
	prefix := st.Owner.Job + ":"
	for _, db := range dbs {
		// % is the only LIKE wildcard in Doris (docs/doris-facts.md §6.2);
		// the emulator also takes _ as one: filter the prefix again.
		txns, err := ti.TransactionsByLabelLike(ctx, db, prefix+"%")
		if err != nil {
			l.log.Warn("second-writer check: cannot list the job's running txns; not checked", "db", db,
				"pattern", prefix+"%", "err", err)
			continue
		}
		for _, t := range txns {
			if t.Status != doris.TxnPrepare && t.Status != doris.TxnPrecommitted {
				continue
			}
			if !strings.HasPrefix(t.Label, prefix) || known[t.Label] {
				continue
			}
			p, err := label.Parse(t.Label)
			if err != nil || p.Prefix != st.Owner.Job {
				l.log.Debug("second-writer check: running txn under the prefix with a label doris-sink does not build",
					"db", db, "label", t.Label, "txn_id", t.ID, "state", t.Status)
				continue
			}
			if !tags[p.TableTag] {
				l.log.Debug("second-writer check: running txn of a table this store does not write (another store of the job)",
					"db", db, "label", t.Label, "txn_id", t.ID, "state", t.Status)
				continue
			}
			if p.Scope != st.Owner.Writer {
				l.log.Debug("second-writer check: running txn of another scope of the prefix (another writer)",
					"db", db, "label", t.Label, "txn_id", t.ID, "state", t.Status, "scope", p.Scope)
				continue
			}
			return fmt.Errorf("recover: %w", &SecondWriterError{DB: db, Label: t.Label, TxnID: t.ID, State: t.Status, Scope: p.Scope})
		}
	}
	return nil
}

// decidedOrNone returns st's decided checkpoint as a one-element list, none
// when nothing is decided.
func decidedOrNone(st *checkpoint.State) []checkpoint.Decision {
	if st.Decided == nil {
		return nil
	}
	return []checkpoint.Decision{*st.Decided}
}
