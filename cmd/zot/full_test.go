package main

import (
	"bufio"
	"bytes"
	"debug/buildinfo"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/tap"
	"zot.dev/zot/internal/wsserve"
	"zot.dev/zot/internal/zotbin"
)

// TestNeedsFull is the decision table of what the lean build hands to
// the full one (full.go), from the command line alone.
func TestNeedsFull(t *testing.T) {
	for _, c := range []struct {
		args     string
		terminal bool
		full     bool
	}{
		{"zot rpc", false, false},
		{"zot rpc --provider scripted", true, false},
		{"zot --provider scripted rpc", true, false},
		{"zot acp", false, false},
		{"zot -p hello", true, false},
		{"zot --print=hello", true, false},
		{"zot --rpc", true, false},
		{"zot version", true, false},
		{"zot --version", true, false},
		{"zot --help", true, false},
		{"zot daemon", true, false},
		{"zot daemon --ephemeral", false, false},
		{"zot models --json", true, false},
		{"zot", false, false},
		{"zot hello", false, false},
		{"zot attach --help", true, false},
		{"zot rpc --inspect 127.0.0.1:0", false, true},
		{"zot --inspect=127.0.0.1:0 rpc", false, true},
		{"zot acp --inspect 127.0.0.1:0", false, true},
		{"zot daemon --listen ws://127.0.0.1:0", false, true},
		{"zot daemon --ephemeral --listen=ws://127.0.0.1:0", false, true},
		{"zot daemon --inspect", false, true},
		{"zot daemon --token-file f", false, true},
		{"zot attach", false, true},
		{"zot attach ws://h:1/acp", true, true},
		{"zot --provider scripted attach", true, true},
		{"zot", true, true},
		{"zot hello there", true, true},
		{"zot --model m -c", true, true},
		{"zot --model rpc", true, true}, // rpc is --model's value: the prompt-less terminal
		{"zot -- rpc", true, true},      // after --, a prompt
	} {
		got := needsFull(strings.Fields(c.args), c.terminal) != ""
		if got != c.full {
			t.Errorf("needsFull(%q, terminal %v) = %v, want %v", c.args, c.terminal, got, c.full)
		}
	}
}

// TestRootCommandNamesComplete: needsFull knows every command of the
// root, so that none is taken for the terminal's prompt.
func TestRootCommandNamesComplete(t *testing.T) {
	root := newCLI(streams{in: os.Stdin, out: os.Stdout, err: os.Stderr}, []string{"zot"}, "")
	var names []string
	for _, c := range root.Commands {
		names = append(names, c.Name)
	}
	if !slices.Contains(names, "completion") {
		names = append(names, "completion") // added when the app runs
	}
	slices.Sort(names)
	want := slices.Sorted(slices.Values(rootCommandNames))
	if !slices.Equal(names, want) {
		t.Errorf("the root's commands are %v, rootCommandNames %v", names, want)
	}
}

// TestLeanFlagDefaults: the defaults the lean build's flags show are the
// packages' it leaves out.
func TestLeanFlagDefaults(t *testing.T) {
	if defaultInspectRing != tap.DefaultPerSession || defaultMaxConnections != wsserve.DefaultMaxConnections ||
		defaultKeepalive != wsserve.DefaultPingInterval || defaultHandshakeTimeout != wsserve.DefaultHandshakeTimeout {
		t.Error("the lean build's flag defaults differ from wsserve's and tap's")
	}
}

var leanOnce struct {
	sync.Once
	dir string
	err error
	out []byte
}

// leanPair returns a directory holding the lean zot and zot-full beside
// it: $ZOT_BIN's when it is the lean build (as make builds bin/zot), else
// a lean build made here with the full zot under test linked beside it.
func leanPair(t *testing.T) string {
	t.Helper()
	if isLean(t, zotBin) {
		return filepath.Dir(zotBin)
	}
	if testing.Short() {
		t.Skip("builds the lean zot")
	}
	leanOnce.Do(func() {
		dir, err := os.MkdirTemp("", "zot-lean-")
		if err != nil {
			leanOnce.err = err
			return
		}
		leanOnce.dir = dir
		cmd := exec.Command("go", "build", "-tags", zotbin.Tags+" zotlean", "-o", filepath.Join(dir, "zot"), ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if leanOnce.out, leanOnce.err = cmd.CombinedOutput(); leanOnce.err == nil {
			leanOnce.err = os.Symlink(zotBin, filepath.Join(dir, fullBinary))
		}
	})
	if leanOnce.err != nil {
		t.Fatalf("building the lean zot: %v\n%s", leanOnce.err, leanOnce.out)
	}
	return leanOnce.dir
}

// isLean reports whether the binary at path is the lean build.
func isLean(t *testing.T, path string) bool {
	t.Helper()
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the build settings of %s: %v", path, err)
	}
	for _, s := range info.Settings {
		if s.Key == "-tags" && slices.Contains(strings.Split(s.Value, ","), "zotlean") {
			return true
		}
	}
	return false
}

