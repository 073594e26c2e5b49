package mcphost

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
)

func TestStdioServerToolsAndResults(t *testing.T) {
	m, sess, _ := newManager(t, Config{})
	if err := m.AddServers(context.Background(), []Server{stdio("test server")}); err != nil {
		t.Fatal(err)
	}
	m.WaitReady(context.Background())
	list := m.List()
	if len(list) != 1 || list[0].Status != StatusReady || list[0].ServerName != "testserver" || list[0].ServerVersion != "1.2.3" {
		t.Fatalf("list = %+v", list)
	}
	// In the order the server lists them (the Go SDK sorts them by name).
	want := []string{"mcp__test_server__add", "mcp__test_server__big", "mcp__test_server__broken", "mcp__test_server__crash", "mcp__test_server__echo", "mcp__test_server__fail",
		"mcp__test_server__grow", "mcp__test_server__image", "mcp__test_server__resource", "mcp__test_server__slow"}
	if !slices.Equal(list[0].Tools, want) {
		t.Fatalf("tools = %v, want %v", list[0].Tools, want)
	}
	echo, _ := sess.set.View().Lookup("mcp__test_server__echo")
	var schema map[string]any
	if err := json.Unmarshal(echo.Schema(), &schema); err != nil || !slices.Equal(schema["required"].([]any), []any{"text"}) {
		t.Fatalf("echo's schema is not the server's: %s", echo.Schema())
	}
	if echo.Description() != "Says the text back." {
		t.Fatalf("description = %q", echo.Description())
	}

	if r := call(t, sess, "mcp__test_server__echo", `{"text":"hi"}`); r.IsError || text(r) != "echo: hi" {
		t.Fatalf("echo = %+v", r)
	}
	r := call(t, sess, "mcp__test_server__add", `{"a":1,"b":2}`)
	if r.IsError || len(r.Content) != 2 || text(r) != "the sum is 3\n{\"sum\":3}" {
		t.Fatalf("add = %q (%d blocks)", text(r), len(r.Content))
	}
	r = call(t, sess, "mcp__test_server__image", `{}`)
	if img, ok := r.Content[0].(*llm.ImageBlock); !ok || img.MIME != "image/png" || len(img.Data) == 0 {
		t.Fatalf("image = %#v", r.Content)
	}
	r = call(t, sess, "mcp__test_server__resource", `{}`)
	if got := text(r); got != "[resource file:///notes.txt (text/plain)]\nthe notes" {
		t.Fatalf("resource = %q", got)
	}
	r = call(t, sess, "mcp__test_server__fail", `{}`)
	if !r.IsError || text(r) != "it failed as asked" {
		t.Fatalf("fail = %+v", r)
	}
}

// httpServer starts the test server in an HTTP mode on loopback and
// returns its URL.
func httpServer(t *testing.T, mode string) string {
	t.Helper()
	cmd := exec.Command(serverBin, "-mode", mode)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}

func TestLegacySSEServer(t *testing.T) {
	url := httpServer(t, "sse")
	m, sess, _ := newManager(t, Config{})
	if err := m.AddServers(context.Background(), []Server{{Name: "old", Type: "sse", URL: url}}); err != nil {
		t.Fatal(err)
	}
	m.WaitReady(context.Background())
	if l := m.List(); l[0].Status != StatusReady || l[0].Transport != TransportSSE {
		t.Fatalf("list = %+v", l)
	}
	if r := call(t, sess, "mcp__old__echo", `{"text":"over sse"}`); text(r) != "echo: over sse" {
		t.Fatalf("echo = %q", text(r))
	}
}

