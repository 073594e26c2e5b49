package ext_test

import (
	"context"
	"encoding/json"

	ext "zot.dev/zot/sdk/ext/compat"
)

// Every exported name of upstream zot's Go extension package
// (github.com/patriceckhart/zot: pkg/zotext up to v0.1.62, then
// packages/agent/ext, with call_tool and Markdown results), each with its
// type. This file compiles only while every name is here with a signature
// an upstream extension's code compiles against: removing or changing one
// breaks the build of the tests.

// Package functions.
var (
	_ func(name, version string) *ext.Extension                          = ext.New
	_ func(s string) ext.ToolContent                                     = ext.Text
	_ func(mimeType, base64Data string) ext.ToolContent                  = ext.Image
	_ func(mimeType string, data []byte) ext.ToolContent                 = ext.ImageBytes
	_ func(s string) ext.ToolResult                                      = ext.TextResult
	_ func(s string) ext.ToolResult                                      = ext.TextErrorResult
	_ func(s string) ext.ToolResult                                      = ext.MarkdownResult
	_ func(text string) ext.Response                                     = ext.Prompt
	_ func(name string, args any, text string) ext.Response              = ext.ToolPrompt
	_ func(text string) ext.Response                                     = ext.Insert
	_ func(text string) ext.Response                                     = ext.Display
	_ func(id, title string, lines []string, footer string) ext.Response = ext.OpenPanel
	_ func() ext.Response                                                = ext.Noop
	_ func(format string, args ...any) ext.Response                      = ext.Errorf
)

// Methods of *Extension.
var (
	_ func(*ext.Extension) ext.HostInfo                                                                  = (*ext.Extension).Host
	_ func(*ext.Extension, func(ext.HostInfo))                                                           = (*ext.Extension).OnHello
	_ func(*ext.Extension, string, ...any)                                                               = (*ext.Extension).Logf
	_ func(*ext.Extension, string, func(key, text string), func())                                       = (*ext.Extension).OnPanelKey
	_ func(*ext.Extension, string, string, []string, string)                                             = (*ext.Extension).OpenPanel
	_ func(*ext.Extension, string, string, []string, string)                                             = (*ext.Extension).RenderPanel
	_ func(*ext.Extension, string)                                                                       = (*ext.Extension).ClosePanel
	_ func(*ext.Extension, string, string, ext.CommandHandler)                                           = (*ext.Extension).Command
	_ func(*ext.Extension, string, string, json.RawMessage, ext.ToolHandler)                             = (*ext.Extension).Tool
	_ func(*ext.Extension, string, string, json.RawMessage, json.RawMessage, ext.ToolHandler)            = (*ext.Extension).StructuredTool
	_ func(*ext.Extension, string, string, json.RawMessage, ext.ToolOptions, ext.InteractiveToolHandler) = (*ext.Extension).ToolWithOptions
	_ func(*ext.Extension, string, string, json.RawMessage, ext.ToolHandler)                             = (*ext.Extension).DeferredTool
	_ func(*ext.Extension, string, string, json.RawMessage, ext.InteractiveToolHandler)                  = (*ext.Extension).InteractiveTool
	_ func(*ext.Extension, context.Context, string, any) (ext.ToolResult, error)                         = (*ext.Extension).CallTool
	_ func(*ext.Extension, string, ext.EventHandler)                                                     = (*ext.Extension).On
	_ func(*ext.Extension, ext.InterceptHandler)                                                         = (*ext.Extension).InterceptToolCall
	_ func(*ext.Extension, ext.ToolCallHandler)                                                          = (*ext.Extension).InterceptToolCallX
	_ func(*ext.Extension, ext.BeforeAgentStartHandler)                                                  = (*ext.Extension).InterceptBeforeAgentStart
	_ func(*ext.Extension, ext.TurnStartHandler)                                                         = (*ext.Extension).InterceptTurnStart
	_ func(*ext.Extension, ext.AssistantMessageHandler)                                                  = (*ext.Extension).InterceptAssistantMessage
	_ func(*ext.Extension, string, string)                                                               = (*ext.Extension).Notify
	_ func(*ext.Extension) error                                                                         = (*ext.Extension).Run
)

// Handler types: a function literal of upstream's shape converts to each.
var (
	_ ext.CommandHandler          = func(args string) ext.Response { return ext.Response{} }
	_ ext.ToolHandler             = func(args json.RawMessage) ext.ToolResult { return ext.ToolResult{} }
	_ ext.InteractiveToolHandler  = func(ctx context.Context, args json.RawMessage) ext.ToolResult { return ext.ToolResult{} }
	_ ext.EventHandler            = func(ev ext.Event) {}
	_ ext.InterceptHandler        = func(toolName string, args json.RawMessage) (bool, string) { return true, "" }
	_ ext.ToolCallHandler         = func(toolName string, args json.RawMessage) ext.ToolCallDecision { return ext.ToolCallDecision{} }
	_ ext.BeforeAgentStartHandler = func(ev ext.BeforeAgentStartEvent) *string { return nil }
	_ ext.TurnStartHandler        = func(step int) ext.TurnStartDecision { return ext.TurnStartDecision{} }
	_ ext.AssistantMessageHandler = func(text string) ext.AssistantMessageDecision { return ext.AssistantMessageDecision{} }
)

// Struct types, every field named with a value of its type.
var (
	str   string
	flag  bool
	num   int
	raw   json.RawMessage
	strs  []string
	flagp *bool
	nump  *int
	seq   uint64

	_ = ext.EventResult{Content: []ext.ToolContent{}, IsError: flag, Truncated: flag}
	_ = ext.Event{
		Name: str, AgentRunID: str, SessionID: str, Queued: flag, ImageCount: num, CWD: str,
		Sequence: seq, Status: str, Reason: str, Source: str, Decision: str, Stage: str,
		Result: (*ext.EventResult)(nil), Executed: flagp, CompactionID: str, MessageCount: nump,
		TokenEstimate: nump, AgentID: str, AgentName: str, Step: num, Stop: str, Error: str,
		ToolID: str, ToolName: str, ToolArgs: raw, ToolPreview: str, ToolArgsRaw: str, Text: str,
	}
	_ = ext.ToolCallDecision{Block: flag, Reason: str, ModifiedArgs: raw}
	_ = ext.BeforeAgentStartEvent{SystemPrompt: str, SessionID: str, AgentRunID: str, CWD: str, Provider: str, Model: str}
	_ = ext.TurnStartDecision{Block: flag, Reason: str}
	_ = ext.AssistantMessageDecision{Block: flag, Reason: str, ReplaceText: str}
	_ = ext.ToolResult{Content: []ext.ToolContent{}, IsError: flag, ActivateTools: strs, StructuredContent: raw}
	_ = ext.ToolContent{Type: str, Text: str, Format: str, MimeType: str, Data: str}
	_ = ext.Panel{ID: str, Title: str, Lines: strs, Footer: str}
	_ = ext.Response{Action: str, Prompt: str, ToolName: str, ToolArgs: raw, Insert: str, Display: str, OpenPanel: (*ext.Panel)(nil), Error: str}
	_ = ext.HostInfo{ProtocolVersion: num, ZotVersion: str, Provider: str, Model: str, CWD: str, ExtensionDir: str, DataDir: str}
	_ = ext.ToolOptions{OutputSchema: raw, Namespace: str, NamespaceDescription: str, NamespaceInstructions: str, Exposure: str, Deferred: flag, Interactive: flag}
	_ *ext.Extension
)
