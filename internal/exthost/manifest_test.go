package exthost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/trust"
	"zot.dev/zot/sdk/extwire"
)

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "project", ".zot", "extensions")
	global := filepath.Join(root, "home", "extensions")
	explicit := filepath.Join(root, "work")

	manifest(t, project, "b", map[string]any{"exec": "./b"})
	manifest(t, project, "a", map[string]any{"exec": "python3", "args": []string{"a.py"}})
	manifest(t, project, "off", map[string]any{"exec": "./off", "enabled": false})
	manifest(t, project, "broken", map[string]any{"exec": 7})
	manifest(t, project, "future", map[string]any{"exec": "/bin/true", "sandbox": "strict"})
	manifest(t, global, "a", map[string]any{"exec": "./global-a"})
	manifest(t, global, "g", map[string]any{"exec": "./g", "version": "2"})
	manifest(t, global, "x", map[string]any{"name": "b", "exec": "./shadowed-b"})
	os.MkdirAll(filepath.Join(global, "not-an-extension"), 0o755)
	os.WriteFile(filepath.Join(global, "loose.json"), []byte("{}"), 0o644)
	work := manifest(t, explicit, "g", map[string]any{"exec": "./mine"})

	specs, problems, notes := Discover(Discovery{
		Paths:      []string{filepath.Join(work, ManifestFile)},
		ProjectDir: project,
		GlobalDir:  global,
	})
	var got []string
	for _, s := range specs {
		got = append(got, s.Origin.String()+":"+s.Name()+":"+s.Exec)
	}
	want := []string{
		"explicit:g:" + filepath.Join(work, "mine"),
		"project:a:" + mustLook(t, "python3"),
		"project:b:" + filepath.Join(project, "b", "b"),
		"project:future:/bin/true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("specs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The broken manifest is one line naming the file and the field; the
	// unknown key is a warning, and the extension still loads.
	if len(problems) != 2 {
		t.Fatalf("problems: %q", problems)
	}
	brokenFile := filepath.Join(project, "broken", ManifestFile)
	if p := problems[0]; !strings.Contains(p, brokenFile) || !strings.Contains(p, "/exec") || strings.Contains(p, "\n") {
		t.Errorf("problem: %s", p)
	}
	if p := problems[1]; !strings.Contains(p, "'sandbox'") || !strings.Contains(p, "(ignored)") {
		t.Errorf("warning: %s", p)
	}
	joined := strings.Join(notes, "\n")
	for _, w := range []string{"extension off", "disabled", "extension a in " + filepath.Join(global, "a") + " is shadowed by the project one", "extension g in " + filepath.Join(global, "g") + " is shadowed by the explicit one", "extension b in " + filepath.Join(global, "x")} {
		if !strings.Contains(joined, w) {
			t.Errorf("notes lack %q:\n%s", w, joined)
		}
	}
}

func TestDiscoverExplicitFolderAndMissing(t *testing.T) {
	root := t.TempDir()
	folder := manifest(t, root, "e", map[string]any{"exec": "./e"})
	specs, problems, _ := Discover(Discovery{Paths: []string{folder, filepath.Join(root, "nowhere")}})
	if len(specs) != 1 || specs[0].Name() != "e" {
		t.Fatalf("specs: %+v", specs)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], filepath.Join(root, "nowhere")) {
		t.Fatalf("problems: %q", problems)
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"weather":                "weather",
		"../../etc/x":            "_.._etc_x",
		"..hidden":               "hidden",
		"a b/c\\d":               "a_b_c_d",
		"":                       "unnamed",
		"...":                    "unnamed",
		"ünï":                    "__n__",
		"x.y_z-1":                "x.y_z-1",
		strings.Repeat("n", 100): strings.Repeat("n", 64),
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func mustLook(t *testing.T, name string) string {
	t.Helper()
	p := resolveExec(name, "/")
	if !filepath.IsAbs(p) {
		t.Skipf("%s is not on PATH", name)
	}
	return p
}

func TestLikelyCause(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "here.py"), nil, 0o644)
	spec := func(exec string, args ...string) Spec {
		return Spec{Manifest: extwire.Manifest{Name: "x", Exec: exec, Args: args}, Dir: dir, File: filepath.Join(dir, ManifestFile), Exec: resolveExec(exec, dir)}
	}
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{spec("python3", "here.py"), ""},
		{spec("python3", "-u", "here.py", "--mode", "fast"), ""},
		{spec("python3", "gone.py"), "gone.py is missing from the extension's folder " + dir},
		{spec("node", "./lib/index.js"), "./lib/index.js is missing"},
		{spec("sh", "-c", "sleep 2; exec python3 gone.py"), ""},
		{spec("no-such-runtime-zot", "here.py"), `its runtime "no-such-runtime-zot" is not on PATH`},
		{spec("./gone"), "its program ./gone does not exist"},
		{spec("go", "run", "."), "`go run` needs a go.mod in the extension's folder " + dir},
	} {
		got := LikelyCause(c.spec)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s %v: %q, want %q", c.spec.Manifest.Exec, c.spec.Manifest.Args, got, c.want)
		}
	}
}

// With a trust gate, the project's extensions load only from a trusted
// folder; the explicit and global ones load either way.
func TestFindTrust(t *testing.T) {
	root := t.TempDir()
	cwd := filepath.Join(root, "project")
	project := filepath.Join(cwd, ".zot", "extensions")
	global := filepath.Join(root, "home", "extensions")
	manifest(t, project, "p", map[string]any{"exec": "/bin/true"})
	manifest(t, global, "g", map[string]any{"exec": "/bin/true"})
	store := &trust.Store{File: filepath.Join(root, "home", "trust.json")}
	d := Discovery{ProjectDir: project, GlobalDir: global, Trust: &trust.Gate{Store: store}}
	names := func(f Found) string {
		var out []string
		for _, s := range f.Specs {
			out = append(out, s.Name())
		}
		return strings.Join(out, ",")
	}
	f := Find(d)
	if names(f) != "g" || f.Untrusted == nil || !strings.Contains(f.Untrusted.Message(), "not starting its extensions (p) in ") {
		t.Fatalf("untrusted: %s %+v", names(f), f.Untrusted)
	}
	p, err := trust.Inspect(cwd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Trust(p); err != nil {
		t.Fatal(err)
	}
	if f := Find(d); names(f) != "p,g" || f.Untrusted != nil {
		t.Fatalf("trusted: %s %+v", names(f), f.Untrusted)
	}
}
