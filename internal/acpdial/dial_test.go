package acpdial

import (
	"os"
	"path/filepath"
	"testing"
)

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"ws://127.0.0.1:8765":        "ws://127.0.0.1:8765/acp",
		"ws://127.0.0.1:8765/":       "ws://127.0.0.1:8765/acp",
		"wss://host.example:443/acp": "wss://host.example:443/acp",
		"ws://h:1/other":             "ws://h:1/other",
	} {
		if got, err := Normalize(in); err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"http://h:1", "/tmp/sock", "ws://", "ws://%zz"} {
		if _, err := Normalize(bad); err == nil {
			t.Errorf("Normalize(%q) took it", bad)
		}
	}
}

func TestToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	alone := write("alone", "\n# mine\n  tok-alone-0123456789  \n")
	line := write("line", "# zot daemon tokens\nlaptop tok-line-0123456789 admin\nci other\n")
	empty := write("empty", "# nothing\n\n")
	t.Setenv("ZOT_TOKEN", "tok-env")
	for _, tc := range []struct{ flag, file, want string }{
		{"tok-flag", alone, "tok-flag"},
		{"", "", "tok-env"},
		{"", alone, "tok-alone-0123456789"},
		{"", line, "tok-line-0123456789"},
	} {
		if got, err := Token(tc.flag, tc.file); err != nil || got != tc.want {
			t.Errorf("Token(%q, %q) = %q, %v; want %q", tc.flag, tc.file, got, err, tc.want)
		}
	}
	if _, err := Token("", empty); err == nil {
		t.Error("a file without a token was taken")
	}
	if _, err := Token("", filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file was taken")
	}
}
