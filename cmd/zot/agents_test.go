package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"zot.dev/zot/internal/schemacheck"
	"zot.dev/zot/sdk/wire"
)

// taskCall is a script tool call of the task tool.
func taskCall(id, description, prompt string, extra ...string) map[string]any {
	args := map[string]any{"description": description, "prompt": prompt}
	for i := 0; i+1 < len(extra); i += 2 {
		args[extra[i]] = extra[i+1]
	}
	return map[string]any{"id": id, "name": "task", "args": args}
}

// childTurn is a script turn answering the prompts that contain match.
func childTurn(match string, steps ...map[string]any) map[string]any {
	return map[string]any{"match": match, "steps": steps}
}

// inner decodes the event a child_event carries, checking it against the
// schema's Event union.
func inner(t *testing.T, ce *wire.ChildEvent) wire.Event {
	t.Helper()
	if err := schemacheck.ValidateFrame(ce.Event); err != nil {
		t.Fatalf("a child's event breaks the schema: %v\n%s", err, ce.Event)
	}
	_, ev, err := wire.DecodeFrame(ce.Event)
	if err != nil || ev == nil {
		t.Fatalf("a child's event does not decode: %v\n%s", err, ce.Event)
	}
	return ev
}

// record decodes the task call's tool_result: the child's result record.
func record(t *testing.T, res *wire.ToolResultEvent) wire.PromptResult {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatalf("the task result has no content")
	}
	tb, ok := res.Content[0].(*wire.TextBlock)
	if !ok {
		t.Fatalf("the task result's first block is %T", res.Content[0])
	}
	var r wire.PromptResult
	if err := json.Unmarshal([]byte(tb.Text), &r); err != nil {
		t.Fatalf("the task result is not a result record: %v\n%s", err, tb.Text)
	}
	return r
}

// taskResult returns the tool_result of call id among evs.
func taskResult(t *testing.T, evs []wire.Event, id string) *wire.ToolResultEvent {
	t.Helper()
	for _, ev := range evs {
		if r, ok := ev.(*wire.ToolResultEvent); ok && r.ID == id {
			return r
		}
	}
	t.Fatalf("no tool_result for %s in %v", id, types(evs))
	return nil
}

// childEvents returns the child_events among evs.
func childEvents(evs []wire.Event) []*wire.ChildEvent {
	var out []*wire.ChildEvent
	for _, ev := range evs {
		if ce, ok := ev.(*wire.ChildEvent); ok {
			out = append(out, ce)
		}
	}
	return out
}

// oneChildScript: the parent delegates to one child that lists the
// folder and answers, then answers itself.
func oneChildScript(t *testing.T) string {
	return script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"text": "Delegating.", "tool_calls": []any{taskCall("t1", "list files", "child: list the files")}},
			map[string]any{"text": "The child is done."},
		}},
		childTurn("child:",
			map[string]any{"tool_calls": []any{map[string]any{"name": "ls", "args": map[string]any{}}}},
			map[string]any{"text": "two files"},
		),
	}})
}

