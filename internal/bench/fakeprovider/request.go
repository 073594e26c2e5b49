package fakeprovider

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// anthropicRequest is the part of a Messages API request the fake provider
// reads.
type anthropicRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// anthropicBlock is one content block of a Messages API message.
type anthropicBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Content json.RawMessage `json:"content"` // tool_result: a string or blocks
}

// openaiRequest is the part of a Chat Completions request the fake provider
// reads.
type openaiRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// openaiPart is one content part of a Chat Completions message.
type openaiPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

var errNoMessages = errors.New("request has no messages")

// parseAnthropic reads the turn a Messages API request body asks about.
func parseAnthropic(body []byte) (turn, error) {
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return turn{}, fmt.Errorf("decoding messages request: %w", err)
	}
	if len(req.Messages) == 0 {
		return turn{}, errNoMessages
	}
	var t turn
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "user" {
		blocks, _ := anthropicBlocks(last.Content)
		for _, b := range blocks {
			if b.Type == "tool_result" {
				t.toolResult = true
				text, err := anthropicText(b.Content)
				if err != nil {
					return turn{}, fmt.Errorf("decoding tool_result content: %w", err)
				}
				t.toolText += text
			}
		}
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		text, err := anthropicText(m.Content)
		if err != nil {
			return turn{}, fmt.Errorf("decoding message %d: %w", i, err)
		}
		if text != "" {
			t.userText = text
			break
		}
	}
	return t, nil
}

// anthropicBlocks decodes content given as an array of blocks; content
// given as a plain string yields no blocks.
func anthropicBlocks(raw json.RawMessage) ([]anthropicBlock, error) {
	if !isArray(raw) {
		return nil, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, err
	}
	return blocks, nil
}

// anthropicText returns the text of content given as a string or as blocks.
func anthropicText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if !isArray(raw) {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	blocks, err := anthropicBlocks(raw)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, b := range blocks {
		if b.Type == "text" {
			sb.WriteString(b.Text)
		}
	}
	return sb.String(), nil
}

// parseOpenAI reads the turn a Chat Completions request body asks about.
func parseOpenAI(body []byte) (turn, error) {
	var req openaiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return turn{}, fmt.Errorf("decoding chat completions request: %w", err)
	}
	if len(req.Messages) == 0 {
		return turn{}, errNoMessages
	}
	var t turn
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "tool" {
		text, err := openaiText(last.Content)
		if err != nil {
			return turn{}, fmt.Errorf("decoding tool message: %w", err)
		}
		t.toolResult, t.toolText = true, text
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		text, err := openaiText(m.Content)
		if err != nil {
			return turn{}, fmt.Errorf("decoding message %d: %w", i, err)
		}
		if text != "" {
			t.userText = text
			break
		}
	}
	return t, nil
}

// openaiText returns the text of content given as a string, as parts, or
// as null.
func openaiText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if !isArray(raw) {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	var parts []openaiPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			sb.WriteString(p.Text)
		}
	}
	return sb.String(), nil
}

// isArray reports whether raw JSON is an array.
func isArray(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '['
	}
	return false
}
