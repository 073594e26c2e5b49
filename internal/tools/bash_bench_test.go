package tools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkBash measures one bash call of `echo hi`, as the tool round
// trip of `make bench` makes it, with a progress callback as the agent
// gives one; against BenchmarkBashExec, the difference is the tool's own
// work (starting the shell in its own process group, capturing the
// output, the result).
func BenchmarkBash(b *testing.B) {
	dir := b.TempDir()
	tool := toolByName(b, Config{CWD: dir, Spills: NewSpills(dir)}, "bash")
	args := json.RawMessage(`{"command":"echo hi"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := tool.Run(ctx, Call{ID: "c", Args: args, Progress: func(string) {}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkBashExec runs the shell BenchmarkBash runs, as os/exec starts
// it, with nothing of the tool around it.
func BenchmarkBashExec(b *testing.B) {
	shell := shellPath(false)
	b.ReportAllocs()
	for b.Loop() {
		out, err := exec.Command(shell, "-c", "echo hi").Output()
		if err != nil || string(out) != "hi\n" {
			b.Fatal(err, string(out))
		}
	}
}

// BenchmarkRead measures one read call of a 120-line text file, as the
// benchmark's read round trip makes it.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(path, []byte(strings.Repeat("a line of the benchmark's text file, with some words in it\n", 120)), 0o644); err != nil {
		b.Fatal(err)
	}
	tool := toolByName(b, Config{CWD: dir}, "read")
	args, _ := json.Marshal(map[string]string{"path": path})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := tool.Run(ctx, Call{ID: "c", Args: args})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
