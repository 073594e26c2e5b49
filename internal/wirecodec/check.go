package wirecodec

// The checks the generated validators call. Each appends its problems to
// errs as "at <JSON pointer>: <what is wrong>", in the words of the
// reference JSON Schema validator.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Loc is a JSON location, built on the stack as validators descend and
// rendered only when a problem is reported. The nil *Loc is the root.
type Loc struct {
	Parent  *Loc   // the enclosing location, nil at the top
	Key     string // the member name, unless IsIndex
	Index   int    // the array index, when IsIndex
	IsIndex bool
}

// String renders the location as a JSON pointer ("/images/0/data").
func (l *Loc) String() string {
	if l == nil {
		return "/"
	}
	var parts []string
	for x := l; x != nil; x = x.Parent {
		if x.Parent == nil && x.Key == "" && !x.IsIndex {
			break
		}
		if x.IsIndex {
			parts = append(parts, strconv.Itoa(x.Index))
		} else {
			parts = append(parts, x.Key)
		}
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(parts[i])
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

// problem records msg at location at.
func problem(errs *[]string, at *Loc, msg string) {
	*errs = append(*errs, "at "+at.String()+": "+msg)
}

// kindOf names the JSON type of a decoded value.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// isInteger reports whether n is a whole number, as JSON Schema's
// "integer" means it (2.0 is one).
func isInteger(n json.Number) bool {
	if !strings.ContainsAny(string(n), ".eE") {
		return true
	}
	f, err := n.Float64()
	return err == nil && f == float64(int64(f))
}

// TypeProblem reports that v, at at, is not of the JSON type want.
func TypeProblem(v any, at *Loc, errs *[]string, want string) {
	problem(errs, at, "got "+kindOf(v)+", want "+want)
}

// QuoteList quotes each name with ' and joins them with commas, as the
// reference validator lists properties.
func QuoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}

// CheckRequired reports the names that the object m lacks.
func CheckRequired(m map[string]any, at *Loc, errs *[]string, names ...string) {
	var missing []string
	for _, n := range names {
		if _, ok := m[n]; !ok {
			missing = append(missing, n)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		problem(errs, at, "missing property "+QuoteList(missing))
	default:
		problem(errs, at, "missing properties "+QuoteList(missing))
	}
}

// AdditionalProblem reports the members of m whose names are not among
// known; the validators call it once they found one.
func AdditionalProblem(m map[string]any, at *Loc, errs *[]string, known ...string) {
	var extra []string
	for k := range m {
		found := false
		for _, n := range known {
			if k == n {
				found = true
				break
			}
		}
		if !found {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	problem(errs, at, "additional properties "+QuoteList(extra)+" not allowed")
}

// CheckConst compares v with the JSON text want.
func CheckConst(v any, at *Loc, errs *[]string, want string) {
	got, err := json.Marshal(v)
	if err != nil || string(got) != want {
		if s, isString := v.(string); isString {
			var w string
			if json.Unmarshal([]byte(want), &w) == nil && s == w {
				return
			}
		}
		problem(errs, at, "value must be "+strings.ReplaceAll(want, `"`, "'"))
	}
}

// CheckEnum reports s unless it is one of values.
func CheckEnum(s string, at *Loc, errs *[]string, values ...string) {
	for _, v := range values {
		if s == v {
			return
		}
	}
	problem(errs, at, "value must be one of "+QuoteList(values))
}

// CheckMinLength reports s when it has fewer than min characters.
func CheckMinLength(s string, at *Loc, errs *[]string, min int) {
	if n := len([]rune(s)); n < min {
		problem(errs, at, fmt.Sprintf("minLength: got %d, want %d", n, min))
	}
}

// CheckMinItems reports an array of n items when it has fewer than min.
func CheckMinItems(n int, at *Loc, errs *[]string, min int) {
	if n < min {
		problem(errs, at, fmt.Sprintf("minItems: got %d, want %d", n, min))
	}
}

// CheckPattern reports s unless re, compiled from src, matches it.
func CheckPattern(s string, at *Loc, errs *[]string, re *regexp.Regexp, src string) {
	if !re.MatchString(s) {
		problem(errs, at, fmt.Sprintf("'%s' does not match pattern '%s'", s, src))
	}
}

// CheckDateTime reports s unless it is an RFC 3339 date-time.
func CheckDateTime(s string, at *Loc, errs *[]string) {
	if _, err := time.Parse(time.RFC3339Nano, s); err != nil || !rfc3339Shape(s) {
		problem(errs, at, fmt.Sprintf("'%s' is not valid date-time", s))
	}
}

// rfc3339Shape reports whether s starts with the fixed-width date and time
// of RFC 3339, "YYYY-MM-DDTHH:MM:SS": time.Parse also takes a one-digit
// hour, which RFC 3339 does not.
func rfc3339Shape(s string) bool {
	const shape = "dddd-dd-ddTdd:dd:dd"
	if len(s) < len(shape) {
		return false
	}
	for i := 0; i < len(shape); i++ {
		c := s[i]
		switch shape[i] {
		case 'd':
			if c < '0' || c > '9' {
				return false
			}
		case 'T':
			if c != 'T' && c != 't' {
				return false
			}
		default:
			if c != shape[i] {
				return false
			}
		}
	}
	return true
}

// CheckNumber reports v unless it is a number (a whole one when integer
// is set) of at least min, when min is not nil.
func CheckNumber(v any, at *Loc, errs *[]string, integer bool, min *float64) {
	n, ok := v.(json.Number)
	if !ok || (integer && !isInteger(n)) {
		want := "number"
		if integer {
			want = "integer"
		}
		TypeProblem(v, at, errs, want)
		return
	}
	if min != nil {
		if f, err := n.Float64(); err == nil && f < *min {
			problem(errs, at, fmt.Sprintf("minimum: got %s, want %s", n, strconv.FormatFloat(*min, 'g', -1, 64)))
		}
	}
}

// CheckJSONTypes reports v unless its JSON type is one of types.
func CheckJSONTypes(v any, at *Loc, errs *[]string, types ...string) {
	k := kindOf(v)
	for _, t := range types {
		if t == k {
			return
		}
	}
	sorted := append([]string(nil), types...)
	sort.Strings(sorted)
	problem(errs, at, "got "+k+", want "+strings.Join(sorted, " or "))
}

// Ptr returns a pointer to f, for the minimum of CheckNumber.
func Ptr(f float64) *float64 { return &f }
