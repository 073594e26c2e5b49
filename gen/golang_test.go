package gen

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/<file>, or rewrites it with -update.
func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./gen -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the generated output (run go test ./gen -update and review the diff)", path)
	}
}

func loadTiny(t *testing.T) *Model {
	t.Helper()
	return loadCase(t, "tiny")
}

// rpcSections are the sections of testdata/tiny/doc.md, those of docs/rpc.md.
var rpcSections = []string{"commands", "events", "content", "errors", "stop", "reference"}

func TestGoGolden(t *testing.T) {
	src, err := GoTypes(loadTiny(t), "tiny")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "tiny/want_types_go.txt", src)
	src, err = GoValidators(loadTiny(t), "tiny", "")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "tiny/want_validate_go.txt", src)
}

func TestDocsGolden(t *testing.T) {
	doc, err := os.ReadFile("testdata/tiny/doc.md")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Docs(loadTiny(t), doc, rpcSections...)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "tiny/want_doc.md", out)
	// Regenerating the output is a fixed point: prose survives and the
	// sections do not grow.
	again, err := Docs(loadTiny(t), out, rpcSections...)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, out) {
		t.Error("regenerating the docs changes them again")
	}
	for _, prose := range []string{"Prose before.", "Prose between.", "Prose after."} {
		if !bytes.Contains(out, []byte(prose)) {
			t.Errorf("hand-written %q lost", prose)
		}
	}
	if bytes.Contains(out, []byte("old text that is replaced")) {
		t.Error("stale generated text kept")
	}
}

func TestDocsNeedEveryMarker(t *testing.T) {
	_, err := Docs(loadTiny(t), []byte("# no markers\n"), rpcSections...)
	if err == nil {
		t.Fatal("docs without markers accepted")
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	root := os.DirFS(filepath.Join("..", ""))
	a, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for p := range a {
		if !bytes.Equal(a[p], b[p]) {
			t.Errorf("%s differs between two runs", p)
		}
		if !bytes.Contains(a[p], []byte("DO NOT EDIT")) {
			t.Errorf("%s has no DO-NOT-EDIT header", p)
		}
	}
}

func TestSchemaRulesAreEnforced(t *testing.T) {
	cases := map[string]string{
		"no description": `{"X":{"type":"string","examples":["a"]}}`,
		"no examples":    `{"X":{"type":"string","description":"d"}}`,
		"variant without type const": `{"U":{"description":"u","oneOf":[{"$ref":"#/$defs/A"}],"examples":[{}]},
			"A":{"description":"a","type":"object","properties":{"x":{"type":"string","description":"x"}},"additionalProperties":false,"examples":[{}]}}`,
		"dangling ref":              `{"A":{"description":"a","type":"object","properties":{"x":{"$ref":"#/$defs/Nope","description":"x"}},"additionalProperties":false,"examples":[{}]}}`,
		"field without description": `{"A":{"description":"a","type":"object","properties":{"x":{"type":"string"}},"additionalProperties":false,"examples":[{}]}}`,
		"name of an unknown variant": `{"U":{"description":"u","oneOf":[{"$ref":"#/$defs/A"}],"examples":[{}]},
			"A":{"description":"a","type":"object","properties":{"type":{"const":"a","description":"t"}},"required":["type"],"additionalProperties":false,"examples":[{}]},
			"UnknownU":{"description":"x","type":"string","examples":["x"]}}`,
		"object without additionalProperties":          `{"A":{"description":"a","type":"object","properties":{"x":{"type":"string","description":"x"}},"examples":[{}]}}`,
		"open object with a field that cannot be null": `{"A":{"description":"a","type":"object","properties":{"x":{"type":"string","description":"x"}},"additionalProperties":true,"examples":[{}]}}`,
		"required field that may be null":              `{"A":{"description":"a","type":"object","properties":{"x":{"type":["string","null"],"description":"x"}},"required":["x"],"additionalProperties":true,"examples":[{"x":"a"}]}}`,
		"strict object with a field that may be null":  `{"A":{"description":"a","type":"object","properties":{"x":{"type":["string","null"],"description":"x"}},"additionalProperties":false,"examples":[{}]}}`,
		"union of open and strict variants": `{"U":{"description":"u","oneOf":[{"$ref":"#/$defs/A"},{"$ref":"#/$defs/B"}],"examples":[{"type":"a"}]},
			"A":{"description":"a","type":"object","properties":{"type":{"const":"a","description":"t"}},"required":["type"],"additionalProperties":true,"examples":[{"type":"a"}]},
			"B":{"description":"b","type":"object","properties":{"type":{"const":"b","description":"t"}},"required":["type"],"additionalProperties":false,"examples":[{"type":"b"}]}}`,
		"x-droppable outside a union": `{"A":{"description":"a","x-droppable":true,"type":"object","properties":{"type":{"const":"a","description":"t"}},"required":["type"],"additionalProperties":false,"examples":[{"type":"a"}]}}`,
		"x-droppable not a boolean": `{"U":{"description":"u","oneOf":[{"$ref":"#/$defs/A"}],"examples":[{"type":"a"}]},
			"A":{"description":"a","x-droppable":"yes","type":"object","properties":{"type":{"const":"a","description":"t"}},"required":["type"],"additionalProperties":false,"examples":[{"type":"a"}]}}`,
		"type list other than [T, null]": `{"A":{"description":"a","type":"object","properties":{"x":{"type":["string","integer"],"description":"x"}},"additionalProperties":true,"examples":[{}]}}`,
	}
	for name, defs := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "schema"), 0o755)
			doc := `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://zot.dev/schema/x.json","$defs":` + defs + `}`
			os.WriteFile(filepath.Join(dir, "schema", "x.json"), []byte(doc), 0o644)
			m, err := Load(os.DirFS(dir), "schema")
			if err == nil {
				err = m.check()
			}
			if err == nil {
				t.Fatal("accepted")
			}
			t.Log(err)
		})
	}
}

