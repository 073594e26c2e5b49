package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// bodyRecorder is a loopback model API that keeps the raw body of every
// request and answers each with its vendor's streamed answer, read from
// the provider's own fixture (internal/provider/<dir>/testdata/text.sse,
// transcribed from the vendor's streaming reference) with its text
// replaced by answer when answer is not empty. The mock of the e2e tests
// (aimock 1.43.0, the newest published) keeps in its request journal a
// Chat Completions rendering of the Anthropic, Gemini and Responses
// requests, without their reasoning and structured-output fields, so the
// fields are read here from the bytes zot sent.
type bodyRecorder struct {
	mu     sync.Mutex
	bodies []map[string]any
	paths  []string
}

func newBodyRecorder(t *testing.T, dir, answer string) (*bodyRecorder, string) {
	t.Helper()
	stream, err := os.ReadFile(filepath.Join("..", "..", "internal", "provider", dir, "testdata", "text.sse"))
	if err != nil {
		t.Fatal(err)
	}
	if answer != "" {
		stream = withAnswer(t, stream, answer)
	}
	r := &bodyRecorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("%s: a body that is not a JSON object: %.200s", req.URL.Path, raw)
		}
		r.mu.Lock()
		r.bodies = append(r.bodies, body)
		r.paths = append(r.paths, req.URL.Path)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(stream)
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL
}

// requests returns the bodies received so far.
func (r *bodyRecorder) requests() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.bodies...)
}

// withAnswer replaces the text of a text.sse fixture ("Hello" then
// " there!" or ", world!", and the whole "Hello there!" where the stream
// repeats it) with answer, split in two deltas where the fixture has two.
func withAnswer(t *testing.T, stream []byte, answer string) []byte {
	t.Helper()
	quote := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	half := len(answer) / 2
	s := strings.NewReplacer(
		`"Hello there!"`, quote(answer),
		`"Hello"`, quote(answer[:half]),
		`" there!"`, quote(answer[half:]),
		`", world!"`, quote(answer[half:]),
	).Replace(string(stream))
	if !strings.Contains(s, quote(answer[:half])) {
		t.Fatal("the fixture's text was not found")
	}
	return []byte(s)
}

// member returns the member of body at path (names joined by dots), nil
// when absent.
func member(body map[string]any, path string) any {
	var v any = body
	for _, name := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[name]
	}
	return v
}

// providerCase is one provider family with a model, the fixture folder of
// its provider, and the members of its request that carry reasoning.
type providerCase struct {
	name, provider, model, dir string
	// fields are the request members set by the reasoning level, and
	// what a prompt's "low" and the session's "high" set them to.
	fields    []string
	low, high []any
}

// The request members each vendor documents for a reasoning level:
//   - Anthropic: a model that thinks adaptively takes output_config.effort
//     (platform.claude.com/docs/en/build-with-claude/effort), an older
//     one thinking {type:"enabled", budget_tokens}
//     (platform.claude.com/docs/en/build-with-claude/extended-thinking);
//   - OpenAI Chat Completions: reasoning_effort
//     (platform.openai.com/docs/api-reference/chat/create);
//   - OpenAI Responses: reasoning.effort
//     (platform.openai.com/docs/api-reference/responses/create);
//   - Gemini: generationConfig.thinkingConfig, thinkingLevel from Gemini 3
//     on, thinkingBudget for 2.5 (ai.google.dev/gemini-api/docs/thinking).
var reasoningCases = []providerCase{
	{"anthropic adaptive", "anthropic", "claude-sonnet-5-5", "anthropic",
		[]string{"output_config.effort", "thinking.type"}, []any{"low", "adaptive"}, []any{"high", "adaptive"}},
	{"anthropic budget", "anthropic", "claude-sonnet-4-5", "anthropic",
		[]string{"thinking.type", "thinking.budget_tokens"}, []any{"enabled", 2048.0}, []any{"enabled", 24576.0}},
	{"openai chat completions", "openai", "gpt-5", "openai",
		[]string{"reasoning_effort"}, []any{"low"}, []any{"high"}},
	{"openai responses", "openai-responses", "gpt-5", "responses",
		[]string{"reasoning.effort"}, []any{"low"}, []any{"high"}},
	{"gemini level", "gemini", "gemini-3.8-flash", "gemini",
		[]string{"generationConfig.thinkingConfig.thinkingLevel"}, []any{"LOW"}, []any{"HIGH"}},
	{"gemini budget", "gemini", "gemini-2.5-flash", "gemini",
		[]string{"generationConfig.thinkingConfig.thinkingBudget"}, []any{2048.0}, []any{24576.0}},
}

// TestPromptReasoningReachesRequest: a prompt's own reasoning level goes
// into that prompt's model request in the member its vendor documents,
// for every provider family that reasons; the next prompt's request has
// the session's level (--reasoning high) again.
func TestPromptReasoningReachesRequest(t *testing.T) {
	for _, c := range reasoningCases {
		t.Run(c.name, func(t *testing.T) {
			rec, url := newBodyRecorder(t, c.dir, "")
			p := start(t, nil, "rpc", "--provider", c.provider, "--model", c.model, "--reasoning", "high", "--api-key", "test-key",
				"--base-url", url, "--cwd", t.TempDir(), "--no-tools", "--strict-mcp-config")
			for i, line := range []string{
				`{"id":"1","type":"prompt","message":"think a little","reasoning":"low"}`,
				`{"id":"2","type":"prompt","message":"think hard"}`,
			} {
				p.send(line)
				r, _ := p.response()
				wantResponse(t, r, "prompt", true, "")
				if d := doneOf(t, p.untilDone()); d.Result == nil || d.Result.Stop != wire.StopEndTurn {
					t.Fatalf("prompt %d: %+v", i+1, d.Result)
				}
			}
			bodies := rec.requests()
			if len(bodies) != 2 {
				t.Fatalf("%d requests, want 2", len(bodies))
			}
			for i, want := range [][]any{c.low, c.high} {
				for j, f := range c.fields {
					if got := member(bodies[i], f); fmt.Sprint(got) != fmt.Sprint(want[j]) {
						t.Errorf("request %d: %s = %v, want %v", i+1, f, got, want[j])
					}
				}
			}
		})
	}
}

