package exthost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// goextBin is the Go test extension, built by TestMain.
var goextBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "exthost-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goextBin = filepath.Join(dir, "goext")
	out, err := exec.Command("go", "build", "-o", goextBin, "./testdata/goext").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the Go test extension: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testdata returns the absolute path of a file under testdata.
func testdata(t testing.TB, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// manifest writes dir/name/extension.json and returns the folder.
func manifest(t testing.TB, dir, name string, m map[string]any) string {
	t.Helper()
	folder := filepath.Join(dir, name)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["name"]; !ok {
		m["name"] = name
	}
	data, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(folder, ManifestFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return folder
}

// pyExt writes the manifest of the Python test extension in mode.
func pyExt(t testing.TB, dir, name, mode string, extra ...any) string {
	t.Helper()
	m := map[string]any{"exec": "python3", "args": []string{testdata(t, "py/ext.py"), mode, name}, "language": "python"}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	return manifest(t, dir, name, m)
}

func nodeExt(t testing.TB, dir, name, mode string) string {
	t.Helper()
	return manifest(t, dir, name, map[string]any{"exec": "node", "args": []string{testdata(t, "node/ext.mjs"), mode, name}})
}

func goExt(t testing.TB, dir, name string) string {
	t.Helper()
	return manifest(t, dir, name, map[string]any{"exec": goextBin, "args": []string{name}})
}

// goExtMode writes the manifest of the Go test extension in mode.
func goExtMode(t testing.TB, dir, name, mode string) string {
	t.Helper()
	return manifest(t, dir, name, map[string]any{"exec": goextBin, "args": []string{name, mode}})
}

// langExt writes the manifest of the test extension of lang ("python",
// "node" or "go") in mode.
func langExt(t testing.TB, lang, dir, name, mode string) string {
	t.Helper()
	switch lang {
	case "python":
		return pyExt(t, dir, name, mode)
	case "node":
		return nodeExt(t, dir, name, mode)
	case "go":
		return goExtMode(t, dir, name, mode)
	}
	t.Fatalf("no test extension in %s", lang)
	return ""
}

// fakeSession is a Session without an agent: a real tool set and chain,
// and events the test emits itself.
type fakeSession struct {
	tools *agent.ToolSet
	chain *agent.Chain
	cwd   string

	mu   sync.Mutex
	obs  map[int]func(wire.Event)
	next int
	log  bytes.Buffer // tool conflicts
}

func newFakeSession(t testing.TB) *fakeSession {
	s := &fakeSession{chain: new(agent.Chain), cwd: t.TempDir(), obs: map[int]func(wire.Event){}}
	builtin := []tools.Tool{tools.Builtins(tools.Config{CWD: s.cwd})[0]} // read
	ts, err := agent.NewToolSet(builtin, func(name, kept, dropped string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		fmt.Fprintf(&s.log, "tool %s of %s left out for %s\n", name, dropped, kept)
	})
	if err != nil {
		t.Fatal(err)
	}
	s.tools = ts
	return s
}

func (s *fakeSession) Tools() *agent.ToolSet      { return s.tools }
func (s *fakeSession) Interceptors() *agent.Chain { return s.chain }
func (s *fakeSession) Provider() string           { return "scripted" }
func (s *fakeSession) Model() string              { return "scripted-1" }
func (s *fakeSession) CWD() string                { return s.cwd }

func (s *fakeSession) Observe(fn func(wire.Event)) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	k := s.next
	s.obs[k] = fn
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.obs, k)
	}
}

func (s *fakeSession) emit(ev wire.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, fn := range s.obs {
		fn(ev)
	}
}

func (s *fakeSession) conflicts() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// notices records what extensions push.
type notices struct {
	mu   sync.Mutex
	list []Notice
	more chan struct{}
}

func newNotices() *notices { return &notices{more: make(chan struct{}, 1)} }

func (n *notices) add(x Notice) {
	n.mu.Lock()
	n.list = append(n.list, x)
	n.mu.Unlock()
	select {
	case n.more <- struct{}{}:
	default:
	}
}

// wait waits until a notice matches, and returns it.
func (n *notices) wait(t testing.TB, what string, match func(Notice) bool) Notice {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		n.mu.Lock()
		for _, x := range n.list {
			if match(x) {
				n.mu.Unlock()
				return x
			}
		}
		n.mu.Unlock()
		select {
		case <-n.more:
		case <-deadline:
			t.Fatalf("no notice %s; got %v", what, n.messages())
		}
	}
}

// waitMessage waits for a notify notice whose message starts with prefix.
func (n *notices) waitMessage(t testing.TB, prefix string) Notice {
	t.Helper()
	return n.wait(t, fmt.Sprintf("%q", prefix), func(x Notice) bool {
		return x.Kind == NoticeNotify && strings.HasPrefix(x.Message, prefix)
	})
}

func (n *notices) messages() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, x := range n.list {
		out = append(out, fmt.Sprintf("%s:%d:%s%s", x.Extension, x.Kind, x.Message, x.Panel.ID))
	}
	return out
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testConfig is a Config for tests: short timeouts, logs in a temporary
// folder, notices and diagnostics recorded.
func testConfig(t testing.TB, paths ...string) (Config, *notices, *syncBuffer) {
	n := newNotices()
	log := new(syncBuffer)
	return Config{
		Discovery:        Discovery{Paths: paths},
		Version:          "test",
		LogDir:           t.TempDir(),
		Log:              log,
		Notify:           n.add,
		StartTimeout:     5 * time.Second,
		InterceptTimeout: 2 * time.Second,
		ShutdownGrace:    time.Second,
		TermGrace:        500 * time.Millisecond,
	}, n, log
}

// start starts a host and closes it at the end of the test.
func start(t testing.TB, sess Session, cfg Config) *Manager {
	t.Helper()
	h := Start(sess, cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.Close(ctx)
	})
	return h
}

// runTool runs a tool of the session's set.
func runTool(t testing.TB, sess Session, name, args string) tools.Result {
	t.Helper()
	tool, ok := sess.Tools().View().Lookup(name)
	if !ok {
		t.Fatalf("no tool %s; the set has %s", name, sess.Tools().View().Names())
	}
	res, err := tool.Run(context.Background(), tools.Call{ID: "call_1", Args: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// text joins a result's text blocks.
func text(r tools.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tb, ok := c.(*llm.TextBlock); ok {
			b.WriteString(tb.Text)
		}
	}
	return b.String()
}

// alive reports whether process pid runs (zombies excepted).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// waitGone waits until process pid has ended.
func waitGone(t testing.TB, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs after %s", pid, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func toolCall(args string) tools.Call { return tools.Call{ID: "call_x", Args: json.RawMessage(args)} }
