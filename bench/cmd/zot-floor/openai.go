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

// openai is the OpenAI Chat Completions format.
type openai struct{}

type (
	openaiMessage struct {
		Role       string           `json:"role"`
		Content    *string          `json:"content"`
		ToolCalls  []openaiToolCall `json:"tool_calls,omitempty"`
		ToolCallID string           `json:"tool_call_id,omitempty"`
	}
	openaiToolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	openaiTool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	openaiRequest struct {
		Model         string          `json:"model"`
		Stream        bool            `json:"stream"`
		StreamOptions map[string]bool `json:"stream_options"`
		Messages      []any           `json:"messages"`
		Tools         []openaiTool    `json:"tools"`
	}
	// openaiChunk is the part of a chat.completion.chunk the relay reads.
	openaiChunk struct {
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					Index    int    `json:"index"`
					ID       string `json:"id"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
		Error json.RawMessage `json:"error"`
	}
)

func (openai) userMessage(text string) any {
	return openaiMessage{Role: "user", Content: &text}
}

func (openai) newRequest(ctx context.Context, ep endpoint, msgs []any) (*http.Request, error) {
	bash := openaiTool{Type: "function"}
	bash.Function.Name = "bash"
	bash.Function.Description = "Run a shell command"
	bash.Function.Parameters = json.RawMessage(bashToolSchema)
	read := openaiTool{Type: "function"}
	read.Function.Name = "read"
	read.Function.Description = "Read a text file"
	read.Function.Parameters = json.RawMessage(readToolSchema)
	body, err := json.Marshal(openaiRequest{
		Model: ep.model, Stream: true, StreamOptions: map[string]bool{"include_usage": true},
		Messages: msgs, Tools: []openaiTool{bash, read},
	})
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	url := strings.TrimSuffix(ep.baseURL, "/") + "/chat/completions"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+ep.apiKey)
	return req, nil
}

func (openai) readStream(body io.Reader, onText func(string) error) (reply, error) {
	var text strings.Builder
	var calls []call
	byIndex := map[int]int{} // tool_calls index -> position in calls
	err := readSSE(body, func(data []byte) (bool, error) {
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			return true, nil
		}
		var c openaiChunk
		if err := json.Unmarshal(data, &c); err != nil {
			return false, fmt.Errorf("decoding chunk: %w", err)
		}
		if len(c.Error) > 0 && string(c.Error) != "null" {
			return false, fmt.Errorf("provider error: %s", c.Error)
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue
			}
			for _, tc := range ch.Delta.ToolCalls {
				i, ok := byIndex[tc.Index]
				if !ok {
					i = len(calls)
					byIndex[tc.Index] = i
					calls = append(calls, call{id: tc.ID, name: tc.Function.Name})
				}
				calls[i].args = append(calls[i].args, tc.Function.Arguments...)
			}
			if ch.Delta.Content != "" {
				text.WriteString(ch.Delta.Content)
				if err := onText(ch.Delta.Content); err != nil {
					return false, err
				}
			}
		}
		return false, nil
	})
	return reply{text: text.String(), calls: calls}, err
}

func (openai) appendTurn(msgs []any, rep reply, outs []toolOutput) []any {
	assistant := openaiMessage{Role: "assistant"}
	if rep.text != "" {
		assistant.Content = &rep.text
	}
	for _, c := range rep.calls {
		tc := openaiToolCall{ID: c.id, Type: "function"}
		tc.Function.Name = c.name
		tc.Function.Arguments = string(c.args)
		assistant.ToolCalls = append(assistant.ToolCalls, tc)
	}
	msgs = append(msgs, assistant)
	for _, o := range outs {
		msgs = append(msgs, openaiMessage{Role: "tool", Content: &o.text, ToolCallID: o.call.id})
	}
	return msgs
}
