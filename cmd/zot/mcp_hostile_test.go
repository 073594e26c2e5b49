package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"zot.dev/zot/internal/mcphost"
	"zot.dev/zot/sdk/wire"
)

// The input schemas of a careless or hostile MCP server (a string type, a
// top-level oneOf, null properties, a required that is not a list) reach
// every provider's request as object schemas its API accepts: one such
// tool would otherwise fail every request of the session.
func TestMCPSchemasProvidersRejectAreReshaped(t *testing.T) {
	bin := goServer(t)
	cfg := mcpConfig(t, t.TempDir(), map[string]any{"t": map[string]any{"command": bin, "args": []string{"-bad-schemas"}}})
	for _, tc := range []struct {
		provider, suffix string
		// args pin the model: the default OpenAI model is served by
		// Responses, and this case checks the Chat Completions body.
		args    []string
		schemas func(body map[string]any) map[string]any
	}{
		{"anthropic", "", nil, func(body map[string]any) map[string]any {
			out := map[string]any{}
			for _, tl := range list(body["tools"]) {
				m := tl.(map[string]any)
				out[m["name"].(string)] = m["input_schema"]
			}
			return out
		}},
		{"openai", "/v1", []string{"--model", "gpt-4.1"}, func(body map[string]any) map[string]any {
			out := map[string]any{}
			for _, tl := range list(body["tools"]) {
				f := tl.(map[string]any)["function"].(map[string]any)
				out[f["name"].(string)] = f["parameters"]
			}
			return out
		}},
		{"openai-responses", "/v1", nil, func(body map[string]any) map[string]any {
			out := map[string]any{}
			for _, tl := range list(body["tools"]) {
				m := tl.(map[string]any)
				out[m["name"].(string)] = m["parameters"]
			}
			return out
		}},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			schemas := tc.schemas(providerRequest(t, cfg, tc.provider, tc.suffix, tc.args...))
			var seen int
			for name, s := range schemas {
				if !strings.HasPrefix(name, "mcp__t__bad_") {
					continue
				}
				seen++
				checkTopLevelObject(t, name, s)
			}
			if seen != 4 {
				t.Fatalf("%d of the 4 tools with bad schemas were offered: %v", seen, keys(schemas))
			}
			// A top-level oneOf's branches keep their properties.
			oneOf, _ := schemas["mcp__t__bad_oneof"].(map[string]any)
			props, _ := oneOf["properties"].(map[string]any)
			if props["a"] == nil || props["b"] == nil {
				t.Errorf("mcp__t__bad_oneof lost the properties of its branches: %v", schemas["mcp__t__bad_oneof"])
			}
		})
	}
}

