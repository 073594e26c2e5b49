package main

import (
	"encoding/hex"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"zot.dev/zot/internal/tap"
	"zot.dev/zot/internal/telemetry"
	"zot.dev/zot/internal/telemetry/otlptest"
)

// clientTrace is the trace context an embedder sends with its prompt.
const (
	clientTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID  = "00f067aa0ba902b7"
	clientParent  = "00-" + clientTraceID + "-" + clientSpanID + "-01"
)

// toolScript answers a prompt with a bash call, then with text; each
// step reports its usage.
func toolScript(t *testing.T) string {
	return script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": "running it", "usage": map[string]any{"input": 100, "output": 20},
			"tool_calls": []any{map[string]any{"id": "c1", "name": "bash", "args": map[string]any{"command": "echo tool-output-words"}}}},
		map[string]any{"text": "the answer-words", "usage": map[string]any{"input": 150, "output": 10}},
	}}}})
}

// spansByName indexes spans by name (a name seen twice keeps a list).
func spansByName(spans []*tracepb.Span) map[string][]*tracepb.Span {
	m := map[string][]*tracepb.Span{}
	for _, s := range spans {
		m[s.Name] = append(m[s.Name], s)
	}
	return m
}

func attr(t *testing.T, s *tracepb.Span, key string) any {
	t.Helper()
	v, ok := otlptest.Attr(s.Attributes, key)
	if !ok {
		t.Errorf("span %q has no %s; it has %v", s.Name, key, s.Attributes)
	}
	return v
}

// checkPromptTrace checks the spans of toolScript's prompt: one
// invoke_agent in the client's trace (when parent is set), two chat spans
// and an execute_tool under it, in the GenAI conventions.
func checkPromptTrace(t *testing.T, spans []*tracepb.Span, parent bool) (invoke *tracepb.Span) {
	t.Helper()
	by := spansByName(spans)
	if len(by["invoke_agent zot"]) != 1 || len(by["execute_tool bash"]) != 1 {
		t.Fatalf("spans: want one invoke_agent zot and one execute_tool bash, got %v", names(spans))
	}
	invoke = by["invoke_agent zot"][0]
	var chats []*tracepb.Span
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "chat ") {
			chats = append(chats, s)
		}
	}
	if len(chats) != 2 {
		t.Fatalf("want 2 chat spans, got %v", names(spans))
	}
	tool := by["execute_tool bash"][0]
	if parent {
		if hex.EncodeToString(invoke.TraceId) != clientTraceID || hex.EncodeToString(invoke.ParentSpanId) != clientSpanID {
			t.Errorf("invoke_agent is in trace %x under %x, want the client's %s under %s", invoke.TraceId, invoke.ParentSpanId, clientTraceID, clientSpanID)
		}
		if invoke.Flags&0x300 != 0x300 {
			t.Errorf("invoke_agent flags %#x: want its parent marked remote", invoke.Flags)
		}
	} else if len(invoke.ParentSpanId) != 0 {
		t.Errorf("invoke_agent has a parent %x without a client trace", invoke.ParentSpanId)
	}
	for _, s := range append(chats, tool) {
		if string(s.TraceId) != string(invoke.TraceId) || string(s.ParentSpanId) != string(invoke.SpanId) {
			t.Errorf("%s is not a child of invoke_agent: trace %x parent %x", s.Name, s.TraceId, s.ParentSpanId)
		}
	}
	if v := attr(t, invoke, "gen_ai.operation.name"); v != "invoke_agent" {
		t.Errorf("invoke_agent's operation %v", v)
	}
	if v := attr(t, invoke, "gen_ai.agent.name"); v != "zot" {
		t.Errorf("agent name %v", v)
	}
	if in, out := attr(t, invoke, "gen_ai.usage.input_tokens"), attr(t, invoke, "gen_ai.usage.output_tokens"); in != int64(250) || out != int64(30) {
		t.Errorf("invoke_agent's tokens %v in, %v out; want the prompt's 250 and 30", in, out)
	}
	if invoke.Kind != tracepb.Span_SPAN_KIND_INTERNAL || chats[0].Kind != tracepb.Span_SPAN_KIND_CLIENT || tool.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Errorf("kinds: invoke %v chat %v tool %v", invoke.Kind, chats[0].Kind, tool.Kind)
	}
	first, second := chats[0], chats[1]
	if first.StartTimeUnixNano > second.StartTimeUnixNano {
		first, second = second, first
	}
	model := attr(t, first, "gen_ai.request.model")
	if first.Name != fmt.Sprintf("chat %v", model) {
		t.Errorf("chat span named %q, want chat {gen_ai.request.model} (%v)", first.Name, model)
	}
	for k, want := range map[string]any{
		"gen_ai.operation.name":          "chat",
		"gen_ai.provider.name":           "scripted",
		"gen_ai.usage.input_tokens":      int64(100),
		"gen_ai.usage.output_tokens":     int64(20),
		"gen_ai.response.finish_reasons": []any{"tool_use"},
	} {
		if got := attr(t, first, k); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("first chat %s = %v, want %v", k, got, want)
		}
	}
	if got := attr(t, second, "gen_ai.response.finish_reasons"); fmt.Sprint(got) != "[end_turn]" {
		t.Errorf("second chat's finish reasons %v", got)
	}
	if _, ok := otlptest.Attr(first.Attributes, "zot.cost.usd"); !ok {
		t.Errorf("chat has no zot.cost.usd")
	}
	for k, want := range map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash", "gen_ai.tool.call.id": "c1"} {
		if got := attr(t, tool, k); got != want {
			t.Errorf("execute_tool %s = %v, want %v", k, got, want)
		}
	}
	if !(first.EndTimeUnixNano <= tool.StartTimeUnixNano && tool.EndTimeUnixNano <= second.StartTimeUnixNano) {
		t.Errorf("the tool call is not between the two model calls")
	}
	return invoke
}

