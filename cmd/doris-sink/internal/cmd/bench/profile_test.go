package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// A profile asked for under a directory that cannot be written fails the
// case before it runs (it used to be dropped silently at the window's
// first edge).
func TestMeterProfileBadPathFailsTheCase(t *testing.T) {
	m, _ := startMeter(filepath.Join(t.TempDir(), "missing", "case.pprof"))
	if err := m.watch(newWindowProbe(100)); err == nil {
		t.Fatal("watch accepted a profile path in a directory that does not exist")
	}
}

// With a window the profile is written between its edges; a window that
// never opened leaves no empty file behind.
func TestMeterProfileCoversTheWindow(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "case.pprof")
	m, _ := startMeter(path)
	p := newWindowProbe(100)
	if err := m.watch(p); err != nil {
		t.Fatal(err)
	}
	p.onStart()
	p.onEnd()
	var res workerResult
	if err := m.stop(&res); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("profile of the window: %v (size %d)", err, sizeOf(fi))
	}

	unopened := filepath.Join(dir, "unopened.pprof")
	m, _ = startMeter(unopened)
	if err := m.watch(newWindowProbe(100)); err != nil {
		t.Fatal(err)
	}
	if err := m.stop(&res); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(unopened); !os.IsNotExist(err) {
		t.Fatalf("a window that never opened left a profile file: %v", err)
	}
}

func sizeOf(fi os.FileInfo) int64 {
	if fi == nil {
		return -1
	}
	return fi.Size()
}
