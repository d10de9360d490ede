package avrorow

import (
	"fmt"
	"strings"
)

// CanRead reports whether data written with schema w can be read with
// schema s, by the Avro specification's schema resolution rules: the same
// type (records and enums and fixed of the same unqualified name), a
// promotion (int to long, float or double; long to float or double; float
// to double; string to bytes and bytes to string), a union on either side
// (every writer branch readable; a writer type readable by some reader
// branch); record fields matched by name, a reader field the writer lacks
// needing a default; writer enum symbols known to the reader unless the
// reader's enum has a default; fixed of the same size. Logical types
// follow their base types. It returns nil, or an error naming the first
// mismatch by path.
func (s *Schema) CanRead(w *Schema) error {
	return canRead(s.root, w.root, "", map[[2]*node]bool{})
}

func canRead(r, w *node, path string, seen map[[2]*node]bool) error {
	at := func(format string, a ...any) error {
		if path == "" {
			return fmt.Errorf(format, a...)
		}
		return fmt.Errorf("%s: %s", path, fmt.Sprintf(format, a...))
	}
	if w.avroType == "union" {
		for i, b := range w.branches {
			if err := canRead(r, b, fmt.Sprintf("%s<branch %d>", path, i), seen); err != nil {
				return err
			}
		}
		return nil
	}
	if r.avroType == "union" {
		for _, b := range r.branches {
			if canRead(b, w, path, seen) == nil {
				return nil
			}
		}
		return at("no branch of the reader's union reads the writer's %s", w.avroType)
	}
	if r.avroType != w.avroType {
		if promotes(w.avroType, r.avroType) {
			return nil
		}
		return at("the reader's %s cannot read the writer's %s", r.avroType, w.avroType)
	}
	switch r.avroType {
	case "record":
		if unqualified(r.name) != unqualified(w.name) {
			return at("record %s cannot read record %s", r.name, w.name)
		}
		pair := [2]*node{r, w}
		if seen[pair] {
			return nil // a recursive type already being checked
		}
		seen[pair] = true
		for _, rf := range r.fields {
			wf := fieldByName(w, rf.name)
			if wf == nil {
				if !rf.hasDefault {
					return at("reader field %s has no default and the writer has no such field", rf.name)
				}
				continue
			}
			if err := canRead(rf.n, wf.n, strings.TrimPrefix(path+"."+rf.name, "."), seen); err != nil {
				return err
			}
		}
	case "enum":
		if unqualified(r.name) != unqualified(w.name) {
			return at("enum %s cannot read enum %s", r.name, w.name)
		}
		if !r.enumDefault {
			for _, sym := range w.symbolNames {
				if !contains(r.symbolNames, sym) {
					return at("enum %s: the reader lacks the writer's symbol %s (and has no default)", r.name, sym)
				}
			}
		}
	case "fixed":
		if unqualified(r.name) != unqualified(w.name) || r.size != w.size {
			return at("fixed %s (%d bytes) cannot read fixed %s (%d bytes)", r.name, r.size, w.name, w.size)
		}
	case "array":
		return canRead(r.items, w.items, path+"[]", seen)
	case "map":
		return canRead(r.items, w.items, path+"{}", seen)
	}
	return nil
}

// promotes reports whether a writer's type w reads as the reader's r.
func promotes(w, r string) bool {
	switch w {
	case "int":
		return r == "long" || r == "float" || r == "double"
	case "long":
		return r == "float" || r == "double"
	case "float":
		return r == "double"
	case "string":
		return r == "bytes"
	case "bytes":
		return r == "string"
	}
	return false
}

func unqualified(full string) string { return full[strings.LastIndexByte(full, '.')+1:] }

func fieldByName(n *node, name string) *field {
	for i := range n.fields {
		if n.fields[i].name == name {
			return &n.fields[i]
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