// providerRequest runs zot -p with the MCP servers of cfg against a
// loopback stand-in for provider (its API root is the server's URL with
// suffix) and returns the body of the first request, decoded.
func providerRequest(t *testing.T, cfg, provider, suffix string, args ...string) map[string]any {
	t.Helper()
	var (
		mu     sync.Mutex
		bodies [][]byte
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"type":"invalid_request_error","message":"captured"}}`)
	}))
	defer srv.Close()
	cmd := exec.Command(zotBin, append([]string{"-p", "hi", "--provider", provider, "--api-key", "test-key", "--base-url", srv.URL + suffix,
		"--cwd", t.TempDir(), "--strict-mcp-config", "--mcp-config", cfg}, args...)...)
	cmd.Env = cleanEnv()
	out, _ := cmd.CombinedOutput()
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) == 0 {
		t.Fatalf("no request reached the provider:\n%s", out)
	}
	var body map[string]any
	if err := json.Unmarshal(bodies[0], &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	return body
}

// An MCP tool's description of a MiB reaches the provider cut to
// mcphost.MaxDescription bytes (at a character's boundary).
func TestMCPLongDescriptionIsCut(t *testing.T) {
	bin := goServer(t)
	cfg := mcpConfig(t, t.TempDir(), map[string]any{"t": map[string]any{"command": bin, "args": []string{"-wordy", "1048576"}}})
	body := providerRequest(t, cfg, "anthropic", "")
	for _, tl := range list(body["tools"]) {
		m := tl.(map[string]any)
		if m["name"] != "mcp__t__wordy" {
			continue
		}
		d, _ := m["description"].(string)
		if len(d) > mcphost.MaxDescription+20 || !utf8.ValidString(d) || !strings.HasPrefix(d, "éé") {
			t.Fatalf("description of %d bytes (valid UTF-8 %v)", len(d), utf8.ValidString(d))
		}
		return
	}
	t.Fatal("mcp__t__wordy was not offered")
}

// checkTopLevelObject fails unless s is what every provider accepts at the
// top of a tool's parameters.
func checkTopLevelObject(t *testing.T, name string, s any) {
	t.Helper()
	m, ok := s.(map[string]any)
	if !ok {
		t.Errorf("%s: schema %v is not an object", name, s)
		return
	}
	if m["type"] != "object" {
		t.Errorf("%s: top-level type %v, want object", name, m["type"])
	}
	if _, ok := m["properties"].(map[string]any); !ok {
		t.Errorf("%s: properties %v, want an object", name, m["properties"])
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf", "enum", "not"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s: top-level %s: %v", name, k, m)
		}
	}
	if r, ok := m["required"]; ok {
		for _, e := range list(r) {
			if _, ok := e.(string); !ok {
				t.Errorf("%s: required %v is not a list of names", name, r)
			}
		}
		if _, ok := r.([]any); !ok {
			t.Errorf("%s: required %v is not a list", name, r)
		}
	}
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A server's result of a MiB reaches the model (and the client's
// tool_result) cut to mcphost.MaxResultText bytes of text and a note
// saying how much there was, as the built-in tools bound theirs.
func TestMCPHugeResultIsCut(t *testing.T) {
	bin := goServer(t)
	cfg := mcpConfig(t, t.TempDir(), map[string]any{"t": map[string]any{"command": bin}})
	const size = 1 << 20
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"id": "b1", "name": "mcp__t__big", "args": map[string]any{"bytes": size}}}},
		map[string]any{"text": "read it"},
	}}}})
	p := start(t, nil, rpcArgs(t, "--script", s, "--strict-mcp-config", "--mcp-config", cfg)...)
	p.send(`{"id":"1","type":"prompt","message":"big"}`)
	r, _ := p.response()
	wantResponse(t, r, "prompt", true, "")
	evs := p.untilDone()
	var res *wire.ToolResultEvent
	for _, ev := range evs {
		if tr, ok := ev.(*wire.ToolResultEvent); ok && tr.ID == "b1" {
			res = tr
		}
	}
	if res == nil || res.IsError {
		t.Fatalf("tool_result: %+v in %v", res, types(evs))
	}
	var text strings.Builder
	for _, b := range res.Content {
		data, _ := json.Marshal(b)
		var tb struct{ Text string }
		_ = json.Unmarshal(data, &tb)
		text.WriteString(tb.Text)
	}
	got := text.String()
	if len(got) > mcphost.MaxResultText+300 || !utf8.ValidString(got) {
		t.Fatalf("the result's text is %d bytes (valid UTF-8 %v), want at most %d and a note", len(got), utf8.ValidString(got), mcphost.MaxResultText+300)
	}
	if !strings.Contains(got, fmt.Sprintf("was %d bytes", size)) {
		t.Fatalf("no note of the cut in the last %q", got[max(0, len(got)-300):])
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}

// Two servers whose tools end with one name: the one added later whose
// name sorts first takes the plain names and the other's become _2, in
// one change of the tool set, so nothing is reported left out.
func TestMCPCollidingNamesMoveWithoutConflicts(t *testing.T) {
	bin := goServer(t)
	p := start(t, nil, rpcArgs(t, "--strict-mcp-config")...)
	ready := func(name string) wire.MCPServerInfo {
		t.Helper()
		deadline := time.Now().Add(hangGuard)
		for {
			p.send(`{"id":"l","type":"mcp_list"}`)
			r, _ := p.response()
			for _, s := range mcpServersResult(t, r) {
				if s.Name == name && s.Status == "ready" {
					return s
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never ready: %s", name, r.Data)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	p.send(fmt.Sprintf(`{"id":"1","type":"mcp_add","servers":[{"name":"a.b","command":%q}]}`, bin))
	r, _ := p.response()
	wantResponse(t, r, "mcp_add", true, "")
	if got := ready("a.b").Tools; !slices.Contains(got, "mcp__a_b__echo") {
		t.Fatalf("a.b alone offers %v", got)
	}
	p.send(fmt.Sprintf(`{"id":"2","type":"mcp_add","servers":[{"name":"a b","command":%q}]}`, bin))
	r, _ = p.response()
	wantResponse(t, r, "mcp_add", true, "")
	if got := ready("a b").Tools; !slices.Contains(got, "mcp__a_b__echo") {
		t.Fatalf("a b offers %v", got)
	}
	if got := ready("a.b").Tools; !slices.Contains(got, "mcp__a_b__echo_2") {
		t.Fatalf("a.b beside a b offers %v", got)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	if strings.Contains(p.stderr.String(), "left out") {
		t.Fatalf("a tool was reported left out:\n%s", p.stderr.String())
	}
}

// A per-server timeout too long for a duration (a number meant as
// "never") is the longest one, neither refused as negative nor wrapped
// around to microseconds that fail every call.
func TestMCPHugeTimeoutIsTheLongest(t *testing.T) {
	bin := goServer(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `{"mcpServers":{"f":{"command":%q,"timeout":1e16}}}`, bin), 0o644); err != nil {
		t.Fatal(err)
	}
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{
			map[string]any{"id": "f1", "name": "mcp__f__slow", "args": map[string]any{"ms": 50}},
			map[string]any{"id": "w1", "name": "mcp__w__slow", "args": map[string]any{"ms": 50}},
		}},
		map[string]any{"text": "done"},
	}}}})
	p := start(t, nil, rpcArgs(t, "--script", s, "--strict-mcp-config", "--mcp-config", cfg)...)
	// 2^63 ns is 9223372036854.775807 s: this many ms wraps to 192 µs.
	p.send(fmt.Sprintf(`{"id":"1","type":"mcp_add","servers":[{"name":"w","command":%q,"timeout":9223372036854776}]}`, bin))
	r, _ := p.response()
	wantResponse(t, r, "mcp_add", true, "")
	p.send(`{"id":"2","type":"prompt","message":"slow"}`)
	r, _ = p.response()
	wantResponse(t, r, "prompt", true, "")
	evs := p.untilDone()
	for _, id := range []string{"f1", "w1"} {
		if got, isErr := resultOf(t, evs, id); isErr || !strings.Contains(got, "slow done") {
			t.Errorf("%s: %s (error %v)", id, got, isErr)
		}
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}

// An --mcp-config file with more after its object (a second object
// pasted below the first) is refused, as any other broken one, instead of
// starting the servers of the first object alone.
func TestMCPConfigWithTrailingDataIsRefused(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"a":{"command":"/bin/true"}}}
{"mcpServers":{"b":{"command":"/bin/true"}}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(zotBin, rpcArgs(t, "--strict-mcp-config", "--mcp-config", cfg)...)
	cmd.Env = cleanEnv()
	cmd.Stdin = strings.NewReader(`{"id":"1","type":"mcp_list"}` + "\n")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "more after its JSON object") {
		t.Fatalf("zot rpc: %v\n%s", err, out)
	}
}

// A ${VAR} in an mcpServers file whose variable is not set is named in a
// notice (and in the error when it leaves a server unusable) instead of
// silently becoming nothing: a token header that became "Bearer " is
// otherwise a mystery 401.
func TestMCPUnsetVariablesAreNamed(t *testing.T) {
	bin := goServer(t)
	dir := t.TempDir()
	cfg := mcpConfig(t, dir, map[string]any{"t": map[string]any{
		"command": bin,
		"args":    []string{"-name", "${ZOT_TEST_UNSET_DEFAULTED:-named}"},
		"env":     map[string]string{"TOKEN": "Bearer ${ZOT_TEST_UNSET_TOKEN}"},
	}})
	p := start(t, nil, rpcArgs(t, "--strict-mcp-config", "--mcp-config", cfg)...)
	p.send(`{"id":"1","type":"mcp_list"}`)
	// The notice comes when the server is added, before or after the
	// answer.
	_, evs := p.response()
	if !slices.ContainsFunc(evs, func(ev wire.Event) bool { return ev.Type() == "ext_notify" }) {
		evs = append(evs, p.until("ext_notify")...)
	}
	var said bool
	for _, ev := range evs {
		if n, ok := ev.(*wire.ExtNotifyEvent); ok && n.Source == "mcp:t" && n.Level == "warn" {
			said = strings.Contains(n.Message, "ZOT_TEST_UNSET_TOKEN") && !strings.Contains(n.Message, "ZOT_TEST_UNSET_DEFAULTED")
		}
	}
	if !said {
		t.Fatalf("no notice naming the unset variable alone: %v", evs)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}

	bad := mcpConfig(t, t.TempDir(), map[string]any{"u": map[string]any{"command": "${ZOT_TEST_UNSET_COMMAND}"}})
	cmd := exec.Command(zotBin, rpcArgs(t, "--strict-mcp-config", "--mcp-config", bad)...)
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "ZOT_TEST_UNSET_COMMAND") {
		t.Fatalf("a command that is an unset variable: %v\n%s", err, out)
	}
}

// A call whose server dies under it says the server went away and is
// restarted at the next prompt, whether the call saw the end of the
// server's output (EOF) or the closed connection.
func TestMCPCrashMidCallSaysTheServerWentAway(t *testing.T) {
	bin := goServer(t)
	cfg := mcpConfig(t, t.TempDir(), map[string]any{"t": map[string]any{"command": bin}})
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"id": "c1", "name": "mcp__t__crash"}}},
		map[string]any{"text": "it crashed"},
	}}}})
	p := start(t, nil, rpcArgs(t, "--script", s, "--strict-mcp-config", "--mcp-config", cfg)...)
	p.send(`{"id":"1","type":"prompt","message":"crash it"}`)
	r, _ := p.response()
	wantResponse(t, r, "prompt", true, "")
	evs := p.untilDone()
	if got, isErr := resultOf(t, evs, "c1"); !isErr || !strings.Contains(got, "went away during the call") || !strings.Contains(got, "restarted at the next prompt") {
		t.Fatalf("crash result = %s (error %v)", got, isErr)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}

// A server with a very long name: its tools keep names that tell them
// apart (the server part is cut first) and its stderr log is written
// under a name the file system takes.
func TestMCPLongServerName(t *testing.T) {
	bin := goServer(t)
	home := t.TempDir()
	name := strings.Repeat("n", 300)
	p := start(t, []string{"ZOT_HOME=" + home}, rpcArgs(t, "--strict-mcp-config")...)
	p.send(fmt.Sprintf(`{"id":"1","type":"mcp_add","servers":[{"name":%q,"command":%q}]}`, name, bin))
	r, _ := p.response()
	wantResponse(t, r, "mcp_add", true, "")
	var info wire.MCPServerInfo
	deadline := time.Now().Add(hangGuard)
	for info.Status != "ready" {
		if time.Now().After(deadline) {
			t.Fatalf("never ready: %+v", info)
		}
		time.Sleep(20 * time.Millisecond)
		p.send(`{"id":"l","type":"mcp_list"}`)
		r, _ = p.response()
		info = mcpServersResult(t, r)[0]
	}
	for _, tool := range []string{"echo", "add", "slow"} {
		want := "mcp__" + strings.Repeat("n", 64-7-len(tool)) + "__" + tool
		if !slices.Contains(info.Tools, want) {
			t.Errorf("no %s among %v", want, info.Tools)
		}
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(home, "logs", "mcp-"+strings.Repeat("n", 100)+".log")); err != nil {
		t.Errorf("the server's log: %v; stderr:\n%s", err, p.stderr.String())
	}
}

// A stdio server whose cwd does not exist fails to start with an error
// that names the directory, not the command.
func TestMCPMissingWorkingDirectoryIsNamed(t *testing.T) {
	bin := goServer(t)
	p := start(t, nil, rpcArgs(t, "--strict-mcp-config")...)
	p.send(fmt.Sprintf(`{"id":"1","type":"mcp_add","servers":[{"name":"t","command":%q,"cwd":"/nonexistent/zot-test-dir"}]}`, bin))
	r, _ := p.response()
	wantResponse(t, r, "mcp_add", true, "")
	deadline := time.Now().Add(hangGuard)
	for {
		p.send(`{"id":"l","type":"mcp_list"}`)
		r, _ = p.response()
		info := mcpServersResult(t, r)[0]
		if info.Status == "failed" {
			if !strings.Contains(info.Error, "/nonexistent/zot-test-dir") {
				t.Fatalf("error = %q", info.Error)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never failed: %+v", info)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}

// A server that prints a banner and log lines on stdout among its
// messages, as many do, works: the lines that are not JSON-RPC are
// skipped (and kept in its log) instead of failing its start or breaking
// its connection.
func TestMCPStdoutLinesThatAreNotJSONAreSkipped(t *testing.T) {
	bin := goServer(t)
	home := t.TempDir()
	cfg := mcpConfig(t, t.TempDir(), map[string]any{"t": map[string]any{"command": bin, "args": []string{"-chatty"}}})
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"id": "c1", "name": "mcp__t__chat"}}},
		map[string]any{"tool_calls": []any{map[string]any{"id": "c2", "name": "mcp__t__echo", "args": map[string]any{"text": "still here"}}}},
		map[string]any{"text": "done"},
	}}}})
	p := start(t, []string{"ZOT_HOME=" + home}, rpcArgs(t, "--script", s, "--strict-mcp-config", "--mcp-config", cfg)...)
	p.send(`{"id":"1","type":"prompt","message":"chat"}`)
	r, _ := p.response()
	wantResponse(t, r, "prompt", true, "")
	evs := p.untilDone()
	if got, isErr := resultOf(t, evs, "c1"); isErr || !strings.Contains(got, "chatted") {
		t.Fatalf("chat: %s (error %v)", got, isErr)
	}
	if got, isErr := resultOf(t, evs, "c2"); isErr || !strings.Contains(got, "echo: still here") {
		t.Fatalf("echo after the log line: %s (error %v)", got, isErr)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	log, err := os.ReadFile(filepath.Join(home, "logs", "mcp-t.log"))
	if err != nil || !strings.Contains(string(log), "mcpserver starting up") || !strings.Contains(string(log), "INFO handling chat") {
		t.Fatalf("the server's log (%v):\n%s", err, log)
	}
}

// mcpStatus polls mcp_list until server name has left "starting" and
// returns what it says.
func mcpStatus(t *testing.T, p *proc, name string) wire.MCPServerInfo {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		p.send(`{"id":"l","type":"mcp_list"}`)
		r, _ := p.response()
		for _, s := range mcpServersResult(t, r) {
			if s.Name == name && s.Status != "starting" {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still starting: %s", name, r.Data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A server that answers initialize with a broken line fails its start
// at once, with the line in the error and in its log, instead of waiting
// for the start's bound.
func TestMCPBrokenInitializeFailsAtOnce(t *testing.T) {
	bin := goServer(t)
	home := t.TempDir()
	p := start(t, []string{"ZOT_HOME=" + home}, rpcArgs(t, "--strict-mcp-config")...)
	p.send(fmt.Sprintf(`{"id":"1","type":"mcp_add","servers":[{"name":"b","command":%q,"args":["-mode","brokeninit"]}]}`, bin))
	r, _ := p.response()
	wantResponse(t, r, "mcp_add", true, "")
	started := time.Now()
	info := mcpStatus(t, p, "b")
	t.Logf("failed after %v: %s", time.Since(started).Round(time.Millisecond), info.Error)
	if info.Status != "failed" || !strings.Contains(info.Error, "not a JSON-RPC message") || !strings.Contains(info.Error, `"capabilities":{`) {
		t.Fatalf("status %s, error %q", info.Status, info.Error)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	log, err := os.ReadFile(filepath.Join(home, "logs", "mcp-b.log"))
	if err != nil || !strings.Contains(string(log), `"capabilities":{`) {
		t.Fatalf("the server's log (%v):\n%s", err, log)
	}
}

// A result over the 16 MiB zot reads in one message fails that call with
// an error that says so; the server is not broken by it: the next call,
// in the same prompt and in the next, works, and nothing crashed.
func TestMCPOversizeResultFailsThatCallOnly(t *testing.T) {
	bin := goServer(t)
	cfg := mcpConfig(t, t.TempDir(), map[string]any{"t": map[string]any{"command": bin}})
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{map[string]any{"id": "b1", "name": "mcp__t__big", "args": map[string]any{"bytes": mcphost.MaxMessage + 1<<20}}}},
			map[string]any{"tool_calls": []any{map[string]any{"id": "e1", "name": "mcp__t__echo", "args": map[string]any{"text": "after"}}}},
			map[string]any{"text": "done"},
		}},
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{map[string]any{"id": "e2", "name": "mcp__t__echo", "args": map[string]any{"text": "next prompt"}}}},
			map[string]any{"text": "done"},
		}},
	}})
	p := start(t, nil, rpcArgs(t, "--script", s, "--strict-mcp-config", "--mcp-config", cfg)...)
	var evs []wire.Event
	for i, msg := range []string{"big", "again"} {
		p.send(fmt.Sprintf(`{"id":"%d","type":"prompt","message":%q}`, i, msg))
		r, _ := p.response()
		wantResponse(t, r, "prompt", true, "")
		evs = append(evs, p.untilDone()...)
	}
	if got, isErr := resultOf(t, evs, "b1"); !isErr || !strings.Contains(got, "over the 16777216 bytes") {
		t.Fatalf("oversize result = %.300s (error %v)", got, isErr)
	}
	for id, want := range map[string]string{"e1": "echo: after", "e2": "echo: next prompt"} {
		if got, isErr := resultOf(t, evs, id); isErr || !strings.Contains(got, want) {
			t.Errorf("%s after the oversize result: %s (error %v)", id, got, isErr)
		}
	}
	for _, ev := range evs {
		if n, ok := ev.(*wire.ExtNotifyEvent); ok && n.Source == "mcp:t" {
			t.Errorf("notice: %s", n.Message)
		}
	}
	if info := mcpStatus(t, p, "t"); info.Status != "ready" || info.Restarts != 0 {
		t.Errorf("after the oversize result: %+v", info)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}

// A live server whose output breaks the protocol is closed by zot, and
// the notice and mcp_list say so, quoting the line, rather than how the
// process ended once zot had closed it.
func TestMCPBrokenLineAfterTheStartIsNamed(t *testing.T) {
	bin := goServer(t)
	cfg := mcpConfig(t, t.TempDir(), map[string]any{"t": map[string]any{"command": bin}})
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"id": "k1", "name": "mcp__t__broken"}}},
		map[string]any{"text": "done"},
	}}}})
	p := start(t, nil, rpcArgs(t, "--script", s, "--strict-mcp-config", "--mcp-config", cfg)...)
	p.send(`{"id":"1","type":"prompt","message":"break it"}`)
	r, _ := p.response()
	wantResponse(t, r, "prompt", true, "")
	evs := p.untilDone()
	var notice string
	for _, ev := range evs {
		if n, ok := ev.(*wire.ExtNotifyEvent); ok && n.Source == "mcp:t" && n.Level == "error" {
			notice = n.Message
		}
	}
	if notice == "" {
		evs = p.until("ext_notify")
		notice = evs[len(evs)-1].(*wire.ExtNotifyEvent).Message
	}
	const want = `zot closed the connection: line `
	if !strings.Contains(notice, want) || !strings.Contains(notice, `"params":{"level":`) || strings.Contains(notice, "exit status") {
		t.Errorf("notice %q, want %q and the line", notice, want)
	}
	if info := mcpStatus(t, p, "t"); info.Status != "crashed" || !strings.Contains(info.Error, want) {
		t.Errorf("mcp_list: %+v", info)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}
