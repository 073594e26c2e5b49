// Package gen turns zot's JSON Schemas (schema/<protocol>/*.json) into
// everything that must agree with them: the Go types of each protocol's
// package (sdk/wire for `zot rpc`, sdk/extwire for extensions), the
// generated sections of its docs, and the Python types and TypeScript
// declarations of the clients.
//
// What is generated from which folder is the table [Targets]: a new
// protocol is one more row, with its own Go package.
//
// [Generate] is pure: it reads only the file system it is given and returns
// the generated files by path, so tests can regenerate in memory and compare
// with what is committed.
package gen

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
)

// Target is one schema folder and every file generated from it. Paths are
// relative to the repository root and use slashes; an empty path means
// the output is not generated.
type Target struct {
	// Name names the target in messages, e.g. "rpc".
	Name string
	// Title names the protocol in generated prose, e.g. "zot's RPC
	// protocol".
	Title string
	// Schema is the folder of the schema files, e.g. "schema/rpc".
	Schema string
	// GoDir is the directory of the Go package that gets the protocol's
	// types ([GoTypesFile]) and validators ([GoValidatorsFile]),
	// GoPackage its name.
	GoDir, GoPackage string
	// GoRules names a variable of the Go package, written by hand, of
	// checks the generator does not express (see [GoValidators]); ""
	// for none.
	GoRules string
	// Docs are the documents with sections generated from the schema.
	Docs []DocTarget
	// Python is the module of the Python package's types (the client's
	// for rpc, the extension authors' for ext).
	Python string
	// TypeScript is the declaration file of the Node package's types;
	// TSExamples holds every schema example as a typed constant, so that
	// `tsc --strict` proves the declarations accept them.
	TypeScript, TSExamples string
}

// DocTarget is a document with generated sections: each one named in
// Sections sits between `<!-- BEGIN GENERATED: name -->` and
// `<!-- END GENERATED: name -->`; the prose around them is kept.
type DocTarget struct {
	Path     string
	Sections []string
}

// The names of the generated Go files in a target's GoDir.
const (
	GoTypesFile      = "types_gen.go"
	GoValidatorsFile = "validate_gen.go"
)

// Targets are the repository's schema folders and what they generate.
var Targets = []Target{
	{
		Name:      "rpc",
		Title:     "zot's RPC protocol",
		Schema:    "schema/rpc",
		GoDir:     "sdk/wire",
		GoPackage: "wire",
		GoRules:   "schemaRules",
		Docs: []DocTarget{{
			Path:     "docs/rpc.md",
			Sections: []string{"commands", "events", "content", "errors", "stop", "reference"},
		}},
		Python:     "clients/python/zot_client/types.py",
		TypeScript: "clients/node/types.d.ts",
		TSExamples: "clients/node/test/examples.gen.ts",
	},
	{
		// The extension protocol: its Go types are public, for
		// the host and for extensions written in Go.
		Name:      "ext",
		Title:     "zot's extension protocol",
		Schema:    "schema/ext",
		GoDir:     "sdk/extwire",
		GoPackage: "extwire",
		Docs: []DocTarget{{
			Path:     "docs/extensions.md",
			Sections: []string{"frames", "reference"},
		}},
		// The extension-author packages beside the clients.
		Python:     "clients/python-ext/zot_ext/types.py",
		TypeScript: "clients/node-ext/types.d.ts",
		TSExamples: "clients/node-ext/test/examples.gen.ts",
	},
	{
		// The scripted provider's script format: not a wire, only a
		// reference in the providers' docs.
		Name:   "script",
		Title:  "the scripted provider's script format",
		Schema: "schema/script",
		Docs: []DocTarget{{
			Path:     "docs/providers.md",
			Sections: []string{"script"},
		}},
	},
}

// Generate generates every target of [Targets] and of [JSONRPCTargets]
// from fsys, the repository root, and returns the files keyed by path.
func Generate(fsys fs.FS) (map[string][]byte, error) {
	out, err := GenerateTargets(fsys, Targets)
	if err != nil {
		return nil, err
	}
	more, err := GenerateJSONRPC(fsys, JSONRPCTargets)
	if err != nil {
		return nil, err
	}
	for p, data := range more {
		if _, dup := out[p]; dup {
			return nil, fmt.Errorf("two generators write %s", p)
		}
		out[p] = data
	}
	return out, nil
}

