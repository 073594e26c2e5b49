package agent

import (
	"bytes"
	"encoding/json"
	"time"

	"zot.dev/zot/internal/images"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/sdk/wire"
)

// metaRawArgs prefixes the Meta key under which an assistant message keeps
// the argument text of a tool call whose arguments were not a JSON object
// (the call itself carries "{}" and an ArgsError). The key is metaRawArgs
// followed by the call id.
const metaRawArgs = "raw_args:"

// wireTimeLayout is RFC 3339 in UTC with milliseconds and a Z suffix.
const wireTimeLayout = "2006-01-02T15:04:05.000Z"

// wireTime formats t for the wire.
func wireTime(t time.Time) wire.Time { return t.UTC().Format(wireTimeLayout) }

// wireMessage converts a transcript message to its wire form.
func wireMessage(m *llm.Message) wire.Message {
	return wire.Message{Role: wire.Role(m.Role), Content: wireBlocks(m), Time: wireTime(m.Time)}
}

// wireBlocks converts the content of m: thinking is left out, images are
// reported by size, tool arguments as written (see wireArgs).
func wireBlocks(m *llm.Message) wire.ContentBlocks {
	out := make(wire.ContentBlocks, 0, len(m.Content))
	content := m.Content
	if m.Meta[MetaNote] == "true" && len(content) > 0 {
		content = content[1:] // zot's note to the model, not the user's words
	}
	for _, b := range content {
		if wb := wireBlock(m, b); wb != nil {
			out = append(out, wb)
		}
	}
	return out
}

// wireBlock converts one block of m; nil for a block the wire leaves out.
func wireBlock(m *llm.Message, b llm.Block) wire.ContentBlock {
	switch b := b.(type) {
	case *llm.TextBlock:
		return &wire.TextBlock{Text: b.Text}
	case *llm.ImageBlock:
		return wireImage(b)
	case *llm.ToolCallBlock:
		return &wire.ToolCallBlock{ID: b.ID, Name: b.Name, Args: wireArgs(m, b)}
	case *llm.ToolResultBlock:
		return &wire.ToolResultBlock{CallID: b.CallID, IsError: b.IsError, Content: resultBlocks(b.Content)}
	}
	return nil
}

// resultBlocks converts the content of a tool result.
func resultBlocks(content []llm.Block) wire.ContentBlocks {
	out := make(wire.ContentBlocks, 0, len(content))
	for _, b := range content {
		if wb := wireBlock(nil, b); wb != nil {
			out = append(out, wb)
		}
	}
	return out
}

// wireImage reports an image by its format and size. The format is sniffed
// from the bytes; the declared one is used when sniffing fails.
func wireImage(b *llm.ImageBlock) *wire.ImageBlock {
	mime := images.Sniff(b.Data)
	if mime == "" {
		mime = b.MIME
	}
	return &wire.ImageBlock{MIMEType: wire.ImageMIMEType(mime), Bytes: int64(len(b.Data))}
}

// wireArgs returns a call's arguments for the wire: the JSON object the
// model wrote, or, when it wrote something else, that text as a JSON
// string. m is the message holding the call (it keeps the text); nil
// means unknown, and the argument error is used instead.
func wireArgs(m *llm.Message, c *llm.ToolCallBlock) json.RawMessage {
	if c.ArgsError == "" {
		if len(c.Args) == 0 {
			return json.RawMessage("{}")
		}
		if bytes.ContainsAny(c.Args, "\r\n") {
			var buf bytes.Buffer
			if json.Compact(&buf, c.Args) == nil {
				return buf.Bytes()
			}
		}
		return c.Args
	}
	text := c.ArgsError
	if m != nil {
		if raw, ok := m.Meta[metaRawArgs+c.ID]; ok {
			text = raw
		}
	}
	s, _ := json.Marshal(text)
	return s
}

// wireUsage converts meter totals.
func wireUsage(t models.Totals) wire.Usage {
	return wire.Usage{
		Input:       int64(t.Usage.Input),
		Output:      int64(t.Usage.Output),
		CacheRead:   int64(t.Usage.CacheRead),
		CacheWrite:  int64(t.Usage.CacheWrite),
		CostUSD:     t.CostUSD,
		CostUnknown: unknownFlag(t.CostUnknown),
	}
}

// unknownFlag is the wire's cost_unknown: true, or absent.
func unknownFlag(unknown bool) *bool {
	if !unknown {
		return nil
	}
	return &unknown
}

// usageEvent is the usage event of one call.
func usageEvent(call, total models.Totals) *wire.UsageEvent {
	return &wire.UsageEvent{
		Input:       int64(call.Usage.Input),
		Output:      int64(call.Usage.Output),
		CacheRead:   int64(call.Usage.CacheRead),
		CacheWrite:  int64(call.Usage.CacheWrite),
		CostUSD:     call.CostUSD,
		CostUnknown: unknownFlag(call.CostUnknown),
		Cumulative:  wireUsage(total),
	}
}
