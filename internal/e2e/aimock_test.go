package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/zotbin"
)

// zotBin is the binary under test: $ZOT_BIN, or one built for the tests.
var zotBin string

func TestMain(m *testing.M) {
	os.Exit(zotbin.Main(m, &zotBin, true))
}

// hangGuard bounds every wait; it only catches hangs.
const hangGuard = 60 * time.Second

// providers are zot's HTTP providers, each with the base URL it takes
// from the mock's root (each vendor's SDK convention).
var providers = []struct{ name, path string }{
	{"anthropic", ""},
	{"openai", "/v1"},
	{"openai-responses", "/v1"},
	{"gemini", "/v1beta"},
}

// serveMock starts aimock on 127.0.0.1 with the test fixtures and returns
// its root URL; it stops when the test ends. Without node or the
// testtools install the test is skipped, unless ZOT_E2E_REQUIRED is set
// (make test sets it), when it fails.
func serveMock(t *testing.T) string {
	t.Helper()
	tools, _ := filepath.Abs(filepath.Join("..", "..", "testtools"))
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(tools, "node_modules", "@copilotkit", "aimock", "package.json"))
	}
	if err != nil {
		msg := fmt.Sprintf("aimock is not installed (%v): run make testtools", err)
		if os.Getenv("ZOT_E2E_REQUIRED") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	fixtures, _ := filepath.Abs(filepath.Join("testdata", "fixtures.json"))
	cmd := exec.Command(node, filepath.Join(tools, "aimock-serve.mjs"), fixtures)
	cmd.Dir = tools
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr zotbin.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case u := <-line:
		if !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Fatalf("aimock said %q; stderr: %s", u, stderr.String())
		}
		return u
	case <-time.After(hangGuard):
		t.Fatalf("aimock did not start; stderr: %s", stderr.String())
	}
	return ""
}

// env is a clean environment for zot: no credentials, its own home.
func env(t *testing.T) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		up := strings.ToUpper(name)
		if strings.Contains(up, "API_KEY") || strings.Contains(up, "TOKEN") || strings.HasPrefix(up, "ZOT") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "ZOT_HOME="+t.TempDir())
}

// workdir is a directory for the ls tool to list.
func workdir(t *testing.T) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "b.txt"), []byte("b"), 0o644)
	return dir
}

// args are the flags that aim zot at the mock for provider p.
func args(root, dir string, p struct{ name, path string }) []string {
	return []string{"--provider", p.name, "--base-url", root + p.path, "--api-key", "test-key",
		"--tools", "ls", "--cwd", dir, "--no-auto-compact"}
}

// event is one event line, decoded loosely.
type event map[string]any

func (e event) typ() string         { s, _ := e["type"].(string); return s }
func (e event) str(k string) string { s, _ := e[k].(string); return s }

// summary is what a prompt's events amount to.
type summary struct {
	text, thinking string
	stops          []string
	calls          []string // tool name and args
	results        int
	resultErrors   int
	done           bool
}

func summarize(evs []event) summary {
	var s summary
	for _, e := range evs {
		switch e.typ() {
		case "text_delta":
			s.text += e.str("delta")
		case "thinking_delta":
			s.thinking += e.str("delta")
		case "turn_end":
			s.stops = append(s.stops, e.str("stop"))
		case "tool_call":
			a, _ := json.Marshal(e["args"])
			s.calls = append(s.calls, e.str("name")+" "+string(a))
		case "tool_result":
			s.results++
			if b, _ := e["is_error"].(bool); b {
				s.resultErrors++
			}
		case "done":
			s.done = true
		}
	}
	return s
}

// printJSON runs `zot -p prompt --json`, with extra flags, and returns
// its events.
func printJSON(t *testing.T, root, dir string, p struct{ name, path string }, prompt string, extra ...string) []event {
	t.Helper()
	cmd := exec.Command(zotBin, append(append(args(root, dir, p), extra...), "-p", prompt, "--json")...)
	cmd.Env = env(t)
	var stderr zotbin.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zot -p: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	return lines(t, out)
}

func lines(t *testing.T, out []byte) []event {
	t.Helper()
	var evs []event
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var e event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		evs = append(evs, e)
	}
	return evs
}

// rpc is a running `zot rpc`.
type rpc struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan []byte
	cmd   *exec.Cmd
}