func TestStreamableHTTPServer(t *testing.T) {
	url := httpServer(t, "http")
	m, sess, _ := newManager(t, Config{})
	if err := m.AddServers(context.Background(), []Server{{Name: "web", URL: url, Headers: map[string]string{"X-Test": "1"}}}); err != nil {
		t.Fatal(err)
	}
	m.WaitReady(context.Background())
	if l := m.List(); l[0].Status != StatusReady || l[0].Transport != TransportHTTP {
		t.Fatalf("list = %+v", l)
	}
	if r := call(t, sess, "mcp__web__echo", `{"text":"over http"}`); text(r) != "echo: over http" {
		t.Fatalf("echo = %+v", r)
	}
	var mu sync.Mutex
	var progress []string
	r := callCtx(t, context.Background(), sess, "mcp__web__slow", `{"ms":50}`, func(s string) { mu.Lock(); progress = append(progress, s); mu.Unlock() })
	if text(r) != "slow done" {
		t.Fatalf("slow = %+v", r)
	}
	mu.Lock()
	if len(progress) == 0 || progress[0] != "step 1 (1/3)\n" {
		t.Fatalf("progress = %q", progress)
	}
	mu.Unlock()
	// The server's notifications reach zot over the stream the transport
	// keeps open after the handshake.
	call(t, sess, "mcp__web__grow", `{}`)
	waitFor(t, "list_changed over HTTP", func() bool {
		m.gate(context.Background(), 2)
		_, ok := sess.set.View().Lookup("mcp__web__extra")
		return ok
	})
}

func TestProgressAndCancellation(t *testing.T) {
	cancelFile := filepath.Join(t.TempDir(), "cancelled")
	m, sess, _ := newManager(t, Config{})
	if err := m.AddServers(context.Background(), []Server{stdio("s", "-cancel-file", cancelFile)}); err != nil {
		t.Fatal(err)
	}
	m.WaitReady(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 10)
	done := make(chan error, 1)
	tool, _ := sess.set.View().Lookup("mcp__s__slow")
	go func() {
		_, err := tool.Run(ctx, toolsCall(`{"ms":60000}`, func(s string) { got <- s }))
		done <- err
	}()
	if p := <-got; p != "step 1 (1/3)\n" {
		t.Fatalf("first progress = %q", p)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("an aborted call returned no error")
	}
	waitFor(t, "the server to see the cancellation", func() bool {
		data, _ := os.ReadFile(cancelFile)
		return string(data) == "cancelled"
	})
}

func TestCallTimeout(t *testing.T) {
	m, sess, _ := newManager(t, Config{})
	s := stdio("s")
	// Long enough for the echo after it to answer on a loaded machine:
	// the timeout holds every call.
	s.Timeout = time.Second
	if err := m.AddServers(context.Background(), []Server{s}); err != nil {
		t.Fatal(err)
	}
	m.WaitReady(context.Background())
	r := call(t, sess, "mcp__s__slow", `{"ms":60000}`)
	if !r.IsError || !strings.Contains(text(r), "did not answer within 1s") {
		t.Fatalf("slow = %+v", r)
	}
	// The server still serves.
	if r := call(t, sess, "mcp__s__echo", `{"text":"x"}`); text(r) != "echo: x" {
		t.Fatalf("echo after a timeout = %+v", r)
	}
}