func names(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// contentIn says whether any attribute of spans holds text.
func contentIn(spans []*tracepb.Span, text string) []string {
	var where []string
	for _, s := range spans {
		for _, kv := range s.Attributes {
			if strings.Contains(kv.Value.String(), text) {
				where = append(where, s.Name+" "+kv.Key)
			}
		}
	}
	return where
}

// TestOTelRPCTrace: zot rpc with OTEL_EXPORTER_OTLP_ENDPOINT sends a
// prompt's spans to an OTLP/HTTP receiver as the prompt ends (before
// the process exits): invoke_agent in the trace the client sent in
// _meta.traceparent, the model and tool calls under it, and no message
// content unless asked for.
func TestOTelRPCTrace(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	p := start(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL, "OTEL_SERVICE_NAME=zot-under-test"},
		rpcArgs(t, "--script", toolScript(t))...)
	p.send(`{"id":"p1","type":"prompt","message":"the prompt-words","_meta":{"traceparent":"` + clientParent + `","tracestate":"client=1"}}`)
	if r, _ := p.response(); !r.Success {
		t.Fatalf("prompt: %+v", r)
	}
	p.untilDone()
	// Sent at the end of the prompt, while zot still runs.
	spans := rcv.WaitSpans(t, 4, 10*time.Second)
	invoke := checkPromptTrace(t, spans, true)
	if invoke.TraceState != "client=1" {
		t.Errorf("tracestate %q", invoke.TraceState)
	}
	if v := attr(t, invoke, "zot.prompt_id"); v != "p1" {
		t.Errorf("zot.prompt_id %v", v)
	}
	for _, text := range []string{"prompt-words", "answer-words", "tool-output-words"} {
		if where := contentIn(spans, text); len(where) > 0 {
			t.Errorf("content %q recorded without being asked for, in %v", text, where)
		}
	}
	td := rcv.Requests()[0]
	if v, _ := otlptest.Attr(td.ResourceSpans[0].Resource.Attributes, "service.name"); v != "zot-under-test" {
		t.Errorf("service.name %v", v)
	}
	if got := td.ResourceSpans[0].ScopeSpans[0].SchemaUrl; got != telemetry.SchemaURL {
		t.Errorf("schema URL %q", got)
	}
	// A prompt without a trace context starts a trace of its own.
	p.send(`{"id":"p2","type":"prompt","message":"again"}`)
	p.response()
	p.untilDone()
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.stderr.String())
	}
	more := rcv.Spans()[len(spans):]
	by := spansByName(more)
	if len(by["invoke_agent zot"]) != 1 {
		t.Fatalf("second prompt: %v", names(more))
	}
	if got := hex.EncodeToString(by["invoke_agent zot"][0].TraceId); got == clientTraceID || len(by["invoke_agent zot"][0].ParentSpanId) != 0 {
		t.Errorf("the second prompt continued the first's client trace")
	}
	// The metrics, sent on exit: both prompts' model calls.
	ms := rcv.Metrics()
	if len(ms) == 0 {
		t.Fatalf("no metrics sent")
	}
	last := ms[len(ms)-1].ResourceMetrics[0].ScopeMetrics[0]
	tokens := map[any]uint64{}
	calls := uint64(0)
	for _, m := range last.Metrics {
		switch m.Name {
		case telemetry.MetricTokenUsage:
			for _, p := range m.GetHistogram().DataPoints {
				typ, _ := otlptest.Attr(p.Attributes, "gen_ai.token.type")
				tokens[typ] += p.Count
			}
		case telemetry.MetricOperationDuration:
			for _, p := range m.GetHistogram().DataPoints {
				if op, _ := otlptest.Attr(p.Attributes, "gen_ai.operation.name"); op == "chat" {
					calls += p.Count
				}
			}
		}
	}
	// The script's turn has two steps; the second prompt plays its first
	// step again or the built-in answer: at least three model calls.
	if calls < 3 || tokens["input"] != calls || tokens["output"] != calls {
		t.Errorf("metrics: %d chat calls timed, tokens counted %v", calls, tokens)
	}
}

