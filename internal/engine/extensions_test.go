package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"zot.dev/zot/sdk/extwire"
	"zot.dev/zot/sdk/wire"
)

// pyExtension writes the manifest of the extension host's Python test
// extension (internal/exthost/testdata/py) in mode, named name, under
// dir, and returns its folder.
func pyExtension(t *testing.T, dir, name, mode string) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	script, err := filepath.Abs(filepath.Join("..", "exthost", "testdata", "py", "ext.py"))
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, name)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(map[string]any{"name": name, "exec": "python3", "args": []string{script, mode, name}, "language": "python"})
	if err := os.WriteFile(filepath.Join(folder, "extension.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	return folder
}

// echoMCP serves, on loopback, a streamable HTTP MCP server with one
// tool, echo.
func echoMCP(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "echoer", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "Says the text back.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + args.Text}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// noticeLog collects a session's notices.
type noticeLog struct {
	mu   sync.Mutex
	list []Notice
	more chan struct{}
}

func newNoticeLog() *noticeLog { return &noticeLog{more: make(chan struct{}, 1)} }

func (l *noticeLog) send(n Notice) {
	l.mu.Lock()
	l.list = append(l.list, n)
	l.mu.Unlock()
	select {
	case l.more <- struct{}{}:
	default:
	}
}

// wait returns the first notice match takes, waiting for it.
func (l *noticeLog) wait(t *testing.T, what string, match func(wire.Event) bool) Notice {
	t.Helper()
	deadline := time.After(guard)
	for {
		l.mu.Lock()
		for _, n := range l.list {
			if match(n.Event) {
				l.mu.Unlock()
				return n
			}
		}
		l.mu.Unlock()
		select {
		case <-l.more:
		case <-deadline:
			t.Fatalf("no notice %s", what)
		}
	}
}

// One session owns one extension and one MCP server: it starts them,
// offers their tools, runs the extension's command, routes its notices
// stamped in seq order, adds and removes servers at run time, and stops
// the extension's process when it closes.
func TestSessionOwnsExtensionsAndMCP(t *testing.T) {
	dir := t.TempDir()
	folder := pyExtension(t, dir, "py", "ok")
	url := echoMCP(t)
	changed := make(chan struct{}, 4)
	s := newSession(t, `{"turns":[{"steps":[{"tool_calls":[{"name":"py_echo","args":{"text":"a"}},{"name":"mcp__echo__echo","args":{"text":"b"}}]},{"text":"done"}]}]}`, func(c *SessionConfig) {
		c.Extensions = ExtensionConfig{Paths: []string{folder}}
		c.MCPServers = []MCPServer{{Name: "echo", URL: url}}
		c.DeferStart = true
	})
	log := newNoticeLog()
	s.SetNoticeSink(NoticeSink{Send: log.send})
	s.OnExtensionsChanged(func() { changed <- struct{}{} })
	if st := s.State(); st.McpServers == nil || *st.McpServers != 1 {
		t.Fatalf("state: %+v", st)
	}
	s.Launch()

	// The prompt waits for both, and the model is offered both tools.
	c := newCollector()
	if err := s.Submit(Work{ID: wire.StringID("p1"), Prompt: &PromptInput{Text: "go"}, Sink: c.sink}, Queue, nil); err != nil {
		t.Fatal(err)
	}
	c.waitDone(t)
	var results []string
	for _, ev := range c.events() {
		if r, ok := ev.(*wire.ToolResultEvent); ok {
			for _, b := range r.Content {
				if tb, ok := b.(*wire.TextBlock); ok {
					results = append(results, tb.Text)
				}
			}
		}
	}
	if !slices.Equal(results, []string{"echo: a", "echo: b"}) {
		t.Fatalf("tool results %q", results)
	}
	select {
	case <-changed:
	case <-time.After(guard):
		t.Fatal("OnExtensionsChanged was not called once they were ready")
	}

	// The extension's notices (it reports what it sees) come stamped,
	// after the prompt's events in seq order.
	n := log.wait(t, "of the turn's end", func(ev wire.Event) bool {
		e, ok := ev.(*wire.ExtNotifyEvent)
		return ok && strings.Contains(e.Message, "event turn_end end_turn")
	})
	if n.Event.GetSeq() == 0 {
		t.Fatalf("notice not stamped: %+v", n.Event)
	}

	// Its command and panel.
	s.WaitExtensions(context.Background())
	cmds := s.ExtensionCommands()
	if len(cmds) != 1 || cmds[0].Name != "hello-py" || cmds[0].Extension != "py" {
		t.Fatalf("commands %+v", cmds)
	}
	out, err := s.RunExtensionCommand(context.Background(), "hello-py", "display hi there")
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := out.Event.(*wire.ExtDisplayEvent); !ok || d.Text != "hi there" || out.Result.Action != wire.CommandActionDisplay {
		t.Fatalf("outcome %+v / %#v", out.Result, out.Event)
	}
	out, err = s.RunExtensionCommand(context.Background(), "hello-py", "panel")
	if err != nil || out.Result.Panel == nil {
		t.Fatalf("panel: %+v, %v", out.Result, err)
	}
	if err := s.PanelKey("p1", extwire.KeyNameDown, ""); err != nil {
		t.Fatal(err)
	}
	log.wait(t, "panel_render", func(ev wire.Event) bool { _, ok := ev.(*wire.PanelRenderEvent); return ok })
	if owner, err := s.ClosePanel("p1"); err != nil || owner != "py" {
		t.Fatalf("close panel: %q, %v", owner, err)
	}
	if _, err := s.RunExtensionCommand(context.Background(), "nope", ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown command: %v", err)
	}
	if err := s.PanelKey("p1", extwire.KeyNameDown, ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("closed panel: %v", err)
	}

	// MCP servers at run time.
	if list := s.MCPServers(); len(list) != 1 || list[0].Status != "ready" || !slices.Contains(list[0].Tools, "mcp__echo__echo") {
		t.Fatalf("servers %+v", list)
	}
	var bad *MCPServerError
	if err := s.AddMCPServers(context.Background(), []MCPServer{{Name: "x"}}); !errors.As(err, &bad) {
		t.Fatalf("bad server: %v", err)
	}
	if err := s.AddMCPServers(context.Background(), []MCPServer{{Name: "two", URL: url}}); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveMCPServer("echo"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveMCPServer("echo"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second remove: %v", err)
	}
	if list := s.MCPServers(); len(list) != 1 || list[0].Name != "two" {
		t.Fatalf("servers %+v", list)
	}

	// Reload starts a new process, and tells OnExtensionsChanged.
	pid := onePID(t, folder)
	if _, err := s.ReloadExtensions(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(guard):
		t.Fatal("OnExtensionsChanged was not called after the reload")
	}
	onePID(t, folder, pid)

	// Close stops it.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left := extPIDs(t, folder); len(left) > 0 {
		t.Fatalf("the extension (pids %v) outlived its session", left)
	}
	if err := s.AddMCPServers(context.Background(), []MCPServer{{Name: "late", URL: url}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("add after close: %v", err)
	}
}

// extPIDs returns the processes whose working directory is folder: an
// extension runs in its own folder.
func extPIDs(t *testing.T, folder string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc to find the extension's process in")
	}
	real, _ := filepath.EvalSymlinks(folder)
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && (cwd == folder || cwd == real) {
			out = append(out, pid)
		}
	}
	return out
}

// onePID waits until exactly one process runs in folder, other than
// those of old, and returns it.
func onePID(t *testing.T, folder string, old ...int) int {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		var fresh []int
		for _, p := range extPIDs(t, folder) {
			if !slices.Contains(old, p) {
				fresh = append(fresh, p)
			}
		}
		if len(fresh) == 1 {
			return fresh[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes in %s: %v (old %v)", folder, fresh, old)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Once StopExtensions has stopped a session's extensions, a reload starts
// none: an extension it would find (here one that appeared in the
// project after the start found none) would outlive the session, as
// Close stops only what was there when they stopped.
func TestReloadAfterStopExtensionsStartsNone(t *testing.T) {
	s := newSession(t, "", func(c *SessionConfig) {
		c.Extensions = ExtensionConfig{Discover: true, TrustProject: true}
	})
	if err := s.StopExtensions(context.Background()); err != nil {
		t.Fatal(err)
	}
	folder := pyExtension(t, filepath.Join(s.CWD(), ".zot", "extensions"), "late", "ok")
	t.Cleanup(func() {
		for _, pid := range extPIDs(t, folder) {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	})
	list, err := s.ReloadExtensions(context.Background())
	if !errors.Is(err, ErrClosed) {
		t.Errorf("reload after StopExtensions: %+v, %v; want ErrClosed", list, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left := extPIDs(t, folder); len(left) > 0 {
		t.Fatalf("the extension (pids %v) was started after its session's extensions stopped, and outlived the session", left)
	}
}

// A session that found no extension looks again at ReloadExtensions:
// one added to the project since starts, and OnExtensionsChanged is told
// once it is ready, once.
func TestReloadFindsNewExtensions(t *testing.T) {
	s := newSession(t, "", func(c *SessionConfig) {
		c.Extensions = ExtensionConfig{Discover: true, TrustProject: true}
	})
	var mu sync.Mutex
	told := 0
	s.OnExtensionsChanged(func() { mu.Lock(); told++; mu.Unlock() })
	if list := s.Extensions(); len(list) != 0 {
		t.Fatalf("extensions before: %+v", list)
	}
	pyExtension(t, filepath.Join(s.CWD(), ".zot", "extensions"), "late", "ok")
	list, err := s.ReloadExtensions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "late" || list[0].State != "ready" {
		t.Fatalf("extensions after the reload: %+v", list)
	}
	deadline := time.Now().Add(guard)
	for {
		mu.Lock()
		n := told
		mu.Unlock()
		if n == 1 {
			break
		}
		if n > 1 || time.Now().After(deadline) {
			t.Fatalf("OnExtensionsChanged was called %d times", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if told != 1 {
		t.Fatalf("OnExtensionsChanged was called %d times", told)
	}
}