func TestCrashMidCallAndRestarts(t *testing.T) {
	logs := t.TempDir()
	m, sess, ns := newManager(t, Config{MaxRestarts: 2, LogDir: logs})
	if err := m.AddServers(context.Background(), []Server{stdio("s")}); err != nil {
		t.Fatal(err)
	}
	m.WaitReady(context.Background())
	for round := 0; round <= 2; round++ {
		r := call(t, sess, "mcp__s__crash", `{}`)
		if !r.IsError || !strings.Contains(text(r), `MCP server "s"`) {
			t.Fatalf("round %d: crash = %+v", round, r)
		}
		waitFor(t, "the crash to be seen", func() bool { return m.List()[0].Status == StatusCrashed })
		info := m.List()[0]
		if !strings.Contains(info.Error, "exit status 3") || !strings.Contains(info.Error, "crashing as asked") {
			t.Fatalf("round %d: error = %q", round, info.Error)
		}
		// Calls fail at once until the next prompt.
		r = call(t, sess, "mcp__s__echo", `{"text":"x"}`)
		if !r.IsError || !strings.Contains(text(r), "not running") {
			t.Fatalf("round %d: echo of a crashed server = %+v", round, r)
		}
		m.gate(context.Background(), 1) // the next prompt
		if round < 2 {
			if r := call(t, sess, "mcp__s__echo", `{"text":"back"}`); text(r) != "echo: back" {
				t.Fatalf("round %d: echo after the restart = %+v", round, r)
			}
			if got := m.List()[0].Restarts; got != round+1 {
				t.Fatalf("restarts = %d, want %d", got, round+1)
			}
		}
	}
	info := m.List()[0]
	if info.Status != StatusCrashed || info.Restarts != 2 {
		t.Fatalf("after the budget: %+v", info)
	}
	r := call(t, sess, "mcp__s__echo", `{"text":"x"}`)
	if !strings.Contains(text(r), "not restarted any more") {
		t.Fatalf("echo after the budget = %q", text(r))
	}
	data, err := os.ReadFile(filepath.Join(logs, "mcp-s.log"))
	if err != nil || strings.Count(string(data), "crashing as asked") != 3 || strings.Count(string(data), "--- ") != 3 {
		t.Fatalf("the server's log (%v):\n%s", err, data)
	}
	var gaveUp bool
	for _, n := range ns.all() {
		if n.Server == "s" && strings.Contains(n.Message, "not restarted any more") {
			gaveUp = true
		}
	}
	if !gaveUp {
		t.Fatalf("no notice that the restarts ended: %+v", ns.all())
	}
}

func TestServerThatNeverAnswersInitialize(t *testing.T) {
	m, sess, ns := newManager(t, Config{StartTimeout: 200 * time.Millisecond, ConnectTimeout: time.Second})
	if err := m.AddServers(context.Background(), []Server{stdio("mute", "-mode", "hang"), stdio("ok")}); err != nil {
		t.Fatal(err)
	}
	m.gate(context.Background(), 1) // the first prompt goes on without the mute one
	if _, ok := sess.set.View().Lookup("mcp__ok__echo"); !ok {
		t.Fatalf("the good server's tools are missing: %s", sess.set.View().Names())
	}
	var late bool
	for _, n := range ns.all() {
		if n.Server == "mute" && n.Level == "warn" && strings.Contains(n.Message, "not ready after 200ms") {
			late = true
		}
	}
	if !late {
		t.Fatalf("no notice about the late server: %+v", ns.all())
	}
	if ev := (Notice{Server: "mute", Level: "warn", Message: "m"}).Event(); ev.Source != "mcp:mute" || ev.Extension != "mcp:mute" {
		t.Fatalf("notice event = %+v", ev)
	}
	waitFor(t, "the mute server to fail", func() bool { return m.List()[0].Status == StatusFailed })
	if e := m.List()[0].Error; !strings.Contains(e, "no answer to initialize within 1s") {
		t.Fatalf("error = %q", e)
	}
}

func TestServerThatAnswersGarbage(t *testing.T) {
	m, _, ns := newManager(t, Config{ConnectTimeout: 2 * time.Second})
	if err := m.AddServers(context.Background(), []Server{stdio("junk", "-mode", "garbage")}); err != nil {
		t.Fatal(err)
	}
	m.WaitReady(context.Background())
	waitFor(t, "the junk server to fail", func() bool { return m.List()[0].Status == StatusFailed })
	if len(ns.all()) == 0 || ns.all()[0].Level != "error" {
		t.Fatalf("notices = %+v", ns.all())
	}
}