// TestOTelContentCapture: with --otel-content (or the standard variable)
// the prompt, the answer, the tool's arguments and result are on the
// spans, in the conventions' attributes.
func TestOTelContentCapture(t *testing.T) {
	for _, how := range []struct {
		name string
		env  []string
		args []string
	}{
		{"flag", nil, []string{"--otel-content"}},
		{"variable", []string{"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true"}, nil},
	} {
		t.Run(how.name, func(t *testing.T) {
			rcv := otlptest.NewReceiver(t)
			p := start(t, append([]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + rcv.URL + "/v1/traces"}, how.env...),
				rpcArgs(t, append([]string{"--script", toolScript(t)}, how.args...)...)...)
			p.send(`{"id":"p1","type":"prompt","message":"the prompt-words"}`)
			p.response()
			p.untilDone()
			if code := p.exit(); code != 0 {
				t.Fatalf("exit %d", code)
			}
			spans := rcv.WaitSpans(t, 4, 10*time.Second)
			checkPromptTrace(t, spans, false)
			for text, where := range map[string]string{
				"prompt-words":      "invoke_agent zot gen_ai.input.messages",
				"answer-words":      "gen_ai.output.messages",
				"tool-output-words": "execute_tool bash gen_ai.tool.call.arguments",
			} {
				found := strings.Join(contentIn(spans, text), ", ")
				if !strings.Contains(found, where) {
					t.Errorf("%q: found in [%s], want in %s", text, found, where)
				}
			}
			tool := spansByName(spans)["execute_tool bash"][0]
			if r, _ := otlptest.Attr(tool.Attributes, "gen_ai.tool.call.result"); !strings.Contains(fmt.Sprint(r), "tool-output-words") {
				t.Errorf("tool result %v", r)
			}
		})
	}
}

// TestOTelPrintMode: zot -p sends its spans before it exits.
func TestOTelPrintMode(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	cmd := exec.Command(zotBin, "-p", "the prompt-words", "--provider", "scripted", "--script", toolScript(t), "--cwd", t.TempDir(), "--otel")
	cmd.Env = append(cleanEnv(), "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL, "OTEL_BSP_SCHEDULE_DELAY=60000")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("zot -p: %v\n%s", err, out)
	}
	// Nothing waits here: every span is in before zot exits.
	checkPromptTrace(t, rcv.Spans(), false)
}

