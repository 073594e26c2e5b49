package providertest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// GoldenRequest compares the JSON request body, indented, with
// testdata/request.golden.json, rewriting that file first when update is
// set.
func GoldenRequest(t *testing.T, body []byte, update bool) {
	t.Helper()
	var got bytes.Buffer
	if err := json.Indent(&got, body, "", "  "); err != nil {
		t.Fatalf("request body is not JSON: %v", err)
	}
	got.WriteByte('\n')
	path := filepath.Join("testdata", "request.golden.json")
	if update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("request body differs from %s:\n%s", path, got.Bytes())
	}
}
