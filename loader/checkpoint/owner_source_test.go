package checkpoint

import (
	"context"
	"errors"
	"testing"
)

// Owner.Adopts: only the Source may differ, and only to one of previous.
func TestOwnerAdopts(t *testing.T) {
	t.Parallel()
	o := Owner{Job: "j", DB: "db", Table: "t", Source: "kafka", Writer: "0"}
	prev := []string{"kafka:a", "kafka:b"}
	old := o
	old.Source = "kafka:a"
	if !o.Adopts(old, prev) {
		t.Errorf("%v does not adopt %v", o, old)
	}
	if o.Adopts(o, prev) {
		t.Errorf("an equal owner needs no adoption")
	}
	other := old
	other.Source = "kafka:c"
	if o.Adopts(other, prev) {
		t.Errorf("%v adopts a source not in %v", o, prev)
	}
	other = old
	other.Table = "u"
	if o.Adopts(other, prev) {
		t.Errorf("%v adopts another table", o)
	}
}

// A file store recorded for "kafka:a" opens for "kafka" with previous
// sources naming it: Load returns the state with the new owner, the next
// Save records it; without them it stays refused.
func TestOpenFileAdopting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := Owner{Job: "j", DB: "db", Table: "t", Source: "kafka:a", Writer: "0"}
	f, err := OpenFile(dir, old)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	o := old
	o.Source = "kafka"
	var oe *OwnerError
	if _, err := OpenFile(dir, o); !errors.As(err, &oe) {
		t.Fatalf("open for another source: %v, want *OwnerError", err)
	}
	f, err = OpenFileAdopting(dir, o, []string{"kafka:a", "kafka:b"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Load(context.Background())
	if err != nil || st.Owner != o {
		t.Fatalf("load: %v, owner %+v, want %+v", err, st, o)
	}
	if err := f.Save(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(dir); err != nil || got.Owner != o {
		t.Fatalf("recorded owner %+v (%v), want %+v", got, err, o)
	}
}
