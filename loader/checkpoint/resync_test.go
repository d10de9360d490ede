package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Issue 11: a Save whose directory fsync failed after the rename left the
// store refusing every Save and Load ("unusable after a failed save")
// until the process restarted. Now Save refuses (ErrUnsynced) and the next
// Load re-syncs the file, returns the state the rename left (the new one:
// rename(2) replaced it) and the store accepts Save again.
func TestLoadResyncsAfterFailedSave(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	failRename, failResync := 1, 1
	f, err := OpenFileWithKnobs(dir, testOwner, FileKnobs{
		AfterRename: func() error {
			if failRename > 0 {
				failRename--
				return errors.New("injected: EIO on directory fsync")
			}
			return nil
		},
		BeforeResync: func() error {
			if failResync > 0 {
				failResync--
				return errors.New("injected: EIO on re-sync")
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	ctx := t.Context()
	next := NewState(testOwner)
	ann, err := next.Announce(at(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Save(ctx, next); !errors.Is(err, ErrUnsynced) {
		t.Fatalf("Save with a failing directory fsync: %v, want ErrUnsynced", err)
	}
	if err := f.Save(ctx, next); !errors.Is(err, ErrUnsynced) {
		t.Fatalf("Save after a failed save: %v, want ErrUnsynced", err)
	}
	if _, err := f.Load(ctx); !errors.Is(err, ErrUnsynced) {
		t.Fatalf("Load with a failing re-sync: %v, want ErrUnsynced", err)
	}
	got, err := f.Load(ctx)
	if err != nil {
		t.Fatalf("Load after the disk recovered: %v", err)
	}
	if !reflect.DeepEqual(noIncarnation(got), next) || len(got.Announced) != 1 || got.Announced[0].ID != ann.ID {
		t.Fatalf("re-synced state = %+v, want the renamed one %+v", got, next)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, FileName+tmpInfix+"*")); len(tmps) != 0 {
		t.Fatalf("temporary files left after the re-sync: %v", tmps)
	}
	got.Unannounce(ann.ID)
	if err := f.Save(ctx, got); err != nil {
		t.Fatalf("Save after the re-sync: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
		t.Fatal(err)
	}
}
