// Package schemacheck validates zot protocol messages (and the scripted
// provider's script files) with a complete JSON Schema (draft 2020-12)
// validator, github.com/santhosh-tekuri/jsonschema/v6, compiled once from
// the embedded schema files.
//
// The runtime itself validates with the checks package wire generates from
// the same schema, which need no schema engine at start-up (loading this
// one costs milliseconds and megabytes before main runs). This package is
// the reference the generated checks are tested against, and what the
// conformance tests use to check every frame the server writes.
package schemacheck

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"zot.dev/zot/schema"
	"zot.dev/zot/sdk/wire"
)

// compiler loads the embedded schema once.
var compiler = sync.OnceValues(func() (*jsonschema.Compiler, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	names, err := fs.Glob(schema.FS, "rpc/*.json")
	if err != nil {
		return nil, err
	}
	scripts, err := fs.Glob(schema.FS, "script/*.json")
	if err != nil {
		return nil, err
	}
	for _, n := range append(names, scripts...) {
		data, err := schema.FS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", n, err)
		}
		if err := c.AddResource(schema.BaseURL+n, doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", n, err)
		}
	}
	return c, nil
})

var (
	mu       sync.Mutex
	compiled = map[string]*jsonschema.Schema{}
)

func schemaOf(def string) (*jsonschema.Schema, error) {
	ref, ok := wire.SchemaRef(def)
	if !ok {
		return nil, fmt.Errorf("no schema definition %q", def)
	}
	return compile(def, ref)
}

// compile compiles ref once, keeping it under key.
func compile(key, ref string) (*jsonschema.Schema, error) {
	mu.Lock()
	defer mu.Unlock()
	if s, ok := compiled[key]; ok {
		return s, nil
	}
	c, err := compiler()
	if err != nil {
		return nil, fmt.Errorf("loading the schema: %w", err)
	}
	s, err := c.Compile(ref)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", ref, err)
	}
	compiled[key] = s
	return s, nil
}

var printer = message.NewPrinter(language.English)

// ValidateDef checks data against the named definition. A failure is a
// *wire.ValidationError with one line per problem.
func ValidateDef(def string, data []byte) error {
	s, err := schemaOf(def)
	if err != nil {
		return err
	}
	return validate(s, def, data)
}

// ValidateScript checks a script file of the scripted provider against
// schema/script/script.json. A failure is a *wire.ValidationError.
func ValidateScript(data []byte) error {
	s, err := compile("script/script.json", schema.BaseURL+"script/script.json")
	if err != nil {
		return err
	}
	return validate(s, "Script", data)
}

// validate checks data against s, naming def in the failure.
func validate(s *jsonschema.Schema, def string, data []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return &wire.ValidationError{Def: def, Problems: []string{"invalid JSON: " + err.Error()}}
	}
	if err := s.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return &wire.ValidationError{Def: def, Problems: problems(ve)}
		}
		return err
	}
	return nil
}

// problems flattens a validation error tree into one line per leaf. When
// a oneOf of variants fails, the branches whose `type` const the value
// does not match are dropped, leaving what is wrong in the variant the
// message meant.
func problems(ve *jsonschema.ValidationError) []string {
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, "at /"+strings.Join(e.InstanceLocation, "/")+": "+e.ErrorKind.LocalizedString(printer))
			return
		}
		causes := e.Causes
		if len(causes) > 1 {
			var meant []*jsonschema.ValidationError
			for _, c := range causes {
				if !wrongVariant(c, len(e.InstanceLocation)+1) {
					meant = append(meant, c)
				}
			}
			if len(meant) > 0 {
				causes = meant
			}
		}
		for _, c := range causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(out)
	return out
}

// wrongVariant reports whether the error tree e contains a `type` const
// mismatch at the given depth: the value is not this variant at all.
func wrongVariant(e *jsonschema.ValidationError, depth int) bool {
	if len(e.Causes) == 0 {
		loc := e.InstanceLocation
		_, isConst := e.ErrorKind.(*kind.Const)
		return isConst && len(loc) == depth && loc[depth-1] == "type"
	}
	for _, c := range e.Causes {
		if wrongVariant(c, depth) {
			return true
		}
	}
	return false
}

func variant(union string, data []byte) error {
	d, err := wire.DecodeFrameType(data)
	if err != nil {
		return err
	}
	def, ok := wire.VariantDef(union, d)
	if !ok {
		return &wire.UnknownTypeError{Union: union, Type: d}
	}
	return ValidateDef(def, data)
}

// ValidateCommand checks a command line against its command's definition.
func ValidateCommand(data []byte) error { return variant("Command", data) }

// ValidateEvent checks an event line against its event's definition.
func ValidateEvent(data []byte) error { return variant("Event", data) }

// ValidateFrame checks one line the server wrote: a response (and its
// data against its command's result) or an event.
func ValidateFrame(data []byte) error {
	typ, err := wire.DecodeFrameType(data)
	if err != nil {
		return err
	}
	if typ != wire.TypeResponse {
		return ValidateEvent(data)
	}
	if err := ValidateDef("Response", data); err != nil {
		return err
	}
	resp, _, err := wire.DecodeFrame(data)
	if err != nil {
		return err
	}
	if !resp.Success {
		return nil
	}
	def, has := wire.CommandResultDef(resp.Command)
	switch {
	case has && len(resp.Data) == 0:
		return &wire.ValidationError{Def: "Response", Problems: []string{"at /data: missing result of " + resp.Command}}
	case has:
		return ValidateDef(def, resp.Data)
	case len(resp.Data) != 0:
		return &wire.ValidationError{Def: "Response", Problems: []string{"at /data: " + resp.Command + " has no result"}}
	}
	return nil
}
