package acpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"zot.dev/zot/internal/acp"
)

// writeScript asks to write a.txt, then says it is done.
const writeScript = `{"turns":[{"steps":[
 {"text":"Writing.","tool_calls":[{"id":"w1","name":"write","args":{"path":"a.txt","content":"hello\n"}}],"usage":{"input":100,"output":10}},
 {"text":"Done.","usage":{"input":120,"output":5}}]}]}`

func TestInitializeNegotiatesAndGatesTheRest(t *testing.T) {
	ta := newTestAgent(t, "", writeScript, PermissionAsk)
	cl := ta.connect()
	err := cl.call(acp.MethodSessionNew, acp.NewSessionRequest{CWD: ta.dir, MCPServers: []acp.McpServer{}}, nil)
	if kind, code, _ := errKind(t, err); kind != "not_initialized" || code != 1005 {
		t.Fatalf("session/new before initialize: kind %s code %d; want not_initialized 1005", kind, code)
	}
	// A client asking for a version the agent does not speak gets the
	// agent's latest; the client decides.
	var res acp.InitializeResponse
	cl.must(acp.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 7}, &res)
	if res.ProtocolVersion != acp.ProtocolVersionLatest {
		t.Errorf("protocolVersion %d, want %d", res.ProtocolVersion, acp.ProtocolVersionLatest)
	}
	// A date string, as some clients sent, is answered the same way.
	if err := cl.bad(acp.MethodInitialize, map[string]any{"protocolVersion": "2024-11-05"}); err != nil {
		t.Errorf("initialize with a date string: %v", err)
	}
	if err := cl.bad(acp.MethodInitialize, map[string]any{"protocolVersion": true}); err == nil {
		t.Error("initialize with protocolVersion true was accepted")
	}
	caps := res.AgentCapabilities
	if caps == nil || !caps.LoadSession || caps.PromptCapabilities == nil || !caps.PromptCapabilities.Image || !caps.PromptCapabilities.EmbeddedContext ||
		caps.SessionCapabilities == nil || caps.SessionCapabilities.List == nil || caps.SessionCapabilities.Resume == nil ||
		caps.SessionCapabilities.Close == nil || caps.SessionCapabilities.Delete == nil || caps.MCPCapabilities == nil || !caps.MCPCapabilities.HTTP {
		t.Errorf("capabilities %+v lack what the agent serves", caps)
	}
	if res.AgentInfo == nil || res.AgentInfo.Name != "zot" {
		t.Errorf("agentInfo %+v", res.AgentInfo)
	}
	err = cl.call(acp.MethodSessionNew, map[string]any{"cwd": "relative", "mcpServers": []any{}}, nil)
	if kind, _, _ := errKind(t, err); kind != "invalid_params" || !strings.Contains(err.Error(), "cwd") {
		t.Errorf("relative cwd: %v", err)
	}
	err = cl.bad(acp.MethodSessionNew, map[string]any{"cwd": ta.dir})
	if kind, _, _ := errKind(t, err); kind != "invalid_params" || !strings.Contains(err.Error(), "mcpServers") {
		t.Errorf("no mcpServers: %v", err)
	}
	err = cl.call(acp.MethodSessionPrompt, map[string]any{"sessionId": "nope", "prompt": []any{}}, nil)
	if kind, code, _ := errKind(t, err); kind != "unknown_session" || code != -32002 {
		t.Errorf("unknown session: kind %s code %d", kind, code)
	}
	err = cl.bad("_zot/nothing", nil)
	if kind, code, _ := errKind(t, err); kind != "unknown_method" || code != -32601 {
		t.Errorf("unknown method: kind %s code %d", kind, code)
	}
}

