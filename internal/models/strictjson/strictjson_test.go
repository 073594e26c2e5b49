package strictjson

import (
	"strings"
	"testing"
)

func TestPaths(t *testing.T) {
	root, err := Parse([]byte(`{"a": [{"b": "x"}, {"b": 2}]}`), "f.json")
	if err != nil {
		t.Fatal(err)
	}
	o, err := root.Object()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := o.Get("a")
	elems, err := a.Array()
	if err != nil || len(elems) != 2 {
		t.Fatalf("Array = %v, %v", elems, err)
	}
	eo, _ := elems[1].Object()
	b, _ := eo.Get("b")
	if b.Path() != "a[1].b" {
		t.Errorf("path %q", b.Path())
	}
	_, err = b.String()
	if err == nil || err.Error() != "f.json: a[1].b: want a string, got a number" {
		t.Errorf("err = %v", err)
	}
	if err := root.Errorf("top %d", 1); err.Error() != "f.json: top 1" {
		t.Errorf("root error %q", err)
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	_, err := Parse([]byte("{\n  \"a\": 1,\n  \"b\": tru\n}"), "f.json")
	if err == nil || !strings.HasPrefix(err.Error(), "f.json:3:11:") {
		t.Errorf("err = %v", err)
	}
	if _, err := Parse([]byte(`{} {}`), "f.json"); err == nil {
		t.Error("trailing value accepted")
	}
}

func TestKinds(t *testing.T) {
	for text, want := range map[string]string{
		`{}`: "an object", `[]`: "an array", `"s"`: "a string", `1.5`: "a number",
		`-2`: "a number", `true`: "a boolean", `false`: "a boolean", `null`: "null",
	} {
		v, err := Parse([]byte(text), "f")
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Kind(); got != want {
			t.Errorf("Kind(%s) = %q, want %q", text, got, want)
		}
	}
}

func TestScalars(t *testing.T) {
	v := func(s string) Value { x, _ := Parse([]byte(s), "f"); return x }
	if n, err := v(`1e3`).Int(0, 5000); err != nil || n != 1000 {
		t.Errorf("Int(1e3) = %d, %v", n, err)
	}
	if _, err := v(`7`).Int(0, 5); err == nil || !strings.Contains(err.Error(), "7 is out of range [0, 5]") {
		t.Errorf("range err = %v", err)
	}
	if _, err := v(`0.5`).Int(0, 5); err == nil || !strings.Contains(err.Error(), "want an integer, got 0.5") {
		t.Errorf("fraction err = %v", err)
	}
	if _, err := v(`1e400`).Float(); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("huge err = %v", err)
	}
	if f, err := v(`0.125`).Float(); err != nil || f != 0.125 {
		t.Errorf("Float = %v, %v", f, err)
	}
	if b, err := v(`true`).Bool(); err != nil || !b {
		t.Errorf("Bool = %v, %v", b, err)
	}
	if s, err := v(`"a\u00e9"`).String(); err != nil || s != "aé" {
		t.Errorf("String = %q, %v", s, err)
	}
}

func TestObjectChecks(t *testing.T) {
	root, _ := Parse([]byte(`{"x": 1, "x": 2}`), "f")
	if _, err := root.Object(); err == nil || !strings.Contains(err.Error(), `field "x" appears twice`) {
		t.Errorf("duplicate err = %v", err)
	}
	root, _ = Parse([]byte(`{"a": 1, "zz": 2, "yy": 3}`), "f")
	o, err := root.Object()
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Allow("a"); err == nil || err.Error() != `f: unknown field "zz"` {
		t.Errorf("Allow err = %v", err)
	}
	if err := o.Allow("a", "zz", "yy"); err != nil {
		t.Errorf("Allow err = %v", err)
	}
	if _, err := o.Require("b"); err == nil || err.Error() != `f: missing "b"` {
		t.Errorf("Require err = %v", err)
	}
	if !o.Has("yy") || o.Has("b") {
		t.Error("Has is wrong")
	}
}
