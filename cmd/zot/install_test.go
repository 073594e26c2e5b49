package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeInstall: make install puts a zot stamped with git describe's
// version and the commit into $GOBIN when set, else $PREFIX/bin (the
// default, ~/.local/bin, is TestReadmeOnAFreshCheckout's), and says how to
// put that directory on PATH when it is not there.
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
	install := func(t *testing.T, env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("make", append([]string{"-C", root, "--no-print-directory", "install"}, args...)...)
		for _, kv := range os.Environ() {
			if k, _, _ := strings.Cut(kv, "="); k != "GOBIN" && k != "PREFIX" && k != "HOME" && k != "VERSION" && k != "COMMIT" {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(append(cmd.Env, goEnv...), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make install: %v\n%s", err, out)
		}
		return string(out)
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
		// On PATH already: no hint.
		out := install(t, []string{"HOME=" + home, "GOBIN=" + dir, "PREFIX=" + filepath.Join(home, "prefix"), "PATH=" + dir + ":" + os.Getenv("PATH")})
		if strings.Contains(out, "not on your PATH") {
			t.Errorf("make install into a directory on PATH gives a PATH hint:\n%s", out)
		}
		v, c := version(t, filepath.Join(dir, "zot"))
		want := strings.TrimPrefix(git("describe", "--tags", "--match", "v[0-9]*", "--dirty"), "v")
		if want == "" {
			want = "0.0.0-dev+" + git("describe", "--always", "--dirty", "--abbrev=12")
		}
		if v != want || c != git("rev-parse", "HEAD") {
			t.Errorf("version %q, commit %q; want %q, %q", v, c, want, git("rev-parse", "HEAD"))
		}
	})
	t.Run("another zot first on PATH", func(t *testing.T) {
		dir, other := t.TempDir(), t.TempDir()
		if err := os.WriteFile(filepath.Join(other, "zot"), []byte("#!/bin/sh\necho old zot\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		out := install(t, []string{"HOME=" + home, "GOBIN=" + dir, "PATH=" + other + ":" + dir + ":" + os.Getenv("PATH")})
		if want := filepath.Join(other, "zot") + " comes before " + dir + " on your PATH"; !strings.Contains(out, want) {
			t.Errorf("make install behind another zot on PATH: no hint with %q:\n%s", want, out)
		}
	})
	t.Run("PREFIX", func(t *testing.T) {
		prefix := t.TempDir()
		out := install(t, []string{"HOME=" + home, "GOBIN="}, "PREFIX="+prefix)
		if want := "export PATH=\"" + filepath.Join(prefix, "bin") + ":$PATH\""; !strings.Contains(out, "is not on your PATH") || !strings.Contains(out, want) {
			t.Errorf("make install into a directory not on PATH: no hint with %s:\n%s", want, out)
		}
		if v, _ := version(t, filepath.Join(prefix, "bin", "zot")); !versionRE.MatchString(v) {
			t.Errorf("version %q", v)
		}
	})
}

// TestReadmeOnAFreshCheckout runs the README's quick start as a newcomer
// types it, line by line in one shell, in a fresh checkout of the tracked
// files (no bin/, no installed tools) with a fresh HOME: make install
// (which must say that ~/.local/bin is not on PATH), the README's PATH
// line, then zot itself. The line that sets an API key is left out: with
// no key, the lines that need one must fail saying so, and every other
// line must succeed.
func TestReadmeOnAFreshCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds zot")
	}
	for _, tool := range []string{"make", "git", "go", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	root := mustAbs(t, "../..")
	// The tracked files and the new ones git would add: what a clone of
	// the working tree, committed, would hold.
	files, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	tree := filepath.Join(t.TempDir(), "zot")
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		info, err := os.Lstat(filepath.Join(root, f))
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the working tree, or a link
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(tree, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, f), data, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	readme, err := os.ReadFile(filepath.Join(tree, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(readme), "## Quick start")
	_, block, _ = strings.Cut(block, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if strings.TrimSpace(l) != "" && !strings.Contains(l, "_API_KEY=") {
			lines = append(lines, l)
		}
	}
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "make install") {
		t.Fatalf("the quick start does not start with make install:\n%s", block)
	}
	// One shell runs the lines; after each, a marker with its status.
	var script strings.Builder
	script.WriteString("exec </dev/null\n")
	for i, l := range lines {
		fmt.Fprintf(&script, "%s\necho \"@@ %d $?\"\n", l, i)
	}
	home := t.TempDir()
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = tree
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "ZOT") ||
			k == "HOME" || k == "GOBIN" || k == "PREFIX" || k == "VERSION" || k == "COMMIT" || k == "MAKEFLAGS" || k == "MAKELEVEL" {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	// The go command's own places stay as they are, whatever HOME is.
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Env = append(cmd.Env, k+"="+strings.TrimSpace(string(out)))
	}
	// -trimpath keeps the checkout's folder out of the build cache's keys:
	// the packages compiled for one temporary checkout serve the next.
	cmd.Env = append(cmd.Env, "HOME="+home, "GOFLAGS=-trimpath")
	out, _ := cmd.CombinedOutput()
	rest := string(out)
	for i, l := range lines {
		text, after, ok := strings.Cut(rest, fmt.Sprintf("@@ %d ", i))
		if !ok {
			t.Fatalf("the quick start stopped before %q:\n%s", l, out)
		}
		codeText, after, _ := strings.Cut(after, "\n")
		rest = after
		code := -1
		fmt.Sscan(codeText, &code)
		switch {
		case i == 0:
			if want := `export PATH="` + home + `/.local/bin:$PATH"`; code != 0 || !strings.Contains(text, "is not on your PATH") || !strings.Contains(text, want) {
				t.Errorf("%s: status %d, no PATH hint with %s:\n%s", l, code, want, text)
			}
		case code == 1 && strings.Contains(text, "zot: no API key for "):
			// needs a key, and says so
		case strings.Contains(text, "not a terminal"):
			// the interactive client needs a terminal (the tmux tests of
			// make test-tui run it), and says so here, where stdin is not one
		case code != 0:
			t.Errorf("%s: status %d:\n%s", l, code, text)
		case strings.HasPrefix(l, "zot version"):
			if !strings.Contains(text, "zot version ") {
				t.Errorf("%s:\n%s", l, text)
			}
		case strings.HasPrefix(l, "zot -p \"hello\" --provider scripted"):
			if !strings.Contains(text, "at work.\n\nThe bash tool ran") {
				t.Errorf("%s: the answer's messages are not apart:\n%s", l, text)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "bin", "zot")); err != nil {
		t.Errorf("make install did not put zot into ~/.local/bin: %v", err)
	}
}