func TestPromptWithToolCallAndPermission(t *testing.T) {
	ta := newTestAgent(t, "", writeScript, PermissionAsk)
	cl := ta.connect()
	cl.init()
	work := t.TempDir()
	id := cl.newSession(work)
	stop, err := cl.prompt(id, "write a.txt")
	if err != nil || stop != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	if b, err := os.ReadFile(filepath.Join(work, "a.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("a.txt: %q %v", b, err)
	}
	if len(cl.asked) != 1 {
		t.Fatalf("asked %d times, want 1", len(cl.asked))
	}
	ask := cl.asked[0]
	if string(ask.ToolCall.ToolCallID) != "w1" || len(ask.Options) != 4 {
		t.Errorf("permission request %+v", ask)
	}
	// The order a client sees: the call pending, the permission request,
	// in progress, completed with the diff, then the answer's text.
	var statuses []string
	var diff *acp.Diff
	sawUsage := false
	for _, u := range cl.updatesOf(id) {
		switch {
		case u.ToolCall != nil:
			statuses = append(statuses, string(u.ToolCall.Status))
			if len(u.ToolCall.Locations) != 1 || u.ToolCall.Locations[0].Path != filepath.Join(work, "a.txt") || u.ToolCall.Kind != acp.ToolKindEdit {
				t.Errorf("tool_call %+v", u.ToolCall)
			}
		case u.ToolCallUpdate != nil:
			statuses = append(statuses, string(u.ToolCallUpdate.Status))
			for _, c := range u.ToolCallUpdate.Content {
				if c.Diff != nil {
					diff = c.Diff
				}
			}
		case u.UsageUpdate != nil:
			sawUsage = true
		}
	}
	if got := strings.Join(statuses, ","); got != "pending,in_progress,completed" {
		t.Errorf("tool call statuses %s", got)
	}
	if diff == nil || diff.OldText != nil || diff.NewText != "hello\n" {
		t.Errorf("diff %+v", diff)
	}
	if !sawUsage {
		t.Error("no usage_update")
	}
	if got := cl.text(id, "agent"); got != "Writing.Done." {
		t.Errorf("agent text %q", got)
	}
}

func TestPermissionPolicies(t *testing.T) {
	twoWrites := `{"turns":[{"steps":[
	 {"tool_calls":[{"id":"w1","name":"write","args":{"path":"a.txt","content":"1"}}]},
	 {"tool_calls":[{"id":"w2","name":"write","args":{"path":"b.txt","content":"2"}}]},
	 {"text":"ok"}]}]}`
	for _, tc := range []struct {
		perm, answer string
		asked        int
		written      []bool
		final        []string
	}{
		{PermissionAsk, "reject_always", 1, []bool{false, false}, []string{"failed", "failed"}},
		{PermissionAsk, "allow_always", 1, []bool{true, true}, []string{"completed", "completed"}},
		{PermissionAsk, "reject_once", 2, []bool{false, false}, []string{"failed", "failed"}},
		{PermissionDeny, "", 0, []bool{false, false}, []string{"failed", "failed"}},
		{PermissionAllow, "", 0, []bool{true, true}, []string{"completed", "completed"}},
	} {
		t.Run(tc.perm+"-"+tc.answer, func(t *testing.T) {
			ta := newTestAgent(t, "", twoWrites, tc.perm)
			cl := ta.connect()
			cl.permission = func(context.Context, acp.RequestPermissionRequest) string { return tc.answer }
			cl.init()
			work := t.TempDir()
			id := cl.newSession(work)
			if stop, err := cl.prompt(id, "go"); err != nil || stop != acp.StopReasonEndTurn {
				t.Fatalf("prompt: %v %v", stop, err)
			}
			if len(cl.asked) != tc.asked {
				t.Errorf("asked %d times, want %d", len(cl.asked), tc.asked)
			}
			for i, name := range []string{"a.txt", "b.txt"} {
				_, err := os.Stat(filepath.Join(work, name))
				if (err == nil) != tc.written[i] {
					t.Errorf("%s written: %v, want %v", name, err == nil, tc.written[i])
				}
			}
			var finals []string
			for _, u := range cl.updatesOf(id) {
				if u.ToolCallUpdate != nil && (u.ToolCallUpdate.Status == acp.ToolCallStatusCompleted || u.ToolCallUpdate.Status == acp.ToolCallStatusFailed) {
					finals = append(finals, string(u.ToolCallUpdate.Status))
				}
			}
			if fmt.Sprint(finals) != fmt.Sprint(tc.final) {
				t.Errorf("final statuses %v, want %v", finals, tc.final)
			}
		})
	}
}

// slowScript streams a long answer slowly, so a test can act mid-turn.
const slowScript = `{"turns":[{"steps":[{"text":"` + "one two three four five six seven eight nine ten eleven twelve" + `","chunk":4,"delay_ms":100}]}]}`

func TestCancelEndsThePromptCancelledAndBusyIsRefused(t *testing.T) {
	ta := newTestAgent(t, "", slowScript, PermissionAsk)
	cl := ta.connect()
	cl.init()
	id := cl.newSession(t.TempDir())
	type result struct {
		stop acp.StopReason
		err  error
	}
	done := make(chan result, 1)
	go func() {
		stop, err := cl.prompt(id, "talk")
		done <- result{stop, err}
	}()
	waitFor(t, "the first chunk", func() bool { return cl.text(id, "agent") != "" })
	// A second prompt on the busy session is refused, retryably.
	_, err := cl.prompt(id, "again")
	kind, code, retry := errKind(t, err)
	if kind != "busy" || code != 1001 || !retry {
		t.Errorf("second prompt: kind %s code %d retryable %v; want busy 1001 true", kind, code, retry)
	}
	var st acp.StatusResponse
	cl.must(acp.MethodZotStatus, nil, &st)
	if len(st.Sessions) != 1 || !st.Sessions[0].Busy || st.Sessions[0].Clients != 1 {
		t.Errorf("status %+v", st)
	}
	cl.notify(acp.MethodSessionCancel, acp.CancelNotification{SessionID: acp.SessionId(id)})
	r := <-done
	if r.err != nil || r.stop != acp.StopReasonCancelled {
		t.Fatalf("cancelled prompt answered %v %v; want cancelled", r.stop, r.err)
	}
}

func TestCancelResolvesAPendingPermission(t *testing.T) {
	ta := newTestAgent(t, "", writeScript, PermissionAsk)
	cl := ta.connect()
	asked := make(chan struct{})
	var once sync.Once
	cl.permission = func(ctx context.Context, _ acp.RequestPermissionRequest) string {
		once.Do(func() { close(asked) })
		<-ctx.Done() // the agent withdraws the request when the turn is cancelled
		return ""
	}
	cl.init()
	work := t.TempDir()
	id := cl.newSession(work)
	done := make(chan acp.StopReason, 1)
	go func() {
		stop, err := cl.prompt(id, "write")
		if err != nil {
			t.Errorf("prompt: %v", err)
		}
		done <- stop
	}()
	<-asked
	cl.notify(acp.MethodSessionCancel, acp.CancelNotification{SessionID: acp.SessionId(id)})
	if stop := <-done; stop != acp.StopReasonCancelled {
		t.Fatalf("stop %s, want cancelled", stop)
	}
	if _, err := os.Stat(filepath.Join(work, "a.txt")); err == nil {
		t.Error("the write ran although its permission was cancelled")
	}
}

func TestLoadAfterRestartReplaysHistory(t *testing.T) {
	dir := t.TempDir()
	work := t.TempDir()
	ta := newTestAgent(t, dir, writeScript, PermissionAllow)
	cl := ta.connect()
	cl.init()
	id := cl.newSession(work)
	if _, err := cl.prompt(id, "write a.txt please"); err != nil {
		t.Fatal(err)
	}
	ta.stop()

	ta2 := newTestAgent(t, dir, writeScript, PermissionAllow)
	cl2 := ta2.connect()
	cl2.init()
	var list acp.ListSessionsResponse
	cl2.must(acp.MethodSessionList, acp.ListSessionsRequest{}, &list)
	if len(list.Sessions) != 1 || string(list.Sessions[0].SessionID) != id || list.Sessions[0].CWD != work {
		t.Fatalf("list %+v", list)
	}
	other := "/nowhere"
	cl2.must(acp.MethodSessionList, acp.ListSessionsRequest{CWD: &other}, &list)
	if len(list.Sessions) != 0 {
		t.Errorf("cwd filter kept %+v", list.Sessions)
	}
	// A prompt before load: the session exists but is not open here.
	_, err := cl2.prompt(id, "x")
	if kind, _, _ := errKind(t, err); kind != "session_not_open" {
		t.Errorf("prompt before load: %v", err)
	}
	cl2.must(acp.MethodSessionLoad, acp.LoadSessionRequest{SessionID: acp.SessionId(id), CWD: work, MCPServers: []acp.McpServer{}}, nil)
	// Every replayed update arrived before the answer.
	if got := cl2.text(id, "user"); got != "write a.txt please" {
		t.Errorf("replayed user text %q", got)
	}
	if got := cl2.text(id, "agent"); got != "Writing.Done." {
		t.Errorf("replayed agent text %q", got)
	}
	calls := 0
	for _, u := range cl2.updatesOf(id) {
		if u.ToolCall != nil {
			calls++
		}
	}
	if calls != 1 {
		t.Errorf("replayed %d tool calls, want 1", calls)
	}
	// History, oldest first, the same in pages of two as in one.
	var all acp.SessionHistoryResponse
	cl2.must(acp.MethodZotSessionHistory, acp.SessionHistoryRequest{SessionID: id}, &all)
	if len(all.Messages) < 3 || all.NextCursor != nil {
		t.Fatalf("history: %d messages, cursor %v", len(all.Messages), all.NextCursor)
	}
	var first struct {
		Role string `json:"role"`
	}
	_ = json.Unmarshal(all.Messages[0], &first)
	if first.Role != "user" {
		t.Errorf("history starts with %s, want user", first.Role)
	}
	var paged []json.RawMessage
	limit := int64(2)
	var cursor *string
	for {
		var page acp.SessionHistoryResponse
		cl2.must(acp.MethodZotSessionHistory, acp.SessionHistoryRequest{SessionID: id, Cursor: cursor, Limit: &limit}, &page)
		paged = append(paged, page.Messages...)
		if page.NextCursor == nil {
			break
		}
		cursor = page.NextCursor
	}
	if fmt.Sprint(paged) != fmt.Sprint(all.Messages) {
		t.Errorf("paged history differs from the whole")
	}
	// The loaded session goes on.
	if stop, err := cl2.prompt(id, "more"); err != nil || stop != acp.StopReasonEndTurn {
		t.Errorf("prompt after load: %v %v", stop, err)
	}
	cl2.must(acp.MethodSessionDelete, acp.DeleteSessionRequest{SessionID: acp.SessionId(id)}, nil)
	cl2.must(acp.MethodSessionList, acp.ListSessionsRequest{}, &list)
	if len(list.Sessions) != 0 {
		t.Errorf("after delete: %+v", list.Sessions)
	}
}

func TestListPages(t *testing.T) {
	ta := newTestAgent(t, "", writeScript, PermissionAllow)
	cl := ta.connect()
	cl.init()
	work := t.TempDir()
	for range listPage + 3 {
		id := cl.newSession(work)
		cl.must(acp.MethodSessionClose, acp.CloseSessionRequest{SessionID: acp.SessionId(id)}, nil)
	}
	seen := map[string]bool{}
	var cursor *string
	pages := 0
	for {
		var list acp.ListSessionsResponse
		cl.must(acp.MethodSessionList, acp.ListSessionsRequest{Cursor: cursor}, &list)
		pages++
		for _, s := range list.Sessions {
			seen[string(s.SessionID)] = true
		}
		if list.NextCursor == nil {
			break
		}
		cursor = list.NextCursor
	}
	if pages != 2 || len(seen) != listPage+3 {
		t.Errorf("%d pages, %d sessions; want 2 and %d", pages, len(seen), listPage+3)
	}
	bad := "garbage"
	err := cl.call(acp.MethodSessionList, acp.ListSessionsRequest{Cursor: &bad}, nil)
	if kind, _, _ := errKind(t, err); kind != "invalid_params" {
		t.Errorf("bad cursor: %v", err)
	}
}

func TestTwoClientsOnOneSession(t *testing.T) {
	ta := newTestAgent(t, "", slowScript, PermissionAllow)
	a, b := ta.connect(), ta.connect()
	a.init()
	b.init()
	work := t.TempDir()
	id := a.newSession(work)
	b.must(acp.MethodSessionResume, acp.ResumeSessionRequest{SessionID: acp.SessionId(id), CWD: work}, nil)
	done := make(chan error, 1)
	go func() { _, err := a.prompt(id, "talk"); done <- err }()
	waitFor(t, "b to see the turn", func() bool { return b.text(id, "agent") != "" })
	if got := b.text(id, "user"); got != "talk" {
		t.Errorf("b saw the prompt as %q, want %q", got, "talk")
	}
	if got := a.text(id, "user"); got != "" {
		t.Errorf("a, which sent the prompt, got it echoed: %q", got)
	}
	_, err := b.prompt(id, "me too")
	if kind, _, _ := errKind(t, err); kind != "busy" {
		t.Errorf("b's prompt on a's turn: %v", err)
	}
	// a leaves mid-turn: the turn finishes into the file, b sees it end.
	a.c.Close()
	if err := <-done; err == nil {
		t.Log("a's prompt was answered before its connection closed")
	}
	want := "one two three four five six seven eight nine ten eleven twelve"
	waitFor(t, "the turn to finish", func() bool { return b.text(id, "agent") == want })
	waitFor(t, "the session to be idle", func() bool {
		var st acp.StatusResponse
		b.must(acp.MethodZotStatus, nil, &st)
		return len(st.Sessions) == 1 && !st.Sessions[0].Busy
	})
	var hist acp.SessionHistoryResponse
	b.must(acp.MethodZotSessionHistory, acp.SessionHistoryRequest{SessionID: id}, &hist)
	if len(hist.Messages) != 2 {
		t.Errorf("history after a left: %d messages, want 2", len(hist.Messages))
	}
}

func TestHundredSessionsStreamAtOnce(t *testing.T) {
	// Each answer is 60 numbered words in 4-byte chunks: a lost or
	// reordered frame changes the text.
	var words []string
	for i := range 60 {
		words = append(words, fmt.Sprintf("%03d", i))
	}
	answer := strings.Join(words, " ")
	script := `{"turns":[{"steps":[{"text":"` + answer + `","chunk":4}]}]}`
	ta := newTestAgent(t, "", script, PermissionAllow)
	cl := ta.connect()
	cl.init()
	work := t.TempDir()
	const n = 100
	ids := make([]string, n)
	for i := range ids {
		ids[i] = cl.newSession(work)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stop, err := cl.prompt(id, "count")
			if err == nil && stop != acp.StopReasonEndTurn {
				err = fmt.Errorf("stop %s", stop)
			}
			if err == nil {
				// Every update of the turn came before its answer.
				if got := cl.text(id, "agent"); got != answer {
					err = fmt.Errorf("session %s: text differs (%d bytes, want %d)", id, len(got), len(answer))
				}
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestModelsAndCompact(t *testing.T) {
	ta := newTestAgent(t, "", `{"turns":[{"steps":[{"text":"hi"}]}]}`, PermissionAllow)
	cl := ta.connect()
	cl.init()
	id := cl.newSession(t.TempDir())
	var models acp.ModelsListResponse
	sid := id
	cl.must(acp.MethodZotModelsList, acp.ModelsListRequest{SessionID: &sid}, &models)
	if models.Provider != "scripted" || models.CurrentModelID == "" || len(models.Models) == 0 {
		t.Errorf("models %+v", models)
	}
	for range 3 {
		if _, err := cl.prompt(id, "hello"); err != nil {
			t.Fatal(err)
		}
	}
	var res acp.SessionCompactResponse
	cl.must(acp.MethodZotSessionCompact, acp.SessionCompactRequest{SessionID: id}, &res)
	if res.MessageCount == 0 {
		t.Errorf("compact left %d messages", res.MessageCount)
	}
	var st acp.StatusResponse
	cl.must(acp.MethodStatus, nil, &st)
	if st.Version != "test" || st.ProtocolVersion != 1 {
		t.Errorf("status %+v", st)
	}
}

func TestCancelRequestOfAPromptCancelsItsTurn(t *testing.T) {
	ta := newTestAgent(t, "", slowScript, PermissionAllow)
	cl := ta.connect()
	cl.init()
	id := cl.newSession(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cl.c.Call(ctx, acp.MethodSessionPrompt, acp.PromptRequest{SessionID: acp.SessionId(id), Prompt: []acp.ContentBlock{{Text: &acp.TextContent{Text: "talk"}}}})
		errc <- err
	}()
	waitFor(t, "the first chunk", func() bool { return cl.text(id, "agent") != "" })
	cancel() // the client sends $/cancel_request for the prompt
	<-errc
	waitFor(t, "the turn to end", func() bool {
		var st acp.StatusResponse
		cl.must(acp.MethodZotStatus, nil, &st)
		return len(st.Sessions) == 1 && !st.Sessions[0].Busy
	})
	if got := cl.text(id, "agent"); strings.HasSuffix(got, "twelve") {
		t.Errorf("the turn ran to its end (%q) although its prompt was cancelled", got)
	}
}
