package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeInstall: make install puts a zot stamped with git describe's
// version and the commit into $GOBIN when set, else $PREFIX/bin, else
// ~/.local/bin.
func TestMakeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds zot three times")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"make", "git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	if git("rev-parse", "HEAD") == "" {
		t.Skip("not a git clone")
	}
	// The go command's own places stay as they are, whatever HOME is.
	var goEnv []string
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV", "GOFLAGS", "GOTOOLCHAIN"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		goEnv = append(goEnv, k+"="+strings.TrimSpace(string(out)))
	}
	install := func(t *testing.T, env []string, args ...string) {
		t.Helper()
		cmd := exec.Command("make", append([]string{"-C", root, "--no-print-directory", "install"}, args...)...)
		for _, kv := range os.Environ() {
			if k, _, _ := strings.Cut(kv, "="); k != "GOBIN" && k != "PREFIX" && k != "HOME" && k != "VERSION" && k != "COMMIT" {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(append(cmd.Env, goEnv...), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make install: %v\n%s", err, out)
		}
	}
	version := func(t *testing.T, bin string) (string, string) {
		t.Helper()
		out, err := exec.Command(bin, "version").Output()
		if err != nil {
			t.Fatalf("%s version: %v", bin, err)
		}
		var v, c string
		for _, line := range strings.Split(string(out), "\n") {
			if s, ok := strings.CutPrefix(line, "zot version "); ok {
				v = s
			}
			if s, ok := strings.CutPrefix(line, "commit "); ok {
				c = s
			}
		}
		return v, c
	}
	home := t.TempDir()
	t.Run("GOBIN", func(t *testing.T) {
		dir := t.TempDir()
		install(t, []string{"HOME=" + home, "GOBIN=" + dir, "PREFIX=" + filepath.Join(home, "prefix")})
		v, c := version(t, filepath.Join(dir, "zot"))
		want := strings.TrimPrefix(git("describe", "--tags", "--match", "v[0-9]*", "--dirty"), "v")
		if want == "" {
			want = "0.0.0-dev+" + git("describe", "--always", "--dirty", "--abbrev=12")
		}
		if v != want || c != git("rev-parse", "HEAD") {
			t.Errorf("version %q, commit %q; want %q, %q", v, c, want, git("rev-parse", "HEAD"))
		}
	})
	t.Run("PREFIX", func(t *testing.T) {
		prefix := t.TempDir()
		install(t, []string{"HOME=" + home, "GOBIN="}, "PREFIX="+prefix)
		if v, _ := version(t, filepath.Join(prefix, "bin", "zot")); !versionRE.MatchString(v) {
			t.Errorf("version %q", v)
		}
	})
	t.Run("default", func(t *testing.T) {
		install(t, []string{"HOME=" + home, "GOBIN="})
		if v, _ := version(t, filepath.Join(home, ".local", "bin", "zot")); !versionRE.MatchString(v) {
			t.Errorf("version %q", v)
		}
	})
}
