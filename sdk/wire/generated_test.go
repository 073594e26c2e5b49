package wire

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"zot.dev/zot/gen"
)

// TestGenerated regenerates every schema-derived file in memory and fails
// when what is committed differs: the Go types, docs/rpc.md, the Python
// types and the TypeScript declarations.
func TestGenerated(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := gen.Generate(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("generator produced %d files", len(files))
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
		if err != nil {
			t.Errorf("%s: %v (run `make generate`)", path, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `make generate` and commit the result", path)
		}
	}
}
