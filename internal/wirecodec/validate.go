package wirecodec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// ValidationError reports a message that does not match its schema. Its
// Error is one line: the JSON path of each problem and what is wrong
// there.
type ValidationError struct {
	Def      string   // the definition checked against, e.g. "PromptCommand"
	Problems []string // "at /images/0/data: got number, want string"
}

// Error returns the message of the ValidationError: its first three
// problems and how many more there are.
func (e *ValidationError) Error() string {
	const max = 3
	ps := e.Problems
	more := ""
	if len(ps) > max {
		more = fmt.Sprintf("; and %d more", len(ps)-max)
		ps = ps[:max]
	}
	return strings.Join(ps, "; ") + more
}

// Check is a generated validator: it appends the problems of v (decoded
// by encoding/json with UseNumber), found at location at, to errs.
type Check = func(v any, at *Loc, errs *[]string)

// Validators are the generated checks of one protocol's schema, which
// its package's ValidateDef and Validate… functions run.
type Validators struct {
	// ByDef maps every definition's name to its check.
	ByDef map[string]Check
	// Unions maps each union's name to its variants' definition names
	// by `type` value.
	Unions map[string]map[string]string
	// Rules, by definition name, are written by hand beside the
	// generated checks for what the generator does not express (a
	// response's if/then/else): each returns its problems of v.
	Rules map[string]func(v any) []string
}

// Def checks data against the named definition: nil, a
// *ValidationError (invalid JSON is one too), or an error for a
// definition the schema does not have.
func (vs *Validators) Def(def string, data []byte) error {
	if _, ok := vs.ByDef[def]; !ok {
		return fmt.Errorf("no schema definition %q", def)
	}
	v, err := DecodeValue(def, data)
	if err != nil {
		return err
	}
	return vs.Value(def, v)
}

// Value checks v, decoded as DecodeValue decodes, against the named
// definition, which must be one of ByDef's: nil, or a *ValidationError
// with its problems sorted.
func (vs *Validators) Value(def string, v any) error {
	var problems []string
	vs.ByDef[def](v, nil, &problems)
	if rule := vs.Rules[def]; rule != nil {
		problems = append(problems, rule(v)...)
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	return &ValidationError{Def: def, Problems: problems}
}

// Variant checks data against the variant of union that its `type`
// names: a *DecodeError when it has no `type`, an *UnknownTypeError for
// a `type` the union does not have, else as Def.
func (vs *Validators) Variant(union string, data []byte) error {
	typ, err := PeekType(data)
	if err != nil {
		return err
	}
	def, ok := vs.Unions[union][typ]
	if !ok {
		return &UnknownTypeError{Union: union, Type: typ}
	}
	return vs.Def(def, data)
}

// DecodeValue decodes data, one JSON value, as the checks read it (with
// UseNumber); text that is not exactly one JSON value is a
// *ValidationError of def.
func DecodeValue(def string, data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &ValidationError{Def: def, Problems: []string{"invalid JSON: " + err.Error()}}
	}
	if dec.More() {
		return nil, &ValidationError{Def: def, Problems: []string{"invalid JSON: data after the value"}}
	}
	return v, nil
}
