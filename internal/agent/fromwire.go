package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/sdk/wire"
)

// FromWire converts a transcript in its wire form (as [Agent.Messages]
// returns it) back to the agent's messages, for an embedder that keeps
// transcripts itself and hands one back. What the wire form does not carry
// cannot come back: thinking is gone, and an image, reported by its size
// only, becomes a text block saying which image was there. Tool arguments
// the model wrote as something other than a JSON object come back as the
// failed call they were. A time that is empty is left zero (SetTranscript
// gives it the current time); one that is not RFC 3339 is an error, as are
// an unknown role or block. The result is not validated: SetTranscript
// does that.
func FromWire(msgs []wire.Message) ([]llm.Message, error) {
	out := make([]llm.Message, 0, len(msgs))
	names := make(map[string]string) // tool call id → tool name, for the results
	for i, wm := range msgs {
		m, err := fromWireMessage(wm, names)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// fromWireMessage converts one message; names maps the ids of the tool
// calls seen so far to their tools and gains this message's calls.
func fromWireMessage(wm wire.Message, names map[string]string) (llm.Message, error) {
	m := llm.Message{Role: llm.Role(wm.Role)}
	switch m.Role {
	case llm.RoleUser, llm.RoleAssistant, llm.RoleTool:
	default:
		return m, fmt.Errorf("unknown role %q", wm.Role)
	}
	if wm.Time != "" {
		t, err := time.Parse(time.RFC3339Nano, wm.Time)
		if err != nil {
			return m, fmt.Errorf("time %q is not RFC 3339", wm.Time)
		}
		m.Time = t.UTC()
	}
	for j, wb := range wm.Content {
		b, raw, err := fromWireBlock(wb, names)
		if err != nil {
			return m, fmt.Errorf("block %d: %w", j, err)
		}
		if raw != "" {
			if m.Meta == nil {
				m.Meta = make(map[string]string)
			}
			m.Meta[metaRawArgs+b.(*llm.ToolCallBlock).ID] = raw
		}
		m.Content = append(m.Content, b)
	}
	return m, nil
}

// fromWireBlock converts one block. For a tool call whose arguments are
// not a JSON object it also returns the text the model wrote.
func fromWireBlock(wb wire.ContentBlock, names map[string]string) (llm.Block, string, error) {
	switch b := wb.(type) {
	case *wire.TextBlock:
		return &llm.TextBlock{Text: b.Text}, "", nil
	case *wire.ImageBlock:
		return imagePlaceholder(b), "", nil
	case *wire.ToolCallBlock:
		if b.ID == "" {
			return nil, "", errors.New("tool call without an id")
		}
		args, argsErr, raw, err := fromWireArgs(b.Args)
		if err != nil {
			return nil, "", fmt.Errorf("tool call %q: %w", b.ID, err)
		}
		names[b.ID] = b.Name
		return &llm.ToolCallBlock{ID: b.ID, Name: b.Name, Args: args, ArgsError: argsErr}, raw, nil
	case *wire.ToolResultBlock:
		content := make([]llm.Block, 0, len(b.Content))
		for k, inner := range b.Content {
			c, _, err := fromWireBlock(inner, names)
			if err != nil {
				return nil, "", fmt.Errorf("result of %q, block %d: %w", b.CallID, k, err)
			}
			switch c.(type) {
			case *llm.TextBlock, *llm.ImageBlock:
			default:
				return nil, "", fmt.Errorf("result of %q holds a %s block", b.CallID, inner.Type())
			}
			content = append(content, c)
		}
		return &llm.ToolResultBlock{CallID: b.CallID, Name: names[b.CallID], IsError: b.IsError, Content: content}, "", nil
	case nil:
		return nil, "", errors.New("nil block")
	}
	return nil, "", fmt.Errorf("unknown block type %q", wb.Type())
}

// fromWireArgs turns a call's wire arguments back into the agent's: a JSON
// object is checked as a provider's would be; a JSON string is the text
// the model wrote when it was not one, and comes back as that failed call
// (raw is then the text).
func fromWireArgs(a json.RawMessage) (args json.RawMessage, argsErr, raw string, err error) {
	a = bytes.TrimSpace(a)
	var text []byte
	switch {
	case len(a) == 0:
		return json.RawMessage("{}"), "", "", nil
	case a[0] == '{':
		text = a
	case a[0] == '"':
		var s string
		if err := json.Unmarshal(a, &s); err != nil {
			return nil, "", "", fmt.Errorf("arguments: %w", err)
		}
		text = []byte(s)
	default:
		return nil, "", "", errors.New("arguments are neither a JSON object nor a string")
	}
	args, argsErr = llm.ParseToolArgs(text)
	if argsErr != "" {
		raw = string(text)
	}
	return args, argsErr, raw, nil
}

// imagePlaceholder stands in for an image the wire form reports only by
// its size.
func imagePlaceholder(b *wire.ImageBlock) *llm.TextBlock {
	return &llm.TextBlock{Text: fmt.Sprintf("[%s image of %d bytes; its data was not kept]", b.MIMEType, b.Bytes)}
}
