package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
)

// These tests run the fleet as users do: the Temporal CLI's dev server
// (its state in a file), zot-fleet workers and zot daemon --executor
// temporal, each a process of its own, and a client speaking ACP to the
// daemon's socket. The model is a loopback server answering as
// Anthropic's Messages API streams (https://docs.anthropic.com/en/api/messages-streaming:
// message_start, content_block_start/delta/stop, message_delta,
// message_stop), counting the requests it is paid for. make test-fleet
// sets ZOT_TEMPORAL, ZOT_BIN and ZOT_FLEET_BIN; without them the tests
// are skipped (ZOT_E2E_REQUIRED=1 fails them instead).

// hang bounds every wait; it only catches hangs.
const hang = 90 * time.Second

// tools are the programs the tests run.
type tools struct{ temporal, zot, fleet string }

func needTools(t testing.TB) tools {
	t.Helper()
	tl := tools{temporal: os.Getenv("ZOT_TEMPORAL"), zot: os.Getenv("ZOT_BIN"), fleet: os.Getenv("ZOT_FLEET_BIN")}
	if tl.temporal == "" || tl.zot == "" || tl.fleet == "" {
		if os.Getenv("ZOT_E2E_REQUIRED") == "1" {
			t.Fatal("ZOT_TEMPORAL, ZOT_BIN and ZOT_FLEET_BIN must name the Temporal CLI, zot and zot-fleet (make test-fleet sets them)")
		}
		t.Skip("set ZOT_TEMPORAL, ZOT_BIN and ZOT_FLEET_BIN (make test-fleet does)")
	}
	return tl
}

// freePort returns a loopback port nobody listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// proc is a process a test started; Kill sends SIGKILL to its group.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

func start(t testing.TB, name string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, out: out, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s said:\n%s", name, out.String())
		}
	})
	return p
}

// kill is kill -9 of the process's group; it waits until it is gone.
func (p *proc) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// stop asks the process to end (SIGTERM) and waits until it has.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
}

// syncBuffer is a buffer for a process's output.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
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

// fleetSetup is a dev server, a fake model and what runs on them.
type fleetSetup struct {
	t      testing.TB
	tl     tools
	dir    string
	port   int
	server *proc
	served bool // the dev server has served once
	model  *fakeModel
	blobs  string
	home   string
	// serverFlags are more flags of the dev server.
	serverFlags []string
	// env is more environment of the workers and daemons.
	env []string
	// replayed says the turns were replayed (replayAll runs once).
	replayed bool
}

func newFleet(t testing.TB, answers func(req modelRequest) []answerPart, serverFlags ...string) *fleetSetup {
	t.Helper()
	tl := needTools(t)
	dir := t.TempDir()
	f := &fleetSetup{t: t, tl: tl, dir: dir, port: freePort(t), blobs: filepath.Join(dir, "blobs"), home: filepath.Join(dir, "home"), serverFlags: serverFlags}
	f.model = newFakeModel(t, answers)
	f.startServer()
	return f
}

// startServer starts the dev server on its port and file, and waits
// until it answers.
func (f *fleetSetup) startServer() {
	f.t.Helper()
	// The ports are free when picked and taken when the server binds
	// them: a process of another test may bind one in between, and the
	// server then exits. It is started again on other ports (its own
	// port too the first time; a server started again keeps it: the
	// workers and daemons dial it).
	for try := 1; ; try++ {
		if f.tryServer() {
			break
		}
		if try == 3 || !strings.Contains(f.server.out.String(), "address already in use") {
			f.t.Fatalf("the dev server did not serve:\n%s", f.server.out.String())
		}
		f.t.Logf("the dev server lost a port to another process; starting it again:\n%s", f.server.out.String())
		if !f.served {
			f.port = freePort(f.t)
		}
	}
	f.served = true
	if _, ok := f.t.(*testing.T); ok {
		// After the workers and daemons have stopped, before this server
		// (the last one started: a test may start it again; the first
		// replay that runs is the only one).
		f.t.Cleanup(f.replayAll)
	}
}

