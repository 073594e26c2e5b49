package rpcclient

import (
	"context"
	"errors"
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
