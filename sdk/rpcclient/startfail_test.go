package rpcclient

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/zotbin"
)

// TestStartFailureSaysWhy starts zot for a real provider without a key: zot
// refuses on stderr and exits 1, and the client's error carries that
// reason, not only the exit status. stderr still reaches Options.Stderr.
func TestStartFailureSaysWhy(t *testing.T) {
	stderr := &zotbin.Buffer{}
	c, err := Start(context.Background(), Options{
		Bin:    zotBin,
		Args:   []string{"--provider", "anthropic", "--cwd", t.TempDir()},
		Env:    append(cleanEnv(), "ZOT_HOME="+t.TempDir()),
		Stderr: stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Hello(ctx(t), "")
	if !errors.Is(err, ErrExited) {
		t.Fatalf("Hello: %v, want ErrExited", err)
	}
	const want = "no API key for anthropic: set ANTHROPIC_API_KEY"
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("Hello: %q, want the exit status and %q", err, want)
	}
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("Options.Stderr got %q, want zot's stderr", stderr.String())
	}
}

func TestStderrTailKeepsTheLastLines(t *testing.T) {
	var tail stderrTail
	for i := 0; i < 2000; i++ {
		tail.Write([]byte("noise noise noise\n"))
	}
	tail.Write([]byte("zot: the reason\n\n"))
	if got := tail.reason(); !strings.HasSuffix(got, "noise noise noise | zot: the reason") || strings.Count(got, "|") != 4 {
		t.Errorf("reason = %q", got)
	}
	if got := (&stderrTail{}).reason(); got != "" {
		t.Errorf("reason of no output = %q", got)
	}
}

// TestFindsZotLikeTheOtherClients: with Options.Bin empty the client runs
// $ZOT_BIN, else zot on PATH, as the Python and Node clients do; with
// neither it says so, naming the three ways to give it zot.
func TestFindsZotLikeTheOtherClients(t *testing.T) {
	ping := func(t *testing.T) error {
		t.Helper()
		c, err := Start(context.Background(), Options{
			Args: []string{"--provider", "scripted", "--cwd", t.TempDir()},
			Env:  append(cleanEnv(), "ZOT_HOME="+t.TempDir()),
		})
		if err != nil {
			return err
		}
		defer c.Close()
		return c.Ping(ctx(t))
	}
	t.Run("ZOT_BIN", func(t *testing.T) {
		t.Setenv("ZOT_BIN", zotBin)
		t.Setenv("PATH", t.TempDir())
		if err := ping(t); err != nil {
			t.Errorf("with ZOT_BIN: %v", err)
		}
	})
	t.Run("PATH", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Symlink(zotBin, filepath.Join(dir, "zot")); err != nil {
			t.Fatal(err)
		}
		t.Setenv("ZOT_BIN", "")
		t.Setenv("PATH", dir)
		if err := ping(t); err != nil {
			t.Errorf("with zot on PATH: %v", err)
		}
	})
	t.Run("nowhere", func(t *testing.T) {
		t.Setenv("ZOT_BIN", "")
		t.Setenv("PATH", t.TempDir())
		err := ping(t)
		if !errors.Is(err, ErrNotFound) || err.Error() != "rpcclient: zot not found: set Options.Bin, set ZOT_BIN, or put zot on PATH" {
			t.Errorf("with no zot: %v, want ErrNotFound", err)
		}
	})
}
