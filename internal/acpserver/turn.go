package acpserver

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/sdk/wire"
)

// turn is one prompt (or compaction) of a session: who sent it, and what
// its events said about how it ended.
type turn struct {
	s    *acpSession
	from *conn         // the connection whose request started it
	done chan struct{} // closed once its last update was handed on

	// answered is closed once the answer to the request that started
	// the turn is queued (markAnswered, events.go).
	answered     chan struct{}
	answeredOnce sync.Once
	// Set by translate, on the session's worker; read after done.
	stop      wire.StopReason
	errCode   wire.ErrorCode
	errText   string
	messages  int64 // compaction: messages after it
	calls     map[string]*toolCall
	contextSz int64                 // the model's context window, for usage_update
	res       *wire.PromptResult    // the prompt's record, from its done
	children  map[string]*childView // what each task call shows of its sub-agent (child.go)
	// retry is the messageId of the chunks of a step's answer made again
	// after an attempt that showed part of its own; "" otherwise.
	retry string
}

// toolCall is what a turn remembers of a tool call between its tool_call
// and its result.
type toolCall struct {
	name    string
	path    string  // the file it acts on, when it names one
	oldText *string // write/edit: the file before the call (nil: it did not exist)
	diff    bool    // write/edit: show a diff with the result
}

// maxDiffBytes bounds the files a diff is shown for.
const maxDiffBytes = 1 << 20

// translate returns the ACP updates an engine event stands for. Text and
// thinking deltas are not among them: the sink queues them as text items.
func (t *turn) translate(ev wire.Event) []acp.SessionUpdate {
	switch e := ev.(type) {
	case *wire.TurnStartEvent:
		return t.turnStart(e)
	case *wire.ToolCallEvent:
		return t.toolCall(e)
	case *wire.ToolResultEvent:
		return t.toolResult(e)
	case *wire.ChildEvent:
		return t.childEvent(e) // child.go
	case *wire.ToolProgressEvent:
		// A running call's new output (bash's, as it comes): ACP's content
		// of an update replaces the call's, so the new text goes in
		// _meta.zot.output, to be appended; the result's content is the
		// whole output.
		return []acp.SessionUpdate{{ToolCallUpdate: &acp.ToolCallUpdate{
			ToolCallID: acp.ToolCallId(e.ID),
			Meta:       map[string]any{"zot": map[string]any{"output": e.Text}},
		}}}
	case *wire.UsageEvent:
		return []acp.SessionUpdate{{UsageUpdate: t.usage(e)}}
	case *wire.TurnEndEvent:
		if e.Stop != wire.StopToolUse {
			t.stop = e.Stop
			if e.Error != "" && t.errText == "" && e.Stop == wire.StopError {
				t.errText = e.Error
			}
		}
	case *wire.ErrorEvent:
		t.errCode, t.errText = e.Code, e.Message
	case *wire.DoneEvent:
		t.res = e.Result
	case *wire.CompactDoneEvent:
		if e.MessagesAfter != nil {
			t.messages = *e.MessagesAfter
		}
		return []acp.SessionUpdate{{AgentMessageChunk: compactDone(e)}}
	}
	return nil
}

// turnStart begins a step. A step whose model call is made again after
// an attempt that streamed part of its answer (a fleet's worker stopped
// mid-answer) is told with a note, an agent_message_chunk for display
// with the attempt in _meta.zot.attempt; the new attempt's chunks then
// carry a messageId of their own, so that a client shows the answer as
// a message apart from the part that was cut off.
func (t *turn) turnStart(e *wire.TurnStartEvent) []acp.SessionUpdate {
	if e.Attempt == nil {
		t.retry = ""
		return nil
	}
	t.retry = "zot-attempt-" + rand.Text()
	c := textChunk(fmt.Sprintf("\n\n[cut off: the model call stopped partway and is made again (attempt %d); the text above is not kept]\n\n", *e.Attempt))
	c.Meta = map[string]any{"zot": map[string]any{"action": "display", "attempt": *e.Attempt}}
	return []acp.SessionUpdate{{AgentMessageChunk: c}}
}

// retried is the update of a delta of a step's answer made again: a
// chunk with the attempt's messageId.
func (t *turn) retried(text string, thought bool) *acp.SessionUpdate {
	c := textChunk(text)
	c.MessageID = acp.MessageId(t.retry)
	if thought {
		return &acp.SessionUpdate{AgentThoughtChunk: c}
	}
	return &acp.SessionUpdate{AgentMessageChunk: c}
}

