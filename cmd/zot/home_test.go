package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHomeDirectory: without ZOT_HOME, session files live under the
// platform's state directory; an existing ~/.zot keeps being used when the
// new place does not exist, and zot says so once on stderr.
func TestHomeDirectory(t *testing.T) {
	run := func(t *testing.T, user string, env ...string) (string, string) {
		t.Helper()
		cwd := t.TempDir()
		cmd := exec.Command(zotBin, "-p", "hi", "--provider", "scripted", "--cwd", cwd, "--continue")
		cmd.Env = append(withoutHome(cleanEnv()), append([]string{"HOME=" + user}, env...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("zot: %v\n%s", err, stderr.String())
		}
		var files []string
		filepath.WalkDir(user, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
				files = append(files, strings.TrimPrefix(p, user))
			}
			return nil
		})
		if len(files) != 1 {
			t.Fatalf("session files: %v", files)
		}
		return files[0], stderr.String()
	}
	t.Run("state directory", func(t *testing.T) {
		user := t.TempDir()
		file, stderr := run(t, user)
		if !strings.HasPrefix(file, "/.local/state/zot/sessions/") || stderr != "" {
			t.Errorf("file %s, stderr %q", file, stderr)
		}
	})
	t.Run("XDG_STATE_HOME", func(t *testing.T) {
		user := t.TempDir()
		file, _ := run(t, user, "XDG_STATE_HOME="+filepath.Join(user, "xdg"))
		if !strings.HasPrefix(file, "/xdg/zot/sessions/") {
			t.Errorf("file %s", file)
		}
	})
	t.Run("legacy ~/.zot", func(t *testing.T) {
		user := t.TempDir()
		if err := os.Mkdir(filepath.Join(user, ".zot"), 0o700); err != nil {
			t.Fatal(err)
		}
		file, stderr := run(t, user)
		if !strings.HasPrefix(file, "/.zot/sessions/") {
			t.Errorf("file %s", file)
		}
		if strings.Count(stderr, "using "+filepath.Join(user, ".zot")) != 1 || !strings.Contains(stderr, filepath.Join(user, ".local/state/zot")) {
			t.Errorf("stderr %q: want one notice naming both places", stderr)
		}
	})
}

// withoutHome drops ZOT_HOME, HOME and XDG_STATE_HOME from env.
func withoutHome(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k != "ZOT_HOME" && k != "HOME" && k != "XDG_STATE_HOME" {
			out = append(out, kv)
		}
	}
	return out
}
