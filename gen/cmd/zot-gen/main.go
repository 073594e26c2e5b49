// Command zot-gen regenerates every file derived from zot's protocol
// schema. Run it through `go generate ./...` or `make generate`; with
// -check it writes nothing and exits 1 when a committed file is stale.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"zot.dev/zot/gen"
)

func main() {
	root := flag.String("root", ".", "repository root")
	check := flag.Bool("check", false, "report stale files instead of writing them")
	flag.Parse()
	if err := run(*root, *check); err != nil {
		fmt.Fprintln(os.Stderr, "zot-gen:", err)
		os.Exit(1)
	}
}

func run(root string, check bool) error {
	files, err := gen.Generate(os.DirFS(root))
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var stale []string
	for _, p := range paths {
		full := filepath.Join(root, filepath.FromSlash(p))
		old, err := os.ReadFile(full)
		if err == nil && bytes.Equal(old, files[p]) {
			continue
		}
		if check {
			stale = append(stale, p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, files[p], 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
		fmt.Println("wrote", p)
	}
	if len(stale) > 0 {
		return fmt.Errorf("generated files are stale (run `make generate`): %v", stale)
	}
	return nil
}