func TestTaskChildEventsNestedAndOrdered(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--script", oneChildScript(t))...)
	p.send(`{"id":"h","type":"hello","child_events":true}`)
	r, _ := p.response()
	wantResponse(t, r, "hello", true, "")
	var hello wire.HelloResult
	if err := json.Unmarshal(r.Data, &hello); err != nil || hello.ChildEvents == nil || !*hello.ChildEvents {
		t.Fatalf("hello's answer does not say child events come: %s", r.Data)
	}
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	r, _ = p.response()
	wantResponse(t, r, "prompt", true, "")
	evs := p.untilDone()

	// The child's events come between the task call's tool_call and its
	// tool_result, each carrying its id, in the child's order, never a done.
	call, res := -1, -1
	for i, ev := range evs {
		switch e := ev.(type) {
		case *wire.ToolCallEvent:
			if e.ID == "t1" {
				call = i
			}
		case *wire.ToolResultEvent:
			if e.ID == "t1" {
				res = i
			}
		}
	}
	if call < 0 || res < 0 {
		t.Fatalf("no tool_call or tool_result of t1: %v", types(evs))
	}
	var got []string
	var lastSeq int64
	for i, ev := range evs {
		ce, ok := ev.(*wire.ChildEvent)
		if !ok {
			continue
		}
		if i < call || i > res {
			t.Errorf("child_event at %d outside the task call (%d..%d)", i, call, res)
		}
		if ce.ParentID != "t1" || len(ce.Path) != 0 || ce.PromptID.String() != `"1"` {
			t.Errorf("child_event: parent_id %q path %v prompt_id %v; want t1, none, 1", ce.ParentID, ce.Path, ce.PromptID)
		}
		in := inner(t, ce)
		if in.GetSeq() <= lastSeq {
			t.Errorf("the child's seq %d after %d", in.GetSeq(), lastSeq)
		}
		lastSeq = in.GetSeq()
		if !in.GetPromptID().IsZero() {
			t.Errorf("a child's event carries prompt_id %v", in.GetPromptID())
		}
		got = append(got, in.Type())
	}
	want := []string{"user_message", "turn_start", "assistant_start", "tool_use_start", "tool_use_end", "usage", "assistant_message", "tool_call", "turn_end", "tool_result",
		"turn_start", "assistant_start", "text_delta", "usage", "assistant_message", "turn_end"}
	if g := without(got, "tool_use_args"); !slices.Equal(g, want) {
		t.Errorf("the child's events:\n got %v\nwant %v", g, want)
	}
	rec := record(t, evs[res].(*wire.ToolResultEvent))
	if rec.Stop != wire.StopEndTurn || rec.Text != "two files" || rec.Turns != 2 || rec.ToolCalls != 1 || evs[res].(*wire.ToolResultEvent).IsError {
		t.Errorf("the task result: %+v", rec)
	}
	done := evs[len(evs)-1].(*wire.DoneEvent)
	if done.Result == nil || done.Result.Text != "The child is done." || done.Result.ToolCalls != 1 {
		t.Errorf("the parent's record: %+v", done.Result)
	}
}

func TestTaskPlainClientSeesOnlyTheTaskCall(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--script", oneChildScript(t))...)
	p.send(`{"id":"h","type":"hello"}`)
	r, _ := p.response()
	if strings.Contains(string(r.Data), "child_events") {
		t.Errorf("hello without child_events is answered with them: %s", r.Data)
	}
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	p.response()
	evs := p.untilDone()
	if ce := childEvents(evs); len(ce) != 0 {
		t.Fatalf("a client that did not ask got %d child_events", len(ce))
	}
	var progress strings.Builder
	for _, ev := range evs {
		if e, ok := ev.(*wire.ToolProgressEvent); ok && e.ID == "t1" {
			progress.WriteString(e.Text)
		}
	}
	if !strings.Contains(progress.String(), "list files: step 1: ls") {
		t.Errorf("the task call's progress does not summarise the child's steps: %q", progress.String())
	}
	want := []string{"user_message", "turn_start", "assistant_start", "text_delta", "tool_use_start", "tool_use_args", "tool_use_end", "usage", "assistant_message", "tool_call", "turn_end", "tool_progress", "tool_result",
		"turn_start", "assistant_start", "text_delta", "usage", "assistant_message", "turn_end", "done"}
	if g := without(types(evs)); !slices.Equal(g, want) {
		t.Errorf("events:\n got %v\nwant %v", g, want)
	}
	if rec := record(t, taskResult(t, evs, "t1")); rec.Text != "two files" {
		t.Errorf("the task result: %+v", rec)
	}
}

