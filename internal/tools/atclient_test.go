package tools

import (
	"context"
	"testing"
)

type nopFiles struct{}

func (nopFiles) ReadTextFile(context.Context, string) (string, error) { return "", nil }
func (nopFiles) WriteTextFile(context.Context, string, string) error  { return nil }

type nopRunner struct{}

func (nopRunner) RunCommand(context.Context, Command) (CommandResult, error) {
	return CommandResult{}, nil
}

// TestAtClient: read, write and edit are the client's under its file
// access, bash under its command runner; the others, and all of them
// without, are this process's.
func TestAtClient(t *testing.T) {
	all := Builtins(Config{CWD: t.TempDir()})
	files := WithFileAccess(context.Background(), nopFiles{})
	terminal := WithCommandRunner(context.Background(), nopRunner{})
	want := map[string][2]bool{ // under file access, under a command runner
		"read": {true, false}, "write": {true, false}, "edit": {true, false}, "bash": {false, true},
	}
	for _, tool := range all {
		if AtClient(context.Background(), tool) {
			t.Errorf("%s: at the client without its access", tool.Name())
		}
		w := want[tool.Name()]
		if got := AtClient(files, tool); got != w[0] {
			t.Errorf("%s under file access: at the client %v, want %v", tool.Name(), got, w[0])
		}
		if got := AtClient(terminal, tool); got != w[1] {
			t.Errorf("%s under a command runner: at the client %v, want %v", tool.Name(), got, w[1])
		}
	}
}
