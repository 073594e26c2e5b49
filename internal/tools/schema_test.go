package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

// checkObjectSchema verifies that s is an object schema with
// additionalProperties false, described properties and known required
// names, recursing into array items that are objects.
func checkObjectSchema(t *testing.T, where string, s map[string]any) {
	t.Helper()
	if s["type"] != "object" {
		t.Errorf("%s: type = %v, want object", where, s["type"])
	}
	if s["additionalProperties"] != false {
		t.Errorf("%s: additionalProperties = %v, want false", where, s["additionalProperties"])
	}
	props, ok := s["properties"].(map[string]any)
	if !ok {
		t.Fatalf("%s: properties missing", where)
	}
	for name, p := range props {
		pm, ok := p.(map[string]any)
		if !ok {
			t.Fatalf("%s.%s: not an object", where, name)
		}
		if d, _ := pm["description"].(string); strings.TrimSpace(d) == "" {
			t.Errorf("%s.%s: no description", where, name)
		}
		if pm["type"] == nil {
			t.Errorf("%s.%s: no type", where, name)
		}
		if items, ok := pm["items"].(map[string]any); ok && items["type"] == "object" {
			checkObjectSchema(t, where+"."+name+"[]", items)
		}
	}
	if req, ok := s["required"]; ok {
		list, ok := req.([]any)
		if !ok {
			t.Fatalf("%s: required is not an array", where)
		}
		for _, r := range list {
			if _, ok := props[r.(string)]; !ok {
				t.Errorf("%s: required %q is not a property", where, r)
			}
		}
	}
}

func TestBuiltinsSchemasAndNames(t *testing.T) {
	tools := Builtins(Config{CWD: t.TempDir()})
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name())
		if strings.TrimSpace(tl.Description()) == "" {
			t.Errorf("%s: empty description", tl.Name())
		}
		var s map[string]any
		if err := json.Unmarshal(tl.Schema(), &s); err != nil {
			t.Fatalf("%s: schema is not JSON: %v", tl.Name(), err)
		}
		checkObjectSchema(t, tl.Name(), s)
	}
	if got := strings.Join(names, ","); got != "read,write,edit,bash,grep,find,ls" {
		t.Errorf("tool order = %s", got)
	}
}

// TestStrictArguments checks, for every tool, that unknown fields, wrong
// types and missing required fields come back as error results naming the
// field.
func TestStrictArguments(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{CWD: dir, SpillDir: dir}
	cases := []struct {
		tool, args string
		want       []string
	}{
		{"read", `{"path":"x","bogus":1}`, []string{`unknown field "bogus"`, "path, offset, limit"}},
		{"read", `{"path":"x","offset":"3"}`, []string{`"offset" must be an integer`, "a string"}},
		{"read", `{"path":"x","offset":1.5}`, []string{`"offset" must be an integer`}},
		{"read", `{"offset":2}`, []string{`missing required field "path"`}},
		{"read", `{"Path":"x"}`, []string{`unknown field "Path"`}},
		{"read", `[1,2]`, []string{"expected a JSON object"}},
		{"read", `{"path":"x","limit":0}`, []string{`"limit" must be at least 1`}},
		{"write", `{"path":"x"}`, []string{`missing required field "content"`}},
		{"write", `{"path":"x","content":5}`, []string{`"content" must be a string`, "number 5"}},
		{"edit", `{"path":"x","edits":{}}`, []string{`"edits" must be an array`}},
		{"edit", `{"path":"x","edits":[]}`, []string{`"edits" must hold at least one edit`}},
		{"edit", `{"path":"x","edits":[{"old_text":"a"}]}`, []string{`missing required field "edits[0].new_text"`}},
		{"edit", `{"path":"x","edits":[{"old_text":"a","new_text":"b","extra":1}]}`, []string{`unknown field "edits[0].extra"`}},
		{"edit", `{"path":"x","edits":[{"old_text":"a","new_text":"b"},{"old_text":1,"new_text":"b"}]}`, []string{`"edits[1].old_text" must be a string`}},
		{"edit", `{"path":"x","edits":["a"]}`, []string{"edits[0] must be an object"}},
		{"bash", `{"command":true}`, []string{`"command" must be a string`, "a boolean"}},
		{"bash", `{"command":"true","timeout":"5"}`, []string{`"timeout" must be a number`}},
		{"bash", `{"command":"true","timeout":-1}`, []string{`"timeout" must be a positive number`}},
		{"bash", `{}`, []string{`missing required field "command"`}},
		{"grep", `{"pattern":"a","ignore_case":"yes"}`, []string{`"ignore_case" must be a boolean`}},
		{"grep", `{"pattern":"("}`, []string{`"pattern" is not a valid regular expression`}},
		{"grep", `{"pattern":"a","context":-1}`, []string{`"context" must be between 0 and 50`}},
		{"find", `{"pattern":"*","max_results":0}`, []string{`"max_results" must be at least 1`}},
		{"find", `{"path":"."}`, []string{`missing required field "pattern"`}},
		{"ls", `{"all":1}`, []string{`"all" must be a boolean`}},
		{"ls", `{"recursive":true}`, []string{`unknown field "recursive"`, "allowed: path, all"}},
	}
	for _, c := range cases {
		res := runTool(t, toolByName(t, cfg, c.tool), c.args)
		text := wantErr(t, res, c.want...)
		if !strings.HasPrefix(text, "invalid arguments: ") {
			t.Errorf("%s %s: error %q lacks the invalid arguments prefix", c.tool, c.args, text)
		}
	}
}

func TestDecodeArgsDetails(t *testing.T) {
	var n int
	var s string
	present, err := decodeArgs(json.RawMessage(`{"n":10.0,"s":null}`), "",
		intArg("n", true, &n), stringArg("s", false, &s))
	if err != nil {
		t.Fatal(err)
	}
	if n != 10 || present["s"] || !present["n"] {
		t.Errorf("n=%d present=%v", n, present)
	}
	// Null for a required field counts as missing.
	if _, err := decodeArgs(json.RawMessage(`{"n":null}`), "", intArg("n", true, &n)); err == nil ||
		!strings.Contains(err.Error(), `missing required field "n"`) {
		t.Errorf("null required: %v", err)
	}
	// Empty arguments are an empty object.
	if _, err := decodeArgs(nil, "", intArg("n", false, &n)); err != nil {
		t.Errorf("empty args: %v", err)
	}
}
