package responses

import (
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
)

// vendorTypes are request types of OpenAI's official SDKs, first
// transcribed from the Python SDK openai 3.3.1
// (src/openai/types/responses/*_param.py and
// src/openai/types/shared_params/reasoning.py) and held by
// TestVendorTypesMatchSDK to the TypeScript SDK testtools/ pins, openai
// 7.57.0: the members zot may send (the SDK's types have more, which zot
// does not use), those required, the literal `type` holds.
var vendorTypes = providertest.VendorTypes{Defs: map[string]providertest.VendorDef{
	// response_create_params.py: ResponseCreateParamsStreaming (stream is
	// Required there).
	"ResponseCreateParams": {Required: []string{"stream"}, Members: map[string]string{
		"model": "", "input": "[]ResponseInputItemParam", "instructions": "", "max_output_tokens": "",
		"reasoning": "Reasoning", "include": "", "store": "", "stream": "", "tools": "[]FunctionToolParam",
		"tool_choice": "", "parallel_tool_calls": "", "prompt_cache_key": "", "temperature": "", "top_p": "",
	}},
	// shared_params/reasoning.py.
	"Reasoning": {Members: map[string]string{"effort": "", "summary": "", "generate_summary": "", "context": "", "mode": ""}},
	// easy_input_message_param.py: a message whose content is a string or
	// a list of input content (response_input_content_param.py).
	"EasyInputMessageParam": {Type: "message", Required: []string{"content", "role"}, Members: map[string]string{
		"content": "str|[]ResponseInputContentParam", "role": "", "phase": "", "type": "",
	}},
	"ResponseInputTextParam": {Type: "input_text", Required: []string{"text", "type"}, Members: map[string]string{
		"text": "", "type": "", "prompt_cache_breakpoint": "",
	}},
	"ResponseInputImageParam": {Type: "input_image", Required: []string{"detail", "type"}, Members: map[string]string{
		"detail": "", "type": "", "file_id": "", "image_url": "", "prompt_cache_breakpoint": "",
	}},
	// response_function_tool_call_param.py.
	"ResponseFunctionToolCallParam": {Type: "function_call", Required: []string{"arguments", "call_id", "name", "type"}, Members: map[string]string{
		"arguments": "", "call_id": "", "name": "", "type": "", "id": "", "status": "", "namespace": "",
	}},
	// response_input_param.py: FunctionCallOutput, whose output is a string
	// or a list of response_function_call_output_item_list_param.py's items.
	// call_id is Required in the Python SDK and optional in openai 7.57.0;
	// zot always sends it.
	"FunctionCallOutput": {Type: "function_call_output", Required: []string{"output", "type"}, Members: map[string]string{
		"call_id": "", "output": "str|[]ResponseFunctionCallOutputItemParam", "type": "", "id": "", "status": "",
	}},
	"ResponseInputTextContentParam": {Type: "input_text", Required: []string{"text", "type"}, Members: map[string]string{
		"text": "", "type": "", "prompt_cache_breakpoint": "",
	}},
	"ResponseInputImageContentParam": {Type: "input_image", Required: []string{"type"}, Members: map[string]string{
		"type": "", "detail": "", "file_id": "", "image_url": "", "prompt_cache_breakpoint": "",
	}},
	// response_reasoning_item_param.py, with its Summary and Content.
	"ResponseReasoningItemParam": {Type: "reasoning", Required: []string{"id", "summary", "type"}, Members: map[string]string{
		"id": "", "summary": "[]ReasoningSummary", "type": "", "content": "[]ReasoningContent",
		"encrypted_content": "", "status": "",
	}},
	"ReasoningSummary": {Type: "summary_text", Required: []string{"text", "type"}, Members: map[string]string{"text": "", "type": ""}},
	"ReasoningContent": {Type: "reasoning_text", Required: []string{"text", "type"}, Members: map[string]string{"text": "", "type": ""}},
	// function_tool_param.py: parameters and strict are Required (and
	// nullable).
	"FunctionToolParam": {Type: "function", Required: []string{"name", "parameters", "strict", "type"}, Members: map[string]string{
		"name": "", "parameters": "", "strict": "", "type": "", "description": "", "defer_loading": "",
	}},
},
	// The unions zot sends, the variant chosen by the member `type`:
	// response_input_param.py's ResponseInputItemParam (the variants zot
	// uses), response_input_content_param.py's ResponseInputContentParam,
	// response_function_call_output_item_list_param.py's item.
	Unions: map[string][]string{
		"ResponseInputItemParam": {"EasyInputMessageParam", "ResponseFunctionToolCallParam", "FunctionCallOutput",
			"ResponseReasoningItemParam"},
		"ResponseInputContentParam":           {"ResponseInputTextParam", "ResponseInputImageParam"},
		"ResponseFunctionCallOutputItemParam": {"ResponseInputTextContentParam", "ResponseInputImageContentParam"},
	}}

// TestRequestMatchesVendorTypes checks the bodies zot sends, with every
// kind of item, reasoning on and off, against the request types of
// OpenAI's official SDK: each object has only members its type defines,
// all the ones it requires, and the `type` literal it names.
func TestRequestMatchesVendorTypes(t *testing.T) {
	plain := fullTranscript()
	plain.Reasoning, plain.ReasoningModel = "", false
	for name, req := range map[string]*llm.Request{"reasoning": fullTranscript(), "no reasoning": plain} {
		body, err := buildRequest(req, "openai-responses")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		vendorTypes.CheckBody(t, name, body, "ResponseCreateParams")
	}
}

// TestVendorTypesMatchSDK holds the definitions above to the request
// types of the TypeScript SDK testtools/ pins, openai 7.57.0
// (resources/responses/responses.d.ts, resources/shared.d.ts).
func TestVendorTypesMatchSDK(t *testing.T) {
	ifaces := providertest.LoadDTS(t, "openai/resources/responses/responses.d.ts", "openai/resources/shared.d.ts")
	vendorTypes.CheckDTS(t, ifaces, map[string]string{
		"ResponseCreateParams":           "ResponseCreateParamsStreaming",
		"Reasoning":                      "Reasoning",
		"EasyInputMessageParam":          "EasyInputMessage",
		"ResponseInputTextParam":         "ResponseInputText",
		"ResponseInputImageParam":        "ResponseInputImage",
		"ResponseFunctionToolCallParam":  "ResponseFunctionToolCall",
		"FunctionCallOutput":             "ResponseInputItem.FunctionCallOutput",
		"ResponseInputTextContentParam":  "ResponseInputTextContent",
		"ResponseInputImageContentParam": "ResponseInputImageContent",
		"ResponseReasoningItemParam":     "ResponseReasoningItem",
		"ReasoningSummary":               "ResponseReasoningItem.Summary",
		"ReasoningContent":               "ResponseReasoningItem.Content",
		"FunctionToolParam":              "FunctionTool",
	})
}
