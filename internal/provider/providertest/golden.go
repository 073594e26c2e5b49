package providertest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"zot.dev/zot/internal/llm"
)

// update is the -update flag of every test binary that imports this
// package: it rewrites the golden files instead of comparing with them.
var update = flag.Bool("update", false, "rewrite golden files")

// GoldenRequest sends req through the provider dial returns, to a server
// answering with the text.sse fixture, and compares the JSON body of the
// request, indented, with testdata/request.golden.json. With -update it
// rewrites that file first.
func GoldenRequest(t *testing.T, dial Dial, req *llm.Request) {
	t.Helper()
	run := Stream(t, dial, req, Reply{File: "text.sse"})
	if run.Err != nil {
		t.Fatal(run.Err)
	}
	var got bytes.Buffer
	if err := json.Indent(&got, run.Server.Requests()[0].Body, "", "  "); err != nil {
		t.Fatalf("request body is not JSON: %v", err)
	}
	got.WriteByte('\n')
	path := filepath.Join("testdata", "request.golden.json")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("request body differs from %s (go test -update rewrites it):\n%s", path, got.Bytes())
	}
}
