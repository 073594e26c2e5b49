// Package gen turns zot's protocol schema (schema/*.json) into everything
// that must agree with it: the Go wire types of package sdk/wire, the
// tables of docs/rpc.md, the Python types of the Python client and the
// TypeScript declarations of the Node client. It also writes the reference
// of the scripted provider's script format (schema/script/) into
// docs/providers.md.
//
// [Generate] is pure: it reads only the file system it is given and returns
// the generated files by path, so tests can regenerate in memory and compare
// with what is committed.
package gen

import (
	"fmt"
	"io/fs"
	"sort"
)

// Output paths, relative to the repository root.
const (
	GoTypesPath = "sdk/wire/types_gen.go"
	DocsPath    = "docs/rpc.md"
	PythonPath  = "clients/python/zot_client/types.py"
	TSPath      = "clients/node/types.d.ts"
	// TSExamplesPath holds every schema example as a typed constant, so
	// that `tsc --strict` proves the declarations accept them.
	TSExamplesPath = "clients/node/test/examples.gen.ts"
	// ScriptDocsPath holds the reference of the scripted provider's
	// script format, generated from schema/script/.
	ScriptDocsPath = "docs/providers.md"
)

// Generate reads schema/*.json (and the current docs/rpc.md, whose
// hand-written prose around the generated tables it keeps) from fsys, the
// repository root, and returns every generated file keyed by its path.
func Generate(fsys fs.FS) (map[string][]byte, error) {
	m, err := Load(fsys)
	if err != nil {
		return nil, fmt.Errorf("loading schema: %w", err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("checking schema: %w", err)
	}
	out := map[string][]byte{}
	goSrc, err := GoTypes(m, "wire")
	if err != nil {
		return nil, fmt.Errorf("generating Go: %w", err)
	}
	out[GoTypesPath] = goSrc
	doc, err := fs.ReadFile(fsys, DocsPath)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", DocsPath, err)
	}
	if out[DocsPath], err = Docs(m, doc); err != nil {
		return nil, fmt.Errorf("generating %s: %w", DocsPath, err)
	}
	if out[PythonPath], err = Python(m); err != nil {
		return nil, fmt.Errorf("generating Python: %w", err)
	}
	if out[TSPath], err = TypeScript(m); err != nil {
		return nil, fmt.Errorf("generating TypeScript: %w", err)
	}
	if out[TSExamplesPath], err = TypeScriptExamples(m); err != nil {
		return nil, fmt.Errorf("generating TypeScript examples: %w", err)
	}
	sm, err := LoadScript(fsys)
	if err != nil {
		return nil, fmt.Errorf("loading the script schema: %w", err)
	}
	pdoc, err := fs.ReadFile(fsys, ScriptDocsPath)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ScriptDocsPath, err)
	}
	if out[ScriptDocsPath], err = ScriptDocs(sm, pdoc); err != nil {
		return nil, fmt.Errorf("generating %s: %w", ScriptDocsPath, err)
	}
	return out, nil
}

// check enforces the rules the generators rely on.
func (m *Model) check() error {
	for _, d := range m.sorted() {
		if d.Kind != KindUnion {
			continue
		}
		seen := map[string]string{}
		for _, v := range d.Variants {
			if v.Kind != KindObject || v.TypeConst == "" {
				return fmt.Errorf("%s: variant %s is not an object with a `type` const", d.Name, v.Name)
			}
			if prev, dup := seen[v.TypeConst]; dup {
				return fmt.Errorf("%s: variants %s and %s share the type %q", d.Name, prev, v.Name, v.TypeConst)
			}
			seen[v.TypeConst] = v.Name
		}
	}
	return nil
}

// sourceFiles lists the schema files, for DO-NOT-EDIT headers.
func (m *Model) sourceFiles() []string {
	var names []string
	for _, f := range m.Files {
		names = append(names, "schema/"+f.Name)
	}
	sort.Strings(names)
	return names
}
