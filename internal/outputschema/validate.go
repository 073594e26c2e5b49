package outputschema

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// node is one schema: a decoded JSON object, or a boolean schema.
type node = any

// compileCheck reports what makes root unusable as a schema: a keyword
// of the wrong type, or a $ref that points nowhere inside it.
func compileCheck(root node) error {
	var walk func(n node, at string) error
	walk = func(n node, at string) error {
		switch s := n.(type) {
		case bool:
			return nil
		case map[string]any:
			if t, ok := s["type"]; ok {
				if err := checkTypeKeyword(t); err != nil {
					return fmt.Errorf("at %s/type: %w", at, err)
				}
			}
			if r, ok := s["$ref"]; ok {
				ref, isStr := r.(string)
				if !isStr {
					return fmt.Errorf("at %s/$ref: not a string", at)
				}
				if _, err := resolve(root, ref); err != nil {
					return fmt.Errorf("at %s/$ref: %w", at, err)
				}
			}
			if p, ok := s["pattern"]; ok {
				ps, isStr := p.(string)
				if !isStr {
					return fmt.Errorf("at %s/pattern: not a string", at)
				}
				if _, err := regexp.Compile(ps); err != nil {
					return fmt.Errorf("at %s/pattern: %w", at, err)
				}
			}
			for _, k := range []string{"properties", "$defs", "definitions", "patternProperties"} {
				if m, ok := s[k]; ok {
					mm, isObj := m.(map[string]any)
					if !isObj {
						return fmt.Errorf("at %s/%s: not an object", at, k)
					}
					for name, sub := range mm {
						if err := walk(sub, at+"/"+k+"/"+escape(name)); err != nil {
							return err
						}
					}
				}
			}
			for _, k := range []string{"items", "additionalProperties", "not", "contains"} {
				if sub, ok := s[k]; ok {
					if err := walk(sub, at+"/"+k); err != nil {
						return err
					}
				}
			}
			for _, k := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
				if l, ok := s[k]; ok {
					ll, isArr := l.([]any)
					if !isArr {
						return fmt.Errorf("at %s/%s: not an array", at, k)
					}
					for i, sub := range ll {
						if err := walk(sub, at+"/"+k+"/"+strconv.Itoa(i)); err != nil {
							return err
						}
					}
				}
			}
			return nil
		default:
			return fmt.Errorf("at %s: a schema is an object or a boolean", orRoot(at))
		}
	}
	return walk(root, "")
}

// checkTypeKeyword checks the value of a `type` keyword.
func checkTypeKeyword(t any) error {
	names := []any{t}
	if l, ok := t.([]any); ok {
		names = l
	}
	for _, n := range names {
		s, ok := n.(string)
		if !ok {
			return fmt.Errorf("%v is not a type name", n)
		}
		switch s {
		case "null", "boolean", "object", "array", "number", "integer", "string":
		default:
			return fmt.Errorf("%q is not a type name", s)
		}
	}
	return nil
}

// resolve follows a $ref inside root: "#", or a JSON Pointer after "#".
func resolve(root node, ref string) (node, error) {
	if ref == "#" {
		return root, nil
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("%q: only references inside the schema (#/…) are taken", ref)
	}
	cur := root
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, fmt.Errorf("%q points nowhere in the schema", ref)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("%q points nowhere in the schema", ref)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("%q points nowhere in the schema", ref)
		}
	}
	return cur, nil
}

// validator checks an instance against a schema, keeping the first
// problem with where it is in the instance and in the schema.
type validator struct {
	root  node
	depth int
}

// problem is why an instance fails, and where.
type problem struct {
	instance, schema, why string
}

func (p *problem) Error() string {
	return fmt.Sprintf("at %s (schema path %s): %s", orRoot(p.instance), orRoot(p.schema), p.why)
}

func orRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// check validates v (decoded with UseNumber) against n.
func (c *validator) check(n node, v any, inst, sch string) *problem {
	fail := func(kw, format string, args ...any) *problem {
		return &problem{instance: inst, schema: sch + "/" + kw, why: fmt.Sprintf(format, args...)}
	}
	switch s := n.(type) {
	case bool:
		if !s {
			return &problem{instance: inst, schema: sch, why: "no value is allowed here"}
		}
		return nil
	case map[string]any:
		if ref, ok := s["$ref"].(string); ok {
			if c.depth > 64 {
				return fail("$ref", "the schema's references nest too deep")
			}
			target, err := resolve(c.root, ref)
			if err != nil {
				return fail("$ref", "%v", err)
			}
			c.depth++
			p := c.check(target, v, inst, ref[1:])
			c.depth--
			if p != nil {
				return p
			}
		}
		if t, ok := s["type"]; ok && !typeMatches(t, v) {
			return fail("type", "want %s, got %s", typeWords(t), kindOf(v))
		}
		if e, ok := s["enum"].([]any); ok {
			found := false
			for _, x := range e {
				if equal(x, v) {
					found = true
					break
				}
			}
			if !found {
				return fail("enum", "%s is not one of the allowed values", short(v))
			}
		}
		if x, ok := s["const"]; ok && !equal(x, v) {
			return fail("const", "want %s, got %s", short(x), short(v))
		}
		if p := c.checkNumber(s, v, fail); p != nil {
			return p
		}
		if str, ok := v.(string); ok {
			n := int64(utf8.RuneCountInString(str))
			if m, ok := num(s["minLength"]); ok && float64(n) < m {
				return fail("minLength", "the string is shorter than %v characters", m)
			}
			if m, ok := num(s["maxLength"]); ok && float64(n) > m {
				return fail("maxLength", "the string is longer than %v characters", m)
			}
			if pat, ok := s["pattern"].(string); ok {
				if re, err := regexp.Compile(pat); err == nil && !re.MatchString(str) {
					return fail("pattern", "%s does not match %q", short(v), pat)
				}
			}
		}
		if arr, ok := v.([]any); ok {
			if p := c.checkArray(s, arr, inst, sch, fail); p != nil {
				return p
			}
		}
		if obj, ok := v.(map[string]any); ok {
			if p := c.checkObject(s, obj, inst, sch, fail); p != nil {
				return p
			}
		}
		if l, ok := s["allOf"].([]any); ok {
			for i, sub := range l {
				if p := c.check(sub, v, inst, sch+"/allOf/"+strconv.Itoa(i)); p != nil {
					return p
				}
			}
		}
		if l, ok := s["anyOf"].([]any); ok {
			var first *problem
			matched := false
			for i, sub := range l {
				p := c.check(sub, v, inst, sch+"/anyOf/"+strconv.Itoa(i))
				if p == nil {
					matched = true
					break
				}
				if first == nil {
					first = p
				}
			}
			if !matched && len(l) > 0 {
				return fail("anyOf", "the value matches none of the alternatives (the first: %s)", first.Error())
			}
		}
		if l, ok := s["oneOf"].([]any); ok {
			count := 0
			for i, sub := range l {
				if c.check(sub, v, inst, sch+"/oneOf/"+strconv.Itoa(i)) == nil {
					count++
				}
			}
			if count != 1 {
				return fail("oneOf", "the value matches %d of the alternatives, not exactly one", count)
			}
		}
		if sub, ok := s["not"]; ok && c.check(sub, v, inst, sch+"/not") == nil {
			return fail("not", "the value matches a schema it must not")
		}
		return nil
	}
	return nil
}

// checkNumber applies the numeric keywords to v when it is a number.
func (c *validator) checkNumber(s map[string]any, v any, fail func(string, string, ...any) *problem) *problem {
	jn, ok := v.(json.Number)
	if !ok {
		return nil
	}
	f, err := jn.Float64()
	if err != nil {
		return fail("type", "%s is not a number zot can compare", jn)
	}
	if m, ok := num(s["minimum"]); ok && f < m {
		return fail("minimum", "%s is less than %v", jn, m)
	}
	if m, ok := num(s["maximum"]); ok && f > m {
		return fail("maximum", "%s is greater than %v", jn, m)
	}
	if m, ok := num(s["exclusiveMinimum"]); ok && f <= m {
		return fail("exclusiveMinimum", "%s is not greater than %v", jn, m)
	}
	if m, ok := num(s["exclusiveMaximum"]); ok && f >= m {
		return fail("exclusiveMaximum", "%s is not less than %v", jn, m)
	}
	if m, ok := num(s["multipleOf"]); ok && m > 0 {
		if q := f / m; math.Abs(q-math.Round(q)) > 1e-9 {
			return fail("multipleOf", "%s is not a multiple of %v", jn, m)
		}
	}
	return nil
}

