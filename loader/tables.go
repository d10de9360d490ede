package loader

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/doris-sink/doris-sink/label"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// tableTarget is a table the Loader loads into, with its Stream Load
// settings checked once.
type tableTarget struct {
	name  string // "db.table", checkpoint.Txn.Table
	t     Target
	delim []byte
	// subs is the sub-load count K, ≥ 1: fixed, or chosen between
	// checkpoints by auto (Config.SubLoadsAuto). Read with k().
	subs atomic.Int32
	// auto chooses K from measured throughput; nil when K is fixed. Used
	// by Checkpoint only.
	auto *autoK
}

// k returns tt's sub-load count K for the next load begun.
func (tt *tableTarget) k() int { return int(tt.subs.Load()) }

// TableName returns the "db.table" name of t, the form of
// checkpoint.Txn.Table and of WriteTo's table argument.
func (t Target) TableName() string { return t.DB + "." + t.Table }

// newTableTarget fills t's defaults from cfg (DB, Format, Properties) and
// checks it: its label can be built, its properties are not reserved,
// its line delimiter and compression are usable.
func newTableTarget(cfg *Config, t Target) (*tableTarget, error) {
	if t.DB == "" {
		t.DB = cfg.DB
	}
	if t.Format == "" {
		t.Format = cfg.Format
	}
	if t.Properties == nil {
		t.Properties = cfg.Properties
	}
	auto := cfg.SubLoadsAuto && t.SubLoads == 0
	if t.SubLoads == 0 {
		t.SubLoads = max(cfg.SubLoads, 1)
	}
	t.Properties = maps.Clone(t.Properties)
	name := t.TableName()
	if t.Table == "" {
		return nil, fmt.Errorf("table %q: the table name is empty", name)
	}
	if strings.Contains(t.DB, ".") {
		return nil, fmt.Errorf("table %q: the database name must not contain a dot", name)
	}
	if _, err := label.Build(cfg.Job, t.DB, t.Table, cfg.Scope, 1); err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	if err := validSubLoads(t.SubLoads); err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	for k := range t.Properties {
		for _, r := range reservedProperties {
			if strings.EqualFold(k, r) {
				return nil, fmt.Errorf("table %s: property %s is set by the loader, remove it", name, k)
			}
		}
	}
	delim, err := lineDelimiter(t)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	if _, err := bodyCompression(t); err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	tt := &tableTarget{name: name, t: t, delim: delim}
	tt.subs.Store(int32(t.SubLoads))
	if auto {
		tt.auto = &autoK{k: t.SubLoads, min: t.SubLoads, max: max(cfg.SubLoadsMax, t.SubLoads)}
	}
	return tt, nil
}

// tableSet holds the Loader's targets by "db.table" name. Safe for
// concurrent use.
type tableSet struct {
	mu     sync.Mutex
	byName map[string]*tableTarget
}

func (s *tableSet) get(name string) *tableTarget {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byName[name]
}

// add registers tt; a table registered already is refused.
func (s *tableSet) add(tt *tableTarget) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byName[tt.name]; ok {
		return fmt.Errorf("table %s is configured twice", tt.name)
	}
	s.byName[tt.name] = tt
	return nil
}

// qualify returns the "db.table" name of table, which is "db.table" or a
// bare table name of Config.DB.
func (l *Loader) qualify(table string) string {
	if strings.Contains(table, ".") {
		return table
	}
	return l.cfg.DB + "." + table
}

// AddTable configures target t before its first row: its format and
// Stream Load properties (empty fields take Config's DB, Format and
// Properties). A table written with WriteTo without AddTable gets
// Config's settings. A table configured already (Config.Table, or one in
// Config.Tables, or added before, or written) is refused. Safe for
// concurrent use.
func (l *Loader) AddTable(t Target) error {
	tt, err := newTableTarget(&l.cfg, t)
	if err != nil {
		return fmt.Errorf("loader: add table: %w", err)
	}
	if err := l.tables.add(tt); err != nil {
		return fmt.Errorf("loader: add table: %w", err)
	}
	return nil
}

// Tables returns the "db.table" names of the tables configured or written
// so far, sorted. Safe for concurrent use.
func (l *Loader) Tables() []string {
	l.tables.mu.Lock()
	defer l.tables.mu.Unlock()
	names := make([]string, 0, len(l.tables.byName))
	for n := range l.tables.byName {
		names = append(names, n)
	}
	return sortedStrings(names)
}

// target returns the target of table ("db.table" or a bare name of
// Config.DB), configuring it on first use with Config.TargetFor's
// settings, or Config's.
func (l *Loader) target(table string) (*tableTarget, error) {
	name := l.qualify(table)
	if tt := l.tables.get(name); tt != nil {
		return tt, nil
	}
	db, tbl, err := checkpoint.SplitTable(name)
	if err != nil {
		return nil, fmt.Errorf("loader: write to %w", err)
	}
	t := Target{}
	if l.cfg.TargetFor != nil {
		t = l.cfg.TargetFor(db, tbl)
	}
	t.DB, t.Table = db, tbl
	tt, err := newTableTarget(&l.cfg, t)
	if err != nil {
		return nil, fmt.Errorf("loader: write to %w", err)
	}
	if err := l.tables.add(tt); err != nil {
		if tt := l.tables.get(name); tt != nil { // added concurrently
			return tt, nil
		}
		return nil, err
	}
	return tt, nil
}
