package fileload

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// File is one input file as the load saw it when it was planned. A file
// whose size or modification time changed since is refused on resume: the
// recorded positions would no longer mean the same rows.
type File struct {
	// Path is absolute.
	Path string `json:"path"`
	Size int64  `json:"size"`
	// ModTime is the modification time in Unix nanoseconds.
	ModTime int64 `json:"mod_time"`
	// Gzip: the file is gzip-compressed (its name ends in .gz) and is
	// decompressed as it streams; it is one chunk (gzip has no random
	// access), so it goes to one worker whole.
	Gzip bool `json:"gzip,omitempty"`
}

// statFiles resolves and stats paths. A file named twice is refused: by
// the same path, or by another name for the same file (a symlink, a hard
// link, a path through a symlinked directory: os.SameFile), it would be
// loaded twice.
func statFiles(paths []string) ([]File, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no input files")
	}
	type seenFile struct {
		name string
		info os.FileInfo
	}
	var seen []seenFile
	out := make([]File, 0, len(paths))
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("input file %s: %w", p, err)
		}
		st, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("input file: %w", err)
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("input file %s is not a regular file (%s)", abs, st.Mode().Type())
		}
		for _, s := range seen {
			if os.SameFile(s.info, st) {
				return nil, fmt.Errorf("input file %s is named twice (%s and %s are the same file): it would be loaded twice; "+
					"name it once", abs, s.name, p)
			}
		}
		seen = append(seen, seenFile{name: p, info: st})
		out = append(out, File{Path: abs, Size: st.Size(), ModTime: st.ModTime().UnixNano(),
			Gzip: strings.HasSuffix(strings.ToLower(abs), ".gz")})
	}
	return out, nil
}

// sameFiles reports the first difference between the files a store
// recorded and the files as they are now ("" when they match).
func sameFiles(recorded, now []File) string {
	if len(recorded) != len(now) {
		return fmt.Sprintf("%d files recorded, %d given", len(recorded), len(now))
	}
	for i := range recorded {
		r, n := recorded[i], now[i]
		switch {
		case r.Path != n.Path:
			return fmt.Sprintf("file %d is %s, the store recorded %s", i+1, n.Path, r.Path)
		case r.Size != n.Size || r.ModTime != n.ModTime:
			return fmt.Sprintf("%s changed since the load was planned (size %d, was %d; modification time %s, was %s)",
				n.Path, n.Size, r.Size, time.Unix(0, n.ModTime).UTC().Format(time.RFC3339Nano),
				time.Unix(0, r.ModTime).UTC().Format(time.RFC3339Nano))
		}
	}
	return ""
}

// newlineReader appends a '\n' at EOF when what it read did not end with
// one, so a file's last line is not glued to the next file's first line in
// one Stream Load body.
type newlineReader struct {
	r       io.Reader
	last    byte
	any     bool
	pending bool
	done    bool
}

func (n *newlineReader) Read(p []byte) (int, error) {
	if n.done {
		return 0, io.EOF
	}
	if n.pending {
		if len(p) == 0 {
			return 0, nil
		}
		p[0] = '\n'
		n.pending, n.done = false, true
		return 1, nil
	}
	k, err := n.r.Read(p)
	if k > 0 {
		n.any, n.last = true, p[k-1]
	}
	if err == io.EOF {
		if n.any && n.last != '\n' {
			n.pending = true
			return k, nil
		}
		n.done = true
	}
	return k, err
}
