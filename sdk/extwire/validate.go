package extwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"zot.dev/zot/internal/wirecodec"
)

// ProtocolVersion is the major version of the extension protocol, sent
// in hello_ack. Incompatible changes bump it; within a version frames and
// fields only grow.
const ProtocolVersion = 1

// ValidationError reports a frame (or manifest) that does not match its
// schema. Its Error is one line: the JSON path of each problem and what is
// wrong there.
type ValidationError struct {
	Def      string   // the definition checked against, e.g. "ToolResultFrame"
	Problems []string // "at /content/0/text: got number, want string"
}

// Error returns the message of the ValidationError.
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

// ValidateDef checks data against the named schema definition (e.g.
// "Manifest" or "Panel"). The checks are generated from schema/ext and
// report problems as JSON pointers.
func ValidateDef(def string, data []byte) error {
	check, ok := validatorsByDef[def]
	if !ok {
		return fmt.Errorf("no schema definition %q", def)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return &ValidationError{Def: def, Problems: []string{"invalid JSON: " + err.Error()}}
	}
	if dec.More() {
		return &ValidationError{Def: def, Problems: []string{"invalid JSON: data after the value"}}
	}
	var problems []string
	check(v, nil, &problems)
	if len(problems) > 0 {
		sort.Strings(problems)
		return &ValidationError{Def: def, Problems: problems}
	}
	return nil
}

// validateVariant validates data against the variant of union named by
// its `type`.
func validateVariant(union string, data []byte) error {
	typ, err := wirecodec.PeekType(data)
	if err != nil {
		return err
	}
	def, ok := unionVariants[union][typ]
	if !ok {
		return &UnknownTypeError{Union: union, Type: typ}
	}
	return ValidateDef(def, data)
}

// ValidateExtensionFrame checks a line an extension wrote against the
// schema of the frame its `type` names.
func ValidateExtensionFrame(data []byte) error { return validateVariant("ExtensionFrame", data) }

// ValidateHostFrame checks a line zot wrote to an extension against the
// schema of the frame its `type` names.
func ValidateHostFrame(data []byte) error { return validateVariant("HostFrame", data) }

// ValidateManifest checks the bytes of an extension.json.
func ValidateManifest(data []byte) error { return ValidateDef("Manifest", data) }
