package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/zotbin"
)

var zotBin string

func TestMain(m *testing.M) {
	os.Exit(zotbin.Main(m, &zotBin, false))
}

// TestExample runs the example against zot daemon --listen with a token
// file: the scripted answer streams to stdout and the turn ends.
func TestExample(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	token := "example-0123456789abcdef"
	if err := os.WriteFile(tokens, []byte("me "+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr zotbin.Buffer
	d := exec.Command(zotBin, "daemon", "--provider", "scripted", "--listen", "ws://127.0.0.1:0", "--token-file", tokens)
	d.Env = append(os.Environ(), "ZOT_HOME="+filepath.Join(dir, "home"), "ZOT_SOCKET="+filepath.Join(dir, "s"))
	d.Stderr = &stderr
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Process.Kill(); _ = d.Wait() }()
	listening := regexp.MustCompile(`listening on (ws://[^ \n]+/acp)`)
	deadline := time.Now().Add(30 * time.Second)
	for listening.FindStringSubmatch(stderr.String()) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon does not listen:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Setenv("ZOT_URL", listening.FindStringSubmatch(stderr.String())[1])
	t.Setenv("ZOT_TOKEN", token)
	t.Chdir(t.TempDir())
	os.Args = []string{"acp", "list files"}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	main()
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	t.Logf("%s", out)
	if !strings.Contains(string(out), "stop: end_turn") || len(out) < 40 {
		t.Errorf("the example printed %q", out)
	}
}
