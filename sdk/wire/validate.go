package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"zot.dev/zot/schema"
)

// ValidationError reports a message that does not match its schema. Its
// Error is one line: the JSON path of each problem and what is wrong there.
type ValidationError struct {
	Def      string   // the definition checked against, e.g. "PromptCommand"
	Problems []string // "at /images/0/data: got number, want string"
}

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

// validators compiles the embedded schema once, on first use.
var validators = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	names, err := fs.Glob(schema.FS, "*.json")
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
	out := make(map[string]*jsonschema.Schema, len(defRefs))
	for name, ref := range defRefs {
		s, err := c.Compile(ref)
		if err != nil {
			return nil, fmt.Errorf("compiling %s: %w", ref, err)
		}
		out[name] = s
	}
	return out, nil
})

var printer = message.NewPrinter(language.English)

// ValidateDef checks data against the named schema definition (e.g.
// "Message" or "StateResult").
func ValidateDef(def string, data []byte) error {
	vs, err := validators()
	if err != nil {
		return fmt.Errorf("loading the schema: %w", err)
	}
	s, ok := vs[def]
	if !ok {
		return fmt.Errorf("no schema definition %q", def)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return &ValidationError{Def: def, Problems: []string{"invalid JSON: " + err.Error()}}
	}
	if err := s.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return &ValidationError{Def: def, Problems: problems(ve)}
		}
		return err
	}
	return nil
}

// problems flattens a validation error tree into one line per leaf. When
// a oneOf of variants fails, the complaints that only say "`type` is not
// this other variant's" are dropped, leaving what is wrong in the variant
// the message meant.
func problems(ve *jsonschema.ValidationError) []string {
	type leaf struct {
		at       string
		msg      string
		typeOnly bool
	}
	var leaves []leaf
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := e.InstanceLocation
			_, isConst := e.ErrorKind.(*kind.Const)
			leaves = append(leaves, leaf{
				at:       "/" + strings.Join(loc, "/"),
				msg:      e.ErrorKind.LocalizedString(printer),
				typeOnly: isConst && len(loc) > 0 && loc[len(loc)-1] == "type",
			})
			return
		}
		causes := e.Causes
		if len(causes) > 1 {
			// A oneOf over variants: skip the variants whose `type`
			// const the value does not match.
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
	keepTypeOnly := true
	for _, l := range leaves {
		if !l.typeOnly {
			keepTypeOnly = false
		}
	}
	var out []string
	for _, l := range leaves {
		if l.typeOnly && !keepTypeOnly {
			continue
		}
		out = append(out, "at "+l.at+": "+l.msg)
	}
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

// validateVariant validates data against the variant of union named by
// its `type`.
func validateVariant(union string, data []byte) error {
	typ, err := peekType(data)
	if err != nil {
		return err
	}
	def, ok := unionVariants[union][typ]
	if !ok {
		return &UnknownTypeError{Union: union, Type: typ}
	}
	return ValidateDef(def, data)
}

// ValidateCommand checks a command line against the schema of the command
// its `type` names.
func ValidateCommand(data []byte) error { return validateVariant("Command", data) }

// ValidateEvent checks an event line against the schema of the event its
// `type` names.
func ValidateEvent(data []byte) error { return validateVariant("Event", data) }

// ValidateContentBlock checks a content block against the schema of the
// block its `type` names.
func ValidateContentBlock(data []byte) error { return validateVariant("ContentBlock", data) }

// ValidateResponse checks a response line against the Response schema and,
// on success, its `data` against the result schema of its command.
func ValidateResponse(data []byte) error {
	if err := ValidateDef("Response", data); err != nil {
		return err
	}
	var r Response
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	def, hasResult := commandResults[r.Command]
	switch {
	case !r.Success:
		return nil
	case hasResult && len(r.Data) == 0:
		return &ValidationError{Def: "Response", Problems: []string{"at /data: missing result of " + r.Command}}
	case hasResult:
		return ValidateDef(def, r.Data)
	case len(r.Data) != 0 && r.Command != "":
		return &ValidationError{Def: "Response", Problems: []string{"at /data: " + r.Command + " has no result"}}
	}
	return nil
}

// ValidateFrame checks one line the server wrote: a response or an event.
func ValidateFrame(data []byte) error {
	typ, err := peekType(data)
	if err != nil {
		return err
	}
	if typ == TypeResponse {
		return ValidateResponse(data)
	}
	return ValidateEvent(data)
}

// DebugValidate reports whether outbound frames should be validated before
// they are written: set ZOT_VALIDATE=1 to turn it on. The server and the
// conformance tests use it to catch a frame that breaks the schema.
var DebugValidate = os.Getenv("ZOT_VALIDATE") == "1"
