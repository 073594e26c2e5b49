package registry

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLookupOrder(t *testing.T) {
	dir := t.TempDir()
	auth := filepath.Join(dir, "auth.json")
	os.WriteFile(auth, []byte(`{"anthropic":{"api_key":"from-file"},"gemini":{"api_key":"g-file"}}`), 0o600)
	env := map[string]string{"ANTHROPIC_API_KEY": "from-env", "GOOGLE_API_KEY": "g-google"}
	getenv := func(k string) string { return env[k] }
	cases := []struct{ provider, flag, want string }{
		{"anthropic", "from-flag", "from-flag"},
		{"anthropic", "", "from-env"},
		{"gemini", "", "g-google"},
		{"openai", "", ""},
	}
	for _, c := range cases {
		got, err := APIKey(c.provider, c.flag, getenv, auth)
		if err != nil || got != c.want {
			t.Errorf("%s flag=%q: got %q, %v; want %q", c.provider, c.flag, got, err, c.want)
		}
	}
	got, _ := APIKey("anthropic", "", func(string) string { return "" }, auth)
	if got != "from-file" {
		t.Errorf("auth file: got %q", got)
	}
}

func TestAuthFileMustBePrivate(t *testing.T) {
	auth := filepath.Join(t.TempDir(), "auth.json")
	os.WriteFile(auth, []byte(`{"anthropic":{"api_key":"k"}}`), 0o644)
	_, err := APIKey("anthropic", "", func(string) string { return "" }, auth)
	if err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("readable auth file: %v", err)
	}
	if _, err := APIKey("anthropic", "", func(string) string { return "" }, filepath.Join(t.TempDir(), "none.json")); err != nil {
		t.Errorf("missing auth file is not an error: %v", err)
	}
}

func TestMissingKeyMessage(t *testing.T) {
	msg := (&MissingKeyError{Provider: "openai", AuthFile: "/h/.zot/auth.json"}).Error()
	for _, want := range []string{"OPENAI_API_KEY", "--api-key", "--provider scripted", "/h/.zot/auth.json"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
}

func TestBuild(t *testing.T) {
	for _, name := range []string{"anthropic", "openai", "openai-responses", "deepseek", "gemini", "scripted"} {
		p, err := Build(Spec{Name: name, APIKey: "test-key"})
		if err != nil || p.Name() != name {
			t.Errorf("%s: %v", name, err)
		}
	}
	bad := []Spec{
		{Name: "nope"},
		{Name: "anthropic", ScriptPath: "s.json"},
		{Name: "scripted", BaseURL: "http://127.0.0.1:1"},
		{Name: "scripted", ScriptPath: filepath.Join(t.TempDir(), "missing.json")},
	}
	for _, s := range bad {
		if _, err := Build(s); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
	if !NeedsKey("anthropic", "") || NeedsKey("openai", "http://localhost:11434/v1") || NeedsKey("scripted", "") {
		t.Error("NeedsKey")
	}
}

// TestTable: every provider in the table builds, has a family the catalog
// knows, and says where its key comes from unless it needs none.
func TestTable(t *testing.T) {
	for _, name := range Names() {
		p, _ := Find(name)
		if p.Family == "" || p.Summary == "" {
			t.Errorf("%s: family %q, summary %q", name, p.Family, p.Summary)
		}
		if !p.Keyless && len(p.KeyVars) == 0 {
			t.Errorf("%s needs a key but names no variable", name)
		}
		if !strings.Contains(Help(), name) {
			t.Errorf("help lacks %s", name)
		}
	}
	if Family("openai-responses") != "openai" || Family("nope") != "nope" {
		t.Error("Family")
	}
	var ue *UnknownError
	if _, err := Build(Spec{Name: "nope"}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "scripted") {
		t.Errorf("unknown provider: %v", err)
	}
}

func TestAliases(t *testing.T) {
	p, err := Build(Spec{Name: "google", APIKey: "k"})
	if err != nil || p.Name() != "gemini" {
		t.Fatalf("google: %v, %v", p, err)
	}
	if !Known("google") || Family("google") != "gemini" || Known("nope") {
		t.Error("google is not an alias of gemini")
	}
	if g, _ := Find("google"); g.Name != "gemini" || len(g.KeyVars) == 0 || g.KeyVars[0] != "GEMINI_API_KEY" {
		t.Errorf("Find(google) = %+v", g)
	}
	if slices.Contains(Names(), "google") || !strings.Contains(Help(), "gemini (or google)") {
		t.Errorf("names %v, help %q", Names(), Help())
	}
	key, _ := APIKey("google", "", func(k string) string { return map[string]string{"GOOGLE_API_KEY": "g"}[k] }, "")
	if key != "g" {
		t.Errorf("google key %q", key)
	}
}

func TestDeepSeek(t *testing.T) {
	p, ok := Find("deepseek")
	if !ok || p.Family != "deepseek" || !slices.Equal(p.KeyVars, []string{"DEEPSEEK_API_KEY"}) || !NeedsKey("deepseek", "") {
		t.Fatalf("deepseek row %+v", p)
	}
}
