package config

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// keyLines returns the line of each key of a YAML document, the keys
// flattened with "." as koanf flattens them ("doris.fe" → 4); nil when the
// document does not parse (the parse error is reported elsewhere).
func keyLines(data []byte) map[string]int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	lines := map[string]int{}
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := prefix + n.Content[i].Value
			if _, ok := lines[k]; !ok {
				lines[k] = n.Content[i].Line
			}
			walk(n.Content[i+1], k+".")
		}
	}
	walk(doc.Content[0], "")
	return lines
}

// yamlParserProblems are the problems go.yaml.in/yaml/v3 reports as
// parser (not scanner) errors (parserc.go yaml_parser_set_parser_error*):
// for those its "line N" is the 0-based line of the mark, one line above
// the one meant (decode.go parser.fail adds 1 for scanner errors only).
var yamlParserProblems = []string{
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"did not find expected <document start>",
	"did not find expected <stream-start>",
	"did not find expected key",
	"did not find expected node content",
	"found duplicate %TAG directive",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found undefined tag handle",
}

// yamlHints say what usually causes a parser problem in a config file.
var yamlHints = map[string]string{
	"did not find expected ',' or ']'":               "a [list opened on this line is not closed, or two items lack a comma between them",
	"did not find expected ',' or '}'":               "a {map opened on this line is not closed, or two entries lack a comma between them",
	"did not find expected key":                      "in the section that starts on this line a line is indented differently from its keys, or a list item stands where a key belongs",
	"did not find expected '-' indicator":            "in the list that starts on this line an item is indented differently from the others",
	"did not find expected node content":             "a value is missing or starts with a character YAML reserves (quote it)",
	"did not find expected <document start>":         "text follows the document where a key was expected (check the indentation)",
	"mapping values are not allowed in this context": "a key is indented beneath a value, or a value holds \": \" (quote it)",
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// YAMLError is a config file that is not valid YAML, with the line meant.
type YAMLError struct {
	// Line is the 1-based line of the construct at fault (0: unknown).
	Line int
	// Problem is the YAML library's description; Hint what usually
	// causes it ("" when none is known).
	Problem, Hint string
}

// Error names the line and the problem.
func (e *YAMLError) Error() string {
	msg := e.Problem
	if e.Line > 0 {
		msg = fmt.Sprintf("line %d: %s", e.Line, e.Problem)
	}
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return "not valid YAML: " + msg
}

// yamlError returns err as a *YAMLError with the line corrected, or err
// when it is not a YAML syntax error.
func yamlError(err error) error {
	m := yamlLineRE.FindStringSubmatch(err.Error())
	if m == nil {
		if p, ok := strings.CutPrefix(err.Error(), "yaml: "); ok && !strings.HasPrefix(p, "unmarshal errors") {
			return &YAMLError{Problem: p, Hint: yamlHints[p]}
		}
		return err
	}
	line, _ := strconv.Atoi(m[1])
	if slices.Contains(yamlParserProblems, m[2]) {
		line++
	}
	return &YAMLError{Line: line, Problem: m[2], Hint: yamlHints[m[2]]}
}

// unknownKeyHint says what is wrong with key when it is not a typo: a
// section given a value (its keys not indented beneath it, or a scalar
// where a map belongs), or a section's key written at the top level.
//
// yamlFile says the key comes from a YAML file, where the fix is its
// indentation; elsewhere (the environment, a .properties file) the fix is
// the full dotted name.
func unknownKeyHint(key string, v any, yamlFile bool) string {
	if sub := sectionKeys(key); len(sub) > 0 && !yamlFile {
		return fmt.Sprintf("%s is a section (%s, ...), not a value: set its keys by their full names", key, sub[0])
	}
	if sub := sectionKeys(key); len(sub) > 0 {
		shown := sub
		if len(shown) > 3 {
			shown = append(shown[:3:3], "...")
		}
		if v == nil {
			return fmt.Sprintf("%s is a section (%s) and is empty here: indent its keys beneath it", key, strings.Join(shown, ", "))
		}
		return fmt.Sprintf("%s is a section (%s), not a value: write its keys indented beneath it (%q under %q)",
			key, strings.Join(shown, ", "), strings.TrimPrefix(sub[0], key+".")+": ...", key+":")
	}
	if strings.Contains(key, ".") {
		return ""
	}
	var in []string
	for _, k := range keys {
		if s, ok := strings.CutSuffix(k.Name, "."+key); ok && !strings.Contains(s, ".") {
			in = append(in, k.Name)
		}
	}
	switch len(in) {
	case 0:
		return ""
	case 1:
		if !yamlFile {
			return fmt.Sprintf("did you mean %s?", in[0])
		}
		return fmt.Sprintf("did you mean %s? indent it beneath %s:", in[0], strings.TrimSuffix(in[0], "."+key))
	}
	if !yamlFile {
		return fmt.Sprintf("did you mean one of %s?", strings.Join(in, ", "))
	}
	return fmt.Sprintf("did you mean one of %s? indent it beneath its section", strings.Join(in, ", "))
}

// sectionKeys returns the known keys under section s ("doris" →
// doris.fe, ...), in the key table's order; nil when s is not a section.
func sectionKeys(s string) []string {
	var out []string
	for _, k := range keys {
		if strings.HasPrefix(k.Name, s+".") {
			out = append(out, k.Name)
		}
	}
	return out
}
