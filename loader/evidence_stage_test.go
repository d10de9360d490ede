package loader_test

import (
	"context"
	"sync"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// stager records the entries a Loader stages (loader.EvidenceStager).
type stager struct {
	mu      sync.Mutex
	entries []ledger.Entry
}

func (s *stager) StageEvidence(es ...ledger.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries = append(s.entries, es...)
}

func (s *stager) events() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.entries {
		out = append(out, e.Event)
	}
	return out
}

// Issue 20: with Config.Evidence the loader stages the events the store
// cannot derive from its states (a table created or changed by the sink)
// for the store's next save, with the same fields as the ledger's entry,
// and never the decided/committed entries (the store writes those in the
// decision's and the commit mark's transactions).
func TestEvidenceStagedForTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	st := &stager{}
	committed := make(chan uint64, 2)
	l := e.open(func(c *loader.Config) {
		c.Evidence = st
		c.Knobs = &loader.TestingKnobs{AfterCommit: func(id uint64, _ error) { committed <- id }}
	})
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 0)
	l.RecordTableChangeOf("db.u", ledger.EventSchemaChanged, "ALTER TABLE `db`.`u` ADD COLUMN `c` INT NULL")
	writeRows(t, ctx, l, 0, 3)
	if err := l.Checkpoint(ctx, pos(3)); err != nil {
		t.Fatal(err)
	}
	<-committed
	got := st.events()
	if len(got) != 1 || got[0] != ledger.EventSchemaChanged {
		t.Fatalf("staged %v, want the schema change only", got)
	}
	if en := st.entries[0]; en.DB != "db" || en.Table != "u" || en.Note == "" {
		t.Errorf("staged entry %+v, want db.u and the DDL", en)
	}
	if ev := ledgerEvents(t, e.dir); ev[ledger.EventSchemaChanged] != 1 || ev[ledger.EventDecided] != 1 {
		t.Errorf("ledger events %v: the local ledger is still written", ev)
	}
}
