package jsonschemarow

import (
	"bytes"
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

func parseDocs(schema string, refs map[string]string) (*docs, error) {
	d := &docs{refs: make(map[string]any, len(refs))}
	var err error
	if d.main, err = jsonschema.UnmarshalJSON(strings.NewReader(schema)); err != nil {
		return nil, fmt.Errorf("JSON schema: %w", err)
	}
	for name, text := range refs {
		if d.refs[name], err = jsonschema.UnmarshalJSON(bytes.NewReader([]byte(text))); err != nil {
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
