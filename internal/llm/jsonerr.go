package llm

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// ErrorText returns the message of err as clients and the model read it.
// encoding/json's decoding errors name Go types and struct names ("json:
// cannot unmarshal number into Go struct field args.path of type
// string"), which mean nothing to either; ErrorText words them in JSON
// terms and names the field (`field "path": expected a string, got a
// number`), whether err is such an error, wraps one, or only carries one's
// text in its message (an error formatted with %v, a provider's message).
// The rest of the message is kept as it is. A nil err gives "".
func ErrorText(err error) string {
	if err == nil {
		return ""
	}
	return reword(err.Error(), err)
}

// reword rewords the encoding/json errors in msg, the message of err or
// of an error that wraps err (err may be nil).
func reword(msg string, err error) string {
	if !strings.Contains(msg, "json: ") {
		return msg
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Type != nil {
		msg = strings.Replace(msg, te.Error(), typeErrorText(te.Field, te.Value, kindOf(te.Type)), 1)
	}
	var ie *json.InvalidUnmarshalError
	if errors.As(err, &ie) {
		msg = strings.Replace(msg, ie.Error(), invalidTargetText, 1)
	}
	return rewordJSONText(msg)
}

// invalidTargetText replaces json.InvalidUnmarshalError's message, which
// names the Go type a program wrongly decoded into.
const invalidTargetText = "JSON decoded into an invalid destination (a fault in the program)"

// typeErrorText says that the value at field (a JSON path such as
// "edits.old"; "" for the whole document) is of the wrong kind: want is
// what fits ("a string"; "" when not known), value is encoding/json's
// word for what came ("number", "number 1.5", "bool").
func typeErrorText(field, value, want string) string {
	var b strings.Builder
	if field != "" {
		fmt.Fprintf(&b, "field %q: ", field)
	}
	got := valueWords(value)
	if want == "" {
		b.WriteString("cannot be " + got)
	} else {
		b.WriteString("expected " + want + ", got " + got)
	}
	return b.String()
}

// valueWords turns encoding/json's description of a JSON value into words.
func valueWords(v string) string {
	switch v {
	case "number":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "array":
		return "an array"
	case "object":
		return "an object"
	}
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return "the number " + n
	}
	return v
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// kindOf names the JSON values that decode into t, or "" when that cannot
// be told.
func kindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	p := reflect.PointerTo(t)
	if !p.Implements(jsonUnmarshaler) && p.Implements(textUnmarshaler) {
		return "a string"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Int8, reflect.Int16, reflect.Int32:
		bits := t.Bits()
		return fmt.Sprintf("an integer from %d to %d", -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1)
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return "a non-negative integer"
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return fmt.Sprintf("an integer from 0 to %d", uint64(1)<<t.Bits()-1)
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		if e := t.Elem(); e.Kind() == reflect.Uint8 && !reflect.PointerTo(e).Implements(jsonUnmarshaler) && !reflect.PointerTo(e).Implements(textUnmarshaler) {
			return "a base64 string"
		}
		return "an array"
	case reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return ""
}

// basicTypes are the Go types a type's name in a message is looked up in.
var basicTypes = func() map[string]reflect.Type {
	m := make(map[string]reflect.Type)
	for _, t := range []reflect.Type{
		reflect.TypeFor[string](), reflect.TypeFor[bool](), reflect.TypeFor[float32](), reflect.TypeFor[float64](),
		reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[int16](), reflect.TypeFor[int32](), reflect.TypeFor[int64](),
		reflect.TypeFor[uint](), reflect.TypeFor[uint8](), reflect.TypeFor[uint16](), reflect.TypeFor[uint32](), reflect.TypeFor[uint64](),
		reflect.TypeFor[uintptr](),
	} {
		m[t.String()] = t
	}
	m["[]uint8"] = reflect.TypeFor[[]byte]()
	return m
}()

// kindOfName names the JSON values that decode into the Go type written
// as name, or "" when that cannot be told from the name.
func kindOfName(name string) string {
	name = strings.TrimLeft(name, "*")
	if t, ok := basicTypes[name]; ok {
		return kindOf(t)
	}
	switch {
	case strings.HasPrefix(name, "map["), strings.HasPrefix(name, "struct {"), name == "struct{}":
		return "an object"
	case strings.HasPrefix(name, "["):
		return "an array"
	}
	return ""
}

// rewordJSONText rewords every json.UnmarshalTypeError and
// json.InvalidUnmarshalError message found in msg by its wording.
func rewordJSONText(msg string) string {
	const (
		cannot = "json: cannot unmarshal "
		target = "json: Unmarshal("
	)
	var b strings.Builder
	for {
		i := strings.Index(msg, "json: ")
		if i < 0 {
			break
		}
		b.WriteString(msg[:i])
		rest := msg[i:]
		var text string
		n := 0
		switch {
		case strings.HasPrefix(rest, cannot):
			text, n = parseTypeError(rest[len(cannot):])
			n += len(cannot)
		case strings.HasPrefix(rest, target):
			if n = invalidTargetEnd(rest[len(target):]); n > 0 {
				text, n = invalidTargetText, n+len(target)
			}
		}
		if n <= 0 || text == "" {
			b.WriteString("json: ")
			msg = rest[len("json: "):]
			continue
		}
		b.WriteString(text)
		msg = rest[n:]
	}
	b.WriteString(msg)
	return b.String()
}

// invalidTargetEnd returns how many bytes of s, the part of a
// json.InvalidUnmarshalError's message after "json: Unmarshal(", the rest
// of that message takes, or 0 when s does not read as one. encoding/json
// writes only "nil)", "nil T)" and "non-pointer T)"; a looser reading
// would run on into a message that follows.
func invalidTargetEnd(s string) int {
	if strings.HasPrefix(s, "nil)") {
		return len("nil)")
	}
	pos := 0
	switch {
	case strings.HasPrefix(s, "nil "):
		pos = len("nil ")
	case strings.HasPrefix(s, "non-pointer "):
		pos = len("non-pointer ")
	default:
		return 0
	}
	end := typeEnd(s, pos)
	if end <= pos || end >= len(s) || s[end] != ')' {
		return 0
	}
	return end + 1
}

// parseTypeError reads the part of an UnmarshalTypeError's message after
// "json: cannot unmarshal " at the start of s, and returns its rewording
// and how many bytes of s it took (0 when s does not read as one).
func parseTypeError(s string) (string, int) {
	value, after, ok := strings.Cut(s, " into Go ")
	if !ok || strings.Contains(value, " ") && !strings.HasPrefix(value, "number ") {
		return "", 0
	}
	pos := len(value) + len(" into Go ")
	field := ""
	switch {
	case strings.HasPrefix(after, "struct field "):
		path, _, ok := strings.Cut(after[len("struct field "):], " of type ")
		if !ok || strings.ContainsAny(path, " ") {
			return "", 0
		}
		// path is the struct's name, a dot, and the field's JSON path.
		_, field, _ = strings.Cut(path, ".")
		pos += len("struct field ") + len(path) + len(" of type ")
	case strings.HasPrefix(after, "value of type "):
		pos += len("value of type ")
	default:
		return "", 0
	}
	end := typeEnd(s, pos)
	if end > pos && s[end-1] == '.' { // the end of a sentence
		end--
	}
	if end <= pos {
		return "", 0
	}
	return typeErrorText(field, value, kindOfName(s[pos:end])), end
}

// typeEnd returns the index just past the Go type written at s[i:] (as
// reflect.Type.String writes it: "string", "[]main.edit", "map[string]
// interface {}", "struct { A int \"json:\\\"a\\\"\" }"); a closing bracket
// that closes nothing ends the type. It returns -1 when brackets do not
// close.
func typeEnd(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch c := s[j]; c {
		case '[', '{', '(':
			depth++
		case ']', '}', ')':
			depth--
			if depth < 0 {
				return j
			}
		case '"':
			// A struct tag, quoted with escapes.
			for j++; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
		case ' ':
			if depth > 0 {
				continue
			}
			// "struct {" and "interface {" go on after a space.
			if strings.HasSuffix(s[:j], "struct") || strings.HasSuffix(s[:j], "interface") || strings.HasSuffix(s[:j], "func") {
				if j+1 < len(s) && s[j+1] == '{' {
					continue
				}
			}
			return j
		case ',', ';', ':', '\n', '\r', '\t':
			if depth == 0 {
				return j
			}
		}
	}
	if depth != 0 {
		return -1
	}
	return len(s)
}