// TestHeadersCarrySchemaHash checks that every generated file names the
// hash `sha256sum <schema folder>/*.json | sha256sum` prints, computed
// here without the generator, and that a changed schema changes it.
func TestHeadersCarrySchemaHash(t *testing.T) {
	root := os.DirFS("..")
	files, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range Targets {
		names, err := fs.Glob(root, tg.Schema+"/*.json")
		if err != nil || len(names) == 0 {
			t.Fatalf("%s: no schema files (%v)", tg.Schema, err)
		}
		var lines strings.Builder
		for _, n := range names {
			data, err := fs.ReadFile(root, n)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&lines, "%x  %s\n", sha256.Sum256(data), n)
		}
		want := fmt.Sprintf("%x", sha256.Sum256([]byte(lines.String())))
		var outs []string
		if tg.GoDir != "" {
			outs = append(outs, tg.GoDir+"/"+GoTypesFile, tg.GoDir+"/"+GoValidatorsFile)
		}
		for _, d := range tg.Docs {
			outs = append(outs, d.Path)
		}
		outs = append(outs, tg.Python, tg.TypeScript, tg.TSExamples)
		for _, p := range outs {
			if p == "" {
				continue
			}
			if got := string(files[p]); !strings.Contains(got, want) {
				t.Errorf("%s does not carry the hash %s of %s", p, want, tg.Schema)
			}
		}
	}
	m := loadTiny(t)
	before := m.SourceHash()
	m.Files[0].Sum[0] ^= 1
	if m.SourceHash() == before {
		t.Error("a changed schema file keeps the hash")
	}
}

// TestGoGoldenCompiles builds, vets and tests the golden Go output of
// testdata/tiny as a package of this module, beside a hand-written
// companion (the schema's custom ID type) and a test that exercises it.
// The files are laid into testdata/tiny with `go -overlay`, so nothing is
// written to the tree.
func TestGoGoldenCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	overlay := map[string]map[string]string{"Replace": {}}
	for name, src := range map[string]string{
		GoTypesFile:      "want_types_go.txt",
		GoValidatorsFile: "want_validate_go.txt",
		"id.go":          "id_go.txt",
		"tiny_test.go":   "tiny_test_go.txt",
	} {
		overlay["Replace"][filepath.Join(dir, name)] = filepath.Join(dir, src)
	}
	data, err := json.Marshal(overlay)
	if err != nil {
		t.Fatal(err)
	}
	ovPath := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(ovPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"vet", "-overlay=" + ovPath, "./testdata/tiny"},
		{"test", "-overlay=" + ovPath, "-vet=off", "-count=1", "./testdata/tiny"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, goBin, args...)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", args[0], err, out)
		}
	}
}