func TestTaskChildThatFails(t *testing.T) {
	path := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{taskCall("t1", "doomed", "child: fail")}},
			map[string]any{"text": "It failed."},
		}},
		childTurn("child:", map[string]any{"error": map[string]any{"status": 400, "message": "the child's request is bad"}}),
	}})
	p := start(t, nil, rpcArgs(t, "--script", path)...)
	p.send(`{"id":"h","type":"hello","child_events":true}`)
	p.response()
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	p.response()
	evs := p.untilDone()
	res := taskResult(t, evs, "t1")
	if !res.IsError {
		t.Errorf("a failed child's task result is not an error")
	}
	rec := record(t, res)
	if rec.Stop != wire.StopError {
		t.Errorf("the failed child's record: %+v", rec)
	}
	var text strings.Builder
	for _, b := range res.Content {
		if tb, ok := b.(*wire.TextBlock); ok {
			text.WriteString(tb.Text)
		}
	}
	if !strings.Contains(text.String(), "the child's request is bad") {
		t.Errorf("the task result does not say why: %q", text.String())
	}
	var sawErr bool
	for _, ce := range childEvents(evs) {
		if e, ok := inner(t, ce).(*wire.ErrorEvent); ok && strings.Contains(e.Message, "the child's request is bad") {
			sawErr = true
		}
	}
	if !sawErr {
		t.Errorf("the child's error did not reach the client as a child_event")
	}
	done := evs[len(evs)-1].(*wire.DoneEvent)
	if done.Result.Stop != wire.StopEndTurn || done.Result.Text != "It failed." {
		t.Errorf("the parent did not go on after its child failed: %+v", done.Result)
	}
}

func TestTaskAbortMidChild(t *testing.T) {
	path := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{taskCall("t1", "slow", "child: take your time")}},
			map[string]any{"text": "never"},
		}},
		// Ten minutes of words unless the abort reaches the child.
		childTurn("child:", map[string]any{"text": strings.Repeat("slow words ", 200), "chunk": 4, "delay_ms": 1000}),
	}})
	p := start(t, nil, rpcArgs(t, "--script", path)...)
	p.send(`{"id":"h","type":"hello","child_events":true}`)
	p.response()
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	p.response()
	// Wait until the child streams.
	for {
		ev := p.next().ev
		if ce, ok := ev.(*wire.ChildEvent); ok {
			if _, ok := inner(t, ce).(*wire.TextDeltaEvent); ok {
				break
			}
		}
	}
	p.send(`{"id":"a","type":"abort"}`)
	r, _ := p.response()
	wantResponse(t, r, "abort", true, "")
	evs := p.untilDone()
	var childEnd *wire.TurnEndEvent
	for _, ce := range childEvents(evs) {
		if e, ok := inner(t, ce).(*wire.TurnEndEvent); ok {
			childEnd = e
		}
	}
	if childEnd == nil || childEnd.Stop != wire.StopAborted {
		t.Errorf("the child did not end aborted: %+v", childEnd)
	}
	res := taskResult(t, evs, "t1")
	if !res.IsError || record(t, res).Stop != wire.StopAborted {
		t.Errorf("the task result of an aborted child: %+v", res)
	}
	var parentEnd *wire.TurnEndEvent
	for _, ev := range evs {
		if e, ok := ev.(*wire.TurnEndEvent); ok {
			parentEnd = e
		}
	}
	if parentEnd == nil || parentEnd.Stop != wire.StopAborted {
		t.Errorf("the parent's last turn_end: %+v", parentEnd)
	}
	if done := evs[len(evs)-1].(*wire.DoneEvent); done.Result.Stop != wire.StopAborted {
		t.Errorf("the parent's record: %+v", done.Result)
	}
}

// nestingScript: the parent starts a child, which tries to start a
// grandchild.
func nestingScript(t *testing.T) string {
	return script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{taskCall("t1", "outer", "child: go deeper")}},
			map[string]any{"text": "parent done"},
		}},
		childTurn("child:",
			map[string]any{"tool_calls": []any{taskCall("t2", "inner", "deep: answer")}},
			map[string]any{"text": "child done"},
		),
		childTurn("deep:", map[string]any{"text": "grandchild done"}),
	}})
}