// GenerateTargets reads each target's schema folder (and the current
// documents, whose hand-written prose around the generated sections it
// keeps) from fsys and returns every generated file keyed by its path.
// Two targets may not write the same file.
func GenerateTargets(fsys fs.FS, targets []Target) (map[string][]byte, error) {
	out := map[string][]byte{}
	owner := map[string]string{}
	for _, t := range targets {
		files, err := t.generate(fsys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		for p, data := range files {
			if prev, dup := owner[p]; dup {
				return nil, fmt.Errorf("targets %s and %s both write %s", prev, t.Name, p)
			}
			owner[p] = t.Name
			out[p] = data
		}
	}
	return out, nil
}

// generate returns the files of one target.
func (t Target) generate(fsys fs.FS) (map[string][]byte, error) {
	m, err := Load(fsys, t.Schema)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", t.Schema, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("checking %s: %w", t.Schema, err)
	}
	m.Title = t.Title
	out := map[string][]byte{}
	if t.GoDir != "" {
		if t.GoPackage == "" {
			return nil, fmt.Errorf("GoDir %s without GoPackage", t.GoDir)
		}
		src, err := GoTypes(m, t.GoPackage)
		if err != nil {
			return nil, fmt.Errorf("generating Go: %w", err)
		}
		out[path.Join(t.GoDir, GoTypesFile)] = src
		if src, err = GoValidators(m, t.GoPackage, t.GoRules); err != nil {
			return nil, fmt.Errorf("generating Go validators: %w", err)
		}
		out[path.Join(t.GoDir, GoValidatorsFile)] = src
	}
	for _, d := range t.Docs {
		doc, err := fs.ReadFile(fsys, d.Path)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", d.Path, err)
		}
		if out[d.Path], err = Docs(m, doc, d.Sections...); err != nil {
			return nil, fmt.Errorf("generating %s: %w", d.Path, err)
		}
	}
	for _, c := range []struct {
		path string
		gen  func(*Model) ([]byte, error)
	}{
		{t.Python, Python},
		{t.TypeScript, TypeScript},
		{t.TSExamples, TypeScriptExamples},
	} {
		if c.path == "" {
			continue
		}
		if out[c.path], err = c.gen(m); err != nil {
			return nil, fmt.Errorf("generating %s: %w", c.path, err)
		}
	}
	return out, nil
}

// check enforces the rules the generators rely on.
func (m *Model) check() error {
	for _, d := range m.sorted() {
		if d.Droppable && len(d.Unions) == 0 {
			return fmt.Errorf("%s: x-droppable marks a variant of a union, and %s is none", d.Name, d.Name)
		}
		if d.Kind != KindUnion {
			continue
		}
		if other := m.Defs["Unknown"+d.Name]; other != nil {
			return fmt.Errorf("%s: the definition %s takes the name of its unknown variant", d.Name, other.Name)
		}
		seen := map[string]string{}
		for _, v := range d.Variants {
			if v.Kind != KindObject || v.TypeConst == "" {
				return fmt.Errorf("%s: variant %s is not an object with a `type` const", d.Name, v.Name)
			}
			// A reader reads every member of a union alike: all leniently
			// (commands, so that newer clients are served) or all strictly.
			if first := d.Variants[0]; v.Open != first.Open {
				return fmt.Errorf(`%s: variant %s has "additionalProperties": %t but %s has %t; a union's variants are all read leniently (true, with every optional property accepting null) or all strictly`, d.Name, v.Name, v.Open, first.Name, first.Open)
			}
			if prev, dup := seen[v.TypeConst]; dup {
				return fmt.Errorf("%s: variants %s and %s share the type %q", d.Name, prev, v.Name, v.TypeConst)
			}
			seen[v.TypeConst] = v.Name
		}
	}
	return nil
}

// sourceFiles lists the schema files by path, for DO-NOT-EDIT headers.
func (m *Model) sourceFiles() []string {
	var names []string
	for _, f := range m.Files {
		names = append(names, f.Path)
	}
	sort.Strings(names)
	return names
}
