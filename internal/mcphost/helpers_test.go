package mcphost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
)

// serverBin is the test MCP server (testdata/mcpserver), built once.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcphost-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "mcpserver")
	out, err := exec.Command("go", "build", "-o", serverBin, "./testdata/mcpserver").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the test MCP server: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fakeSession is the part of a session the Manager uses.
type fakeSession struct {
	set   *agent.ToolSet
	chain agent.Chain
	cwd   string
}

func newFakeSession(t *testing.T) *fakeSession {
	t.Helper()
	set, err := agent.NewToolSet(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &fakeSession{set: set, cwd: t.TempDir()}
}

func (f *fakeSession) Tools() *agent.ToolSet      { return f.set }
func (f *fakeSession) Interceptors() *agent.Chain { return &f.chain }
func (f *fakeSession) CWD() string                { return f.cwd }

// notices collects a Manager's notices.
type notices struct {
	mu   sync.Mutex
	list []Notice
}

func (n *notices) add(x Notice) {
	n.mu.Lock()
	n.list = append(n.list, x)
	n.mu.Unlock()
}

func (n *notices) all() []Notice {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Notice(nil), n.list...)
}

// waitFor polls cond until it holds or the test's patience ends.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// newManager returns a Manager for a fresh fake session, closed when the
// test ends.
func newManager(t *testing.T, cfg Config) (*Manager, *fakeSession, *notices) {
	t.Helper()
	sess := newFakeSession(t)
	ns := &notices{}
	cfg.Notify = ns.add
	var log bytes.Buffer
	cfg.Log = &syncWriter{w: &log}
	m := New(sess, cfg)
	t.Cleanup(func() {
		m.Close()
		if t.Failed() {
			t.Logf("manager log:\n%s", log.String())
		}
	})
	return m, sess, ns
}

// syncWriter makes a writer safe for concurrent use.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// stdio returns the test server as a stdio Server.
func stdio(name string, args ...string) Server {
	return Server{Name: name, Command: serverBin, Args: args}
}

// call runs the tool of that name in sess's tool set.
func call(t *testing.T, sess *fakeSession, name, args string) tools.Result {
	t.Helper()
	return callCtx(t, context.Background(), sess, name, args, nil)
}

func callCtx(t *testing.T, ctx context.Context, sess *fakeSession, name, args string, progress func(string)) tools.Result {
	t.Helper()
	tool, ok := sess.set.View().Lookup(name)
	if !ok {
		t.Fatalf("no tool %s; have %s", name, sess.set.View().Names())
	}
	res, err := tool.Run(ctx, tools.Call{ID: "c1", Args: json.RawMessage(args), Progress: progress})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// text joins the text blocks of a result.
func text(r tools.Result) string {
	var b bytes.Buffer
	for _, c := range r.Content {
		if tb, ok := c.(*llm.TextBlock); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(tb.Text)
		}
	}
	return b.String()
}

// toolsCall returns a call with args and a progress function.
func toolsCall(args string, progress func(string)) tools.Call {
	return tools.Call{ID: "c1", Args: json.RawMessage(args), Progress: progress}
}
