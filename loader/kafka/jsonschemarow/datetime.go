package jsonschemarow

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// node is where in a record the schema declares `"format": "date-time"`
// strings: the instance at this node, its properties, its array items and
// its other properties (additionalProperties). Only the part of the schema
// that leads to a date-time is kept; a nil child means nothing to rewrite
// below.
type node struct {
	dateTime bool
	props    map[string]*node
	items    *node
	addl     *node
}

// child returns the node of property key (nil: nothing to rewrite).
func (n *node) child(key []byte) *node {
	if c, ok := n.props[string(key)]; ok {
		return c
	}
	return n.addl
}

// maxExpand bounds the schema locations followed for one instance location
// ($ref chains and allOf/anyOf/oneOf branches).
const maxExpand = 256

// planner walks the schema documents. A location is "doc#pointer" where doc
// is "" for the registry schema or a reference name.
type planner struct {
	docs  *docs
	memo  map[string]*node
	nodes []*node
	// locs counts the locations of the nodes built (maxPlanLocations).
	locs int
}

// maxPlanLocations bounds the schema locations of all the plan's nodes
// together. A node is the set of locations that apply to one instance
// location, so merging through anyOf and $ref can make 2^n nodes of n
// definitions (the subset construction of an automaton); a schema past
// the bound is refused (ErrSchemaTooComplex) instead of exhausting memory
// and time in New. An ordinary schema has about one location per node.
const maxPlanLocations = 50000

// dateTimePlan returns where the schema declares date-time strings, or nil
// when it declares none. It follows properties, items (one schema for all
// items), additionalProperties, allOf/anyOf/oneOf (a property that is a
// date-time in any branch is rewritten when its value parses as one) and
// $refs to local pointers and to references. Anchors ("#name") and $id
// based refs inside a document are not followed: those parts are passed
// through.
func dateTimePlan(d *docs) (*node, error) {
	p := &planner{docs: d, memo: map[string]*node{}}
	root := p.build(p.expand([]string{"#"}))
	if p.locs > maxPlanLocations {
		return nil, fmt.Errorf("%w: its date-time plan merges more than %d schema locations (anyOf/oneOf/allOf and $refs "+
			"that apply to the same value)", ErrSchemaTooComplex, maxPlanLocations)
	}
	// Prune: keep a node only if a date-time is reachable from it. Cycles
	// (recursive schemas) make this a fixpoint.
	has := map[*node]bool{}
	for changed := true; changed; {
		changed = false
		for _, n := range p.nodes {
			if has[n] {
				continue
			}
			yes := n.dateTime || has[n.items] || has[n.addl]
			for _, c := range n.props {
				yes = yes || has[c]
			}
			if yes {
				has[n], changed = true, true
			}
		}
	}
	for _, n := range p.nodes {
		for k, c := range n.props {
			if !has[c] {
				delete(n.props, k)
			}
		}
		if !has[n.items] {
			n.items = nil
		}
		if !has[n.addl] {
			n.addl = nil
		}
	}
	if !has[root] {
		return nil, nil
	}
	return root, nil
}

// build returns the node for the instance described by all of locs.
func (p *planner) build(locs []string) *node {
	key := strings.Join(locs, "\x00")
	if n, ok := p.memo[key]; ok {
		return n
	}
	n := &node{}
	p.memo[key] = n
	if p.locs += len(locs); p.locs > maxPlanLocations {
		return n // refused by dateTimePlan: build nothing more
	}
	p.nodes = append(p.nodes, n)
	props := map[string][]string{}
	var items, addl []string
	for _, loc := range locs {
		obj, ok := p.resolve(loc).(map[string]any)
		if !ok {
			continue
		}
		if f, _ := obj["format"].(string); f == "date-time" {
			n.dateTime = true
		}
		if ps, ok := obj["properties"].(map[string]any); ok {
			for name := range ps {
				props[name] = append(props[name], loc+"/properties/"+escapePointer(name))
			}
		}
		if _, ok := obj["items"].(map[string]any); ok {
			items = append(items, loc+"/items")
		}
		if _, ok := obj["additionalProperties"].(map[string]any); ok {
			addl = append(addl, loc+"/additionalProperties")
		}
	}
	if len(props) > 0 {
		n.props = make(map[string]*node, len(props))
		for name, ls := range props {
			n.props[name] = p.build(p.expand(ls))
		}
	}
	if items != nil {
		n.items = p.build(p.expand(items))
	}
	if addl != nil {
		n.addl = p.build(p.expand(addl))
	}
	return n
}

// expand returns locs and every location that applies to the same
// instance: $ref targets and allOf/anyOf/oneOf branches, transitively;
// sorted, without duplicates.
func (p *planner) expand(locs []string) []string {
	seen := map[string]bool{}
	queue := slices.Clone(locs)
	for len(queue) > 0 && len(seen) < maxExpand {
		loc := queue[0]
		queue = queue[1:]
		if seen[loc] {
			continue
		}
		seen[loc] = true
		obj, ok := p.resolve(loc).(map[string]any)
		if !ok {
			continue
		}
		if ref, ok := obj["$ref"].(string); ok {
			if target, ok := p.refTarget(loc, ref); ok {
				queue = append(queue, target)
			}
		}
		for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
			branches, _ := obj[kw].([]any)
			for i := range branches {
				queue = append(queue, loc+"/"+kw+"/"+strconv.Itoa(i))
			}
		}
	}
	out := make([]string, 0, len(seen))
	for loc := range seen {
		out = append(out, loc)
	}
	slices.Sort(out)
	return out
}

// refTarget resolves $ref value ref found at loc to a location.
func (p *planner) refTarget(loc, ref string) (string, bool) {
	doc, _, _ := strings.Cut(loc, "#")
	name, frag, _ := strings.Cut(ref, "#")
	if frag != "" && frag[0] != '/' {
		return "", false // an anchor: not followed
	}
	if name == "" {
		return doc + "#" + frag, true
	}
	for _, n := range p.docs.names {
		if n == name || strings.HasSuffix(name, "/"+strings.TrimPrefix(n, "./")) || strings.HasSuffix(n, "/"+name) {
			return n + "#" + frag, true
		}
	}
	return "", false
}

// resolve returns the schema value at loc, or nil.
func (p *planner) resolve(loc string) any {
	doc, ptr, _ := strings.Cut(loc, "#")
	var v any
	if doc == "" {
		v = p.docs.main
	} else {
		v = p.docs.refs[doc]
	}
	if ptr == "" {
		return v
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			v = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
