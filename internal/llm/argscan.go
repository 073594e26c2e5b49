package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"zot.dev/zot/internal/jsonscan"
)

// maxDepth is how deeply arrays and objects may nest: encoding/json's limit,
// so that what the scanner accepts every decoder downstream accepts too.
const maxDepth = 10000

// manyNames is the member count from which an object's names are looked up
// in a map rather than compared one by one.
const manyNames = 16

// argScanner checks tool arguments in one pass: that they are one JSON
// value, as encoding/json's json.Valid would say, and, when names is set,
// that no object in them gives a member name twice, names compared as
// encoding/json decodes them. It reports the first problem as a
// *scanError. Beyond the list of names it keeps, it allocates only for
// names that need decoding (escapes, invalid UTF-8) and for objects with
// many members.
type argScanner struct {
	data  []byte
	names bool
	seen  [][]byte // names of the objects being read, innermost last
}

// scanError is a problem found by argScanner. path locates it, innermost
// segment first (segments are added while the error travels out of the
// values it was found in).
type scanError struct {
	what     string // "invalid character 'x'"; unused when off < 0 or repeated
	off      int    // byte offset, or -1 when the text ended
	expected string // what would have been valid there, if anything helps
	after    bool   // the problem follows the value path names
	repeated bool   // the name path ends with was given twice
	path     []pathSegment
	top      string // what the arguments are: "object", or "value" when not one
}

// pathSegment is an object member name or an array index.
type pathSegment struct {
	name    string
	index   int // when isIndex
	isIndex bool
}

