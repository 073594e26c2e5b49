package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/tap"
)

// inspectorURL waits for zot's stderr to name the inspector's page and
// returns its base URL and token.
func inspectorURL(t *testing.T, stderr fmt.Stringer) (base, token string) {
	t.Helper()
	re := regexp.MustCompile(`inspector at (http://[^/\s]+)/inspect\?token=([0-9a-f]+)`)
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], m[2]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no inspector address on stderr:\n%s", stderr.String())
	return "", ""
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func get(t *testing.T, url string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// zot rpc --inspect: the page's token becomes an HttpOnly SameSite=Strict
// cookie, other origins are refused, the frames of a prompt with a tool
// call stream live and are kept with their pairing, timing and schema
// verdicts, the model and tool calls are on the same timeline, and the
// hello's token is redacted in the live stream, the snapshot and an
// export.
func TestInspectRPC(t *testing.T) {
	const rpcToken = "rpc-secret-token-xyz"
	p := start(t, []string{"ZOTCORE_RPC_TOKEN=" + rpcToken}, rpcArgs(t, "--inspect", "127.0.0.1:0", "--inspect-ring", "500")...)
	base, token := inspectorURL(t, p.stderr)

	if r := get(t, base+"/inspect/api/snapshot", nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("snapshot without the token: %d, want 401", r.StatusCode)
	}
	if r := get(t, base+"/inspect?token=wrong", nil); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/inspect#invalid-token" || r.Header.Get("Set-Cookie") != "" {
		t.Fatalf("the page with a wrong token: %d to %q with cookie %q, want back to the page saying so, no cookie", r.StatusCode, r.Header.Get("Location"), r.Header.Get("Set-Cookie"))
	}
	r := get(t, base+"/inspect?token="+token, nil)
	setCookie := r.Header.Get("Set-Cookie")
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/inspect" {
		t.Fatalf("the page with the token: %d to %q, want a redirect to /inspect (the token off the URL)", r.StatusCode, r.Header.Get("Location"))
	}
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/inspect"} {
		if !strings.Contains(setCookie, want) {
			t.Errorf("cookie %q lacks %s", setCookie, want)
		}
	}
	if strings.Contains(setCookie, token) {
		t.Errorf("the cookie holds the token itself: %q", setCookie)
	}
	cookie := strings.SplitN(setCookie, ";", 2)[0]
	if r := get(t, base+"/inspect/api/snapshot", map[string]string{"Cookie": cookie, "Origin": "http://evil.example"}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("a request from another origin: %d, want 403", r.StatusCode)
	}
	page := get(t, base+"/inspect", map[string]string{"Cookie": cookie})
	body, _ := io.ReadAll(page.Body)
	if page.StatusCode != 200 || !strings.Contains(string(body), "/inspect/assets/app.js") || !strings.Contains(page.Header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Fatalf("the page: %d %q", page.StatusCode, body)
	}

	// The live stream, read while the prompt runs.
	live := get(t, base+"/inspect/api/live", map[string]string{"Cookie": cookie})
	if live.StatusCode != 200 || !strings.HasPrefix(live.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("live: %d %s", live.StatusCode, live.Header.Get("Content-Type"))
	}
	seen := make(chan *tap.Record, 1024)
	go func() {
		defer close(seen)
		sc := bufio.NewScanner(live.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.HasPrefix(data, "{") {
				rec := new(tap.Record)
				if json.Unmarshal([]byte(data), rec) == nil {
					seen <- rec
				}
			}
		}
	}()
	t.Cleanup(func() { _ = live.Body.Close() })

	p.send(`{"type":"hello","id":"h","token":"` + rpcToken + `"}`)
	if resp, _ := p.response(); !resp.Success {
		t.Fatalf("hello: %s", resp.Error)
	}
	p.send(`{"type":"prompt","id":"p1","message":"run a tool"}`)
	p.response()
	evs := p.untilDone()
	if !strings.Contains(strings.Join(types(evs), " "), "tool_result") {
		t.Fatalf("the scripted prompt ran no tool: %v", types(evs))
	}
	p.send(`{"type":"prompt","id":"bad"}`) // no message: breaks the schema
	if resp, _ := p.response(); resp.Success {
		t.Fatal("a prompt without a message was taken")
	}

	// Live: the done arrives on the stream.
	var streamed []*tap.Record
	timeout := time.After(hangGuard)
