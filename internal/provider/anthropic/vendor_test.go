package anthropic

import (
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
)

// vendorTypes are request types of Anthropic's official SDKs, first
// transcribed from the Python SDK anthropic 0.121.0
// (src/anthropic/types/<name>_param.py) and held by
// TestVendorTypesMatchSDK to the TypeScript SDK testtools/ pins,
// @anthropic-ai/sdk 1.14.0 (which no longer declares temperature, top_k,
// top_p or a tool's strict; zot sends none of them): the members zot may
// send (the SDK's types have more, which zot does not use), those
// required, the literal `type` holds.
var vendorTypes = providertest.VendorTypes{Defs: map[string]providertest.VendorDef{
	// message_create_params.py: MessageCreateParamsStreaming.
	"MessageCreateParams": {Required: []string{"max_tokens", "messages", "model", "stream"}, Members: map[string]string{
		"max_tokens": "", "messages": "[]MessageParam", "model": "", "stream": "",
		"cache_control": "CacheControlEphemeralParam", "metadata": "", "output_config": "OutputConfigParam",
		"service_tier": "", "stop_sequences": "", "system": "[]TextBlockParam",
		"thinking": "ThinkingConfigParam", "tool_choice": "", "tools": "[]ToolParam",
	}},
	"MessageParam": {Required: []string{"content", "role"}, Members: map[string]string{
		"content": "[]ContentBlockParam", "role": "",
	}},
	"TextBlockParam": {Type: "text", Required: []string{"text", "type"}, Members: map[string]string{
		"text": "", "type": "", "cache_control": "CacheControlEphemeralParam", "citations": "",
	}},
	"ImageBlockParam": {Type: "image", Required: []string{"source", "type"}, Members: map[string]string{
		"source": "Base64ImageSourceParam", "type": "", "cache_control": "CacheControlEphemeralParam",
	}},
	"Base64ImageSourceParam": {Type: "base64", Required: []string{"data", "media_type", "type"}, Members: map[string]string{
		"data": "", "media_type": "", "type": "",
	}},
	"ToolUseBlockParam": {Type: "tool_use", Required: []string{"id", "input", "name", "type"}, Members: map[string]string{
		"id": "", "input": "", "name": "", "type": "", "cache_control": "CacheControlEphemeralParam",
	}},
	"ToolResultBlockParam": {Type: "tool_result", Required: []string{"tool_use_id", "type"}, Members: map[string]string{
		"tool_use_id": "", "type": "", "cache_control": "CacheControlEphemeralParam",
		"content": "[]ToolResultContent", "is_error": "",
	}},
	"ThinkingBlockParam": {Type: "thinking", Required: []string{"signature", "thinking", "type"}, Members: map[string]string{
		"signature": "", "thinking": "", "type": "",
	}},
	"RedactedThinkingBlockParam": {Type: "redacted_thinking", Required: []string{"data", "type"}, Members: map[string]string{
		"data": "", "type": "",
	}},
	"ToolParam": {Required: []string{"input_schema", "name"}, Members: map[string]string{
		"input_schema": "InputSchema", "name": "", "cache_control": "CacheControlEphemeralParam",
		"description": "", "type": "",
	}},
	// tool_param.py: InputSchemaTyped; its properties are the tool's own.
	"InputSchema": {Type: "object", Required: []string{"type"}},
	"CacheControlEphemeralParam": {Type: "ephemeral", Required: []string{"type"}, Members: map[string]string{
		"type": "", "ttl": "",
	}},
	"ThinkingConfigEnabledParam": {Type: "enabled", Required: []string{"budget_tokens", "type"}, Members: map[string]string{
		"budget_tokens": "", "type": "", "display": "",
	}},
	"ThinkingConfigAdaptiveParam": {Type: "adaptive", Required: []string{"type"}, Members: map[string]string{
		"type": "", "display": "",
	}},
	"ThinkingConfigDisabledParam": {Type: "disabled", Required: []string{"type"}, Members: map[string]string{
		"type": "",
	}},
	"OutputConfigParam": {Members: map[string]string{"effort": "", "format": ""}},
},
	// The SDK's unions zot sends, the variant chosen by the member `type`:
	// content_block_param.py's ContentBlockParam (the variants zot uses),
	// tool_result_block_param.py's Content, thinking_config_param.py.
	Unions: map[string][]string{
		"ContentBlockParam": {"TextBlockParam", "ImageBlockParam", "ToolUseBlockParam", "ToolResultBlockParam",
			"ThinkingBlockParam", "RedactedThinkingBlockParam"},
		"ToolResultContent":   {"TextBlockParam", "ImageBlockParam"},
		"ThinkingConfigParam": {"ThinkingConfigEnabledParam", "ThinkingConfigAdaptiveParam", "ThinkingConfigDisabledParam"},
	}}

// TestRequestMatchesVendorTypes checks the bodies zot sends, with every
// kind of block and each kind of thinking, against the request types of
// Anthropic's official SDK: each object has only members its type
// defines, all the ones it requires, and the `type` literal it names.
func TestRequestMatchesVendorTypes(t *testing.T) {
	budget := fullTranscript()
	budget.Model, budget.ReasoningControl, budget.MaxOutput = "claude-budget", llm.ReasoningBudget, 64_000
	plain := fullTranscript()
	plain.Reasoning = ""
	for name, req := range map[string]*llm.Request{"adaptive": fullTranscript(), "budget": budget, "no reasoning": plain} {
		body, err := buildRequest(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		vendorTypes.CheckBody(t, name, body, "MessageCreateParams")
	}
}

// TestVendorTypesMatchSDK holds the definitions above to the request
// types of the TypeScript SDK testtools/ pins, @anthropic-ai/sdk 1.14.0
// (resources/messages/messages.d.ts): a member zot sends that the SDK no
// longer declares, a member the SDK now requires, or a changed `type`
// literal fails here.
func TestVendorTypesMatchSDK(t *testing.T) {
	ifaces := providertest.LoadDTS(t, "@anthropic-ai/sdk/resources/messages/messages.d.ts")
	vendorTypes.CheckDTS(t, ifaces, map[string]string{
		"MessageCreateParams":         "MessageCreateParamsStreaming",
		"MessageParam":                "UserMessageParam",
		"TextBlockParam":              "TextBlockParam",
		"ImageBlockParam":             "ImageBlockParam",
		"Base64ImageSourceParam":      "Base64ImageSource",
		"ToolUseBlockParam":           "ToolUseBlockParam",
		"ToolResultBlockParam":        "ToolResultBlockParam",
		"ThinkingBlockParam":          "ThinkingBlockParam",
		"RedactedThinkingBlockParam":  "RedactedThinkingBlockParam",
		"ToolParam":                   "Tool",
		"InputSchema":                 "Tool.InputSchema",
		"CacheControlEphemeralParam":  "CacheControlEphemeral",
		"ThinkingConfigEnabledParam":  "ThinkingConfigEnabled",
		"ThinkingConfigAdaptiveParam": "ThinkingConfigAdaptive",
		"ThinkingConfigDisabledParam": "ThinkingConfigDisabled",
		"OutputConfigParam":           "OutputConfig",
	})
	// The assistant's messages take the same members as the user's.
	vendorTypes.CheckDTS(t, ifaces, map[string]string{"MessageParam": "AssistantMessageParam"})
}