// tryServer starts the dev server and reports whether it serves; false
// is a server that exited.
func (f *fleetSetup) tryServer() bool {
	f.t.Helper()
	args := []string{f.tl.temporal, "server", "start-dev", "--headless",
		"--ip", "127.0.0.1", "--port", strconv.Itoa(f.port), "--http-port", strconv.Itoa(freePort(f.t)),
		"--metrics-port", strconv.Itoa(freePort(f.t)), "--ui-port", strconv.Itoa(freePort(f.t)),
		"--db-filename", filepath.Join(f.dir, "temporal.db"), "--log-level", "error",
		// Write-ahead logging, as docs/fleet.md runs the dev server: a
		// commit is a write to the log, synced at checkpoints, and
		// survives the server's kill -9 (TestFleetServerDown); the
		// default rollback journal syncs each commit several times and
		// makes throughput a matter of the disk's load.
		"--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal"}
	f.server = start(f.t, "temporal", nil, append(args, f.serverFlags...)...)
	// Listening is not serving: a worker that dials a server whose
	// frontend is not healthy yet is refused and exits.
	quiet := tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	deadline := time.Now().Add(hang)
	for time.Now().Before(deadline) {
		select {
		case <-f.server.done:
			return false
		default:
		}
		if cl, err := client.Dial(client.Options{HostPort: f.addr(), Logger: quiet}); err == nil {
			cl.Close()
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	f.t.Fatalf("the dev server did not serve within %s:\n%s", hang, f.server.out.String())
	return false
}

func (f *fleetSetup) addr() string { return "127.0.0.1:" + strconv.Itoa(f.port) }

// worker starts a zot-fleet worker on the fake model, with more flags.
func (f *fleetSetup) worker(name string, flags ...string) *proc {
	f.t.Helper()
	args := []string{f.tl.fleet, "worker", "--temporal", f.addr(),
		"--provider", "anthropic", "--base-url", f.model.url, "--api-key", "test-key", "--blobs", f.blobs, "--identity", name}
	p := start(f.t, name, append([]string{"ZOT_HOME=" + f.home}, f.env...), append(args, flags...)...)
	f.waitOutput(p, "serving")
	return p
}

// daemon starts zot daemon, with the fleet's executor unless inProcess.
func (f *fleetSetup) daemon(name string, inProcess bool) (*proc, string) {
	return f.daemonAs(name, inProcess, "allow")
}

// daemonAs starts zot daemon with --permission perm and more flags.
func (f *fleetSetup) daemonAs(name string, inProcess bool, perm string, flags ...string) (*proc, string) {
	f.t.Helper()
	sock := filepath.Join(f.dir, name+".sock")
	args := []string{f.tl.zot, "daemon", "--provider", "anthropic", "--base-url", f.model.url, "--api-key", "test-key", "--permission", perm}
	if !inProcess {
		args = append(args, "--executor", "temporal", "--temporal", f.addr(), "--blobs", f.blobs)
	}
	p := start(f.t, name, append([]string{"ZOT_HOME=" + f.home, "ZOT_SOCKET=" + sock}, f.env...), append(args, flags...)...)
	f.waitOutput(p, "listening")
	return p, sock
}

func (f *fleetSetup) waitOutput(p *proc, want string) {
	f.t.Helper()
	deadline := time.Now().Add(hang)
	for time.Now().Before(deadline) {
		if strings.Contains(p.out.String(), want) {
			return
		}
		select {
		case <-p.done:
			f.t.Fatalf("%s exited:\n%s", p.name, p.out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	f.t.Fatalf("%s never said %q:\n%s", p.name, want, p.out.String())
}

// modelRequest is what the fake model reads of a request.
type modelRequest struct {
	// Results counts the tool results in the request's messages.
	Results int
	// LastResult is the text of the last tool result.
	LastResult string
	// System is the request's system prompt (a sub-agent's says so).
	System string
	// Prompt is the text of the first message (the prompt that began
	// the conversation).
	Prompt string
	// Answering says the request's last message carries tool results:
	// the model is asked to go on after its tool calls.
	Answering bool
}

// answerPart is one piece of an answer: text (streamed in Chunks pieces
// Delay apart) or a tool call.
type answerPart struct {
	Text  string
	Delay time.Duration
	Tool  string
	Args  string
}

// fakeModel answers as Anthropic's Messages API streams, and counts the
// requests of each kind (by how many tool results they carry).
type fakeModel struct {
	url     string
	answers func(modelRequest) []answerPart

	mu       sync.Mutex
	requests map[int]int // tool results in the request → requests
	answered int         // requests whose last message carries tool results
	started  chan int    // a request began streaming (its result count)
}

func newFakeModel(t testing.TB, answers func(modelRequest) []answerPart) *fakeModel {
	m := &fakeModel{answers: answers, requests: map[int]int{}, started: make(chan int, 64)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: m}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	m.url = "http://" + ln.Addr().String()
	return m
}

func (m *fakeModel) count(results int) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests[results]
}

// answering counts the requests whose last message carries tool results.
func (m *fakeModel) answering() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.answered
}

func (m *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req struct {
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var mr modelRequest
	// The system prompt is a string or text blocks.
	if json.Unmarshal(req.System, &mr.System) != nil {
		var blocks []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(req.System, &blocks)
		for _, b := range blocks {
			mr.System += b.Text
		}
	}
	for i, msg := range req.Messages {
		var blocks []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(msg.Content, &blocks) != nil {
			if i == 0 {
				_ = json.Unmarshal(msg.Content, &mr.Prompt)
			}
			continue
		}
		for _, b := range blocks {
			if i == 0 && b.Type == "text" && mr.Prompt == "" {
				mr.Prompt = b.Text
			}
			if b.Type == "tool_result" {
				mr.Results++
				mr.LastResult = string(b.Content)
				mr.Answering = mr.Answering || i == len(req.Messages)-1
			}
		}
	}
	m.mu.Lock()
	m.requests[mr.Results]++
	if mr.Answering {
		m.answered++
	}
	m.mu.Unlock()
	select {
	case m.started <- mr.Results:
	default:
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	ev := func(name, data string) {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
		fl.Flush()
	}
	ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
	stop := "end_turn"
	for i, p := range m.answers(mr) {
		if p.Tool != "" {
			stop = "tool_use"
			ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":"toolu_%d_%d","name":%q,"input":{}}}`, i, mr.Results, i, p.Tool))
			ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, strconv.Quote(p.Args)))
		} else {
			ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i))
			for _, word := range strings.SplitAfter(p.Text, " ") {
				if p.Delay > 0 {
					select {
					case <-time.After(p.Delay):
					case <-r.Context().Done():
						return
					}
				}
				ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, strconv.Quote(word)))
			}
		}
		ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
	}
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":5}}`)
	ev("message_stop", `{"type":"message_stop"}`)
}

