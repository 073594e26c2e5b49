package wire

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// loc is a JSON location, built on the stack as validators descend and
// rendered only when a problem is reported.
type loc struct {
	parent  *loc
	key     string
	index   int
	isIndex bool
}

// String renders the location as a JSON pointer ("/images/0/data").
func (l *loc) String() string {
	if l == nil {
		return "/"
	}
	var parts []string
	for x := l; x != nil; x = x.parent {
		if x.parent == nil && x.key == "" && !x.isIndex {
			break
		}
		if x.isIndex {
			parts = append(parts, strconv.Itoa(x.index))
		} else {
			parts = append(parts, x.key)
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

func problem(errs *[]string, at *loc, msg string) {
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

func isInteger(n json.Number) bool {
	if !strings.ContainsAny(string(n), ".eE") {
		return true
	}
	f, err := n.Float64()
	return err == nil && f == float64(int64(f))
}

func typeProblem(v any, at *loc, errs *[]string, want string) {
	problem(errs, at, "got "+kindOf(v)+", want "+want)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}

func checkRequired(m map[string]any, at *loc, errs *[]string, names ...string) {
	var missing []string
	for _, n := range names {
		if _, ok := m[n]; !ok {
			missing = append(missing, n)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		problem(errs, at, "missing property "+quoteList(missing))
	default:
		problem(errs, at, "missing properties "+quoteList(missing))
	}
}

func additionalProblem(m map[string]any, at *loc, errs *[]string, known ...string) {
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
	problem(errs, at, "additional properties "+quoteList(extra)+" not allowed")
}

// checkConst compares v with the JSON text want.
func checkConst(v any, at *loc, errs *[]string, want string) {
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

func checkEnum(s string, at *loc, errs *[]string, values ...string) {
	for _, v := range values {
		if s == v {
			return
		}
	}
	problem(errs, at, "value must be one of "+quoteList(values))
}

func checkMinLength(s string, at *loc, errs *[]string, min int) {
	if n := len([]rune(s)); n < min {
		problem(errs, at, fmt.Sprintf("minLength: got %d, want %d", n, min))
	}
}

func checkPattern(s string, at *loc, errs *[]string, re *regexp.Regexp, src string) {
	if !re.MatchString(s) {
		problem(errs, at, fmt.Sprintf("'%s' does not match pattern '%s'", s, src))
	}
}

func checkDateTime(s string, at *loc, errs *[]string) {
	if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
		problem(errs, at, fmt.Sprintf("'%s' is not valid date-time", s))
	}
}

func checkNumber(v any, at *loc, errs *[]string, integer bool, min *float64) {
	n, ok := v.(json.Number)
	if !ok || (integer && !isInteger(n)) {
		want := "number"
		if integer {
			want = "integer"
		}
		typeProblem(v, at, errs, want)
		return
	}
	if min != nil {
		if f, err := n.Float64(); err == nil && f < *min {
			problem(errs, at, fmt.Sprintf("minimum: got %s, want %s", n, strconv.FormatFloat(*min, 'g', -1, 64)))
		}
	}
}

func checkJSONTypes(v any, at *loc, errs *[]string, types ...string) {
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

func ptr(f float64) *float64 { return &f }
