// Package schemacheck validates zot protocol messages (and the scripted
// provider's script files) with a complete JSON Schema (draft 2020-12)
// validator, github.com/santhosh-tekuri/jsonschema/v6, compiled once from
// the embedded schema files.
//
// The runtime itself validates with the checks package wire generates from
// the same schema, which need no schema engine at start-up (loading this
// one costs milliseconds and megabytes before main runs). This package is
// the reference the generated checks are tested against, and what the
// conformance tests use to check every frame the server writes; so that
// it stays independent of the generated code, it reads which definition
// each message is checked against from the schema files too.
package schemacheck

import (
	"bytes"
	"encoding/json"
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

	"zot.dev/zot/internal/wirecodec"
	"zot.dev/zot/schema"
	"zot.dev/zot/sdk/wire"
)

// compiler loads the embedded schema once.
var compiler = sync.OnceValues(func() (*jsonschema.Compiler, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	names, err := fs.Glob(schema.FS, "*/*.json")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
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

// protocol is what this package reads from a protocol's schema files
// itself, rather than from the code generated from them: where each
// definition is, which variant of a union each `type` names, and which
// definition a successful response to each command carries.
type protocol struct {
	refs     map[string]string            // definition → its absolute reference
	variants map[string]map[string]string // union → `type` → variant definition
	results  map[string]string            // command `type` → result definition
}

// rpc is the protocol of `zot rpc`, schema/rpc/.
var rpc = sync.OnceValues(func() (*protocol, error) { return loadProtocol("rpc") })

// loadProtocol reads the schema files of folder dir of package schema.
func loadProtocol(dir string) (*protocol, error) {
	names, err := fs.Glob(schema.FS, dir+"/*.json")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no schema files in %s", dir)
	}
	type def struct {
		OneOf []struct {
			Ref string `json:"$ref"`
		} `json:"oneOf"`
		Properties struct {
			Type struct {
				Const string `json:"const"`
			} `json:"type"`
		} `json:"properties"`
		Result string `json:"x-result"`
	}
	defs := map[string]def{}
	p := &protocol{refs: map[string]string{}, variants: map[string]map[string]string{}, results: map[string]string{}}
	for _, n := range names {
		data, err := schema.FS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Defs map[string]def `json:"$defs"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", n, err)
		}
		for name, d := range doc.Defs {
			if _, dup := defs[name]; dup {
				return nil, fmt.Errorf("schema %s: definition %s defined twice", n, name)
			}
			defs[name] = d
			p.refs[name] = schema.BaseURL + n + "#/$defs/" + name
		}
	}
	for name, d := range defs {
		if typ := d.Properties.Type.Const; d.Result != "" && typ != "" {
			p.results[typ] = d.Result
		}
		if len(d.OneOf) == 0 {
			continue
		}
		p.variants[name] = map[string]string{}
		for _, alt := range d.OneOf {
			_, v, ok := strings.Cut(alt.Ref, "#/$defs/")
			if !ok || defs[v].Properties.Type.Const == "" {
				return nil, fmt.Errorf("%s: variant %q is not a definition with a `type` const", name, alt.Ref)
			}
			p.variants[name][defs[v].Properties.Type.Const] = v
		}
	}
	return p, nil
}

var (
	mu       sync.Mutex
	compiled = map[string]*jsonschema.Schema{}
)

func schemaOf(def string) (*jsonschema.Schema, error) {
	p, err := rpc()
	if err != nil {
		return nil, err
	}
	ref, ok := p.refs[def]
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
	p, err := rpc()
	if err != nil {
		return err
	}
	d, err := wirecodec.PeekType(data)
	if err != nil {
		return err
	}
	def, ok := p.variants[union][d]
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
	p, err := rpc()
	if err != nil {
		return err
	}
	typ, err := wirecodec.PeekType(data)
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
	def, has := p.results[resp.Command]
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
