package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// anthropic is the Anthropic Messages API format.
type anthropic struct{}

type (
	anthropicMessage struct {
		Role    string           `json:"role"`
		Content []anthropicBlock `json:"content"`
	}
	anthropicBlock struct {
		Type      string         `json:"type"`
		Text      string         `json:"text,omitempty"`
		ID        string         `json:"id,omitempty"`
		Name      string         `json:"name,omitempty"`
		Input     rawOrEmptyArgs `json:"input,omitempty"`
		ToolUseID string         `json:"tool_use_id,omitempty"`
		Content   string         `json:"content,omitempty"`
		IsError   bool           `json:"is_error,omitempty"`
	}
	anthropicTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	anthropicRequest struct {
		Model     string          `json:"model"`
		MaxTokens int             `json:"max_tokens"`
		Stream    bool            `json:"stream"`
		Messages  []any           `json:"messages"`
		Tools     []anthropicTool `json:"tools"`
	}
	// anthropicEvent is the part of a stream event the relay reads.
	anthropicEvent struct {
		Type         string `json:"type"`
		Index        int    `json:"index"`
		ContentBlock *struct {
			Type string `json:"type"`
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"content_block"`
		Delta *struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			PartialJSON string `json:"partial_json"`
		} `json:"delta"`
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
)

func (anthropic) userMessage(text string) any {
	return anthropicMessage{Role: "user", Content: []anthropicBlock{{Type: "text", Text: text}}}
}

func (anthropic) newRequest(ctx context.Context, ep endpoint, msgs []any) (*http.Request, error) {
	body, err := json.Marshal(anthropicRequest{
		Model: ep.model, MaxTokens: 8192, Stream: true, Messages: msgs,
		Tools: []anthropicTool{
			{Name: "bash", Description: "Run a shell command", InputSchema: json.RawMessage(bashToolSchema)},
			{Name: "read", Description: "Read a text file", InputSchema: json.RawMessage(readToolSchema)},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	url := strings.TrimSuffix(ep.baseURL, "/") + "/v1/messages"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Api-Key", ep.apiKey)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	return req, nil
}

func (anthropic) readStream(body io.Reader, onText func(string) error) (reply, error) {
	var text strings.Builder
	var calls []call
	byIndex := map[int]int{} // content block index -> position in calls
	err := readSSE(body, func(data []byte) (bool, error) {
		var e anthropicEvent
		if err := json.Unmarshal(data, &e); err != nil {
			return false, fmt.Errorf("decoding event: %w", err)
		}
		switch e.Type {
		case "content_block_start":
			if cb := e.ContentBlock; cb != nil && cb.Type == "tool_use" {
				byIndex[e.Index] = len(calls)
				calls = append(calls, call{id: cb.ID, name: cb.Name})
			}
		case "content_block_delta":
			if e.Delta == nil {
				return false, fmt.Errorf("content_block_delta without delta")
			}
			switch e.Delta.Type {
			case "text_delta":
				text.WriteString(e.Delta.Text)
				return false, onText(e.Delta.Text)
			case "input_json_delta":
				i, ok := byIndex[e.Index]
				if !ok {
					return false, fmt.Errorf("input_json_delta for block %d, not a tool_use", e.Index)
				}
				calls[i].args = append(calls[i].args, e.Delta.PartialJSON...)
			}
		case "message_stop":
			return true, nil
		case "error":
			if e.Error != nil {
				return false, fmt.Errorf("provider error %s: %s", e.Error.Type, e.Error.Message)
			}
			return false, fmt.Errorf("provider error: %s", data)
		}
		return false, nil
	})
	return reply{text: text.String(), calls: calls}, err
}

func (anthropic) appendTurn(msgs []any, rep reply, outs []toolOutput) []any {
	var blocks []anthropicBlock
	if rep.text != "" {
		blocks = append(blocks, anthropicBlock{Type: "text", Text: rep.text})
	}
	for _, c := range rep.calls {
		blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: c.id, Name: c.name, Input: c.args})
	}
	results := make([]anthropicBlock, 0, len(outs))
	for _, o := range outs {
		results = append(results, anthropicBlock{Type: "tool_result", ToolUseID: o.call.id, Content: o.text, IsError: o.isError})
	}
	msgs = append(msgs, anthropicMessage{Role: "assistant", Content: blocks})
	if len(results) > 0 {
		msgs = append(msgs, anthropicMessage{Role: "user", Content: results})
	}
	return msgs
}