wait:
	for {
		select {
		case rec := <-seen:
			streamed = append(streamed, rec)
			if rec.Method == "done" {
				break wait
			}
		case <-timeout:
			t.Fatalf("the live stream brought no done; it brought %d records", len(streamed))
		}
	}
	if len(streamed) < 10 || streamed[0].Method != "hello" {
		t.Errorf("live: %d records, first %q; want the hello first and the prompt's frames", len(streamed), streamed[0].Method)
	}

	for _, r := range streamed {
		if strings.Contains(string(r.Frame), rpcToken) {
			t.Errorf("the live stream shows the hello's token: %s", r.Frame)
		}
	}

	// The snapshot: pairing, calls, verdicts; the token redacted.
	var snap tap.Snapshot
	sr := get(t, base+"/inspect/api/snapshot", map[string]string{"Authorization": "Bearer " + token})
	if err := json.NewDecoder(sr.Body).Decode(&snap); err != nil {
		t.Fatal(err)
	}
	bySeq := map[uint64]*tap.Record{}
	var prompt, answer, done, tool, bad *tap.Record
	models := 0
	for _, r := range snap.Records {
		if strings.Contains(string(r.Frame), rpcToken) {
			t.Errorf("the snapshot shows the hello's token: %s", r.Frame)
		}
		bySeq[r.Seq] = r
		switch {
		case r.Kind == "frame" && r.Method == "prompt" && r.Role == "request" && r.ID == `"p1"`:
			prompt = r
		case r.Kind == "frame" && r.Method == "prompt" && r.Role == "response" && r.ID == `"p1"`:
			answer = r
		case r.Kind == "frame" && r.Method == "done":
			done = r
		case r.Kind == "tool":
			tool = r
		case r.Kind == "model":
			models++
		case r.Kind == "frame" && r.ID == `"bad"` && r.Dir == "in":
			bad = r
		}
		if r.Kind == "frame" && r.Dir == "out" && r.Valid != "ok" {
			t.Errorf("frame #%d %s: schema %q (%s)", r.Seq, r.Method, r.Valid, r.Problem)
		}
	}
	if prompt == nil || answer == nil || done == nil || answer.Pair != prompt.Seq || done.Pair != prompt.Seq || done.Ms < answer.Ms {
		t.Fatalf("prompt %+v, its answer %+v, its done %+v: want both paired with the prompt, done later", prompt, answer, done)
	}
	if tool == nil || tool.Outcome != "ok" || tool.Method == "" || tool.Session != prompt.Session || models < 2 {
		t.Errorf("tool call %+v and %d model calls: want the tool ran, in the prompt's session, beside its model calls", tool, models)
	}
	if bad == nil || bad.Valid != "bad" || bad.Problem == "" {
		t.Errorf("the prompt without a message: %+v, want it marked against the schema", bad)
	}
	if len(snap.Connections) != 1 || snap.Connections[0].Door != "rpc" || snap.Limits.PerSession != 500 {
		t.Errorf("connections %+v, limits %+v", snap.Connections, snap.Limits)
	}

	// The export: a file, with the hello's token redacted.
	er := get(t, base+"/inspect/api/export?session="+prompt.Session, map[string]string{"Cookie": cookie})
	exported, _ := io.ReadAll(er.Body)
	if er.StatusCode != 200 || !strings.Contains(er.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("export: %d %s", er.StatusCode, er.Header.Get("Content-Disposition"))
	}
	if strings.Contains(string(exported), rpcToken) || !strings.Contains(string(exported), tap.Redacted) {
		t.Errorf("the export holds the hello's token, or redacted nothing:\n%.2000s", exported)
	}
	var ex tap.Export
	if err := json.Unmarshal(exported, &ex); err != nil || ex.Format != tap.ExportFormat || len(ex.Records) != len(snap.Records) {
		t.Errorf("export: %v, format %q, %d records of %d", err, ex.Format, len(ex.Records), len(snap.Records))
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// --inspect takes a loopback address only, and --inspect-ring needs it.
func TestInspectFlagsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"--inspect", "0.0.0.0:0"},
		{"--inspect", "192.0.2.1:80"},
		{"--inspect-ring", "10"},
		{"--inspect", "127.0.0.1:0", "--inspect-ring", "0"},
	} {
		cmd := exec.Command(zotBin, rpcArgs(t, args...)...)
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "inspect") {
			t.Errorf("zot rpc %v: %v\n%s; want exit 2 naming the flag", args, err, out)
		}
	}
}

