package wire

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"zot.dev/zot/internal/wirecodec"
)

// schemaRules are the checks of the schema the generated validators do
// not make (validators.Rules).
var schemaRules = map[string]func(v any) []string{"Response": responseRules}

// responseRules checks what the schema's if/then/else says of a
// response: a failure has `error` and `code`, a success has neither.
func responseRules(v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	_, hasErr := m["error"]
	_, hasCode := m["code"]
	if m["success"] == false {
		var missing []string
		if !hasErr {
			missing = append(missing, "error")
		}
		if !hasCode {
			missing = append(missing, "code")
		}
		if len(missing) == 1 {
			return []string{"at /: missing property " + wirecodec.QuoteList(missing)}
		}
		if len(missing) > 1 {
			return []string{"at /: missing properties " + wirecodec.QuoteList(missing)}
		}
		return nil
	}
	if hasErr || hasCode {
		return []string{"at /: a successful response has no error or code"}
	}
	return nil
}

// ValidateCommand checks a command line against the schema of the command
// its `type` names.
func ValidateCommand(data []byte) error { return validateVariant("Command", data) }

// ReadCommand decodes and checks one command line the way a server reads
// it, leniently, so that a client newer than the server works with it: a
// member the command's schema does not define is ignored, and an optional
// member sent as null is absent; what remains must match the schema. It
// returns the command and the paths of the members it ignored, such as
// "extra" or "images[].note" (sorted; nil when there were none), or an
// error: *UnknownTypeError, *ValidationError or *DecodeError.
//
// The members ignored never reach the decoder: encoding/json matches keys
// without regard to case, and an unknown "MESSAGE" must not stand in for
// "message".
func ReadCommand(data []byte) (Command, []string, error) {
	typ, err := wirecodec.PeekType(data)
	if err != nil {
		return nil, nil, err
	}
	def, ok := unionVariants["Command"][typ]
	if !ok {
		return nil, nil, &UnknownTypeError{Union: "Command", Type: typ}
	}
	t, err := readTree(def, data)
	if err != nil {
		return nil, nil, err
	}
	v := t.v
	if err := checkCommand(def, v); err != nil {
		return nil, nil, err
	}
	var unknown []string
	longs := t.longs
	if dropLenient(def, v, "", &unknown) {
		// Decode what is left: the line without the members dropped. The
		// encoding copies the strings the tree shares with the line.
		if data, err = json.Marshal(v); err != nil {
			return nil, nil, fmt.Errorf("re-encoding %s: %w", typ, err)
		}
		longs = nil
	}
	cmd, err := decodeCommand(typ, data, longs)
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(unknown)
	return cmd, slices.Compact(unknown), nil
}

// checkCommand is validators.Value for a command, made here: a server
// checks every line it reads, and the generated check of a command is
// this package's own, so it is called straight away.
func checkCommand(def string, v any) error {
	var problems []string
	validatorsByDef[def](v, nil, &problems)
	if rule := schemaRules[def]; rule != nil {
		problems = append(problems, rule(v)...)
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	return &ValidationError{Def: def, Problems: problems}
}

// readTree decodes a command line into the tree its checks walk. Valid
// JSON is decoded where it lies, its long strings sharing the line's
// bytes, and the command is then decoded from the line itself: a prompt
// that is mostly one long text is held about twice while it is read (the
// line and the command's string), not four times. Other text goes through
// json.Decoder, whose words say what is wrong.
func readTree(def string, data []byte) (tree, error) {
	if json.Valid(data) {
		return decodeTree(data), nil
	}
	v, err := wirecodec.DecodeValue(def, data)
	if err != nil {
		return tree{}, err
	}
	return tree{v: v}, nil
}

// dropLenient removes from v, a value of the open object def, every member
// def does not define (adding its path, after prefix, to unknown) and every
// null member, and does the same in the open objects v holds. It reports
// whether it removed anything.
func dropLenient(def string, v any, prefix string, unknown *[]string) bool {
	m, ok := v.(map[string]any)
	fields := openFields[def]
	if !ok || fields == nil {
		return false
	}
	dropped := false
	for k, x := range m {
		inner, known := fields[k]
		switch {
		case !known:
			*unknown = append(*unknown, prefix+k)
		case x == nil:
		default:
			if inner == "" {
				continue
			}
			if list, ok := x.([]any); ok {
				for _, item := range list {
					dropped = dropLenient(inner, item, prefix+k+"[].", unknown) || dropped
				}
			} else {
				dropped = dropLenient(inner, x, prefix+k+".", unknown) || dropped
			}
			continue
		}
		delete(m, k)
		dropped = true
	}
	return dropped
}

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
	case len(r.Data) != 0:
		return &ValidationError{Def: "Response", Problems: []string{"at /data: " + r.Command + " has no result"}}
	}
	return nil
}

// ValidateFrame checks one line the server wrote: a response or an event.
func ValidateFrame(data []byte) error {
	typ, err := wirecodec.PeekType(data)
	if err != nil {
		return err
	}
	if typ == TypeResponse {
		return ValidateResponse(data)
	}
	return ValidateEvent(data)
}
