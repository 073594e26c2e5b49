//go:build unix

package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
)

// A session's bash spill files live as long as the session: a result names
// its file for the model to read later, and closing the session removes it.
func TestSessionCloseRemovesBashSpillFiles(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	host := NewHost(HostConfig{})
	defer host.Close()
	s, err := host.NewSession(SessionConfig{Provider: "scripted", CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	bash, ok := s.Tools().View().Lookup("bash")
	if !ok {
		t.Fatal("the session has no bash tool")
	}
	res, err := bash.Run(context.Background(), tools.Call{ID: "1", Args: json.RawMessage(`{"command":"seq 1 100000"}`)})
	if err != nil || res.IsError {
		t.Fatalf("bash: %v %+v", err, res)
	}
	m := regexp.MustCompile(`saved to (\S+) \.\.\.\]`).FindStringSubmatch(res.Content[0].(*llm.TextBlock).Text)
	if m == nil {
		t.Fatal("no spill file named in the result")
	}
	if rel, err := filepath.Rel(tmp, m[1]); err != nil || !filepath.IsLocal(rel) {
		t.Errorf("spill file %s is not under TMPDIR %s", m[1], tmp)
	}
	if _, err := os.Stat(m[1]); err != nil {
		t.Fatalf("spill file gone while the session lives: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("left in TMPDIR after the session closed: %v", names)
	}
}