// snapshotOf reads the inspector's snapshot with the bearer token.
func snapshotOf(t *testing.T, base, token string) tap.Snapshot {
	t.Helper()
	var snap tap.Snapshot
	r := get(t, base+"/inspect/api/snapshot", map[string]string{"Authorization": "Bearer " + token})
	defer r.Body.Close()
	if err := json.NewDecoder(r.Body).Decode(&snap); err != nil {
		t.Fatal(err)
	}
	return snap
}

// zot acp --inspect: ACP's messages over stdio, each paired with its
// answer and checked against ACP's schema, in the session they name; the
// session's model and tool calls beside them.
func TestInspectACP(t *testing.T) {
	home := doorDir(t)
	work := t.TempDir()
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": "Listing.", "tool_calls": []any{map[string]any{"id": "b1", "name": "bash", "args": map[string]any{"command": "echo hi"}}}},
		map[string]any{"text": "It said hi."},
	}}}})
	a := startACPProc(t, home, "--provider", "scripted", "--script", s, "--permission", "allow", "--inspect", "127.0.0.1:0")
	base, token := inspectorURL(t, a.stderr)
	p := a.peer
	if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")
	id := sessionID(t, f)
	if f, _ := p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"list"}]}`, id), ""); f.Error != nil {
		t.Fatalf("prompt: %s", f.raw)
	}
	snap := snapshotOf(t, base, token)
	var prompt, answer, newAnswer, tool *tap.Record
	chunks, models := 0, 0
	for _, r := range snap.Records {
		switch {
		case r.Method == "session/prompt" && r.Role == "request":
			prompt = r
		case r.Method == "session/prompt" && r.Role == "response":
			answer = r
		case r.Method == "session/new" && r.Role == "response":
			newAnswer = r
		case r.Method == "session/update" && r.Update == "agent_message_chunk":
			chunks++
		case r.Kind == "tool":
			tool = r
		case r.Kind == "model":
			models++
		}
		if r.Kind == "frame" && r.Valid == "bad" {
			t.Errorf("frame #%d %s %s breaks the schema: %s", r.Seq, r.Method, r.Role, r.Problem)
		}
	}
	if prompt == nil || answer == nil || answer.Pair != prompt.Seq || prompt.Session != id || answer.Session != id || prompt.Valid != "ok" || answer.Valid != "ok" {
		t.Fatalf("session/prompt %+v and its answer %+v: want them paired, in %s, following ACP's schema", prompt, answer, id)
	}
	if newAnswer == nil || newAnswer.Session != id {
		t.Errorf("session/new's answer %+v: want it in the session it made", newAnswer)
	}
	if chunks == 0 || tool == nil || tool.Method != "bash" || tool.Session != id || tool.Outcome != "ok" || models != 2 {
		t.Errorf("%d chunks, tool %+v, %d model calls: want chunks, bash run in %s, 2 model calls", chunks, tool, models, id)
	}
	if len(snap.Connections) != 1 || snap.Connections[0].Door != "acp" || snap.Connections[0].Transport != "stdio" {
		t.Errorf("connections %+v", snap.Connections)
	}
	a.stdin.Close()
	if err := endOf(t, a.cmd, a.stderr); err != nil {
		t.Errorf("zot acp at the end of stdin: %v\n%s", err, a.stderr)
	}
}

// zot daemon --inspect on its --listen listener: without a token file
// the page is there behind a token of its own, and a WebSocket client's
// messages are on it, paired; with one, the data answers the file's
// tokens (as /acp does) and refuses others, and a browser gets the page
// on a loopback listener of its own.
func TestInspectDaemonListener(t *testing.T) {
	dir := t.TempDir()
	work := t.TempDir()
	d, wsURL := startRemote(t, dir, "--listen", "ws://127.0.0.1:0", "--inspect", "--permission", "allow")
	base, token := inspectorURL(t, d.stderr)
	if !strings.HasPrefix(wsURL, "ws://"+strings.TrimPrefix(base, "http://")) {
		t.Fatalf("the page is at %s, the listener at %s: want the same listener", base, wsURL)
	}
	c, _, err := wsDial(t, wsURL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &wsPeer{t: t, c: c}
	if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work))
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(f.Result, &sess)
	if f, _ := p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}`, sess.SessionID)); f.Error != nil {
		t.Fatalf("prompt: %s", f.raw)
	}
	if r := get(t, base+"/inspect/api/snapshot", nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the snapshot without the token: %d", r.StatusCode)
	}
	snap := snapshotOf(t, base, token)
	var prompt, answer *tap.Record
	for _, r := range snap.Records {
		if r.Method == "session/prompt" && r.Role == "request" {
			prompt = r
		}
		if r.Method == "session/prompt" && r.Role == "response" {
			answer = r
		}
	}
	if prompt == nil || answer == nil || answer.Pair != prompt.Seq || prompt.Session != sess.SessionID {
		t.Fatalf("session/prompt %+v and its answer %+v over WebSocket", prompt, answer)
	}
	if len(snap.Connections) != 1 || snap.Connections[0].Door != "acp" || snap.Connections[0].Transport == "unix" {
		t.Errorf("connections %+v: want the WebSocket client", snap.Connections)
	}

	// With a token file.
	dir2 := t.TempDir()
	tokens := remoteTokens(t, dir2)
	d2, wsURL2 := startRemote(t, dir2, "--listen", "ws://127.0.0.1:0", "--token-file", tokens, "--inspect")
	api := "http://" + strings.TrimSuffix(strings.TrimPrefix(wsURL2, "ws://"), "/acp") + "/inspect/api/snapshot"
	if r := get(t, api, nil); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("the listener's data without a token: %d, want 401", r.StatusCode)
	}
	if r := get(t, api, map[string]string{"Authorization": "Bearer not-a-token"}); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("the listener's data with a wrong token: %d, want 401", r.StatusCode)
	}
	// The data is every principal's traffic: an admin token's only.
	if r := get(t, api, map[string]string{"Authorization": "Bearer " + remoteAlice}); r.StatusCode != http.StatusForbidden {
		t.Errorf("the listener's data with a token of the file that is not admin: %d, want 403", r.StatusCode)
	}
	if r := get(t, api, map[string]string{"Authorization": "Bearer " + remoteRoot}); r.StatusCode != http.StatusOK {
		t.Errorf("the listener's data with an admin token of the file: %d, want 200", r.StatusCode)
	}
	pageBase, pageToken := inspectorURL(t, d2.stderr)
	if strings.Contains(wsURL2, strings.TrimPrefix(pageBase, "http://")) {
		t.Errorf("the browser's page %s is on the listener %s: want a loopback listener of its own", pageBase, wsURL2)
	}
	if r := get(t, pageBase+"/inspect/api/snapshot", map[string]string{"Authorization": "Bearer " + pageToken}); r.StatusCode != http.StatusOK {
		t.Errorf("the page's own listener: %d", r.StatusCode)
	}
	_ = d
}