// compactDone is what zot rpc's compact_done says, as ACP shows it: a
// message of the agent with the summary that replaced the older
// messages, and the counts before and after in its _meta.zot.compactDone
// (messagesBefore, messagesAfter), for a client that shows them its own
// way.
func compactDone(e *wire.CompactDoneEvent) *acp.ContentChunk {
	counts := map[string]int64{}
	head := "Compacted the conversation"
	if e.MessagesBefore != nil && e.MessagesAfter != nil {
		head += fmt.Sprintf(" (%d messages → %d)", *e.MessagesBefore, *e.MessagesAfter)
	}
	if e.MessagesBefore != nil {
		counts["messagesBefore"] = *e.MessagesBefore
	}
	if e.MessagesAfter != nil {
		counts["messagesAfter"] = *e.MessagesAfter
	}
	text := head + "."
	if e.Summary != "" {
		text = head + ". Summary:\n\n" + e.Summary
	}
	c := textChunk(text)
	c.Meta = map[string]any{"zot": map[string]any{"compactDone": counts}}
	return c
}

// textChunk is a chunk of text content.
func textChunk(text string) *acp.ContentChunk {
	return &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: text}}}
}

// kindOf returns the ACP kind of tool name: zot's built-in tools have
// theirs, any other is "other" (a switch, not a map: a package-level map is built by an init
// that every start of zot runs (and maps in the code around it)).
func kindOf(name string) acp.ToolKind {
	switch name {
	case "read", "ls":
		return acp.ToolKindRead
	case "write", "edit":
		return acp.ToolKindEdit
	case "bash":
		return acp.ToolKindExecute
	case "grep", "find":
		return acp.ToolKindSearch
	}
	return acp.ToolKindOther
}

// callArgs are the arguments of the built-in tools this package reads.
type callArgs struct {
	Path        string `json:"path"`
	Command     string `json:"command"`
	Pattern     string `json:"pattern"`
	Description string `json:"description"` // task: the sub-agent's title
}

// describe returns a call's title and the absolute path it acts on, if any.
func (t *turn) describe(name string, args json.RawMessage) (string, string) {
	var a callArgs
	_ = json.Unmarshal(args, &a) // a call with odd arguments still gets a title
	path := ""
	if a.Path != "" {
		path = a.Path
		if !filepath.IsAbs(path) {
			path = filepath.Join(t.s.cwd, path)
		}
	}
	return callTitle(name, a), path
}

// callTitle is a call's title: the tool and its command, path or
// pattern (live and in a replayed history alike).
func callTitle(name string, a callArgs) string {
	switch {
	case name == "bash" && a.Command != "":
		cmd := a.Command
		if i := strings.IndexByte(cmd, '\n'); i >= 0 {
			cmd = cmd[:i] + " …"
		}
		if len(cmd) > 120 {
			cmd = cmd[:120] + "…"
		}
		return "bash: " + cmd
	case name == "task" && a.Description != "":
		return "task: " + a.Description
	case a.Path != "":
		return name + " " + a.Path
	case a.Pattern != "":
		return name + " " + a.Pattern
	}
	return name
}

// toolCall announces a call: pending, and in progress at once unless it
// waits for approval (the approval step then says in_progress).
func (t *turn) toolCall(e *wire.ToolCallEvent) []acp.SessionUpdate {
	title, path := t.describe(e.Name, e.Args)
	tc := &toolCall{name: e.Name, path: path}
	if (e.Name == "write" || e.Name == "edit") && path != "" {
		tc.diff = true
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Size() <= maxDiffBytes {
			if b, err := os.ReadFile(path); err == nil {
				old := string(b)
				tc.oldText = &old
			}
		} else if err == nil {
			tc.diff = false // not a file a diff can show
		}
	}
	if t.calls == nil {
		t.calls = map[string]*toolCall{}
	}
	t.calls[e.ID] = tc
	call := &acp.ToolCall{
		ToolCallID: acp.ToolCallId(e.ID),
		Title:      title,
		Kind:       kindOf(e.Name),
		Status:     acp.ToolCallStatusPending,
		RawInput:   e.Args,
	}
	if path != "" {
		call.Locations = []acp.ToolCallLocation{{Path: path}}
	}
	ups := []acp.SessionUpdate{{ToolCall: call}}
	if !t.s.needsApproval(e.Name) {
		ups = append(ups, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{
			ToolCallID: acp.ToolCallId(e.ID),
			Status:     acp.ToolCallStatusInProgress,
		}})
	}
	return ups
}