// TestLeanLinksNoTerminalNorListener: the lean zot does not hold the
// terminal client, the listeners, the tap and inspector or the
// WebSocket and charm libraries at all (their functions' names would be
// in the binary's tables, which -s keeps), so they cost it no page.
func TestLeanLinksNoTerminalNorListener(t *testing.T) {
	lean := filepath.Join(leanPair(t), "zot")
	data, err := os.ReadFile(lean)
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"zot.dev/zot/internal/tui.", "zot.dev/zot/internal/tui/", "zot.dev/zot/internal/wsserve.",
		"zot.dev/zot/internal/inspect.", "zot.dev/zot/internal/tap.", "zot.dev/zot/internal/acpdial.",
		"github.com/coder/websocket.", "charm.land/", "github.com/charmbracelet/bubbletea", "github.com/charmbracelet/lipgloss"} {
		if bytes.Contains(data, []byte(pkg)) {
			t.Errorf("the lean zot links %s", pkg)
		}
	}
	if full, err := os.ReadFile(filepath.Join(filepath.Dir(lean), fullBinary)); err == nil && !bytes.Contains(full, []byte("zot.dev/zot/internal/tui.")) {
		t.Errorf("the full zot does not hold the terminal client: the test reads the wrong names")
	}
}

// leanStderrLine runs the lean zot with args until its stderr has a line
// matching re, calls then with the match, and stops zot.
func leanStderrLine(t *testing.T, zot string, re *regexp.Regexp, then func([]string), args ...string) {
	t.Helper()
	cmd := exec.Command(zot, args...)
	dir := t.TempDir()
	cmd.Env = append(cleanEnv(), "ZOT_HOME="+filepath.Join(dir, "home"), "ZOT_SOCKET="+filepath.Join(dir, "s"))
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	found := make(chan []string, 1)
	var log strings.Builder
	go func() {
		defer close(found)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m
				_, _ = io.Copy(io.Discard, stderr)
				return
			}
		}
	}()
	select {
	case m, ok := <-found:
		if !ok {
			t.Fatalf("zot %v ended without a line matching %s:\n%s", args, re, log.String())
		}
		if cmd.Process.Pid != pid {
			t.Fatal("the process changed")
		}
		then(m)
	case <-time.After(hangGuard):
		t.Fatalf("zot %v: no line matching %s", args, re)
	}
}

// TestLeanHandsToFull: the lean zot serves a command line that needs the
// full build through zot-full beside it, in the same process: zot daemon
// --listen serves /healthz, zot rpc --inspect prints its page.
func TestLeanHandsToFull(t *testing.T) {
	zot := filepath.Join(leanPair(t), "zot")
	leanStderrLine(t, zot, listenLog, func(m []string) {
		url := "http://" + strings.TrimSuffix(strings.TrimPrefix(m[1], "ws://"), "/acp") + "/healthz"
		resp, err := http.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %s", url, resp.Status)
		}
	}, "daemon", "--provider", "scripted", "--listen", "ws://127.0.0.1:0")
	leanStderrLine(t, zot, regexp.MustCompile(`inspector at (http://127\.0\.0\.1:\d+/inspect\?token=[0-9a-f]+)`), func(m []string) {
		resp, err := http.Get(m[1])
		if err != nil {
			t.Fatalf("GET %s: %v", m[1], err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %s", m[1], resp.Status)
		}
	}, "rpc", "--provider", "scripted", "--inspect", "127.0.0.1:0")
}

// TestLeanWithoutFull: without zot-full beside it, the lean zot refuses
// what needs it in one line, naming what and how to get it (exit 2),
// and serves everything else.
func TestLeanWithoutFull(t *testing.T) {
	src := filepath.Join(leanPair(t), "zot")
	dir := t.TempDir()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	zot := filepath.Join(dir, "zot")
	if err := os.WriteFile(zot, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(zot, "daemon", "--listen", "ws://127.0.0.1:0")
	cmd.Env = append(cleanEnv(), "ZOT_HOME="+filepath.Join(dir, "home"), "ZOT_SOCKET="+filepath.Join(dir, "s"))
	out, err := cmd.CombinedOutput()
	want := "zot: zot daemon --listen and --inspect (the WebSocket listeners and the inspector) needs the full build of zot, zot-full: zot-full is not beside zot (" +
		filepath.Join(dir, "zot-full") + "); make install (or make build) puts it beside zot, and go install zot.dev/zot/cmd/zot builds a zot with everything\n"
	if cmd.ProcessState.ExitCode() != 2 || string(out) != want {
		t.Errorf("zot daemon --listen without zot-full: %v\n%s\nwant exit 2 and\n%s", err, out, want)
	}
	cmd = exec.Command(zot, "rpc", "--provider", "scripted")
	cmd.Env = append(cleanEnv(), "ZOT_HOME="+filepath.Join(dir, "home"))
	cmd.Stdin = strings.NewReader(`{"type":"ping","id":"p"}` + "\n")
	if out, err := cmd.Output(); err != nil || !bytes.Contains(out, []byte(`"success":true`)) {
		t.Errorf("the lean zot rpc without zot-full: %v\n%s", err, out)
	}
}