// checkArray applies the array keywords.
func (c *validator) checkArray(s map[string]any, arr []any, inst, sch string, fail func(string, string, ...any) *problem) *problem {
	if m, ok := num(s["minItems"]); ok && float64(len(arr)) < m {
		return fail("minItems", "the array has fewer than %v items", m)
	}
	if m, ok := num(s["maxItems"]); ok && float64(len(arr)) > m {
		return fail("maxItems", "the array has more than %v items", m)
	}
	if u, ok := s["uniqueItems"].(bool); ok && u {
		for i := range arr {
			for j := i + 1; j < len(arr); j++ {
				if equal(arr[i], arr[j]) {
					return fail("uniqueItems", "items %d and %d are equal", i, j)
				}
			}
		}
	}
	prefix, _ := s["prefixItems"].([]any)
	for i, x := range arr {
		at := inst + "/" + strconv.Itoa(i)
		if i < len(prefix) {
			if p := c.check(prefix[i], x, at, sch+"/prefixItems/"+strconv.Itoa(i)); p != nil {
				return p
			}
			continue
		}
		if items, ok := s["items"]; ok {
			if p := c.check(items, x, at, sch+"/items"); p != nil {
				return p
			}
		}
	}
	if con, ok := s["contains"]; ok {
		found := false
		for i, x := range arr {
			if c.check(con, x, inst+"/"+strconv.Itoa(i), sch+"/contains") == nil {
				found = true
				break
			}
		}
		if !found {
			return fail("contains", "no item matches")
		}
	}
	return nil
}

// checkObject applies the object keywords, in a stable order.
func (c *validator) checkObject(s map[string]any, obj map[string]any, inst, sch string, fail func(string, string, ...any) *problem) *problem {
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				if _, has := obj[name]; !has {
					return fail("required", "missing property %q (required)", name)
				}
			}
		}
	}
	if m, ok := num(s["minProperties"]); ok && float64(len(obj)) < m {
		return fail("minProperties", "the object has fewer than %v properties", m)
	}
	if m, ok := num(s["maxProperties"]); ok && float64(len(obj)) > m {
		return fail("maxProperties", "the object has more than %v properties", m)
	}
	props, _ := s["properties"].(map[string]any)
	patterns, _ := s["patternProperties"].(map[string]any)
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		at := inst + "/" + escape(k)
		matched := false
		if sub, ok := props[k]; ok {
			matched = true
			if p := c.check(sub, obj[k], at, sch+"/properties/"+escape(k)); p != nil {
				return p
			}
		}
		for pat, sub := range patterns {
			if re, err := regexp.Compile(pat); err == nil && re.MatchString(k) {
				matched = true
				if p := c.check(sub, obj[k], at, sch+"/patternProperties/"+escape(pat)); p != nil {
					return p
				}
			}
		}
		if matched {
			continue
		}
		if add, ok := s["additionalProperties"]; ok {
			if b, isBool := add.(bool); isBool && !b {
				return fail("additionalProperties", "property %q is not allowed", k)
			}
			if p := c.check(add, obj[k], at, sch+"/additionalProperties"); p != nil {
				return p
			}
		}
	}
	return nil
}

// typeMatches reports whether v is of the type (or one of the types) t.
func typeMatches(t any, v any) bool {
	names := []any{t}
	if l, ok := t.([]any); ok {
		names = l
	}
	k := kindOf(v)
	for _, n := range names {
		switch n {
		case k:
			return true
		case "number":
			if k == "integer" {
				return true
			}
		case "integer":
			if jn, ok := v.(json.Number); ok {
				if f, err := jn.Float64(); err == nil && f == math.Trunc(f) && !math.IsInf(f, 0) {
					return true
				}
			}
		}
	}
	return false
}

// typeWords names the type keyword's value for a message.
func typeWords(t any) string {
	if l, ok := t.([]any); ok {
		parts := make([]string, len(l))
		for i, x := range l {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, " or ")
	}
	return fmt.Sprint(t)
}

// kindOf names the JSON type of v.
func kindOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if _, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// num reads a numeric keyword.
func num(v any) (float64, bool) {
	if jn, ok := v.(json.Number); ok {
		f, err := jn.Float64()
		return f, err == nil
	}
	return 0, false
}

// equal compares two JSON values as JSON Schema does: numbers by value.
func equal(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok && bok {
		af, e1 := an.Float64()
		bf, e2 := bn.Float64()
		return e1 == nil && e2 == nil && af == bf
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// short renders v for a message, cut to a readable length.
func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		return string(b[:57]) + "…"
	}
	return string(b)
}
