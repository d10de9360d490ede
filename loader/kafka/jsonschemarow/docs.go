package jsonschemarow

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// mainURL is the URL the registry schema is compiled under; relative $refs
// resolve against it (a "customer.json" ref becomes mem:///customer.json).
const mainURL = "mem:///registry-schema.json"

// docs are the parsed schema documents: the registry schema and its
// references. It is the validator's only loader: nothing is read from disk
// or the network.
type docs struct {
	main any
	refs map[string]any
	// names are the reference names, longest first (see find).
	names []string
}

// Bounds of a schema, checked on its parsed documents before anything
// compiles it: the validator's compiler cannot be cancelled, and its time
// grows with the square of a $ref chain's length (issue 25: 30,000 refs
// took 6.2 s, 100,000 over a minute; 1000 take about 0.15 s).
const (
	// MaxSchemaRefs bounds the $ref, $dynamicRef and $recursiveRef
	// keywords of a schema and its references together.
	MaxSchemaRefs = 1000
	// MaxSchemaDepth bounds the nesting of a schema document's objects
	// and arrays.
	MaxSchemaDepth = 1000
)

// ErrSchemaTooComplex is wrapped by the error of a schema past
// MaxSchemaRefs or MaxSchemaDepth.
var ErrSchemaTooComplex = errors.New("JSON schema too complex")

func parseDocs(schema string, refs map[string]string) (*docs, error) {
	d := &docs{refs: make(map[string]any, len(refs))}
	var err error
	if d.main, err = jsonschema.UnmarshalJSON(strings.NewReader(schema)); err != nil {
		return nil, fmt.Errorf("JSON schema: %w", err)
	}
	sc := prescan{}
	if err := sc.scan(d.main, 0); err != nil {
		return nil, fmt.Errorf("JSON schema: %w", err)
	}
	for name, text := range refs {
		if d.refs[name], err = jsonschema.UnmarshalJSON(bytes.NewReader([]byte(text))); err != nil {
			return nil, fmt.Errorf("JSON schema reference %q: %w", name, err)
		}
		if err := sc.scan(d.refs[name], 0); err != nil {
			return nil, fmt.Errorf("JSON schema reference %q: %w", name, err)
		}
		d.names = append(d.names, name)
	}
	sort.Slice(d.names, func(i, j int) bool { return len(d.names[i]) > len(d.names[j]) })
	return d, nil
}

// find returns the document at url (without fragment): the registry schema,
// a reference named by the whole URL, or one whose name is the URL's tail
// after a '/' (a relative reference name resolved against a base URL).
func (d *docs) find(url string) (any, bool) {
	if url == mainURL {
		return d.main, true
	}
	if doc, ok := d.refs[url]; ok {
		return doc, true
	}
	for _, name := range d.names {
		if strings.HasSuffix(url, "/"+strings.TrimPrefix(name, "./")) {
			return d.refs[name], true
		}
	}
	return nil, false
}

// Load implements jsonschema.URLLoader.
func (d *docs) Load(url string) (any, error) {
	if doc, ok := d.find(url); ok {
		return doc, nil
	}
	return nil, fmt.Errorf("JSON schema reference %q: not among the registry references", url)
}

// prescan counts the references of parsed schema documents and checks
// their depth (MaxSchemaRefs, MaxSchemaDepth).
type prescan struct{ refs int }

func (p *prescan) scan(v any, depth int) error {
	switch v := v.(type) {
	case map[string]any:
		if depth++; depth > MaxSchemaDepth {
			return fmt.Errorf("%w: nested deeper than %d objects and arrays", ErrSchemaTooComplex, MaxSchemaDepth)
		}
		for k, e := range v {
			if k == "$ref" || k == "$dynamicRef" || k == "$recursiveRef" {
				if p.refs++; p.refs > MaxSchemaRefs {
					return fmt.Errorf("%w: more than %d $refs (with its references)", ErrSchemaTooComplex, MaxSchemaRefs)
				}
			}
			if err := p.scan(e, depth); err != nil {
				return err
			}
		}
	case []any:
		if depth++; depth > MaxSchemaDepth {
			return fmt.Errorf("%w: nested deeper than %d objects and arrays", ErrSchemaTooComplex, MaxSchemaDepth)
		}
		for _, e := range v {
			if err := p.scan(e, depth); err != nil {
				return err
			}
		}
	}
	return nil
}
