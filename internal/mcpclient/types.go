package mcpclient

import "encoding/json"

// Implementation names a client or a server in the handshake.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// InitializeResult is the server's answer to initialize.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      *Implementation    `json:"serverInfo,omitempty"`
	Instructions    string             `json:"instructions,omitempty"`
}

// ServerCapabilities is what a server offers; the client reads only its
// tools.
type ServerCapabilities struct {
	// Tools is nil when the server has no tools.
	Tools *struct {
		ListChanged bool `json:"listChanged,omitempty"`
	} `json:"tools,omitempty"`
}

// Tool is one tool of a server, as tools/list describes it.
type Tool struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	InputSchema json.RawMessage  `json:"inputSchema,omitempty"`
	Annotations *ToolAnnotations `json:"annotations,omitempty"`
}

// ToolAnnotations are the hints a server gives about a tool; the client
// reads readOnlyHint.
type ToolAnnotations struct {
	Title        string `json:"title,omitempty"`
	ReadOnlyHint bool   `json:"readOnlyHint,omitempty"`
}

// CallToolResult is the server's answer to tools/call.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// The content types of a tool result.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResource     = "resource"
	ContentResourceLink = "resource_link"
)

// Content is one block of a tool result. Type says which fields are set:
// text (Text), image and audio (Data, MIMEType), resource (Resource),
// resource_link (URI, Name, Title, Description, MIMEType). Raw holds the
// block as the server sent it, for types the client does not know.
type Content struct {
	Type        string            `json:"type"`
	Text        string            `json:"text,omitempty"`
	Data        []byte            `json:"data,omitempty"` // base64 on the wire
	MIMEType    string            `json:"mimeType,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Name        string            `json:"name,omitempty"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Resource    *ResourceContents `json:"resource,omitempty"`
	Raw         json.RawMessage   `json:"-"`
}

// UnmarshalJSON reads a content block and keeps it whole in Raw.
func (c *Content) UnmarshalJSON(data []byte) error {
	type plain Content
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*c = Content(p)
	c.Raw = append(json.RawMessage(nil), data...)
	return nil
}

// ResourceContents is an embedded resource: text, or a binary Blob.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     []byte `json:"blob,omitempty"` // base64 on the wire
}

// ProgressParams are the params of notifications/progress.
type ProgressParams struct {
	ProgressToken any     `json:"progressToken"`
	Progress      float64 `json:"progress"`
	Total         float64 `json:"total,omitempty"`
	Message       string  `json:"message,omitempty"`
}
