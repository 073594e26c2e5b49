// Package outputschema holds a prompt's output schema: the JSON Schema
// its final answer must follow. It compiles the schema once, checks an
// answer against it (naming the schema path that failed), and words the
// instructions and the corrective message the agent gives the model.
//
// It validates with a small validator of its own over the keywords of
// JSON Schema draft 2020-12 that answer shapes use (type, enum, const,
// properties, required, additionalProperties, patternProperties, items,
// prefixItems, contains, the bounds, pattern, allOf, anyOf, oneOf, not,
// and $ref inside the schema; other keywords are annotations), so that
// no schema engine is linked into every zot process; the tests hold its
// verdicts to the reference validator the protocol's own checks are held
// to (jsonschema/v6, as internal/schemacheck uses it).
package outputschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// DefaultRetries is how many corrective turns an answer that does not
// follow the schema gets when the prompt does not say.
const DefaultRetries = 2

// MaxRetries bounds the corrective turns a prompt may ask for.
const MaxRetries = 10

// Schema is a compiled output schema.
type Schema struct {
	raw  json.RawMessage
	root node
}

// Compile reads and resolves a JSON Schema given as JSON. Only schemas
// that need nothing outside themselves are taken: a remote $ref fails.
func Compile(raw json.RawMessage) (*Schema, error) {
	var root node
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("output_schema is not JSON: %w", err)
	}
	if err := compileCheck(root); err != nil {
		return nil, fmt.Errorf("output_schema is not a usable JSON Schema: %w", err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("output_schema is not JSON: %w", err)
	}
	return &Schema{raw: buf.Bytes(), root: root}, nil
}

// Raw returns the schema as the client gave it.
func (s *Schema) Raw() json.RawMessage { return s.raw }

// Check parses answer as JSON (a whole answer in one fenced code block
// counts as its content) and validates it. It returns the JSON value, or
// an error saying what is wrong and where.
func (s *Schema) Check(answer string) (json.RawMessage, error) {
	text := Unfence(answer)
	if text == "" {
		return nil, errors.New("the answer is empty, not JSON")
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the answer is not JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("the answer is not one JSON value: text follows it")
	}
	c := &validator{root: s.root}
	if p := c.check(s.root, v, "", ""); p != nil {
		return nil, fmt.Errorf("the answer does not follow the schema: %w", p)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(text)); err != nil {
		return nil, fmt.Errorf("the answer is not JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// Unfence returns text trimmed, and when all of it is one Markdown code
// block (```json … ```), that block's content.
func Unfence(text string) string {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return t
	}
	body := t[3 : len(t)-3]
	nl := strings.IndexByte(body, '\n')
	if nl < 0 {
		return t
	}
	if strings.Contains(body[nl+1:], "```") {
		return t
	}
	return strings.TrimSpace(body[nl+1:])
}

// Instructions is what the system prompt adds for a prompt with a
// schema, whether or not the provider also enforces it.
func (s *Schema) Instructions() string {
	return "Your final answer to this request must be a single JSON value, and nothing else (no prose, no code fence), valid for this JSON Schema:\n" + string(s.raw)
}

// Corrective is the user message of a corrective turn after an answer
// failed with problem.
func Corrective(problem error) string {
	return "Your last answer cannot be used: " + problem.Error() + ". Answer again with only the JSON value, valid for the JSON Schema you were given."
}

// CheckRef validates the JSON value data against the part of the schema
// that ref ("#/$defs/Name", or "#" for the whole) points to: a document
// of many definitions, compiled once, checks each value against the one
// that applies to it.
func (s *Schema) CheckRef(ref string, data []byte) error {
	n, err := resolve(s.root, ref)
	if err != nil {
		return err
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	c := &validator{root: s.root}
	if p := c.check(n, v, "", strings.TrimPrefix(ref, "#")); p != nil {
		return p
	}
	return nil
}