// inspectChat is an answer in OpenAI's Chat Completions stream format
// (ChatCompletionChunk of the openai npm package 7.57.0): two data
// events and the end marker.
const inspectChat = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":{"role":"assistant","content":"hello"},"finish_reason":null}]}` + "\n\n" +
	`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
	"data: [DONE]\n\n"

// The provider's HTTP exchange is on the timeline: method, host, URL,
// status, timing and the streamed events, in the prompt's session; the
// API key, which travels in a header, is nowhere in the export.
func TestInspectProviderHTTP(t *testing.T) {
	const key = "sk-test-inspect-0123456789abcdef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, inspectChat)
	}))
	defer srv.Close()
	p := start(t, nil, "rpc", "--provider", "openai", "--model", "gpt-4.1", "--api-key", key, "--base-url", srv.URL,
		"--cwd", t.TempDir(), "--inspect", "127.0.0.1:0")
	base, token := inspectorURL(t, p.stderr)
	p.send(`{"type":"prompt","id":"p1","message":"hi"}`)
	p.response()
	p.untilDone()
	snap := snapshotOf(t, base, token)
	var exch, model *tap.Record
	for _, r := range snap.Records {
		switch r.Kind {
		case "http":
			exch = r
		case "model":
			model = r
		}
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	if exch == nil || exch.Method != "POST "+host || exch.Status != 200 || exch.Events != 3 || !strings.HasPrefix(exch.URL, srv.URL) || exch.Outcome != "ok" {
		t.Fatalf("the HTTP exchange %+v: want POST to %s, 200, 3 events", exch, host)
	}
	if model == nil || model.Method != "openai gpt-4.1" || model.Session != exch.Session || model.Stop != "end_turn" {
		t.Errorf("the model call %+v beside the exchange in %q", model, exch.Session)
	}
	r := get(t, base+"/inspect/api/export", map[string]string{"Authorization": "Bearer " + token})
	data, _ := io.ReadAll(r.Body)
	if strings.Contains(string(data), key) {
		t.Errorf("the export holds the API key")
	}
}
