package openai

import (
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
)

// vendorTypes are request types of OpenAI's official SDKs, first
// transcribed from the Python SDK openai 3.3.1
// (src/openai/types/chat/*_param.py and
// src/openai/types/shared_params/function_definition.py) and held by
// TestVendorTypesMatchSDK to the TypeScript SDK testtools/ pins, openai
// 7.57.0: the members zot may send (the SDK's types have more, which zot
// does not use), those required, the literal `type` (a message: `role`)
// holds.
var vendorTypes = providertest.VendorTypes{Defs: map[string]providertest.VendorDef{
	// completion_create_params.py: CompletionCreateParamsStreaming.
	"CompletionCreateParams": {Required: []string{"messages", "model", "stream"}, Members: map[string]string{
		"messages": "[]ChatCompletionMessageParam", "model": "", "stream": "",
		"stream_options": "?ChatCompletionStreamOptionsParam", "max_tokens": "", "max_completion_tokens": "",
		"reasoning_effort": "", "tools": "[]ChatCompletionFunctionToolParam", "tool_choice": "",
		"parallel_tool_calls": "", "temperature": "", "top_p": "", "prompt_cache_key": "", "store": "",
	}},
	"ChatCompletionStreamOptionsParam": {Members: map[string]string{"include_usage": "", "include_obfuscation": ""}},
	"ChatCompletionSystemMessageParam": {Tag: "role", Type: "system", Required: []string{"content", "role"}, Members: map[string]string{
		"content": "str|[]ChatCompletionContentPartTextParam", "role": "", "name": "",
	}},
	"ChatCompletionDeveloperMessageParam": {Tag: "role", Type: "developer", Required: []string{"content", "role"}, Members: map[string]string{
		"content": "str|[]ChatCompletionContentPartTextParam", "role": "", "name": "",
	}},
	"ChatCompletionUserMessageParam": {Tag: "role", Type: "user", Required: []string{"content", "role"}, Members: map[string]string{
		"content": "str|[]ChatCompletionContentPartParam", "role": "", "name": "",
	}},
	// content is Optional there: null when the message is tool calls alone.
	"ChatCompletionAssistantMessageParam": {Tag: "role", Type: "assistant", Required: []string{"role"}, Members: map[string]string{
		"role": "", "content": "?str|[]ChatCompletionContentPartTextParam", "name": "", "refusal": "",
		"tool_calls": "[]ChatCompletionMessageFunctionToolCallParam",
	}},
	"ChatCompletionToolMessageParam": {Tag: "role", Type: "tool", Required: []string{"content", "role", "tool_call_id"}, Members: map[string]string{
		"content": "str|[]ChatCompletionContentPartTextParam", "role": "", "tool_call_id": "",
	}},
	"ChatCompletionContentPartTextParam": {Type: "text", Required: []string{"text", "type"}, Members: map[string]string{
		"text": "", "type": "", "prompt_cache_breakpoint": "",
	}},
	"ChatCompletionContentPartImageParam": {Type: "image_url", Required: []string{"image_url", "type"}, Members: map[string]string{
		"image_url": "ImageURL", "type": "", "prompt_cache_breakpoint": "",
	}},
	"ImageURL": {Required: []string{"url"}, Members: map[string]string{"url": "", "detail": ""}},
	// chat_completion_message_function_tool_call_param.py.
	"ChatCompletionMessageFunctionToolCallParam": {Type: "function", Required: []string{"id", "function", "type"}, Members: map[string]string{
		"id": "", "function": "Function", "type": "",
	}},
	"Function": {Required: []string{"arguments", "name"}, Members: map[string]string{"arguments": "", "name": ""}},
	// chat_completion_function_tool_param.py and function_definition.py.
	"ChatCompletionFunctionToolParam": {Type: "function", Required: []string{"function", "type"}, Members: map[string]string{
		"function": "FunctionDefinition", "type": "",
	}},
	"FunctionDefinition": {Required: []string{"name"}, Members: map[string]string{
		"name": "", "description": "", "parameters": "", "strict": "",
	}},
},
	// The unions zot sends: chat_completion_message_param.py's messages,
	// told apart by `role`; chat_completion_content_part_param.py's parts
	// (the variants zot uses), by `type`.
	Unions: map[string][]string{
		"ChatCompletionMessageParam": {"ChatCompletionSystemMessageParam", "ChatCompletionDeveloperMessageParam",
			"ChatCompletionUserMessageParam", "ChatCompletionAssistantMessageParam", "ChatCompletionToolMessageParam"},
		"ChatCompletionContentPartParam": {"ChatCompletionContentPartTextParam", "ChatCompletionContentPartImageParam"},
	}}

// TestRequestMatchesVendorTypes checks the bodies zot sends, with every
// kind of message and part, for a reasoning model and another, against
// the request types of OpenAI's official SDK: each object has only
// members its type defines, all the ones it requires, and the `type` or
// `role` it names.
func TestRequestMatchesVendorTypes(t *testing.T) {
	reasoning := fullTranscript()
	reasoning.ReasoningModel, reasoning.Reasoning = true, "high"
	for name, req := range map[string]*llm.Request{"plain": fullTranscript(), "reasoning": reasoning} {
		body, err := buildRequest(req, "openai")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		vendorTypes.CheckBody(t, name, body, "CompletionCreateParams")
	}
}

// TestVendorTypesMatchSDK holds the definitions above to the request
// types of the TypeScript SDK testtools/ pins, openai 7.57.0
// (resources/chat/completions/completions.d.ts, resources/shared.d.ts).
func TestVendorTypesMatchSDK(t *testing.T) {
	ifaces := providertest.LoadDTS(t, "openai/resources/chat/completions/completions.d.ts", "openai/resources/shared.d.ts")
	vendorTypes.CheckDTS(t, ifaces, map[string]string{
		"CompletionCreateParams":                     "ChatCompletionCreateParamsStreaming",
		"ChatCompletionStreamOptionsParam":           "ChatCompletionStreamOptions",
		"ChatCompletionSystemMessageParam":           "ChatCompletionSystemMessageParam",
		"ChatCompletionDeveloperMessageParam":        "ChatCompletionDeveloperMessageParam",
		"ChatCompletionUserMessageParam":             "ChatCompletionUserMessageParam",
		"ChatCompletionAssistantMessageParam":        "ChatCompletionAssistantMessageParam",
		"ChatCompletionToolMessageParam":             "ChatCompletionToolMessageParam",
		"ChatCompletionContentPartTextParam":         "ChatCompletionContentPartText",
		"ChatCompletionContentPartImageParam":        "ChatCompletionContentPartImage",
		"ImageURL":                                   "ChatCompletionContentPartImage.ImageURL",
		"ChatCompletionMessageFunctionToolCallParam": "ChatCompletionMessageFunctionToolCall",
		"Function":                        "ChatCompletionMessageFunctionToolCall.Function",
		"ChatCompletionFunctionToolParam": "ChatCompletionFunctionTool",
		"FunctionDefinition":              "FunctionDefinition",
	})
}