// acpClient speaks ACP to a daemon's socket, answering permission
// requests with their first option.
type acpClient struct {
	t    testing.TB
	conn net.Conn
	in   *bufio.Reader
	n    int

	// reject answers permission requests with their reject_once option.
	reject bool
	// always answers them with their allow_always option, when they
	// have one.
	always bool
	// asked counts the permission requests; questions holds their
	// params.
	asked     int
	questions []json.RawMessage

	mu      sync.Mutex
	updates []json.RawMessage
	// onUpdate, when set, sees each update as it comes.
	onUpdate func(json.RawMessage)
	// serve, when set, answers the requests the daemon makes of the
	// client other than session/request_permission (_zot/tool/call,
	// fs/read_text_file): a result, or false to leave one unanswered.
	serve func(method string, params json.RawMessage) (result any, ok bool)
	// serving is the id of the request serve is given (for a reply
	// later).
	serving json.RawMessage
}

// reply answers the daemon's request id with result.
func (c *acpClient) reply(id json.RawMessage, result any) {
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	if _, err := c.conn.Write(append(line, '\n')); err != nil {
		c.t.Errorf("answering %s: %v", id, err)
	}
}

func dialACP(t testing.TB, sock string) *acpClient {
	t.Helper()
	return dialACPWith(t, sock, map[string]any{}, nil)
}

