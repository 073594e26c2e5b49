package tools

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// buffers is a FileAccess over an editor's buffers: what it holds is
// what the model sees, whatever the disk says.
type buffers struct {
	mu             sync.Mutex
	text           map[string]string
	noRead, noWrit bool
	reads, writes  int
}

func (b *buffers) ReadTextFile(_ context.Context, path string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.noRead {
		return "", ErrNotOffered
	}
	b.reads++
	s, ok := b.text[path]
	if !ok {
		return "", fmt.Errorf("resource not found: %s: %w", path, fs.ErrNotExist)
	}
	return s, nil
}

func (b *buffers) WriteTextFile(_ context.Context, path, content string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.noWrit {
		return ErrNotOffered
	}
	b.writes++
	b.text[path] = content
	return nil
}

func TestFileToolsGoThroughFileAccess(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "on disk\n"})
	disk := filepath.Join(dir, "a.txt")
	b := &buffers{text: map[string]string{disk: "unsaved line one\nline two\n"}}
	ctx := WithFileAccess(context.Background(), b)
	cfg := Config{CWD: dir}

	// read sees the buffer, not the disk.
	out := wantOK(t, runToolCtx(t, ctx, toolByName(t, cfg, "read"), map[string]any{"path": "a.txt"}))
	if !strings.Contains(out, "unsaved line one") || strings.Contains(out, "on disk") {
		t.Fatalf("read did not show the buffer: %q", out)
	}
	// edit edits the buffer and writes through the client; the disk keeps its text.
	out = wantOK(t, runToolCtx(t, ctx, toolByName(t, cfg, "edit"), map[string]any{
		"path": "a.txt", "edits": []map[string]string{{"old_text": "line two", "new_text": "line 2"}},
	}))
	if !strings.Contains(out, "+line 2") || !strings.Contains(out, "through the editor") {
		t.Fatalf("edit result: %q", out)
	}
	if b.text[disk] != "unsaved line one\nline 2\n" {
		t.Fatalf("buffer after edit: %q", b.text[disk])
	}
	if got, _ := os.ReadFile(disk); string(got) != "on disk\n" {
		t.Fatalf("edit wrote the disk: %q", got)
	}
	// write creates a file through the client.
	newPath := filepath.Join(dir, "new.txt")
	out = wantOK(t, runToolCtx(t, ctx, toolByName(t, cfg, "write"), map[string]any{"path": "new.txt", "content": "x\ny\n"}))
	if !strings.Contains(out, "created through the editor") || b.text[newPath] != "x\ny\n" {
		t.Fatalf("write: %q, buffer %q", out, b.text[newPath])
	}
	if _, err := os.Stat(newPath); err == nil {
		t.Fatal("write through the client also wrote the disk")
	}
	// A file the client does not have.
	wantErr(t, runToolCtx(t, ctx, toolByName(t, cfg, "read"), map[string]any{"path": "missing.txt"}), "no such file")
	wantErr(t, runToolCtx(t, ctx, toolByName(t, cfg, "edit"), map[string]any{
		"path": "missing.txt", "edits": []map[string]string{{"old_text": "a", "new_text": "b"}},
	}), "use write to create it")
	// A directory and an image stay the disk's.
	wantErr(t, runToolCtx(t, ctx, toolByName(t, cfg, "read"), map[string]any{"path": "."}), "is a directory")
	png := "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 32)
	writeFiles(t, dir, map[string]string{"i.png": png})
	reads := b.reads
	runToolCtx(t, ctx, toolByName(t, cfg, "read"), map[string]any{"path": "i.png"})
	if b.reads != reads {
		t.Fatal("an image was asked of the client")
	}
}

func TestFileAccessStepsNotOfferedUseTheDisk(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "disk text\n"})
	disk := filepath.Join(dir, "a.txt")
	b := &buffers{text: map[string]string{disk: "buffer text\n"}, noWrit: true}
	ctx := WithFileAccess(context.Background(), b)
	cfg := Config{CWD: dir}
	// Reading is offered, writing is not: edit reads the buffer and writes the disk.
	wantOK(t, runToolCtx(t, ctx, toolByName(t, cfg, "edit"), map[string]any{
		"path": "a.txt", "edits": []map[string]string{{"old_text": "buffer", "new_text": "edited"}},
	}))
	if got, _ := os.ReadFile(disk); string(got) != "edited text\n" {
		t.Fatalf("disk after edit: %q", got)
	}
	wantOK(t, runToolCtx(t, ctx, toolByName(t, cfg, "write"), map[string]any{"path": "b.txt", "content": "z"}))
	if got, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(got) != "z" {
		t.Fatalf("write did not use the disk: %q", got)
	}
	b.noRead = true
	out := wantOK(t, runToolCtx(t, ctx, toolByName(t, cfg, "read"), map[string]any{"path": "a.txt"}))
	if !strings.Contains(out, "edited text") {
		t.Fatalf("read did not use the disk: %q", out)
	}
}

// terminal is a CommandRunner that records what it was asked.
type terminal struct {
	got Command
	res CommandResult
	err error
}

func (r *terminal) RunCommand(ctx context.Context, cmd Command) (CommandResult, error) {
	r.got = cmd
	if r.err != nil {
		return CommandResult{}, r.err
	}
	return r.res, nil
}

func TestBashGoesThroughCommandRunner(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{CWD: dir}
	r := &terminal{res: CommandResult{Output: "hi\n", ExitCode: 0}}
	ctx := WithCommandRunner(context.Background(), r)
	out := wantOK(t, runToolCtx(t, ctx, toolByName(t, cfg, "bash"), map[string]any{"command": "echo hi", "timeout": 7}))
	if out != "hi\n[exit code 0]" {
		t.Fatalf("output %q", out)
	}
	if r.got.Command != "echo hi" || r.got.Dir != dir || r.got.ToolCallID != "call-1" || r.got.Timeout.Seconds() != 7 {
		t.Fatalf("runner was asked %+v", r.got)
	}
	r.res = CommandResult{Output: strings.Repeat("line\n", 10), ExitCode: 3, Truncated: true}
	wantErr(t, runToolCtx(t, ctx, toolByName(t, cfg, "bash"), map[string]any{"command": "false"}),
		"exit code 3", "kept only the end")
	r.res = CommandResult{ExitCode: -1, TimedOut: true}
	wantErr(t, runToolCtx(t, ctx, toolByName(t, cfg, "bash"), map[string]any{"command": "sleep 9", "timeout": 1}),
		"(no output)", "timed out after 1s")
	r.res = CommandResult{ExitCode: -1, Signal: "SIGKILL"}
	wantErr(t, runToolCtx(t, ctx, toolByName(t, cfg, "bash"), map[string]any{"command": "x"}), "killed by SIGKILL")
	r.err = fmt.Errorf("terminal/create: refused")
	wantErr(t, runToolCtx(t, ctx, toolByName(t, cfg, "bash"), map[string]any{"command": "x"}), "editor's terminal", "refused")
	aborted, cancel := context.WithCancel(ctx)
	cancel()
	wantErr(t, runToolCtx(t, aborted, toolByName(t, cfg, "bash"), map[string]any{"command": "x"}), "aborted")
}