// Error describes the problem in JSON words, naming the field.
func (e *scanError) Error() string {
	field := e.field()
	if e.repeated {
		return "field " + field + " twice"
	}
	var b strings.Builder
	if e.off < 0 {
		b.WriteString("the arguments end inside ")
		if field == "" {
			b.WriteString("the " + e.top)
		} else {
			b.WriteString(e.label() + field)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s at byte %d", e.what, e.off)
	switch {
	case e.after && field == "":
		b.WriteString(" after the " + e.top)
	case e.after:
		b.WriteString(" after " + e.label() + field)
	case field != "":
		b.WriteString(" in " + e.label() + field)
	}
	if e.expected != "" {
		b.WriteString(", expected " + e.expected)
	}
	return b.String()
}

// label is "field " for a path that starts with a member name, "element "
// for one that starts with an index (a top-level array).
func (e *scanError) label() string {
	if len(e.path) > 0 && e.path[len(e.path)-1].isIndex {
		return "element "
	}
	return "field "
}

// field renders the path as a quoted string such as "edits[2].old_text",
// or "" when it is empty.
func (e *scanError) field() string {
	if len(e.path) == 0 {
		return ""
	}
	var b strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		seg := e.path[i]
		switch {
		case seg.isIndex:
			b.WriteString("[" + strconv.Itoa(seg.index) + "]")
		case i < len(e.path)-1:
			b.WriteString("." + seg.name)
		default:
			b.WriteString(seg.name)
		}
	}
	return strconv.Quote(b.String())
}

// in adds a segment to the path of err, when there is an error.
func in(err *scanError, seg pathSegment) *scanError {
	if err != nil {
		err.path = append(err.path, seg)
	}
	return err
}

// scan checks that data is one JSON value with nothing but white space
// after it.
func (s *argScanner) scan() *scanError {
	i := jsonscan.SkipSpace(s.data, 0)
	top := "value"
	if i < len(s.data) && s.data[i] == '{' {
		top = "object"
	}
	i, err := s.value(i, 1)
	if err == nil {
		if i = jsonscan.SkipSpace(s.data, i); i < len(s.data) {
			err = &scanError{what: describeByte(s.data, i), off: i, after: true}
		}
	}
	if err != nil {
		err.top = top
	}
	return err
}

// value checks the value at data[i], depth containers deep counting its
// own, and returns the index just past it.
func (s *argScanner) value(i, depth int) (int, *scanError) {
	data := s.data
	if i >= len(data) {
		return 0, &scanError{off: -1}
	}
	switch c := data[i]; {
	case c == '"':
		end, _, err := s.str(i)
		return end, err
	case c == '{':
		return s.object(i, depth)
	case c == '[':
		return s.array(i, depth)
	case c == '-' || c >= '0' && c <= '9':
		return s.number(i)
	case c == 't':
		return s.literal(i, "true")
	case c == 'f':
		return s.literal(i, "false")
	case c == 'n':
		return s.literal(i, "null")
	}
	return 0, &scanError{what: describeByte(data, i), off: i, expected: "a value"}
}

// object checks the object at data[i] ('{').
func (s *argScanner) object(i, depth int) (int, *scanError) {
	if depth > maxDepth {
		return 0, &scanError{what: "nesting deeper than " + strconv.Itoa(maxDepth) + " levels", off: i}
	}
	data := s.data
	base := len(s.seen)
	defer func() { s.seen = s.seen[:base] }()
	var many map[string]bool
	i = jsonscan.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(data) {
			return 0, &scanError{off: -1}
		}
		if data[i] != '"' {
			return 0, &scanError{what: describeByte(data, i), off: i, expected: "a field name in quotes"}
		}
		start := i
		end, escaped, err := s.str(i)
		if err != nil {
			return 0, err
		}
		var name []byte
		if s.names {
			// A name is its bytes unless it holds escapes or bytes that
			// are not UTF-8 (which decode to U+FFFD).
			name = data[start+1 : end-1]
			if escaped || !utf8.Valid(name) {
				name = decodeName(data[start:end])
			}
			if many != nil {
				if many[string(name)] {
					return 0, &scanError{repeated: true, path: []pathSegment{{name: string(name)}}}
				}
				many[string(name)] = true
			} else {
				for _, prev := range s.seen[base:] {
					if bytes.Equal(prev, name) {
						return 0, &scanError{repeated: true, path: []pathSegment{{name: string(name)}}}
					}
				}
				s.seen = append(s.seen, name)
				if len(s.seen)-base == manyNames {
					many = make(map[string]bool, 2*manyNames)
					for _, n := range s.seen[base:] {
						many[string(n)] = true
					}
				}
			}
		}
		seg := func() pathSegment {
			if name == nil {
				name = decodeName(data[start:end])
			}
			return pathSegment{name: string(name)}
		}
		i = jsonscan.SkipSpace(data, end)
		if i >= len(data) {
			return 0, in(&scanError{off: -1}, seg())
		}
		if data[i] != ':' {
			return 0, in(&scanError{what: describeByte(data, i), off: i, expected: "':'", after: true}, seg())
		}
		if i, err = s.value(jsonscan.SkipSpace(data, i+1), depth+1); err != nil {
			return 0, in(err, seg())
		}
		i = jsonscan.SkipSpace(data, i)
		if i >= len(data) {
			return 0, &scanError{off: -1}
		}
		switch data[i] {
		case ',':
			i = jsonscan.SkipSpace(data, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, in(&scanError{what: describeByte(data, i), off: i, expected: "',' or '}'", after: true}, seg())
		}
	}
}

// array checks the array at data[i] ('[').
func (s *argScanner) array(i, depth int) (int, *scanError) {
	if depth > maxDepth {
		return 0, &scanError{what: "nesting deeper than " + strconv.Itoa(maxDepth) + " levels", off: i}
	}
	data := s.data
	i = jsonscan.SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, nil
	}
	for n := 0; ; n++ {
		var err *scanError
		i, err = s.value(i, depth+1)
		if err != nil {
			return 0, in(err, pathSegment{index: n, isIndex: true})
		}
		i = jsonscan.SkipSpace(data, i)
		if i >= len(data) {
			return 0, &scanError{off: -1}
		}
		switch data[i] {
		case ',':
			i = jsonscan.SkipSpace(data, i+1)
		case ']':
			return i + 1, nil
		default:
			return 0, in(&scanError{what: describeByte(data, i), off: i, expected: "',' or ']'", after: true}, pathSegment{index: n, isIndex: true})
		}
	}
}