// TestOutputSchemaReachesRequest: a prompt's output_schema goes into the
// request in the structured-output member its vendor documents, and the
// JSON answer comes back parsed on done's result, for each provider:
//   - Anthropic: output_config.format {type:"json_schema", schema}
//     (platform.claude.com/docs/en/build-with-claude/structured-outputs);
//   - OpenAI Chat Completions: response_format {type:"json_schema",
//     json_schema:{name, schema}} (platform.openai.com/docs/api-reference/chat/create);
//   - OpenAI Responses: text.format {type:"json_schema", name, schema}
//     (platform.openai.com/docs/api-reference/responses/create);
//   - Gemini: generationConfig.responseMimeType "application/json" and
//     responseJsonSchema (ai.google.dev/gemini-api/docs/structured-output).
func TestOutputSchemaReachesRequest(t *testing.T) {
	const schema = `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	for _, c := range []struct {
		name, provider, model, dir string
		fields                     map[string]string // member → its JSON, or "schema" for the schema itself
	}{
		{"anthropic", "anthropic", "claude-sonnet-5-5", "anthropic",
			map[string]string{"output_config.format.type": `"json_schema"`, "output_config.format.schema": schema}},
		{"openai chat completions", "openai", "gpt-4.1", "openai",
			map[string]string{"response_format.type": `"json_schema"`, "response_format.json_schema.schema": schema}},
		{"openai responses", "openai-responses", "gpt-5", "responses",
			map[string]string{"text.format.type": `"json_schema"`, "text.format.schema": schema}},
		{"gemini", "gemini", "gemini-3.8-flash", "gemini",
			map[string]string{"generationConfig.responseMimeType": `"application/json"`, "generationConfig.responseJsonSchema": schema}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec, url := newBodyRecorder(t, c.dir, `{"city":"Paris"}`)
			p := start(t, nil, "rpc", "--provider", c.provider, "--model", c.model, "--api-key", "test-key",
				"--base-url", url, "--cwd", t.TempDir(), "--no-tools", "--strict-mcp-config")
			p.send(`{"id":"1","type":"prompt","message":"capital of France?","output_schema":` + schema + `}`)
			r, _ := p.response()
			wantResponse(t, r, "prompt", true, "")
			d := doneOf(t, p.untilDone())
			if d.Result == nil || string(d.Result.Structured) != `{"city":"Paris"}` || d.Result.Turns != 1 {
				t.Fatalf("result %+v", d.Result)
			}
			bodies := rec.requests()
			if len(bodies) != 1 {
				t.Fatalf("%d requests, want 1", len(bodies))
			}
			for f, want := range c.fields {
				got, _ := json.Marshal(member(bodies[0], f))
				var w any
				json.Unmarshal([]byte(want), &w)
				wantJSON, _ := json.Marshal(w)
				if string(got) != string(wantJSON) {
					t.Errorf("%s = %s, want %s", f, got, wantJSON)
				}
			}
		})
	}
}

// TestACPPromptReasoningReachesRequest: over zot acp, a session/prompt's
// own reasoning level (_meta.zot.reasoning) reaches that prompt's model
// request in each vendor's member, and the next prompt's has the session's
// (--reasoning high) again; one family of each request shape.
func TestACPPromptReasoningReachesRequest(t *testing.T) {
	for _, c := range []providerCase{reasoningCases[0], reasoningCases[2], reasoningCases[3], reasoningCases[4]} {
		t.Run(c.name, func(t *testing.T) {
			rec, url := newBodyRecorder(t, c.dir, "")
			a := startACPProc(t, doorDir(t), "--provider", c.provider, "--model", c.model, "--reasoning", "high", "--api-key", "test-key",
				"--base-url", url, "--no-tools")
			p := a.peer
			if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
				t.Fatalf("initialize: %s", f.raw)
			}
			id := sessionID(t, first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir()), "")))
			for i, meta := range []string{`,"_meta":{"zot":{"reasoning":"low"}}`, ""} {
				f, _ := p.call(fmt.Sprint(3+i), "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"think"}]%s}`, id, meta), "")
				if f.Error != nil || !strings.Contains(string(f.Result), `"stopReason":"end_turn"`) {
					t.Fatalf("prompt %d: %s", i+1, f.raw)
				}
			}
			bodies := rec.requests()
			if len(bodies) != 2 {
				t.Fatalf("%d requests, want 2", len(bodies))
			}
			for i, want := range [][]any{c.low, c.high} {
				for j, f := range c.fields {
					if got := member(bodies[i], f); fmt.Sprint(got) != fmt.Sprint(want[j]) {
						t.Errorf("request %d: %s = %v, want %v", i+1, f, got, want[j])
					}
				}
			}
		})
	}
}