// toolResult ends a call: completed or failed, with its output as text
// and, for a write or edit that succeeded, the diff.
func (t *turn) toolResult(e *wire.ToolResultEvent) []acp.SessionUpdate {
	status := acp.ToolCallStatusCompleted
	if e.IsError {
		status = acp.ToolCallStatusFailed
	}
	var text strings.Builder
	for _, b := range e.Content {
		if tb, ok := b.(*wire.TextBlock); ok {
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(tb.Text)
		}
	}
	var content []acp.ToolCallContent
	if t.s != nil {
		content = t.s.terminalContent(e.ID)
	}
	if tc := t.calls[e.ID]; tc != nil && tc.diff && !e.IsError {
		if b, err := os.ReadFile(tc.path); err == nil && len(b) <= maxDiffBytes {
			content = append(content, acp.ToolCallContent{Diff: &acp.Diff{Path: tc.path, OldText: tc.oldText, NewText: string(b)}})
		}
	}
	if v := t.children[e.ID]; v != nil && len(v.lines) > 0 {
		// A task call: what its sub-agent did stays above its result.
		content = append(content, acp.ToolCallContent{Content: &acp.Content{Content: acp.ContentBlock{Text: &acp.TextContent{Text: strings.Join(v.lines, "\n")}}}})
		delete(t.children, e.ID)
	}
	if text.Len() > 0 {
		content = append(content, acp.ToolCallContent{Content: &acp.Content{Content: acp.ContentBlock{Text: &acp.TextContent{Text: text.String()}}}})
	}
	up := &acp.ToolCallUpdate{ToolCallID: acp.ToolCallId(e.ID), Status: status, Content: content}
	if tc := t.calls[e.ID]; tc != nil && tc.path != "" {
		up.Locations = []acp.ToolCallLocation{{Path: tc.path}}
	}
	delete(t.calls, e.ID)
	return []acp.SessionUpdate{{ToolCallUpdate: up}}
}

// usage is a usage event as usage_update: the tokens of the last model
// call (what the context holds now), the model's window, and the
// session's cumulative cost, left out when calls of a model without known
// prices make it unknown (ACP's cost has no way to say a total is only
// a part). Its _meta.zot.tokens are the session's tokens so far (ACP's
// usage has none), which the terminal's footer shows.
func (t *turn) usage(e *wire.UsageEvent) *acp.UsageUpdate {
	used := e.Input + e.CacheRead + e.CacheWrite + e.Output
	c := e.Cumulative
	u := &acp.UsageUpdate{Used: used, Size: t.contextSz, Meta: map[string]any{"zot": map[string]any{"tokens": map[string]int64{
		"input": c.Input, "output": c.Output, "cacheRead": c.CacheRead, "cacheWrite": c.CacheWrite,
	}}}}
	if e.Cumulative.CostUSD > 0 && (e.Cumulative.CostUnknown == nil || !*e.Cumulative.CostUnknown) {
		u.Cost = &acp.Cost{Amount: e.Cumulative.CostUSD, Currency: "USD"}
	}
	return u
}

// result is the turn's answer to session/prompt, once done is closed,
// with the prompt's record (zot rpc's done.result) in _meta.zot.result:
// ACP forbids fields of its own at the answer's root.
func (t *turn) result() (*acp.PromptResponse, error) {
	r, err := t.answer()
	if r != nil && t.res != nil {
		r.Meta = map[string]any{"zot": map[string]any{"result": t.res}}
	}
	return r, err
}

// answer is the turn's answer to session/prompt, without its record.
func (t *turn) answer() (*acp.PromptResponse, error) {
	switch {
	case t.stop == wire.StopAborted:
		return &acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	case t.errCode == wire.CodeMaxSteps, t.stop == wire.StopMaxCost && t.errCode == "":
		// ACP has no stop reason for a spent cost budget: the nearest is
		// the one for a turn's model calls running out.
		return &acp.PromptResponse{StopReason: acp.StopReasonMaxTurnRequests}, nil
	case t.errCode != "" || t.stop == wire.StopError:
		return nil, turnError(t.s.id, t.errCode, t.errText)
	case t.stop == wire.StopLength:
		return &acp.PromptResponse{StopReason: acp.StopReasonMaxTokens}, nil
	case t.stop == wire.StopRefusal:
		return &acp.PromptResponse{StopReason: acp.StopReasonRefusal}, nil
	}
	return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// turnError is the error answer of a turn that failed.
func turnError(sessionID string, code wire.ErrorCode, text string) error {
	if text == "" {
		text = "the turn failed"
	}
	return fromCode(code, sessionID, "", text)
}
