package anthropic

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
)

// vendorDef is one request type of the official Python SDK, anthropic
// 0.121.0 (src/anthropic/types/<name>_param.py, TypedDicts generated from
// Anthropic's OpenAPI spec): its members, each "" for a value checked no
// further, the name of a definition, or "[]" and one for an array of them;
// those marked Required; the literal its `type` must hold, if any.
type vendorDef struct {
	typ      string
	required []string
	members  map[string]string
}

// vendorDefs holds the definitions of the members zot may send (the SDK's
// types have more, which zot does not use).
var vendorDefs = map[string]vendorDef{
	// message_create_params.py: MessageCreateParamsStreaming.
	"MessageCreateParams": {required: []string{"max_tokens", "messages", "model", "stream"}, members: map[string]string{
		"max_tokens": "", "messages": "[]MessageParam", "model": "", "stream": "",
		"cache_control": "CacheControlEphemeralParam", "metadata": "", "output_config": "OutputConfigParam",
		"service_tier": "", "stop_sequences": "", "system": "[]TextBlockParam", "temperature": "",
		"thinking": "ThinkingConfigParam", "tool_choice": "", "tools": "[]ToolParam", "top_k": "", "top_p": "",
	}},
	"MessageParam": {required: []string{"content", "role"}, members: map[string]string{
		"content": "[]ContentBlockParam", "role": "",
	}},
	"TextBlockParam": {typ: "text", required: []string{"text", "type"}, members: map[string]string{
		"text": "", "type": "", "cache_control": "CacheControlEphemeralParam", "citations": "",
	}},
	"ImageBlockParam": {typ: "image", required: []string{"source", "type"}, members: map[string]string{
		"source": "Base64ImageSourceParam", "type": "", "cache_control": "CacheControlEphemeralParam",
	}},
	"Base64ImageSourceParam": {typ: "base64", required: []string{"data", "media_type", "type"}, members: map[string]string{
		"data": "", "media_type": "", "type": "",
	}},
	"ToolUseBlockParam": {typ: "tool_use", required: []string{"id", "input", "name", "type"}, members: map[string]string{
		"id": "", "input": "", "name": "", "type": "", "cache_control": "CacheControlEphemeralParam",
	}},
	"ToolResultBlockParam": {typ: "tool_result", required: []string{"tool_use_id", "type"}, members: map[string]string{
		"tool_use_id": "", "type": "", "cache_control": "CacheControlEphemeralParam",
		"content": "[]ToolResultContent", "is_error": "",
	}},
	"ThinkingBlockParam": {typ: "thinking", required: []string{"signature", "thinking", "type"}, members: map[string]string{
		"signature": "", "thinking": "", "type": "",
	}},
	"RedactedThinkingBlockParam": {typ: "redacted_thinking", required: []string{"data", "type"}, members: map[string]string{
		"data": "", "type": "",
	}},
	"ToolParam": {required: []string{"input_schema", "name"}, members: map[string]string{
		"input_schema": "InputSchema", "name": "", "cache_control": "CacheControlEphemeralParam",
		"description": "", "strict": "", "type": "",
	}},
	// tool_param.py: InputSchemaTyped; its properties are the tool's own.
	"InputSchema": {typ: "object", required: []string{"type"}},
	"CacheControlEphemeralParam": {typ: "ephemeral", required: []string{"type"}, members: map[string]string{
		"type": "", "ttl": "",
	}},
	"ThinkingConfigEnabledParam": {typ: "enabled", required: []string{"budget_tokens", "type"}, members: map[string]string{
		"budget_tokens": "", "type": "", "display": "",
	}},
	"ThinkingConfigAdaptiveParam": {typ: "adaptive", required: []string{"type"}, members: map[string]string{
		"type": "", "display": "",
	}},
	"ThinkingConfigDisabledParam": {typ: "disabled", required: []string{"type"}, members: map[string]string{
		"type": "",
	}},
	"OutputConfigParam": {members: map[string]string{"effort": "", "format": ""}},
}

// vendorUnions are the SDK's unions zot sends, the variant chosen by the
// member `type`: content_block_param.py's ContentBlockParam (the variants
// zot uses), tool_result_block_param.py's Content, thinking_config_param.py.
var vendorUnions = map[string][]string{
	"ContentBlockParam": {"TextBlockParam", "ImageBlockParam", "ToolUseBlockParam", "ToolResultBlockParam",
		"ThinkingBlockParam", "RedactedThinkingBlockParam"},
	"ToolResultContent":   {"TextBlockParam", "ImageBlockParam"},
	"ThinkingConfigParam": {"ThinkingConfigEnabledParam", "ThinkingConfigAdaptiveParam", "ThinkingConfigDisabledParam"},
}

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
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkVendor(t, name, v, "MessageCreateParams")
	}
}

// checkVendor checks v, found at path, against the definition or union
// def, or an array of them when def starts with "[]".
func checkVendor(t *testing.T, path string, v any, def string) {
	t.Helper()
	if elem, ok := strings.CutPrefix(def, "[]"); ok {
		arr, ok := v.([]any)
		if !ok {
			t.Errorf("%s: %T, want an array of %s", path, v, elem)
			return
		}
		for _, e := range arr {
			checkVendor(t, path+"[]", e, elem)
		}
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		t.Errorf("%s: %T, want an object %s", path, v, def)
		return
	}
	if variants, ok := vendorUnions[def]; ok {
		i := slices.IndexFunc(variants, func(d string) bool { return vendorDefs[d].typ == obj["type"] })
		if i < 0 {
			t.Errorf("%s: type %v is none of %s's", path, obj["type"], def)
			return
		}
		def = variants[i]
	}
	d, ok := vendorDefs[def]
	if !ok {
		t.Fatalf("no definition %s", def)
	}
	if d.typ != "" && obj["type"] != d.typ {
		t.Errorf("%s: type %v, %s wants %q", path, obj["type"], def, d.typ)
	}
	for _, r := range d.required {
		if _, ok := obj[r]; !ok {
			t.Errorf("%s: %s requires %s", path, def, r)
		}
	}
	if d.members == nil {
		return
	}
	for k, mv := range obj {
		sub, ok := d.members[k]
		switch {
		case !ok:
			t.Errorf("%s: %s defines no member %s", path, def, k)
		case sub != "":
			checkVendor(t, path+"."+k, mv, sub)
		}
	}
}
