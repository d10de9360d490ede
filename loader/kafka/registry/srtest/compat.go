package srtest

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/loader/kafka/avrorow"
)

// parseAvro parses s with its references resolved from the registry
// (r.mu held), by loader/kafka/avrorow's parser.
func (r *Registry) parseAvro(s sr.Schema) (*avrorow.Schema, error) {
	refs := map[string]string{}
	seen := map[sr.SchemaReference]bool{}
	var collect func(refs []sr.SchemaReference) error
	collect = func(list []sr.SchemaReference) error {
		for _, ref := range list {
			if seen[ref] {
				continue
			}
			seen[ref] = true
			ver, err := r.versionOf(ref.Subject, fmt.Sprint(ref.Version))
			if err != nil {
				return errInvalid(fmt.Sprintf("Invalid schema: reference %q (subject %s version %d) does not exist", ref.Name, ref.Subject, ref.Version))
			}
			st := r.schemas[ver.id-1].schema
			refs[ref.Name] = st.Schema
			if err := collect(st.References); err != nil {
				return err
			}
		}
		return nil
	}
	if err := collect(s.References); err != nil {
		return nil, err
	}
	parsed, err := avrorow.Parse(s.Schema, refs)
	if err != nil {
		return nil, errInvalid("Invalid schema " + err.Error())
	}
	return parsed, nil
}

// validate checks that s can be stored: AVRO must parse; other types are
// stored unchecked, their references must exist.
func (r *Registry) validate(s sr.Schema) error {
	if s.Type == sr.TypeAvro {
		_, err := r.parseAvro(s)
		return err
	}
	for _, ref := range s.References {
		if _, err := r.versionOf(ref.Subject, fmt.Sprint(ref.Version)); err != nil {
			return errInvalid(fmt.Sprintf("Invalid schema: reference %q (subject %s version %d) does not exist", ref.Name, ref.Subject, ref.Version))
		}
	}
	return nil
}

// level is the compatibility level of subject name.
func (r *Registry) level(subj *subject) sr.CompatibilityLevel {
	if subj != nil && subj.compat != nil {
		return *subj.compat
	}
	return r.global
}

// compatibleWithLevel checks s against the versions the subject's level
// names (r.mu held); a 409 when incompatible.
func (r *Registry) compatibleWithLevel(name string, subj *subject, s sr.Schema) error {
	lvl := r.level(subj)
	if lvl == sr.CompatNone || len(subj.versions) == 0 {
		return nil
	}
	against := subj.versions[len(subj.versions)-1:]
	switch lvl {
	case sr.CompatBackwardTransitive, sr.CompatForwardTransitive, sr.CompatFullTransitive:
		against = subj.versions
	}
	for _, v := range against {
		if err := r.compatible(lvl, r.schemas[v.id-1].schema, s); err != nil {
			return err
		}
	}
	return nil
}

// compatible checks new against old under lvl: BACKWARD means a reader
// with new reads data written with old; FORWARD the reverse; FULL both
// (avrorow.Schema.CanRead implements the Avro schema resolution rules).
// A schema type srtest cannot check is refused, never passed.
func (r *Registry) compatible(lvl sr.CompatibilityLevel, old, new sr.Schema) error {
	if old.Type != new.Type {
		return &apiError{http.StatusConflict, 409, fmt.Sprintf("Schema being registered is incompatible with an earlier schema: type %s, earlier %s", new.Type, old.Type)}
	}
	if new.Type != sr.TypeAvro {
		return errInvalid(fmt.Sprintf("srtest checks the compatibility of AVRO schemas only, not %s: set the subject's compatibility to NONE (PUT /config/{subject})", new.Type))
	}
	o, err := r.parseAvro(old)
	if err != nil {
		return err
	}
	n, err := r.parseAvro(new)
	if err != nil {
		return err
	}
	var bad error
	switch lvl {
	case sr.CompatBackward, sr.CompatBackwardTransitive:
		bad = n.CanRead(o)
	case sr.CompatForward, sr.CompatForwardTransitive:
		bad = o.CanRead(n)
	case sr.CompatFull, sr.CompatFullTransitive:
		if bad = n.CanRead(o); bad == nil {
			bad = o.CanRead(n)
		}
	}
	if bad != nil {
		return &apiError{http.StatusConflict, 409, fmt.Sprintf("Schema being registered is incompatible with an earlier schema for compatibility level %s: %v", lvl, bad)}
	}
	return nil
}

func (r *Registry) checkCompat(req *http.Request) (any, error) {
	s, err := readSchema(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	name := req.PathValue("subject")
	subj := r.subjects[name]
	if v := req.PathValue("version"); v != "" {
		ver, err := r.versionOf(name, v)
		if err != nil {
			return nil, err
		}
		err = r.compatible(r.level(subj), r.schemas[ver.id-1].schema, s)
		return compatAnswer(err)
	}
	if subj == nil || len(subj.versions) == 0 {
		return map[string]bool{"is_compatible": true}, nil // nothing to be incompatible with
	}
	return compatAnswer(r.compatibleWithLevel(name, subj, s))
}

// compatAnswer turns a check into {"is_compatible": …}; an error that is
// not a verdict (a schema that does not parse, a type not checked) stays
// an error.
func compatAnswer(err error) (any, error) {
	var ae *apiError
	switch {
	case err == nil:
		return map[string]bool{"is_compatible": true}, nil
	case errors.As(err, &ae) && ae.status == http.StatusConflict:
		return map[string]any{"is_compatible": false, "messages": []string{ae.msg}}, nil
	}
	return nil, err
}