func TestToolsChangedBetweenTurns(t *testing.T) {
	m, sess, _ := newManager(t, Config{})
	if err := m.AddServers(context.Background(), []Server{stdio("s")}); err != nil {
		t.Fatal(err)
	}
	m.WaitReady(context.Background())
	if r := call(t, sess, "mcp__s__grow", `{}`); text(r) != "grown" {
		t.Fatalf("grow = %+v", r)
	}
	waitFor(t, "the list_changed notification", func() bool {
		m.gate(context.Background(), 2)
		_, ok := sess.set.View().Lookup("mcp__s__extra")
		return ok
	})
	if r := call(t, sess, "mcp__s__extra", `{}`); text(r) != "extra!" {
		t.Fatalf("extra = %+v", r)
	}
}

func TestRemoveReplaceAndCloseLeaveNoProcess(t *testing.T) {
	m, sess, _ := newManager(t, Config{})
	if err := m.AddServers(context.Background(), []Server{stdio("a"), stdio("b")}); err != nil {
		t.Fatal(err)
	}
	m.WaitReady(context.Background())
	procA := m.servers["a"].conn.proc
	if err := m.Remove("a"); err != nil {
		t.Fatal(err)
	}
	if _, ok := sess.set.View().Lookup("mcp__a__echo"); ok {
		t.Fatal("a removed server's tool is still offered")
	}
	waitFor(t, "the removed server to stop", func() bool { return !procA.GroupAlive() })
	if err := m.Remove("a"); err == nil {
		t.Fatal("removing an unknown server succeeded")
	}
	// Replacing b: the old process goes, the new one serves.
	procB := m.servers["b"].conn.proc
	if err := m.AddServers(context.Background(), []Server{stdio("b")}); err != nil {
		t.Fatal(err)
	}
	m.WaitReady(context.Background())
	waitFor(t, "the replaced server to stop", func() bool { return !procB.GroupAlive() })
	if r := call(t, sess, "mcp__b__echo", `{"text":"new"}`); text(r) != "echo: new" {
		t.Fatalf("echo = %+v", r)
	}
	procB2 := m.servers["b"].conn.proc
	if m.Count() != 1 {
		t.Fatalf("count = %d", m.Count())
	}
	m.Close()
	if procB2.GroupAlive() {
		t.Fatal("a server outlived Close")
	}
	if len(sess.set.View().Tools()) != 0 {
		t.Fatalf("tools after Close: %s", sess.set.View().Names())
	}
	if err := m.AddServers(context.Background(), []Server{stdio("c")}); err == nil {
		t.Fatal("AddServers after Close succeeded")
	}
}

func TestAddServersRefusesInvalidOnesWhole(t *testing.T) {
	m, _, _ := newManager(t, Config{Deferred: true})
	bad := [][]Server{
		{stdio("ok"), {Name: "", Command: "x"}},
		{stdio("ok"), {Name: "both", Command: "x", URL: "http://127.0.0.1/"}},
		{{Name: "ftp", URL: "ftp://example.com"}},
		{{Name: "t", Type: "carrier-pigeon", Command: "x"}},
		{stdio("twice"), stdio("twice")},
	}
	for _, list := range bad {
		if err := m.AddServers(context.Background(), list); err == nil {
			t.Errorf("AddServers(%+v) succeeded", list)
		}
	}
	if m.Count() != 0 {
		t.Fatalf("count = %d after refusals", m.Count())
	}
}

// Close does not wait for a start that will never end: the start gives up
// and its process is stopped.
func TestCloseStopsAServerStillStarting(t *testing.T) {
	m, _, _ := newManager(t, Config{ConnectTimeout: time.Hour, StartTimeout: time.Hour})
	if err := m.AddServers(context.Background(), []Server{stdio("mute", "-mode", "hang")}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server to be starting", func() bool { return m.List()[0].Status == StatusStarting })
	done := make(chan struct{})
	go func() { m.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // a hang guard, not a timing goal
		t.Fatal("Close waited for a start that never ends")
	}
}
