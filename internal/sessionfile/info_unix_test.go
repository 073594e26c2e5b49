//go:build unix

package sessionfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"zot.dev/zot/internal/llm"
)

func TestReadInfo(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	f, _, err := Open(p, Options{CWD: "/work/x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Save([]llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "hi"}}}}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	info, err := ReadInfo(p)
	if err != nil || info.CWD != "/work/x" || info.Created.IsZero() {
		t.Errorf("ReadInfo: %+v %v", info, err)
	}
	// A file of format 0 has no header: nothing is known, and that is no error.
	old := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(old, []byte(`{"role":"user","content":[{"type":"text","text":"hi"}]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if info, err := ReadInfo(old); err != nil || info.CWD != "" {
		t.Errorf("format 0: %+v %v", info, err)
	}
	// A named pipe in a session file's place is refused, not read (which
	// would wait for a writer for ever).
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	if _, err := ReadInfo(fifo); err == nil {
		t.Error("ReadInfo read a named pipe")
	}
}