func TestTaskNestingRefusedPastTheDepth(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--script", nestingScript(t))...)
	p.send(`{"id":"h","type":"hello","child_events":true}`)
	p.response()
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	p.response()
	evs := p.untilDone()
	var refused bool
	for _, ce := range childEvents(evs) {
		if len(ce.Path) != 0 {
			t.Errorf("a grandchild ran at depth 1: %s", ce.Event)
		}
		if r, ok := inner(t, ce).(*wire.ToolResultEvent); ok && r.ID == "t2" {
			text := r.Content[0].(*wire.TextBlock).Text
			refused = r.IsError && strings.Contains(text, `unknown tool "task"`)
		}
	}
	if !refused {
		t.Errorf("the child's task call was not refused")
	}
	if rec := record(t, taskResult(t, evs, "t1")); rec.Text != "child done" {
		t.Errorf("the child's record: %+v", rec)
	}
}

func TestTaskNestingAllowedToTheDepth(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--script", nestingScript(t), "--agent-depth", "2")...)
	p.send(`{"id":"h","type":"hello","child_events":true}`)
	p.response()
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	p.response()
	evs := p.untilDone()
	var grand []string
	var t2Result *wire.ToolResultEvent
	for _, ce := range childEvents(evs) {
		if ce.ParentID != "t1" {
			t.Errorf("a nested child_event's parent_id is %q, want the session's own task call t1", ce.ParentID)
		}
		in := inner(t, ce)
		if len(ce.Path) == 1 && ce.Path[0] == "t2" {
			grand = append(grand, in.Type())
		} else if r, ok := in.(*wire.ToolResultEvent); ok && r.ID == "t2" {
			t2Result = r
		}
	}
	if len(grand) == 0 || grand[0] != "user_message" || grand[len(grand)-1] != "turn_end" {
		t.Errorf("the grandchild's events (path [t2]): %v", grand)
	}
	if t2Result == nil || record(t, t2Result).Text != "grandchild done" {
		t.Errorf("the child's task result: %+v", t2Result)
	}
	if rec := record(t, taskResult(t, evs, "t1")); rec.Text != "child done" {
		t.Errorf("the child's record: %+v", rec)
	}
}

func TestTaskParallelChildrenBounded(t *testing.T) {
	calls := []any{}
	for _, id := range []string{"p1", "p2", "p3", "p4", "p5"} {
		calls = append(calls, taskCall(id, "part "+id, "child: part "+id))
	}
	path := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": calls},
			map[string]any{"text": "all parts done"},
		}},
		childTurn("child:", map[string]any{"text": "part done", "chunk": 3, "delay_ms": 150}),
	}})
	for _, tc := range []struct {
		flag string
		want int
	}{{"2", 2}, {"4", 4}} {
		t.Run("parallel "+tc.flag, func(t *testing.T) {
			p := start(t, nil, rpcArgs(t, "--script", path, "--agent-parallel", tc.flag)...)
			p.send(`{"id":"h","type":"hello","child_events":true}`)
			p.response()
			p.send(`{"id":"1","type":"prompt","message":"go"}`)
			p.response()
			evs := p.untilDone()
			// A child runs from its first event to its last: each is sent
			// while the child holds its slot. (Its task call's result comes
			// after the slot is given back, so another child may start
			// before it.)
			last := map[string]int{}
			for i, ev := range evs {
				if e, ok := ev.(*wire.ChildEvent); ok {
					last[e.ParentID] = i
				}
			}
			running, seen, most := map[string]bool{}, map[string]bool{}, 0
			for i, ev := range evs {
				switch e := ev.(type) {
				case *wire.ChildEvent:
					running[e.ParentID], seen[e.ParentID] = true, true
					most = max(most, len(running))
					if last[e.ParentID] == i {
						delete(running, e.ParentID)
					}
				case *wire.ToolResultEvent:
					if !seen[e.ID] {
						t.Errorf("the result of %s came before any event of its child", e.ID)
					}
					if rec := record(t, e); rec.Text != "part done" {
						t.Errorf("%s: %+v", e.ID, rec)
					}
				}
			}
			if most != tc.want {
				t.Errorf("at most %d children ran at once, want %d", most, tc.want)
			}
			done := evs[len(evs)-1].(*wire.DoneEvent)
			if done.Result.ToolCalls != 5 || done.Result.Text != "all parts done" {
				t.Errorf("the parent's record: %+v", done.Result)
			}
		})
	}
}

