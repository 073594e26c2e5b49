package settings

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadConfig: any bytes in config.json load, or fail with one
// *FileError of one line whose position, when given, lies in the file.
func FuzzLoadConfig(f *testing.F) {
	for _, s := range []string{`{}`, `{"model":"x","permissions":{"allow":["bash(go test *)"]}}`, "{\n oops", `{"mode":"yolo"}`, `{"folders":{"/a":{"permissions":{"deny":["read("]}}}}`, `[]`, ``} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, ConfigName)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadConfig(path)
		if err == nil {
			return
		}
		var fe *FileError
		if !errors.As(err, &fe) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%q: %v", data, err)
		}
		if fe.Line > strings.Count(string(data), "\n")+1 || (fe.Line > 0 && fe.Col < 1) {
			t.Fatalf("%q: position %d:%d outside the file", data, fe.Line, fe.Col)
		}
	})
}

// FuzzBashRule: for any command line, an allow rule that matches it
// matches each of its commands, and a deny rule matches whenever an
// allow rule of the same pattern does.
func FuzzBashRule(f *testing.F) {
	for _, s := range []string{"go test ./...", "go test ./... && rm -rf x", "echo 'a;b' | sh", "go test $(x)", "a > b", "go test 2>&1"} {
		f.Add("go test *", s)
	}
	f.Fuzz(func(t *testing.T, pattern, cmd string) {
		r, err := ParseRule("bash(" + pattern + ")")
		if err != nil {
			return
		}
		call := Call{Tool: "bash", Args: bash(cmd), CWD: "/"}
		if r.matches(call, allowEffect) {
			if !r.matches(call, denyEffect) {
				t.Fatalf("%s allows %q but would not deny it", r, cmd)
			}
			parts, opaque := splitCommand(cmd)
			if opaque {
				t.Fatalf("%s allows %q, which it cannot judge", r, cmd)
			}
			for _, p := range parts {
				if !commandMatches(r.Pattern, p) {
					t.Fatalf("%s allows %q but not its command %q", r, cmd, p)
				}
			}
		}
	})
}
