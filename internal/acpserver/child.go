package acpserver

import (
	"encoding/json"
	"strings"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/sdk/wire"
)

// maxChildLines bounds the lines a task call's content keeps of its
// sub-agent: the newest stay.
const maxChildLines = 40

// childView is what a task call's content shows of its sub-agent: a line
// per tool call and result, the answer so far.
type childView struct {
	lines []string
}

// childEvent is a sub-agent's event as ACP shows it: an update of the
// task call that started it (zot rpc's child_event), whose content is a
// summary of the sub-agent's steps, and whose _meta.zot.childEvent holds
// the event itself (with parentId, path and agent) for a client that
// draws the sub-agent its own way. Deltas are left out: the messages they
// make come whole.
func (t *turn) childEvent(e *wire.ChildEvent) []acp.SessionUpdate {
	_, inner, err := wire.DecodeFrame(e.Event)
	if err != nil || inner == nil {
		return nil
	}
	var line string
	switch c := inner.(type) {
	case *wire.ToolCallEvent:
		title, _ := t.describe(c.Name, c.Args)
		line = "→ " + title
	case *wire.ToolResultEvent:
		if c.IsError {
			line = "  ✗ " + firstLine(c.Content)
		}
	case *wire.AssistantMessageEvent:
		var b strings.Builder
		for _, blk := range c.Content {
			if tb, ok := blk.(*wire.TextBlock); ok {
				b.WriteString(tb.Text)
			}
		}
		line = strings.TrimSpace(b.String())
	case *wire.ErrorEvent:
		line = "error: " + c.Message
	case *wire.TurnEndEvent:
		if c.Stop == wire.StopAborted {
			line = "aborted"
		}
	case *wire.TextDeltaEvent, *wire.ThinkingDeltaEvent, *wire.ToolUseArgsEvent:
		return nil
	}
	if t.children == nil {
		t.children = map[string]*childView{}
	}
	v := t.children[e.ParentID]
	if v == nil {
		v = &childView{}
		t.children[e.ParentID] = v
	}
	meta := map[string]any{"parentId": e.ParentID, "event": json.RawMessage(e.Event)}
	if len(e.Path) > 0 {
		meta["path"] = e.Path
	}
	if e.Agent != "" {
		meta["agent"] = e.Agent
	}
	up := &acp.ToolCallUpdate{ToolCallID: acp.ToolCallId(e.ParentID), Meta: map[string]any{"zot": map[string]any{"childEvent": meta}}}
	if line != "" {
		if len(e.Path) > 0 {
			line = strings.Repeat("  ", len(e.Path)) + line
		}
		v.lines = append(v.lines, line)
		if n := len(v.lines) - maxChildLines; n > 0 {
			v.lines = append(v.lines[:0], v.lines[n:]...)
		}
		up.Content = []acp.ToolCallContent{{Content: &acp.Content{Content: acp.ContentBlock{Text: &acp.TextContent{Text: strings.Join(v.lines, "\n")}}}}}
	}
	return []acp.SessionUpdate{{ToolCallUpdate: up}}
}

// firstLine is the first line of a result's text, shortened.
func firstLine(blocks wire.ContentBlocks) string {
	for _, b := range blocks {
		if tb, ok := b.(*wire.TextBlock); ok {
			s, _, _ := strings.Cut(tb.Text, "\n")
			if len(s) > 120 {
				s = s[:120] + "…"
			}
			return s
		}
	}
	return "(no text)"
}