// plainByte marks the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str checks the string at data[i] ('"') and returns the index just past
// it and whether it holds escapes.
func (s *argScanner) str(i int) (int, bool, *scanError) {
	data := s.data
	escaped := false
	for j := i + 1; ; {
		for j < len(data) && plainByte[data[j]] {
			j++
		}
		if j >= len(data) {
			return 0, false, &scanError{off: -1}
		}
		switch c := data[j]; {
		case c == '"':
			return j + 1, escaped, nil
		case c == '\\':
			escaped = true
			if j+1 >= len(data) {
				return 0, false, &scanError{off: -1}
			}
			switch data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				for k := j + 2; k < j+6; k++ {
					if k >= len(data) {
						return 0, false, &scanError{off: -1}
					}
					if !isHex(data[k]) {
						return 0, false, &scanError{what: badEscape(data, j, k), off: j}
					}
				}
				j += 6
			default:
				return 0, false, &scanError{what: badEscape(data, j, j+1), off: j}
			}
		default:
			return 0, false, &scanError{what: fmt.Sprintf("unescaped control character U+%04X", c), off: j}
		}
	}
}

// badEscape describes the invalid escape that starts with the backslash
// at data[j] and goes wrong at data[k].
func badEscape(data []byte, j, k int) string {
	r, size := utf8.DecodeRune(data[k:])
	if r == utf8.RuneError && size <= 1 || !strconv.IsPrint(r) {
		return fmt.Sprintf("invalid escape %s followed by %s", data[j:k], describeChar(data, k))
	}
	return "invalid escape " + string(data[j:k+size])
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number checks the number at data[i]: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *argScanner) number(i int) (int, *scanError) {
	data := s.data
	digits := func(j int) (int, *scanError) {
		if j >= len(data) {
			return 0, &scanError{off: -1}
		}
		if data[j] < '0' || data[j] > '9' {
			return 0, &scanError{what: describeByte(data, j), off: j, expected: "a digit"}
		}
		for j < len(data) && data[j] >= '0' && data[j] <= '9' {
			j++
		}
		return j, nil
	}
	j := i
	if data[j] == '-' {
		j++
	}
	if j < len(data) && data[j] == '0' {
		j++
	} else {
		var err *scanError
		if j, err = digits(j); err != nil {
			return 0, err
		}
	}
	if j < len(data) && data[j] == '.' {
		var err *scanError
		if j, err = digits(j + 1); err != nil {
			return 0, err
		}
	}
	if j < len(data) && (data[j] == 'e' || data[j] == 'E') {
		j++
		if j < len(data) && (data[j] == '+' || data[j] == '-') {
			j++
		}
		var err *scanError
		if j, err = digits(j); err != nil {
			return 0, err
		}
	}
	return j, nil
}

// literal checks that data[i:] starts with word.
func (s *argScanner) literal(i int, word string) (int, *scanError) {
	data := s.data
	for k := 1; k < len(word); k++ {
		if i+k >= len(data) {
			return 0, &scanError{off: -1}
		}
		if data[i+k] != word[k] {
			return 0, &scanError{what: describeByte(data, i+k), off: i + k, expected: word}
		}
	}
	return i + len(word), nil
}

// describeByte says that the character at data[i] is out of place.
func describeByte(data []byte, i int) string {
	return "invalid character " + describeChar(data, i)
}

// describeChar names the character at data[i]: 'x', or the byte's value
// when it is not UTF-8.
func describeChar(data []byte, i int) string {
	r, size := utf8.DecodeRune(data[i:])
	if r == utf8.RuneError && size <= 1 {
		return fmt.Sprintf("byte 0x%02x", data[i])
	}
	return strconv.QuoteRune(r)
}

// decodeName returns the value of the valid JSON string quoted, as
// encoding/json decodes it (invalid UTF-8 and lone surrogates become
// U+FFFD).
func decodeName(quoted []byte) []byte {
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return quoted // not reached: the scanner checked the string
	}
	return []byte(s)
}
