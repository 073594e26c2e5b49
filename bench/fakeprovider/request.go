package fakeprovider

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"zot.dev/zot/internal/jsonscan"
)

// message is the part of a request message the fake provider reads, in
// both formats.
type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// requestMessages returns the text of each element of a request's messages
// array. The body is scanned, not decoded: a long transcript's messages
// are skipped at memory speed and only those the answer depends on are
// decoded, so the fake provider's share of the machine stays small and
// does not grow with what a client sends besides the messages (a system
// prompt, tool schemas). The scan checks the body's structure up to the
// end of the messages array.
func requestMessages(body []byte) ([][]byte, error) {
	raw, err := jsonscan.Member(body, "messages")
	if err != nil {
		return nil, fmt.Errorf("reading messages: %w", err)
	}
	if raw == nil {
		return nil, errNoMessages
	}
	elems, err := jsonscan.Elements(raw)
	if err != nil {
		return nil, fmt.Errorf("reading messages: %w", err)
	}
	if len(elems) == 0 {
		return nil, errNoMessages
	}
	return elems, nil
}

// decodeMessage decodes message i of a request.
func decodeMessage(elems [][]byte, i int) (message, error) {
	var m message
	if err := json.Unmarshal(elems[i], &m); err != nil {
		return message{}, fmt.Errorf("decoding message %d: %w", i, err)
	}
	return m, nil
}

// anthropicBlock is one content block of a Messages API message.
type anthropicBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Content json.RawMessage `json:"content"` // tool_result: a string or blocks
}

// openaiPart is one content part of a Chat Completions message.
type openaiPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

var errNoMessages = errors.New("request has no messages")

// parseAnthropic reads the turn a Messages API request body asks about.
func parseAnthropic(body []byte) (turn, error) {
	elems, err := requestMessages(body)
	if err != nil {
		return turn{}, err
	}
	var t turn
	last, err := decodeMessage(elems, len(elems)-1)
	if err != nil {
		return turn{}, err
	}
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
	t.userText, err = lastUserText(elems, last, anthropicText)
	if t.toolResult && err == nil {
		// A prompt sent after an aborted tool call shares the user
		// message of the call's result: the prompt is what to answer.
		if text, _ := anthropicText(last.Content); text != "" {
			t.toolResult, t.toolText = false, ""
		}
	}
	return t, err
}

// lastUserText returns the text of the last user message that has text,
// decoding messages from the end only as far as it must; last is the
// last message, already decoded. textOf reads a message's content.
func lastUserText(elems [][]byte, last message, textOf func(json.RawMessage) (string, error)) (string, error) {
	m := last
	for i := len(elems) - 1; i >= 0; i-- {
		if i < len(elems)-1 {
			var err error
			if m, err = decodeMessage(elems, i); err != nil {
				return "", err
			}
		}
		if m.Role != "user" {
			continue
		}
		text, err := textOf(m.Content)
		if err != nil {
			return "", fmt.Errorf("decoding message %d: %w", i, err)
		}
		if text != "" {
			return text, nil
		}
	}
	return "", nil
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
	elems, err := requestMessages(body)
	if err != nil {
		return turn{}, err
	}
	var t turn
	last, err := decodeMessage(elems, len(elems)-1)
	if err != nil {
		return turn{}, err
	}
	if last.Role == "tool" {
		text, err := openaiText(last.Content)
		if err != nil {
			return turn{}, fmt.Errorf("decoding tool message: %w", err)
		}
		t.toolResult, t.toolText = true, text
	}
	t.userText, err = lastUserText(elems, last, openaiText)
	return t, err
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