// dialACPWith connects a client that offers caps (its
// clientCapabilities) and answers the daemon's requests with serve.
func dialACPWith(t testing.TB, sock string, caps map[string]any, serve func(method string, params json.RawMessage) (any, bool)) *acpClient {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &acpClient{t: t, conn: conn, in: bufio.NewReaderSize(conn, 1<<20), serve: serve}
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps})
	return c
}

// call sends a request and reads until its answer, collecting updates.
func (c *acpClient) call(method string, params any) json.RawMessage {
	c.t.Helper()
	res, err := c.try(method, params)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	return res
}

func (c *acpClient) try(method string, params any) (json.RawMessage, error) {
	c.n++
	id := c.n
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := c.conn.Write(append(line, '\n')); err != nil {
		return nil, err
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(hang))
	for {
		l, err := c.in.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		var m struct {
			ID     *json.RawMessage `json:"id"`
			Method string           `json:"method"`
			Params json.RawMessage  `json:"params"`
			Result json.RawMessage  `json:"result"`
			Error  json.RawMessage  `json:"error"`
		}
		if err := json.Unmarshal(l, &m); err != nil {
			return nil, err
		}
		switch {
		case m.Method == "session/update":
			var p struct {
				Update json.RawMessage `json:"update"`
			}
			_ = json.Unmarshal(m.Params, &p)
			c.mu.Lock()
			c.updates = append(c.updates, p.Update)
			on := c.onUpdate
			c.mu.Unlock()
			if on != nil {
				on(p.Update)
			}
		case m.Method == "session/request_permission":
			var p struct {
				Options []struct {
					OptionID string `json:"optionId"`
					Kind     string `json:"kind"`
				} `json:"options"`
			}
			_ = json.Unmarshal(m.Params, &p)
			c.asked++
			c.questions = append(c.questions, m.Params)
			pick := p.Options[0].OptionID
			for _, o := range p.Options {
				if c.reject && o.Kind == "reject_once" || !c.reject && o.Kind == "allow_once" {
					pick = o.OptionID
				}
				if c.always && o.Kind == "allow_always" {
					pick = o.OptionID
					break
				}
			}
			ans, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": pick}}})
			_, _ = c.conn.Write(append(ans, '\n'))
		case m.Method != "" && m.ID != nil && c.serve != nil:
			c.serving = *m.ID
			if res, ok := c.serve(m.Method, m.Params); ok {
				ans, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
				_, _ = c.conn.Write(append(ans, '\n'))
			}
		case m.Method != "":
		case m.ID != nil && string(*m.ID) == strconv.Itoa(id):
			if len(m.Error) > 0 {
				return nil, fmt.Errorf("error: %s", m.Error)
			}
			return m.Result, nil
		}
	}
}

func (c *acpClient) newSession(cwd string) string {
	c.t.Helper()
	var r struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(c.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}), &r)
	return r.SessionID
}

func (c *acpClient) prompt(session, text string) json.RawMessage {
	c.t.Helper()
	return c.call("session/prompt", map[string]any{"sessionId": session, "prompt": []any{map[string]any{"type": "text", "text": text}}})
}

// taken returns the updates so far and forgets them.
func (c *acpClient) taken() []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.updates
	c.updates = nil
	return u
}

// text is what the agent_message_chunk updates said, in order.
func text(updates []json.RawMessage) string {
	var b strings.Builder
	for _, u := range updates {
		var m struct {
			Kind    string `json:"sessionUpdate"`
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		_ = json.Unmarshal(u, &m)
		if m.Kind == "agent_message_chunk" {
			b.WriteString(m.Content.Text)
		}
	}
	return b.String()
}

// notify sends a notification; it may be called while another goroutine
// waits in call.
func (c *acpClient) notify(method string, params any) {
	c.t.Helper()
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if _, err := c.conn.Write(append(line, '\n')); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}
