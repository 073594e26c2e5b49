package reqbody

import (
	"strings"
	"testing"
)

func TestBody(t *testing.T) {
	list := func(b []byte) []byte { return append(b, "[]"...) }
	for _, c := range []struct{ head, tools, want string }{
		{`{"a":1}`, `[1]`, `{"a":1,"m":[],"tools":[1]}`},
		{`{}`, `[1]`, `{"m":[],"tools":[1]}`},
		{"{\"a\":1}\n", "", `{"a":1,"m":[]}`},
	} {
		var tools []byte
		if c.tools != "" {
			tools = []byte(c.tools)
		}
		got := Body([]byte(c.head), "m", 2, list, tools)
		if string(got) != c.want {
			t.Errorf("head %q, tools %q: %s, want %s", c.head, c.tools, got, c.want)
		}
	}
}

func frags(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, f := range s {
		if f != "" {
			out[i] = []byte(f)
		}
	}
	return out
}

func TestAppendArray(t *testing.T) {
	for _, c := range []struct {
		first string
		frags [][]byte
		want  string
	}{
		{"", nil, `[]`},
		{`{"s":1}`, nil, `[{"s":1}]`},
		{`{"s":1}`, frags("", `1,2`, "", `3`), `[{"s":1},1,2,3]`},
		{"", frags("", `1`, `2`), `[1,2]`},
	} {
		f := c.frags
		got := AppendArray(nil, []byte(c.first), c.frags)
		if string(got) != c.want {
			t.Errorf("AppendArray(%q, %q) = %s, want %s", c.first, c.frags, got, c.want)
		}
		if len(got) > Size(f)+len(c.first) {
			t.Errorf("AppendArray wrote %d bytes, Size said at most %d", len(got), Size(f)+len(c.first))
		}
	}
}

func TestAppendGrouped(t *testing.T) {
	roles := []string{"user", "user", "model", "user", "model", "model"}
	role := func(i int) string { return roles[i] }
	f := frags(`1`, `2,3`, ``, `4`, `5`, `6`)
	got := string(AppendGrouped(nil, f, role, "parts"))
	// The empty third fragment does not split the user run around it.
	want := `[{"role":"user","parts":[1,2,3,4]},{"role":"model","parts":[5,6]}]`
	if got != want {
		t.Errorf("AppendGrouped = %s, want %s", got, want)
	}
	if len(got) > Size(f) {
		t.Errorf("wrote %d bytes, Size said at most %d", len(got), Size(f))
	}
	if got := string(AppendGrouped([]byte("x"), frags("", ""), role, "parts")); got != "x[]" {
		t.Errorf("no fragments: %s", got)
	}
	if !strings.HasPrefix(string(AppendGrouped(nil, frags(`1`), role, "content")), `[{"role":"user","content":[1]}`) {
		t.Error("member name not used")
	}
}

func TestFragment(t *testing.T) {
	if b, err := Fragment([]int{}); b != nil || err != nil {
		t.Errorf("no items: %q, %v", b, err)
	}
	if b, err := Fragment([]string{"a", `"b"`}); err != nil || string(b) != `"a","\"b\""` {
		t.Errorf("two items: %s, %v", b, err)
	}
	if _, err := Fragment([]any{func() {}}); err == nil {
		t.Error("an item that cannot be encoded gave no error")
	}
}
