package ext

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// hangGuard bounds every wait; it only catches hangs.
const hangGuard = 30 * time.Second

// host is an in-process host speaking to an Extension's Run over pipes.
type host struct {
	t     *testing.T
	toExt *io.PipeWriter
	lines chan string
	logMu sync.Mutex
	log   strings.Builder
}

func serve(t *testing.T, e *Extension) *host {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	e.in, e.out = inR, outW
	h := &host{t: t, toExt: inW, lines: make(chan string, 1024)}
	e.x.SetLogOutput(writerFunc(func(p []byte) (int, error) { h.logMu.Lock(); defer h.logMu.Unlock(); return h.log.Write(p) }))
	done := make(chan error, 1)
	go func() { done <- e.Run(); outW.Close() }()
	go func() {
		defer close(h.lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(hangGuard):
			t.Error("Run did not return")
		}
		for range h.lines {
		}
	})
	h.send(`{"type":"hello_ack","protocol_version":1,"zot_version":"test","provider":"p","model":"m","cwd":"/c","extension_dir":"/d","data_dir":"/d"}`)
	return h
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func (h *host) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.toExt, line+"\n"); err != nil {
		h.t.Fatalf("writing %s: %v", line, err)
	}
}

// until returns the lines the extension wrote up to the first of type typ.
func (h *host) until(typ string) []string {
	h.t.Helper()
	var got []string
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				h.t.Fatalf("the extension's output ended; before %s: %q", typ, got)
			}
			got = append(got, l)
			if strings.HasPrefix(l, `{"type":"`+typ+`"`) {
				return got
			}
		case <-time.After(hangGuard):
			h.t.Fatalf("no %s; got %q", typ, got)
		}
	}
}

// InterceptToolCallX wins over InterceptToolCall, as upstream documents;
// an interactive tool is waited for a day, an ordinary one for zot's
// default.
func TestToolCallPrecedenceAndInteractiveTimeout(t *testing.T) {
	e := New("t", "1")
	e.InterceptToolCall(func(string, json.RawMessage) (bool, string) { return false, "plain refuses" })
	e.InterceptToolCallX(func(string, json.RawMessage) ToolCallDecision {
		return ToolCallDecision{ModifiedArgs: json.RawMessage(`{"command":"true"}`)}
	})
	e.Tool("plain", "", nil, func(json.RawMessage) ToolResult { return TextResult("ok") })
	e.InteractiveTool("ask", "", nil, nil)
	h := serve(t, e)
	regs := strings.Join(h.until("ready"), "\n")
	for _, want := range []string{
		`{"type":"register_tool","name":"plain"}`,
		`{"type":"register_tool","name":"ask","timeout_ms":86400000}`,
		`{"type":"subscribe","intercept":["tool_call"]}`,
	} {
		if !strings.Contains(regs, want) {
			t.Errorf("registrations lack %s:\n%s", want, regs)
		}
	}
	h.send(`{"type":"event_intercept","id":"1","event":"tool_call","tool_id":"c","tool_name":"bash","tool_args":{"command":"rm"}}`)
	got := h.until("event_intercept_response")
	if last := got[len(got)-1]; last != `{"type":"event_intercept_response","id":"1","modified_args":{"command":"true"}}` {
		t.Fatalf("verdict: %s", last)
	}
}

// A burst of panel keys reaches OnPanelKey's callback one at a time, in
// the order sent, whatever each callback's duration.
func TestPanelKeysInOrder(t *testing.T) {
	e := New("t", "1")
	var mu sync.Mutex
	var got []string
	running := 0
	e.OnPanelKey("p", func(key, text string) {
		mu.Lock()
		running++
		if running != 1 {
			t.Error("two key callbacks ran at once")
		}
		slow := len(got)%3 == 0
		mu.Unlock()
		if slow {
			time.Sleep(time.Millisecond) // a slow key must not be overtaken
		}
		mu.Lock()
		got = append(got, text)
		running--
		mu.Unlock()
		if text == "199" {
			e.RenderPanel("p", "", []string{"done"}, "")
		}
	}, nil)
	e.OnPanelKey("q", func(key, text string) { t.Errorf("panel q got %s", text) }, nil)
	h := serve(t, e)
	h.until("ready")
	var want []string
	for i := range 200 {
		h.send(fmt.Sprintf(`{"type":"panel_key","panel_id":"p","key":"rune","text":"%d"}`, i))
		want = append(want, fmt.Sprint(i))
	}
	h.until("panel_render")
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("keys applied out of order:\n%v", got)
	}
}

// Answers zot has no counterpart for become errors; blocks zot does not
// take are left out and logged.
func TestResponsesAndResults(t *testing.T) {
	e := New("t", "1")
	e.Command("c", "", func(args string) Response {
		switch args {
		case "panel":
			return Response{Action: "open_panel"}
		case "odd":
			return Response{Action: "teleport"}
		case "tool":
			return ToolPrompt("read", map[string]string{"path": "x"}, "go")
		case "badtool":
			return ToolPrompt("read", []int{1}, "go")
		}
		return Response{}
	})
	e.Tool("mixed", "", nil, func(json.RawMessage) ToolResult {
		return ToolResult{Content: []ToolContent{{Type: "audio", Data: "AAAA"}, {Type: "text", Text: "**x**", Format: "markdown"}}, IsError: true, StructuredContent: json.RawMessage(`{}`)}
	})
	h := serve(t, e)
	h.until("ready")
	for _, c := range []struct{ args, want string }{
		{"panel", `{"type":"command_response","id":"panel","action":"noop","error":"the command answered open_panel without a panel"}`},
		{"odd", `{"type":"command_response","id":"odd","action":"noop","error":"the command answered with the action \"teleport\", which zot does not know"}`},
		{"tool", `{"type":"command_response","id":"tool","action":"noop","error":"zot cannot run the tool read ahead of a prompt (action tool_prompt)"}`},
		{"badtool", `{"type":"command_response","id":"badtool","action":"noop","error":"a tool prompt's arguments must be a JSON object"}`},
		{"", `{"type":"command_response","id":"","action":"noop"}`},
	} {
		h.send(`{"type":"command_invoked","id":"` + c.args + `","name":"c","args":"` + c.args + `"}`)
		if got := h.until("command_response"); got[len(got)-1] != c.want {
			t.Errorf("%q: %s\nwant %s", c.args, got[len(got)-1], c.want)
		}
	}
	h.send(`{"type":"tool_call","id":"m","name":"mixed","args":{}}`)
	if got := h.until("tool_result"); got[len(got)-1] != `{"type":"tool_result","id":"m","content":[{"type":"text","text":"**x**"}],"is_error":true}` {
		t.Errorf("tool_result: %s", got[len(got)-1])
	}
	h.logMu.Lock()
	defer h.logMu.Unlock()
	if !strings.Contains(h.log.String(), `left out a tool result block of type "audio"`) {
		t.Errorf("log: %s", h.log.String())
	}
}