func TestTaskToolsLimitedToParentsAndProfiles(t *testing.T) {
	dir := t.TempDir()
	agents := filepath.Join(dir, ".zot", "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	// The profile names write, which the parent lacks, and leaves out
	// bash, which the parent has.
	profile := "---\nname: reader\ndescription: Reads files and reports.\ntools: read, write, ls\n---\nOnly read.\n"
	if err := os.WriteFile(filepath.Join(agents, "reader.md"), []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	path := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{taskCall("t1", "read", "child: try everything", "agent", "reader"), taskCall("t2", "general", "child: try everything")}},
			map[string]any{"text": "parent done"},
		}},
		childTurn("child:",
			map[string]any{"tool_calls": []any{
				map[string]any{"id": "w", "name": "write", "args": map[string]any{"path": "x.txt", "content": "x"}},
				map[string]any{"id": "b", "name": "bash", "args": map[string]any{"command": "echo hi"}},
				map[string]any{"id": "l", "name": "ls", "args": map[string]any{}},
			}},
			map[string]any{"text": "tried"},
		),
	}})
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", dir, "--script", path, "--tools", "read,ls,bash,task")
	p.send(`{"id":"h","type":"hello","child_events":true}`)
	p.response()
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	p.response()
	evs := p.untilDone()
	results := map[string]map[string]*wire.ToolResultEvent{"t1": {}, "t2": {}}
	for _, ce := range childEvents(evs) {
		if r, ok := inner(t, ce).(*wire.ToolResultEvent); ok {
			results[ce.ParentID][r.ID] = r
		}
		if ce.ParentID == "t1" && ce.Agent != "reader" || ce.ParentID == "t2" && ce.Agent != "" {
			t.Errorf("child_event of %s names agent %q", ce.ParentID, ce.Agent)
		}
	}
	text := func(r *wire.ToolResultEvent) string {
		if r == nil {
			return "(none)"
		}
		return r.Content[0].(*wire.TextBlock).Text
	}
	refused := func(r *wire.ToolResultEvent, tool string) bool {
		return r != nil && r.IsError && strings.Contains(text(r), "unknown tool \""+tool+"\"")
	}
	// The profile's child: neither write (not the parent's) nor bash (not
	// the profile's); ls runs.
	if r := results["t1"]; !refused(r["w"], "write") || !refused(r["b"], "bash") || r["l"] == nil || r["l"].IsError {
		t.Errorf("the reader's calls: write %q, bash %q, ls %q", text(r["w"]), text(r["b"]), text(r["l"]))
	}
	// The general child has the parent's tools: bash runs, write does not.
	if r := results["t2"]; !refused(r["w"], "write") || r["b"] == nil || r["b"].IsError {
		t.Errorf("the general child's calls: write %q, bash %q", text(r["w"]), text(r["b"]))
	}
	if _, err := os.Stat(filepath.Join(dir, "x.txt")); err == nil {
		t.Errorf("a child wrote a file with a tool its parent does not have")
	}
}

