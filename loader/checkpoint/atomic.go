package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
)

// writeAtomic replaces path with b: a temporary file in the same directory
// is written and fsync'd, renamed over path, and the directory fsync'd.
// renamed reports whether the rename was attempted: when it was and err is
// not nil, path may hold either the old or the new content and durability
// of either is unknown. afterRename (nil: none) is a testing hook run after
// the rename; its error counts as a failed directory fsync.
func writeAtomic(path string, b []byte, afterRename func() error) (renamed bool, err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+tmpInfix+"*")
	if err != nil {
		return false, fmt.Errorf("create temporary file: %w", err)
	}
	tmpName := tmp.Name()
	defer func() {
		if err != nil && !renamed {
			os.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return false, fmt.Errorf("write %s: %w", tmpName, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, fmt.Errorf("fsync %s: %w", tmpName, err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("close %s: %w", tmpName, err)
	}
	renamed = true
	if err := os.Rename(tmpName, path); err != nil {
		os.Remove(tmpName)
		return true, fmt.Errorf("rename %s to %s: %w", tmpName, path, err)
	}
	if afterRename != nil {
		if err := afterRename(); err != nil {
			return true, fmt.Errorf("fsync directory %s: %w", dir, err)
		}
	}
	if err := syncDir(dir); err != nil {
		return true, err
	}
	return true, nil
}

// syncDir fsyncs a directory so a rename or create in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}
