package checkpoint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkGitCommand is what recording costs a bash call in a git work
// tree of 500 committed files, 5 of them changed and 5 untracked: the
// snapshot before and the comparison after, for a command that changed
// nothing.
func BenchmarkGitCommand(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	dir := b.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	body := strings.Repeat("line of a source file\n", 200)
	for i := range 500 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", i)), []byte(body), 0o644)
	}
	git("add", ".")
	git("commit", "-q", "-m", "start")
	for i := range 5 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", i)), []byte(body+"changed\n"), 0o644)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("new%d.txt", i)), []byte(body), 0o644)
	}
	s := New("", Limits{})
	turn := Turn{At: 0, FP: "x"}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		snap := s.SnapshotGit(ctx, dir)
		if snap == nil {
			b.Fatal("no snapshot")
		}
		if err := s.AfterGit(ctx, turn, snap); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteCall is what recording costs a write or edit call of a
// 20 KB file, the first of its turn: its content read, kept and logged
// before, its hash after.
func BenchmarkWriteCall(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "f.go")
	os.WriteFile(path, []byte(strings.Repeat("line of a source file\n", 1000)), 0o644)
	s := New(filepath.Join(dir, "ck"), Limits{})
	n := 0
	for b.Loop() {
		n++
		turn := Turn{At: n, FP: "x"}
		if err := s.Before(turn, path); err != nil {
			b.Fatal(err)
		}
		if err := s.After(turn, path); err != nil {
			b.Fatal(err)
		}
	}
}
