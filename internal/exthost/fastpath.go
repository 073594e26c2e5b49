package exthost

import (
	"encoding/json"
	"fmt"

	"zot.dev/zot/internal/wirecodec"
	"zot.dev/zot/sdk/extwire"
)

// decodeFrame decodes one frame an extension wrote. tool_result, the
// answer on the path of every tool call, is read in one pass: the
// generated decoder reads a content list element by element, scanning
// each twice. Everything else goes to the generated decoder.
func decodeFrame(line []byte) (extwire.ExtensionFrame, error) {
	if typ, err := wirecodec.PeekType(line); err == nil && typ == extwire.TypeToolResultFrame {
		if f, err := decodeToolResult(line); err == nil {
			return f, nil
		}
		// Broken: the generated decoder says why, in its words.
	}
	return extwire.DecodeExtensionFrame(line)
}

// decodeToolResult reads a tool_result in one pass.
func decodeToolResult(line []byte) (*extwire.ToolResultFrame, error) {
	var raw struct {
		ID      string `json:"id"`
		Content []struct {
			Type     string  `json:"type"`
			Text     *string `json:"text"`
			MIMEType *string `json:"mime_type"`
			Data     *string `json:"data"`
		} `json:"content"`
		IsError *bool `json:"is_error"`
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, err
	}
	f := &extwire.ToolResultFrame{ID: raw.ID, IsError: raw.IsError}
	if raw.Content != nil {
		f.Content = make(extwire.ToolContents, 0, len(raw.Content))
	}
	for i, c := range raw.Content {
		switch {
		case c.Type == extwire.TypeTextContent && c.Text != nil:
			f.Content = append(f.Content, &extwire.TextContent{Text: *c.Text})
		case c.Type == extwire.TypeImageContent && c.MIMEType != nil && c.Data != nil:
			f.Content = append(f.Content, &extwire.ImageContent{MIMEType: *c.MIMEType, Data: *c.Data})
		default:
			return nil, fmt.Errorf("content %d is not a text or image block", i)
		}
	}
	return f, nil
}