func TestTaskApprovalReachesTheParentsClient(t *testing.T) {
	path := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{taskCall("t1", "run it", "child: run a command")}},
			map[string]any{"text": "parent done"},
		}},
		childTurn("child:",
			map[string]any{"tool_calls": []any{map[string]any{"id": "c1", "name": "bash", "args": map[string]any{"command": "echo approved-run"}}}},
			map[string]any{"text": "ran it"},
		),
	}})
	// A plain client: no child events, yet it is asked and answers.
	p := start(t, nil, rpcArgs(t, "--script", path, "--approve")...)
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	p.response()
	evs := p.until("permission_request")
	req := evs[len(evs)-1].(*wire.PermissionRequestEvent)
	if req.ParentID != "t1" || req.CallID != "c1" || req.Tool != "bash" || req.PromptID.String() != `"1"` {
		t.Fatalf("the child's permission_request: %+v", req)
	}
	p.send(`{"id":"ans","type":"answer_permission","request_id":"` + req.RequestID + `","decision":"allow_once"}`)
	r, _ := p.response()
	wantResponse(t, r, "answer_permission", true, "")
	evs = p.untilDone()
	rec := record(t, taskResult(t, evs, "t1"))
	if rec.Text != "ran it" || rec.ToolCalls != 1 {
		t.Errorf("the child's record: %+v", rec)
	}
	for _, ev := range evs {
		if pr, ok := ev.(*wire.ToolProgressEvent); ok && strings.Contains(pr.Text, "approved-run") && pr.ID != "t1" {
			t.Errorf("the child's bash output reached a plain client as its own: %+v", pr)
		}
	}
}

func TestTaskReadOnlyModeHoldsForChildren(t *testing.T) {
	dir := t.TempDir()
	path := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{taskCall("t1", "write", "child: write a file")}},
			map[string]any{"text": "parent done"},
		}},
		childTurn("child:",
			map[string]any{"tool_calls": []any{map[string]any{"id": "w", "name": "write", "args": map[string]any{"path": "x.txt", "content": "x"}}}},
			map[string]any{"text": "tried"},
		),
	}})
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", dir, "--script", path, "--permission", "deny")
	p.send(`{"id":"h","type":"hello","child_events":true}`)
	p.response()
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	p.response()
	evs := p.untilDone()
	var blocked bool
	for _, ce := range childEvents(evs) {
		if r, ok := inner(t, ce).(*wire.ToolResultEvent); ok && r.ID == "w" {
			blocked = r.IsError && strings.Contains(r.Content[0].(*wire.TextBlock).Text, "read-only")
		}
	}
	if !blocked {
		t.Errorf("a child wrote in read-only mode")
	}
	if _, err := os.Stat(filepath.Join(dir, "x.txt")); err == nil {
		t.Errorf("x.txt was written")
	}
}

func TestTaskPrintModeShowsTheAnswerNotTheChild(t *testing.T) {
	cmd := exec.Command(zotBin, "-p", "go", "--json", "--provider", "scripted", "--script", oneChildScript(t), "--cwd", t.TempDir())
	cmd.Env = cleanEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zot -p: %v\n%s", err, out)
	}
	var sawResult bool
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		_, ev, err := wire.DecodeFrame([]byte(line))
		if err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		switch e := ev.(type) {
		case *wire.ChildEvent:
			t.Errorf("print mode wrote a child_event: %s", line)
		case *wire.ToolResultEvent:
			sawResult = e.ID == "t1" && record(t, e).Text == "two files"
		}
	}
	if !sawResult {
		t.Errorf("no task result in:\n%s", out)
	}
	cmd = exec.Command(zotBin, "-p", "go", "--provider", "scripted", "--script", oneChildScript(t), "--cwd", t.TempDir())
	cmd.Env = cleanEnv()
	if out, err = cmd.Output(); err != nil || !strings.Contains(string(out), "The child is done.") || strings.Contains(string(out), "two files") {
		t.Errorf("zot -p printed %q (%v); want the parent's answer alone", out, err)
	}
}

func TestTaskUndoRestoresWhatTheChildChanged(t *testing.T) {
	dir := t.TempDir()
	path := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{taskCall("t1", "write", "child: write a file")}},
			map[string]any{"text": "parent done"},
		}},
		childTurn("child:",
			map[string]any{"tool_calls": []any{map[string]any{"id": "w", "name": "write", "args": map[string]any{"path": "made.txt", "content": "by the child"}}}},
			map[string]any{"text": "wrote it"},
		),
	}})
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", dir, "--script", path)
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	p.response()
	p.untilDone()
	if b, err := os.ReadFile(filepath.Join(dir, "made.txt")); err != nil || string(b) != "by the child" {
		t.Fatalf("the child did not write: %q %v", b, err)
	}
	p.send(`{"id":"u","type":"undo"}`)
	r, _ := p.response()
	wantResponse(t, r, "undo", true, "")
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); !os.IsNotExist(err) {
		t.Errorf("undo left the file the child made: %v (%s)", err, r.Data)
	}
}