// TestOTelACPTrace: zot acp continues a client's trace from
// session/prompt's _meta.traceparent, with the session's id as
// gen_ai.conversation.id.
func TestOTelACPTrace(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	home := t.TempDir()
	cmd := exec.Command(zotBin, "acp", "--provider", "scripted", "--script", toolScript(t), "--permission", "allow")
	cmd.Env = doorEnv(home, "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL)
	stdin, stdout, stderr := startPiped(t, cmd)
	p := checked(t, newDoorPeer(t, stdin, stdout))
	p.call("1", "initialize", `{"protocolVersion":1}`, "")
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, home), "")
	id := sessionID(t, f)
	if f, _ := p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"the prompt-words"}],"_meta":{"traceparent":%q}}`, id, clientParent), ""); f.Error != nil {
		t.Fatalf("prompt: %s", f.raw)
	}
	spans := rcv.WaitSpans(t, 4, 10*time.Second)
	invoke := checkPromptTrace(t, spans, true)
	if v := attr(t, invoke, "gen_ai.conversation.id"); v != id {
		t.Errorf("gen_ai.conversation.id %v, want the session's %s", v, id)
	}
	_ = stdin.Close()
	if err := endOf(t, cmd, stderr); err != nil {
		t.Fatalf("zot acp: %v", err)
	}
}

// TestOTelBadSettings: a setting zot cannot follow is a usage error that
// names it.
func TestOTelBadSettings(t *testing.T) {
	for _, c := range []struct{ env, args, want string }{
		{"OTEL_TRACES_SAMPLER=sometimes", "--otel", "OTEL_TRACES_SAMPLER"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "--otel", "4318"},
		{"", "--otel-content", "--otel-content needs traces on"},
	} {
		cmd := exec.Command(zotBin, "-p", "hi", "--provider", "scripted", c.args)
		cmd.Env = append(cleanEnv(), c.env)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Errorf("%s %s: %v\n%s", c.env, c.args, err, out)
		}
	}
}

// TestOTelInterceptAndMCPSpans: an extension's intercepts are spans
// under the prompt's (with their verdict: a rewrite, a block), and an MCP
// tool's call is a client span under its execute_tool span, whose trace
// context reaches the server in _meta.traceparent.
func TestOTelInterceptAndMCPSpans(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	home, cwd := t.TempDir(), t.TempDir()
	mcpConfig(t, home, map[string]any{"srv": map[string]any{"command": goServer(t), "args": []string{"-echo-trace"}}})
	ext := pyExtension(t, t.TempDir(), "py", "guard")
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{
			map[string]any{"id": "call_echo", "name": "py_echo", "args": map[string]any{"text": "x"}},
			map[string]any{"id": "call_rm", "name": "bash", "args": map[string]any{"command": "rm -rf ./nothing"}},
			map[string]any{"id": "call_mcp", "name": "mcp__srv__echo", "args": map[string]any{"text": "hi"}},
		}},
		map[string]any{"text": "Done."},
	}}}})
	cmd := exec.Command(zotBin, "-p", "go", "--json", "--provider", "scripted", "--script", s, "--cwd", cwd, "--ext", ext, "--otel")
	cmd.Env = append(cleanEnv(), "ZOT_HOME="+home, "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("zot -p: %v\n%s", err, out)
	}
	spans := rcv.Spans()
	by := spansByName(spans)
	if len(by["invoke_agent zot"]) != 1 {
		t.Fatalf("spans %v", names(spans))
	}
	invoke := by["invoke_agent zot"][0]
	verdicts := map[any]int{}
	for _, sp := range by["intercept py"] {
		if string(sp.ParentSpanId) != string(invoke.SpanId) {
			t.Errorf("intercept span not under invoke_agent")
		}
		if ev, _ := otlptest.Attr(sp.Attributes, "zot.intercept.event"); ev == "tool_call" {
			v, _ := otlptest.Attr(sp.Attributes, "zot.intercept.verdict")
			verdicts[v]++
		}
	}
	// The guard rewrites the text of the two echo calls and refuses rm -rf.
	if verdicts["rewrite"] != 2 || verdicts["block"] != 1 || len(verdicts) != 2 {
		t.Errorf("tool_call intercept verdicts %v; spans %v", verdicts, names(spans))
	}
	if len(by["execute_tool mcp__srv__echo"]) != 1 || len(by["tools/call echo"]) != 1 {
		t.Fatalf("MCP spans missing: %v", names(spans))
	}
	run, call := by["execute_tool mcp__srv__echo"][0], by["tools/call echo"][0]
	if string(call.ParentSpanId) != string(run.SpanId) || call.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("tools/call is not a client span under execute_tool")
	}
	if v, _ := otlptest.Attr(run.Attributes, "zot.mcp.server"); v != "srv" {
		t.Errorf("zot.mcp.server %v", v)
	}
	want := "traceparent=00-" + hex.EncodeToString(call.TraceId) + "-" + hex.EncodeToString(call.SpanId) + "-01"
	if !strings.Contains(string(out), want) {
		t.Errorf("the MCP server did not get the call's trace context (%s):\n%s", want, out)
	}
	if len(by["execute_tool bash"]) != 0 {
		t.Errorf("a blocked call ran")
	}
}

// TestOTelWithInspector: --otel and --inspect together: the spans are
// sent and the inspector's tap still records the same model and tool
// calls (the two wrap each session's calls one inside the other).
func TestOTelWithInspector(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	p := start(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL}, rpcArgs(t, "--script", toolScript(t), "--inspect", "127.0.0.1:0", "--otel")...)
	base, token := inspectorURL(t, p.stderr)
	p.send(`{"id":"p1","type":"prompt","message":"go"}`)
	p.response()
	p.untilDone()
	checkPromptTrace(t, rcv.WaitSpans(t, 4, 10*time.Second), false)
	kinds := map[string]int{}
	for _, r := range snapshotOf(t, base, token).Records {
		kinds[r.Kind]++
	}
	if kinds[tap.KindModel] != 2 || kinds[tap.KindTool] != 1 {
		t.Errorf("the inspector recorded %v; want 2 model calls and 1 tool call", kinds)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestOTelSubAgent: a sub-agent is an invoke_agent span of its own
// under its task call's execute_tool span, its model and tool calls
// under it, all in the prompt's trace.
func TestOTelSubAgent(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{taskCall("t1", "run it", "child: run a command")}},
			map[string]any{"text": "parent done"},
		}},
		childTurn("child:",
			map[string]any{"tool_calls": []any{map[string]any{"id": "c1", "name": "bash", "args": map[string]any{"command": "echo from-the-child"}}}},
			map[string]any{"text": "ran it"},
		),
	}})
	p := start(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL}, rpcArgs(t, "--script", s)...)
	p.send(`{"id":"p1","type":"prompt","message":"go"}`)
	p.response()
	p.untilDone()
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	spans := rcv.Spans()
	by := spansByName(spans)
	if len(by["execute_tool task"]) != 1 || len(by["execute_tool bash"]) != 1 || len(by["invoke_agent zot"]) != 2 {
		t.Fatalf("spans %v", names(spans))
	}
	task, bash := by["execute_tool task"][0], by["execute_tool bash"][0]
	var parent, child *tracepb.Span
	for _, sp := range by["invoke_agent zot"] {
		if string(sp.ParentSpanId) == string(task.SpanId) {
			child = sp
		} else {
			parent = sp
		}
	}
	if child == nil || parent == nil || string(task.ParentSpanId) != string(parent.SpanId) {
		t.Fatalf("want the child's invoke_agent under the task call, under the prompt's invoke_agent")
	}
	if string(bash.ParentSpanId) != string(child.SpanId) || string(bash.TraceId) != string(parent.TraceId) {
		t.Errorf("the child's bash call is not under the child's invoke_agent in the prompt's trace")
	}
	chats := map[string]int{}
	for _, sp := range spans {
		if strings.HasPrefix(sp.Name, "chat ") {
			switch string(sp.ParentSpanId) {
			case string(child.SpanId):
				chats["child"]++
			case string(parent.SpanId):
				chats["parent"]++
			}
		}
	}
	if chats["child"] != 2 || chats["parent"] != 2 {
		t.Errorf("model calls under each invoke_agent: %v, want 2 and 2", chats)
	}
}