func startRPC(t *testing.T, root, dir string, p struct{ name, path string }, extra ...string) *rpc {
	t.Helper()
	cmd := exec.Command(zotBin, append(append([]string{"rpc"}, args(root, dir, p)...), extra...)...)
	cmd.Env = env(t)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var stderr zotbin.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &rpc{t: t, in: in, lines: make(chan []byte, 1024), cmd: cmd}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			r.lines <- slices.Clone(sc.Bytes())
		}
		close(r.lines)
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(hangGuard):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("zot rpc stderr: %s", stderr.String())
		}
	})
	return r
}

// prompt sends a prompt and returns its events up to done.
func (r *rpc) prompt(id, text string) []event {
	r.t.Helper()
	fmt.Fprintf(r.in, `{"type":"prompt","id":%q,"message":%q}`+"\n", id, text)
	var evs []event
	timeout := time.After(hangGuard)
	for {
		select {
		case l, ok := <-r.lines:
			if !ok {
				r.t.Fatalf("zot rpc ended before done; events %v", evs)
			}
			var e event
			if err := json.Unmarshal(l, &e); err != nil {
				r.t.Fatalf("not JSON: %q", l)
			}
			if e.typ() == "response" {
				if ok, _ := e["success"].(bool); !ok {
					r.t.Fatalf("prompt refused: %s", l)
				}
				continue
			}
			evs = append(evs, e)
			if e.typ() == "done" {
				return evs
			}
		case <-timeout:
			r.t.Fatalf("no done; events %v", evs)
		}
	}
}

// TestProvidersAgainstAimock runs each HTTP provider through zot -p --json
// and zot rpc against the mock: a plain answer with reasoning, a tool
// loop, two tool calls in one turn, and a 429 with retry-after.
// familyModels are, per provider, an id the catalog does not hold and a
// reasoning level its family takes.
var familyModels = map[string][2]string{
	"anthropic":        {"claude-opus-4-1", "high"}, // a thinking budget
	"openai":           {"gpt-6.9-nova", "max"},     // Responses, for tools with reasoning
	"openai-responses": {"gpt-5.3-codex", "xhigh"},  // reasoning.effort
	"gemini":           {"gemini-4-xenon", "xhigh"}, // thinkingLevel XHIGH
}

func TestProvidersAgainstAimock(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			root := serveMock(t)
			dir := workdir(t)

			plain := summarize(printJSON(t, root, dir, p, "plain answer"))
			if plain.text != "Plain answer from the mock." || !plain.done || !slices.Equal(plain.stops, []string{"end_turn"}) {
				t.Errorf("plain answer: %+v", plain)
			}
			if plain.thinking != "Thinking it over." {
				t.Errorf("plain answer thinking %q", plain.thinking)
			}

			// A model id the catalog does not know, placed by its family's
			// rules, at a level the vendors added (the request shapes are
			// held to the SDK types by each provider's vendor tests; here
			// the mock's parser takes them).
			if f, ok := familyModels[p.name]; ok {
				got := summarize(printJSON(t, root, dir, p, "plain answer", "--model", f[0], "--reasoning", f[1]))
				if got.text != "Plain answer from the mock." || !got.done {
					t.Errorf("%s at %s: %+v", f[0], f[1], got)
				}
			}

			loop := summarize(printJSON(t, root, dir, p, "tool loop"))
			if !slices.Equal(loop.stops, []string{"tool_use", "end_turn"}) || !slices.Equal(loop.calls, []string{`ls {"path":"."}`}) ||
				loop.results != 1 || loop.resultErrors != 0 || loop.text != "The directory is listed." || !loop.done {
				t.Errorf("tool loop: %+v", loop)
			}

			r := startRPC(t, root, dir, p)
			two := summarize(r.prompt("1", "two tools"))
			if !slices.Equal(two.stops, []string{"tool_use", "end_turn"}) ||
				!slices.Equal(two.calls, []string{`ls {"path":"."}`, `ls {"path":"sub"}`}) ||
				two.results != 2 || two.resultErrors != 0 || two.text != "Both directories are listed." {
				t.Errorf("two tools: %+v", two)
			}
			began := time.Now()
			limited := summarize(r.prompt("2", "rate limited"))
			if limited.text != "Answered after the wait." || !slices.Equal(limited.stops, []string{"end_turn"}) {
				t.Errorf("rate limited: %+v", limited)
			}
			if waited := time.Since(began); waited < 900*time.Millisecond {
				t.Errorf("answered after %v: the retry-after of 1s was not honoured", waited)
			}
		})
	}
}
