// Command zot-hops counts the calls that cross a package boundary while
// one prompt goes through zot rpc and through ACP: every call site in a
// function of one zot package that calls a function of another, each
// counted once however often it runs (docs/architecture.md, "The hops of
// one prompt, counted").
//
//	go run ./bench/cmd/zot-hops -out /tmp/hops
//
// It copies the module to a scratch directory, adds to the top of every
// function of zot's runtime packages (internal/..., sdk/...) a call that,
// while recording is on, notes the function and the nearest zot function
// that called it, and runs internal/doortest's TestPromptHops there, which
// turns recording on for each window (in: from the prompt's bytes to the
// model request; out: from one text delta to its frame) and writes
// out/rpc.md and out/acp.md. The tree itself is not touched.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// recorder is the package the instrumented functions call.
const recorder = "internal/hopsrec"

// skip are the folders whose functions are not instrumented: the
// transport that stands for a pipe or a socket, the tests, and what is
// not zot's runtime.
var skip = []string{"internal/duplex", "internal/doortest", "internal/zotbin", "internal/schemacheck", "internal/provider/providertest", recorder}

func main() {
	out := flag.String("out", "", "directory for rpc.md and acp.md (required)")
	root := flag.String("root", ".", "the module's root")
	keep := flag.Bool("keep", false, "keep the instrumented copy (its path is printed)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "zot-hops: -out is required")
		os.Exit(2)
	}
	if err := run(*root, *out, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "zot-hops:", err)
		os.Exit(1)
	}
}

func run(root, out string, keep bool) error {
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "zot-hops-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("instrumented copy:", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	n := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testtools") {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(tmp, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if instrumentable(rel) {
			var done bool
			if data, done, err = instrument(path, data); err != nil {
				return err
			}
			if done {
				n++
			}
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, rel), data, info.Mode().Perm())
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(tmp, recorder), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, recorder, "hopsrec.go"), []byte(recorderSource), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "internal", "doortest", "zz_hopsrec_test.go"), []byte(hookSource), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "zot-hops: %d files instrumented in %s\n", n, tmp)
	cmd := exec.Command("go", "test", "-count=1", "./internal/doortest", "-run", "TestPromptHops", "-v", "-hops", out)
	cmd.Dir = tmp
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

// instrumentable says whether the file at rel (from the root) is one of
// zot's runtime sources.
func instrumentable(rel string) bool {
	rel = filepath.ToSlash(rel)
	if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
		return false
	}
	if !strings.HasPrefix(rel, "internal/") && !strings.HasPrefix(rel, "sdk/") {
		return false
	}
	for _, s := range skip {
		if strings.HasPrefix(rel, s+"/") {
			return false
		}
	}
	return true
}

// instrument adds hopsrec.Enter() at the top of every function and
// function literal with a body.
func instrument(path string, src []byte) ([]byte, bool, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return nil, false, err
	}
	name := "hopsrec__"
	count := 0
	enter := func(b *ast.BlockStmt) {
		if b == nil {
			return
		}
		call := &ast.ExprStmt{X: &ast.CallExpr{Fun: &ast.SelectorExpr{X: ast.NewIdent(name), Sel: ast.NewIdent("Enter")}}}
		b.List = append([]ast.Stmt{call}, b.List...)
		count++
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch fn := n.(type) {
		case *ast.FuncDecl:
			enter(fn.Body)
		case *ast.FuncLit:
			enter(fn.Body)
		}
		return true
	})
	if count == 0 {
		return src, false, nil
	}
	imp := &ast.ImportSpec{Name: ast.NewIdent(name), Path: &ast.BasicLit{Kind: token.STRING, Value: strconv.Quote("zot.dev/zot/" + recorder)}}
	decl := &ast.GenDecl{Tok: token.IMPORT, Specs: []ast.Spec{imp}}
	f.Decls = append([]ast.Decl{decl}, f.Decls...)
	var b bytes.Buffer
	if err := format.Node(&b, fset, f); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return b.Bytes(), true, nil
}

// recorderSource is the package the instrumented functions call.
const recorderSource = `// Package hopsrec records calls between zot packages (written by
// bench/cmd/zot-hops into an instrumented copy of the tree).
package hopsrec

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

var (
	on    atomic.Bool
	mu    sync.Mutex
	sites = map[string]string{} // call site → the callee first named (the least)
)

const module = "zot.dev/zot/"

// Start starts recording, forgetting what was recorded.
func Start() {
	mu.Lock()
	sites = map[string]string{}
	mu.Unlock()
	on.Store(true)
}

// Stop stops recording and returns the call sites recorded, one a line:
// "caller (file:line) → callee", the callee being the least of the
// functions that site called (an interface call reaches several).
func Stop() []string {
	on.Store(false)
	mu.Lock()
	defer mu.Unlock()
	out := make([]string, 0, len(sites))
	for site, callee := range sites {
		out = append(out, site+" → "+callee)
	}
	return out
}

// Enter notes the call site that called the function calling Enter (the
// nearest zot frame above it) when the two are of two packages.
func Enter() {
	if !on.Load() {
		return
	}
	var pcs [64]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	callee, more := frames.Next()
	for more {
		var f runtime.Frame
		f, more = frames.Next()
		if !strings.HasPrefix(f.Function, module) || strings.HasPrefix(f.Function, module+"internal/hopsrec.") {
			continue
		}
		if pkgOf(f.Function) != pkgOf(callee.Function) {
			file := f.File[strings.LastIndex(f.File, "/")+1:]
			site := strings.TrimPrefix(f.Function, module) + " (" + file + ":" + strconv.Itoa(f.Line) + ")"
			name := strings.TrimPrefix(callee.Function, module)
			mu.Lock()
			if old, ok := sites[site]; !ok || name < old {
				sites[site] = name
			}
			mu.Unlock()
		}
		return
	}
}

func pkgOf(fn string) string {
	slash := strings.LastIndex(fn, "/")
	dot := strings.Index(fn[slash+1:], ".")
	if dot < 0 {
		return fn
	}
	return fn[:slash+1+dot]
}
`

// hookSource gives TestPromptHops the recorder.
const hookSource = `package doortest

import "zot.dev/zot/internal/hopsrec"

func init() { callRecorder = recorderHooks{start: hopsrec.Start, stop: hopsrec.Stop} }
`