// TestTaskNestedWithOneSlot: with one sub-agent at a time, a sub-agent
// that starts its own still ends: each session has its own slots.
func TestTaskNestedWithOneSlot(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--script", nestingScript(t), "--agent-depth", "2", "--agent-parallel", "1")...)
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	p.response()
	evs := p.untilDone()
	if rec := record(t, taskResult(t, evs, "t1")); rec.Text != "child done" || rec.Stop != wire.StopEndTurn {
		t.Errorf("the child's record: %+v", rec)
	}
}

func TestTaskPerPromptBound(t *testing.T) {
	path := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{taskCall("a", "one", "child: one"), taskCall("b", "two", "child: two")}},
			map[string]any{"text": "parent done"},
		}},
		childTurn("child:", map[string]any{"text": "ok"}),
	}})
	p := start(t, nil, rpcArgs(t, "--script", path, "--max-agents", "1")...)
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	p.response()
	evs := p.untilDone()
	var ran, refused int
	for _, id := range []string{"a", "b"} {
		r := taskResult(t, evs, id)
		text := r.Content[0].(*wire.TextBlock).Text
		switch {
		case !r.IsError && record(t, r).Text == "ok":
			ran++
		case r.IsError && strings.Contains(text, "has started as many sub-agents as it may (1"):
			refused++
		default:
			t.Errorf("%s: %s", id, text)
		}
	}
	if ran != 1 || refused != 1 {
		t.Errorf("ran %d, refused %d; want 1 and 1", ran, refused)
	}
}

// TestTaskClaudeProfiles: a profile written for Claude Code in the
// project's .claude/agents (its tool names capitalised, a family name as
// its model) is offered, and .zot/agents wins a name over it.
func TestTaskClaudeProfiles(t *testing.T) {
	dir := t.TempDir()
	for path, text := range map[string]string{
		".claude/agents/finder.md":   "---\nname: finder\ndescription: Finds files.\ntools: Read, LS\nmodel: sonnet\ncolor: green\n---\nFind.\n",
		".claude/agents/shadowed.md": "---\nname: both\ndescription: Claude's.\ntools: LS\n---\n",
		".zot/agents/both.md":        "---\ndescription: zot's.\ntools: bash\n---\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{taskCall("f", "find", "child: look", "agent", "finder"), taskCall("b", "both", "child: look", "agent", "both")}},
			map[string]any{"text": "parent done"},
		}},
		childTurn("child:",
			map[string]any{"tool_calls": []any{
				map[string]any{"id": "l", "name": "ls", "args": map[string]any{}},
				map[string]any{"id": "x", "name": "bash", "args": map[string]any{"command": "echo hi"}},
			}},
			map[string]any{"text": "looked"},
		),
	}})
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", dir, "--script", path)
	p.send(`{"id":"h","type":"hello","child_events":true}`)
	p.response()
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	p.response()
	evs := p.untilDone()
	ran := map[string]bool{}
	for _, ce := range childEvents(evs) {
		if r, ok := inner(t, ce).(*wire.ToolResultEvent); ok && !r.IsError {
			ran[ce.ParentID+"/"+r.ID] = true
		}
	}
	// finder (Claude's): ls runs, bash is not its; both (zot's wins): bash
	// runs, ls is not its.
	if !ran["f/l"] || ran["f/x"] || !ran["b/x"] || ran["b/l"] {
		t.Errorf("the calls that ran: %v", ran)
	}
	if rec := record(t, taskResult(t, evs, "f")); rec.Text != "looked" {
		t.Errorf("finder's record: %+v", rec)
	}
}
